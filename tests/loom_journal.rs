//! loom: workers recovering one operation through the executor's journal.
//!
//! With the lease (`claim`, then a fenced `record`), two and three workers recovering the
//! same operation dispatch it exactly once, and a holder whose lease was taken over cannot
//! record its result. Without the lease (read the state, then write it, as two steps), loom
//! finds the interleaving where two workers both dispatch, and where a stale holder
//! overwrites its successor's result; the tests assert that it does.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --profile loom
//! --target-dir target-loom --test loom_journal`.
#![cfg(loom)]

use std::sync::atomic::AtomicUsize as StdCounter;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::thread;
use retrylab::design::journal::{Holder, OpState, SharedJournal};
use retrylab::model::Durability;
use retrylab::vocab::ids::{OpId, WorkerId};
use retrylab::vocab::protocol::ToolCall;

const LEASE_MS: u64 = 50;

/// A journal holding one operation, left `Unknown` by a worker that died.
fn journal() -> (Arc<SharedJournal>, OpId) {
    let j = SharedJournal::new(Durability::Durable);
    let op = j.create(&ToolCall::for_tests(0), None, WorkerId(9), 0);
    j.transition(op, OpState::Unknown, 0);
    (Arc::new(j), op)
}

fn holder(w: u32) -> Holder {
    Holder {
        worker: WorkerId(w),
        incarnation: 0,
    }
}

/// Recovery under the lease, as the lease design acts (`src/design/journaled.rs`): the
/// journal's `acquire`, then "dispatched" written only under the fence it returned.
fn recover_leased(j: &SharedJournal, op: OpId, w: u32, dispatches: &AtomicUsize) {
    if let Ok(fence) = j.acquire(op, holder(w), 100, LEASE_MS) {
        dispatches.fetch_add(1, SeqCst);
        j.record(op, fence, OpState::Dispatched, 100);
    }
}

/// Recovery without a lease: "not dispatched yet? then dispatch", in two steps.
fn recover_unleased(j: &SharedJournal, op: OpId, dispatches: &AtomicUsize) {
    if j.state(op) != Some(OpState::Dispatched) {
        dispatches.fetch_add(1, SeqCst);
        j.transition(op, OpState::Dispatched, 100);
    }
}

fn recover_concurrently(workers: u32, leased: bool) -> usize {
    let (j, op) = journal();
    let dispatches = Arc::new(AtomicUsize::new(0));
    let others: Vec<_> = (1..workers)
        .map(|w| {
            let (j, d) = (j.clone(), dispatches.clone());
            thread::spawn(move || {
                if leased {
                    recover_leased(&j, op, w, &d)
                } else {
                    recover_unleased(&j, op, &d)
                }
            })
        })
        .collect();
    if leased {
        recover_leased(&j, op, 0, &dispatches);
    } else {
        recover_unleased(&j, op, &dispatches);
    }
    for t in others {
        t.join().unwrap();
    }
    dispatches.load(SeqCst)
}

#[test]
fn two_workers_recovering_under_the_lease_dispatch_once() {
    loom::model(|| assert_eq!(recover_concurrently(2, true), 1));
}

#[test]
fn three_workers_recovering_under_the_lease_dispatch_once() {
    loom::model(|| assert_eq!(recover_concurrently(3, true), 1));
}

#[test]
fn without_the_lease_two_workers_can_both_dispatch() {
    static FOUND: StdCounter = StdCounter::new(0);
    loom::model(|| {
        if recover_concurrently(2, false) == 2 {
            FOUND.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    assert!(
        FOUND.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "loom should find the interleaving where both workers see the operation undispatched"
    );
}

/// Worker 0 claimed at 0 ms and stalled past its lease; worker 1 takes over at 100 ms and
/// records success, while worker 0 wakes up and tries to record a failure. Returns the
/// final state.
fn stale_holder(fenced: bool) -> OpState {
    let (j, op) = journal();
    let old = j.acquire(op, holder(0), 0, LEASE_MS).unwrap();
    let j1 = j.clone();
    let successor = thread::spawn(move || {
        let fence = j1
            .acquire(op, holder(1), 100, LEASE_MS)
            .expect("the old lease expired");
        j1.record(op, fence, OpState::Confirmed, 100);
    });
    if fenced {
        j.record(op, old, OpState::Failed, 101);
    } else if j.holds(op, old) {
        j.transition(op, OpState::Failed, 101);
    }
    successor.join().unwrap();
    let state = j.state(op).unwrap();
    state
}

#[test]
fn a_stale_lease_holder_cannot_record_a_result() {
    loom::model(|| assert_eq!(stale_holder(true), OpState::Confirmed));
}

#[test]
fn without_fencing_a_stale_holder_overwrites_its_successor() {
    static FOUND: StdCounter = StdCounter::new(0);
    loom::model(|| {
        if stale_holder(false) == OpState::Failed {
            FOUND.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    assert!(
        FOUND.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "loom should find the interleaving where the check passes before the takeover"
    );
}
