//! loom: the provider's key store under concurrent same-key requests and crashes.
//!
//! Each request calls the store's own `begin`, `crash` and `complete`, the operations the
//! simulator's provider calls (`src/world/provider.rs`), with the store's atomicity as their
//! argument: the per-variant logic under test is the simulator's. The atomic store
//! is proved correct over every interleaving; for the other two, loom must find the
//! interleaving that breaks the property, and the test asserts that it does.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --profile loom
//! --target-dir target-loom --test loom_keystore`.
#![cfg(loom)]

use std::sync::atomic::AtomicUsize as StdCounter;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use loom::thread;
use retrylab::model::Atomicity;
use retrylab::vocab::ids::{Endpoint, Key, Params, ResourceId, Tenant};
use retrylab::vocab::protocol::Reply;
use retrylab::world::keystore::{Claimed, Record, ScopedKey, SharedKeyStore, Slot};

fn key() -> ScopedKey {
    ScopedKey {
        tenant: Some(Tenant(0)),
        endpoint: None,
        region: None,
        key: Key(1),
    }
}

fn marker(job: u32) -> Record {
    Record {
        fingerprint: Params(1),
        endpoint: Endpoint(0),
        first_request_ms: 0,
        first_sent_ms: None,
        completed_ms: None,
        pruned_at_ms: None,
        slot: Slot::InFlight { job },
    }
}

fn done() -> Option<Record> {
    let resource = ResourceId(0);
    Some(Record {
        fingerprint: Params(1),
        endpoint: Endpoint(0),
        first_request_ms: 0,
        first_sent_ms: None,
        completed_ms: Some(1),
        pruned_at_ms: None,
        slot: Slot::Done {
            reply: Reply::Created {
                resource,
                replayed: false,
            },
            resource: Some(resource),
        },
    })
}

/// One create of `job` under `key()`, driven exactly as the provider drives its store
/// (`src/world/provider.rs`: `create` begins, `on_wake` commits and completes, or crashes):
/// the store's own `begin`, `crash` and `complete`. If `crash` is set when the request reaches
/// its crash point, the provider dies there; an effect-then-key store has applied the effect
/// by then.
fn request(
    store: &SharedKeyStore,
    effects: &AtomicUsize,
    crash: &AtomicBool,
    atomicity: Atomicity,
    job: u32,
) {
    let Claimed::Fresh { .. } = store.begin(atomicity, key(), marker(job), |_| false) else {
        return; // 409, a wait or a replay: no effect
    };
    if crash.load(SeqCst) {
        if atomicity == Atomicity::EffectThenKey {
            effects.fetch_add(1, SeqCst);
        }
        store.crash(atomicity, &key(), job);
        return;
    }
    effects.fetch_add(1, SeqCst);
    store.complete(atomicity, key(), job, done());
}

/// Two concurrent same-key requests; returns the number of effects.
fn two_requests(variant: Atomicity) -> usize {
    let store = Arc::new(SharedKeyStore::default());
    let effects = Arc::new(AtomicUsize::new(0));
    let no_crash = Arc::new(AtomicBool::new(false));
    let (s, e, c) = (store.clone(), effects.clone(), no_crash.clone());
    let other = thread::spawn(move || request(&s, &e, &c, variant, 1));
    request(&store, &effects, &no_crash, variant, 2);
    other.join().unwrap();
    effects.load(SeqCst)
}

/// A first request that may crash (another thread may pull the plug at any moment), then a
/// retry with the same key; returns the number of effects.
fn crash_then_retry(variant: Atomicity) -> usize {
    let store = Arc::new(SharedKeyStore::default());
    let effects = Arc::new(AtomicUsize::new(0));
    let crash = Arc::new(AtomicBool::new(false));
    let c = crash.clone();
    let plug = thread::spawn(move || c.store(true, SeqCst));
    request(&store, &effects, &crash, variant, 1);
    plug.join().unwrap();
    let calm = AtomicBool::new(false);
    request(&store, &effects, &calm, variant, 2);
    effects.load(SeqCst)
}

#[test]
fn atomic_store_two_same_key_requests_commit_exactly_one_effect() {
    loom::model(|| assert_eq!(two_requests(Atomicity::Atomic), 1));
}

