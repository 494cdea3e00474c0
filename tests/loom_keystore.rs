//! loom: the provider's key store under concurrent same-key requests and crashes.
//!
//! Each request runs the store's own operations in the order its atomicity variant uses
//! them in the simulator (`src/world/provider.rs`): claim-then-finish for the atomic and
//! key-then-effect stores, peek-then-finish for the effect-then-key store. The atomic store
//! is proved correct over every interleaving; for the other two, loom must find the
//! interleaving that breaks the property, and the test asserts that it does.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test --release
//! --target-dir target-loom --test loom_keystore`.
#![cfg(loom)]

use std::sync::atomic::AtomicUsize as StdCounter;

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use loom::thread;
use retrylab::world::ids::{Key, Params, ResourceId, Tenant};
use retrylab::world::keystore::{Claimed, Record, ScopedKey, SharedKeyStore, Slot, Writer};
use retrylab::world::protocol::Reply;

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
        first_request_ms: 0,
        completed_ms: None,
        slot: Slot::InFlight { job },
    }
}

fn done() -> Option<Record> {
    let resource = ResourceId(0);
    Some(Record {
        fingerprint: Params(1),
        first_request_ms: 0,
        completed_ms: Some(1),
        slot: Slot::Done {
            reply: Reply::Created {
                resource,
                replayed: false,
            },
            resource: Some(resource),
        },
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Atomic,
    KeyThenEffect,
    EffectThenKey,
}

/// One create under `key()`. If `crash` is set when the request reaches its crash point
/// (between the key and the effect, or the effect and the key), the process dies there.
fn request(
    store: &SharedKeyStore,
    effects: &AtomicUsize,
    crash: &AtomicBool,
    variant: Variant,
    job: u32,
) {
    match variant {
        Variant::Atomic | Variant::KeyThenEffect => {
            let Claimed::Fresh { .. } = store.claim(key(), marker(job), |_| false) else {
                return; // 409 or a replay: no effect
            };
            if crash.load(SeqCst) {
                if variant == Variant::Atomic {
                    store.release(&key(), job); // the transaction aborts: nothing stays
                } else {
                    store.orphan(&key(), job); // the key stays, without its effect
                }
                return;
            }
            effects.fetch_add(1, SeqCst);
            store.finish(key(), Writer::Marker(job), done());
        }
        Variant::EffectThenKey => {
            if store.peek(&key(), |_| false).is_some() {
                return;
            }
            effects.fetch_add(1, SeqCst);
            if crash.load(SeqCst) {
                return; // the effect exists, its key was never written
            }
            store.finish(key(), Writer::FirstWriter, done());
        }
    }
}

/// Two concurrent same-key requests; returns the number of effects.
fn two_requests(variant: Variant) -> usize {
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
fn crash_then_retry(variant: Variant) -> usize {
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
    loom::model(|| assert_eq!(two_requests(Variant::Atomic), 1));
}

#[test]
fn atomic_store_a_crash_then_a_retry_commit_exactly_one_effect() {
    loom::model(|| assert_eq!(crash_then_retry(Variant::Atomic), 1));
}

#[test]
fn key_then_effect_store_blocks_concurrent_duplicates() {
    // The key is claimed first, so a concurrent request cannot execute too.
    loom::model(|| assert_eq!(two_requests(Variant::KeyThenEffect), 1));
}

#[test]
fn key_then_effect_store_a_crash_leaves_a_key_without_effect() {
    static FOUND: StdCounter = StdCounter::new(0);
    loom::model(|| {
        let n = crash_then_retry(Variant::KeyThenEffect);
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
        let n = two_requests(Variant::EffectThenKey);
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
        if crash_then_retry(Variant::EffectThenKey) == 2 {
            FOUND.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    assert!(FOUND.load(std::sync::atomic::Ordering::SeqCst) > 0);
}
