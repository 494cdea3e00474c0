//! proptest: the provider's key store against a reference model. A random sequence of
//! operations (claim, peek, finish, release, orphan, reclaim, prune_at) is applied to the real store
//! and to a deliberately plain model (a list of pairs, scanned); every answer and the final
//! contents must agree.

use crate::common::strategies;

use proptest::prelude::*;
use retrylab::vocab::ids::{Endpoint, Key, Params, ResourceId, Tenant};
use retrylab::vocab::protocol::Reply;
use retrylab::world::keystore::{Claimed, KeyStore, Record, ScopedKey, Slot, Writer};

fn key(k: u64) -> ScopedKey {
    ScopedKey {
        tenant: Some(Tenant(0)),
        endpoint: None,
        region: None,
        key: Key(k),
    }
}

fn record(first_ms: u64, slot: Slot) -> Record {
    Record {
        fingerprint: Params(1),
        endpoint: Endpoint(0),
        first_request_ms: first_ms,
        first_sent_ms: None,
        completed_ms: None,
        pruned_at_ms: None,
        slot,
    }
}

#[derive(Clone, Debug)]
enum Op {
    Claim {
        key: u64,
        job: u32,
        at: u64,
        horizon: u64,
    },
    Peek {
        key: u64,
        horizon: u64,
    },
    Finish {
        key: u64,
        writer: Option<u32>,
        store: bool,
    },
    Release {
        key: u64,
        job: u32,
    },
    Orphan {
        key: u64,
        job: u32,
    },
    /// Compare and set: `current` passes the record the store holds, else a different one.
    Reclaim {
        key: u64,
        job: u32,
        current: bool,
    },
    /// Fixes the moment a record is pruned, unless one is fixed already.
    PruneAt {
        key: u64,
        at: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0..3u64;
    let j = 0..4u32;
    prop_oneof![
        (k.clone(), j.clone(), 0..10u64, 0..10u64).prop_map(|(key, job, at, horizon)| Op::Claim {
            key,
            job,
            at,
            horizon
        }),
        (k.clone(), 0..10u64).prop_map(|(key, horizon)| Op::Peek { key, horizon }),
        (k.clone(), prop::option::of(j.clone()), any::<bool>())
            .prop_map(|(key, writer, store)| Op::Finish { key, writer, store }),
        (k.clone(), j.clone()).prop_map(|(key, job)| Op::Release { key, job }),
        (k.clone(), j.clone()).prop_map(|(key, job)| Op::Orphan { key, job }),
        (k.clone(), j, any::<bool>()).prop_map(|(key, job, current)| Op::Reclaim {
            key,
            job,
            current
        }),
        (k, 0..10u64).prop_map(|(key, at)| Op::PruneAt { key, at }),
    ]
}

/// A record counts as stale once its first request is older than the horizon.
fn stale(horizon: u64) -> impl Fn(&Record) -> bool {
    move |r| r.first_request_ms < horizon
}

fn done(k: u64) -> Record {
    let resource = ResourceId(k as u32);
    let mut r = record(
        5,
        Slot::Done {
            reply: Reply::Created {
                resource,
                replayed: false,
            },
            resource: Some(resource),
        },
    );
    r.completed_ms = Some(6);
    r
}

/// The record a reclaim expects: what is there, or something that is not.
fn expected(held: Option<Record>, current: bool) -> Record {
    match (held, current) {
        (Some(r), true) => r,
        _ => record(99, Slot::Orphaned),
    }
}

/// The reference: the same rules, written as plainly as possible.
#[derive(Default)]
struct Model(Vec<(ScopedKey, Record)>);

impl Model {
    fn get(&self, k: &ScopedKey) -> Option<Record> {
        self.0.iter().find(|(x, _)| x == k).map(|(_, r)| *r)
    }
    fn set(&mut self, k: ScopedKey, r: Option<Record>) {
        self.0.retain(|(x, _)| *x != k);
        if let Some(r) = r {
            self.0.push((k, r));
        }
    }
    fn in_flight(&self, k: &ScopedKey, job: u32) -> bool {
        self.get(k)
            .is_some_and(|r| r.slot == Slot::InFlight { job })
    }
}

/// The answer of one operation, comparable between the store and the model.
#[derive(Debug, PartialEq)]
enum Answer {
    Claimed(Claimed),
    Peeked(Option<Record>),
    Did(bool),
    Moment(Option<u64>),
}

fn apply_store(s: &mut KeyStore, op: &Op) -> Answer {
    match *op {
        Op::Claim {
            key: k,
            job,
            at,
            horizon,
        } => Answer::Claimed(s.claim(key(k), record(at, Slot::InFlight { job }), stale(horizon))),
        Op::Peek { key: k, horizon } => Answer::Peeked(s.peek(&key(k), stale(horizon))),
        Op::Finish {
            key: k,
            writer,
            store,
        } => {
            let w = writer.map_or(Writer::FirstWriter, Writer::Marker);
            Answer::Did(s.finish(key(k), w, store.then(|| done(k))))
        }
        Op::Release { key: k, job } => Answer::Did(s.release(&key(k), job)),
        Op::Orphan { key: k, job } => Answer::Did(s.orphan(&key(k), job)),
        Op::Reclaim {
            key: k,
            job,
            current,
        } => {
            let expected = expected(s.get(&key(k)).copied(), current);
            Answer::Did(s.reclaim(&key(k), expected, job))
        }
        Op::PruneAt { key: k, at } => Answer::Moment(s.prune_at(&key(k), at)),
    }
}

fn apply_model(m: &mut Model, op: &Op) -> Answer {
    match *op {
        Op::Claim {
            key: k,
            job,
            at,
            horizon,
        } => {
            let existing = m.get(&key(k));
            match existing {
                Some(r) if r.first_request_ms >= horizon => Answer::Claimed(Claimed::Existing(r)),
                _ => {
                    m.set(key(k), Some(record(at, Slot::InFlight { job })));
                    Answer::Claimed(Claimed::Fresh { replaced: existing })
                }
            }
        }
        Op::Peek { key: k, horizon } => match m.get(&key(k)) {
            Some(r) if r.first_request_ms < horizon => {
                m.set(key(k), None);
                Answer::Peeked(None)
            }
            other => Answer::Peeked(other),
        },
        Op::Finish {
            key: k,
            writer,
            store,
        } => {
            let ours = match writer {
                Some(job) => m.in_flight(&key(k), job),
                None => m.get(&key(k)).is_none(),
            };
            if ours {
                m.set(key(k), store.then(|| done(k)));
            }
            Answer::Did(ours)
        }
        Op::Release { key: k, job } => {
            let ours = m.in_flight(&key(k), job);
            if ours {
                m.set(key(k), None);
            }
            Answer::Did(ours)
        }
        Op::Orphan { key: k, job } => {
            let ours = m.in_flight(&key(k), job);
            if let (true, Some(mut r)) = (ours, m.get(&key(k))) {
                r.slot = Slot::Orphaned;
                m.set(key(k), Some(r));
            }
            Answer::Did(ours)
        }
        Op::Reclaim {
            key: k,
            job,
            current,
        } => {
            let expected = expected(m.get(&key(k)), current);
            match m.get(&key(k)) {
                Some(mut r) if r == expected => {
                    r.slot = Slot::InFlight { job };
                    m.set(key(k), Some(r));
                    Answer::Did(true)
                }
                _ => Answer::Did(false),
            }
        }
        Op::PruneAt { key: k, at } => match m.get(&key(k)) {
            Some(mut r) => {
                let moment = r.pruned_at_ms.unwrap_or(at);
                r.pruned_at_ms = Some(moment);
                m.set(key(k), Some(r));
                Answer::Moment(Some(moment))
            }
            None => Answer::Moment(None),
        },
    }
}

proptest! {
    #![proptest_config(strategies::config(
        256,
        concat!(env!("CARGO_MANIFEST_DIR"), "/proptest-regressions/prop_keystore.txt"),
    ))]

    #[test]
    fn key_store_agrees_with_its_reference_model(ops in prop::collection::vec(op(), 1..40)) {
        let mut store = KeyStore::default();
        let mut model = Model::default();
        for (i, op) in ops.iter().enumerate() {
            let a = apply_store(&mut store, op);
            let b = apply_model(&mut model, op);
            prop_assert_eq!(a, b, "operation {} ({:?})", i, op);
        }
        for k in 0..3 {
            prop_assert_eq!(store.get(&key(k)).copied(), model.get(&key(k)));
        }
        prop_assert_eq!(store.len(), model.0.len());
    }
}