#[test]
fn atomic_store_a_crash_then_a_retry_commit_exactly_one_effect() {
    loom::model(|| assert_eq!(crash_then_retry(Atomicity::Atomic), 1));
}

#[test]
fn key_then_effect_store_blocks_concurrent_duplicates() {
    // The key is claimed first, so a concurrent request cannot execute too.
    loom::model(|| assert_eq!(two_requests(Atomicity::KeyThenEffect), 1));
}

#[test]
fn key_then_effect_store_a_crash_leaves_a_key_without_effect() {
    static FOUND: StdCounter = StdCounter::new(0);
    loom::model(|| {
        let n = crash_then_retry(Atomicity::KeyThenEffect);
        assert!(n <= 1);
        if n == 0 {
            FOUND.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    assert!(
        FOUND.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "loom should find the crash that orphans the key: the retry then never executes"
    );
}

#[test]
fn effect_then_key_store_two_same_key_requests_can_both_execute() {
    static FOUND: StdCounter = StdCounter::new(0);
    loom::model(|| {
        let n = two_requests(Atomicity::EffectThenKey);
        assert!((1..=2).contains(&n));
        if n == 2 {
            FOUND.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    assert!(
        FOUND.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "loom should find the interleaving where both requests see no key"
    );
}

#[test]
fn effect_then_key_store_a_crash_then_a_retry_duplicates() {
    static FOUND: StdCounter = StdCounter::new(0);
    loom::model(|| {
        if crash_then_retry(Atomicity::EffectThenKey) == 2 {
            FOUND.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    assert!(FOUND.load(std::sync::atomic::Ordering::SeqCst) > 0);
}

/// Failed work (a stored 5xx with no effect) retried twice at once, as a `reexecute_failed`
/// provider does: the store's compare-and-set `reclaim` lets exactly one retry run it.
#[test]
fn two_retries_of_failed_work_re_execute_it_once() {
    loom::model(|| {
        let store = Arc::new(SharedKeyStore::default());
        let failed = Record {
            fingerprint: Params(1),
            endpoint: Endpoint(0),
            first_request_ms: 0,
            first_sent_ms: None,
            completed_ms: Some(1),
            pruned_at_ms: None,
            slot: Slot::Done {
                reply: Reply::ServerError { replayed: false },
                resource: None,
            },
        };
        // The failed record is in place (written by the first request, which failed).
        let Claimed::Fresh { .. } = store.begin(Atomicity::Atomic, key(), marker(0), |_| false)
        else {
            unreachable!()
        };
        store.complete(Atomicity::Atomic, key(), 0, Some(failed));
        let effects = Arc::new(AtomicUsize::new(0));
        let retry = move |store: &SharedKeyStore, effects: &AtomicUsize, job: u32| {
            if let Claimed::Existing(r) =
                store.begin(Atomicity::Atomic, key(), marker(job), |_| false)
                && r == failed
                && store.reclaim(&key(), r, job)
            {
                effects.fetch_add(1, SeqCst);
                store.complete(Atomicity::Atomic, key(), job, done());
            }
        };
        let (s, e) = (store.clone(), effects.clone());
        let other = thread::spawn(move || retry(&s, &e, 1));
        retry(&store, &effects, 2);
        other.join().unwrap();
        assert_eq!(effects.load(SeqCst), 1);
    });
}

/// Two requests look at one record past its retention floor at once and each draws a moment
/// of pruning (as `settle_pruning` in the provider does): the first to fix it wins, both then
/// judge the record against that one moment, and the record keeps it.
#[test]
fn two_draws_of_a_prune_moment_agree_on_one() {
    loom::model(|| {
        let store = Arc::new(SharedKeyStore::default());
        let Claimed::Fresh { .. } = store.begin(Atomicity::Atomic, key(), marker(0), |_| false)
        else {
            unreachable!()
        };
        store.complete(Atomicity::Atomic, key(), 0, done());
        let s = store.clone();
        let other = thread::spawn(move || s.prune_at(&key(), 100));
        let mine = store.prune_at(&key(), 200);
        let theirs = other.join().unwrap();
        assert_eq!(mine, theirs);
        assert!(matches!(mine, Some(100 | 200)));
        assert_eq!(store.get(&key()).unwrap().pruned_at_ms, mine);
    });
}
