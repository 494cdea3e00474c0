//! The lost-response scenario in turmoil: a client host (agent and executor) and a provider
//! host, talking UDP over turmoil's simulated network, one new simulation per seed.
//!
//! Per seed, as in `ticket_lost_response`: the client sends a create (with a key for
//! `same_key`, none for `no_dedup`) and waits at most the attempt timeout (5 s). The provider
//! processes it (20 to 300 ms), commits a ticket, and replies; the reply to the first create
//! is lost on the network (the provider partitions its link to the client one way for that
//! one send, then repairs it). The client times out, thinks (200 to 1 500 ms), replans and
//! sends again: the same key (the provider replays its stored reply) or no key (a second
//! ticket). The run ends when the client has its answer. Turmoil draws the network latency
//! (5 to 80 ms, its own curve); the bench draws processing and think times from the seed.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, UNIX_EPOCH};

use turmoil::net::UdpSocket;

use crate::bare::Rng;

const PORT: u16 = 7000;

/// What one seed did: tickets the provider committed, and whether the client was told
/// success.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub tickets: u32,
    pub completed: bool,
}

/// Runs the scenario for `seed`; `dedup` is `same_key`, else `no_dedup`.
pub fn run(seed: u64, dedup: bool) -> Outcome {
    let tickets = Rc::new(Cell::new(0u32));
    let completed = Rc::new(Cell::new(false));
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .epoch(UNIX_EPOCH)
        .simulation_duration(Duration::from_secs(600))
        .min_message_latency(Duration::from_millis(5))
        .max_message_latency(Duration::from_millis(80))
        .build();

    let t = tickets.clone();
    sim.host("provider", move || {
        let tickets = t.clone();
        async move {
            let mut rng = Rng::new(seed ^ 0x5eed_0f9a_0d00);
            let sock = UdpSocket::bind(("0.0.0.0", PORT)).await?;
            // Key → the ticket it created (keys are small numbers here).
            let mut keys: Vec<Option<u32>> = Vec::new();
            let mut creates = 0u32;
            let mut buf = [0u8; 8];
            loop {
                let (_, from) = sock.recv_from(&mut buf).await?;
                let key = u64::from_le_bytes(buf) as usize;
                if key != 0
                    && let Some(&Some(ticket)) = keys.get(key)
                {
                    // Seen: replay the stored reply.
                    sock.send_to(&u64::from(ticket).to_le_bytes(), from).await?;
                    continue;
                }
                creates += 1;
                let processing = rng.between((20, 300));
                tokio::time::sleep(Duration::from_millis(processing)).await;
                let ticket = tickets.get() + 1;
                tickets.set(ticket);
                if key != 0 {
                    if keys.len() <= key {
                        keys.resize(key + 1, None);
                    }
                    keys[key] = Some(ticket);
                }
                let lost = creates == 1;
                if lost {
                    turmoil::partition_oneway("provider", "client");
                }
                sock.send_to(&u64::from(ticket).to_le_bytes(), from).await?;
                if lost {
                    turmoil::repair_oneway("provider", "client");
                }
            }
        }
    });

    let c = completed.clone();
    sim.client("client", async move {
        let mut rng = Rng::new(seed);
        let sock = UdpSocket::bind(("0.0.0.0", 0)).await?;
        let mut buf = [0u8; 8];
        // One key per intent (same_key), or none.
        let key: u64 = if dedup { 1 } else { 0 };
        for call in 0..2 {
            if call > 0 {
                let think = rng.between((200, 1500));
                tokio::time::sleep(Duration::from_millis(think)).await;
            }
            sock.send_to(&key.to_le_bytes(), ("provider", PORT)).await?;
            let reply =
                tokio::time::timeout(Duration::from_millis(5000), sock.recv_from(&mut buf)).await;
            if reply.is_ok() {
                c.set(true);
                break;
            }
        }
        Ok(())
    });

    sim.run().expect("the turmoil simulation runs");
    Outcome {
        tickets: tickets.get(),
        completed: completed.get(),
    }
}
