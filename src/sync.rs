//! The synchronization shim: std's types normally, loom's under `--cfg loom`.
//!
//! The journal and the provider's key store are real thread-safe code built on these types.
//! The simulator reaches their logic without locking (it owns them, so `get_mut` proves it
//! has exclusive access); the loom tests reach the very same logic through the locking
//! wrappers, from several threads, and loom explores every interleaving.

#[cfg(loom)]
pub use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::sync::{Mutex, MutexGuard};

/// Locks `m`. A panic while holding the lock cannot leave these structures half-written (each
/// operation is one short critical section), so a poisoned lock is simply taken over.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Exclusive access without locking, for the owner of `m`.
pub fn get_mut<T>(m: &mut Mutex<T>) -> &mut T {
    m.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner())
}
