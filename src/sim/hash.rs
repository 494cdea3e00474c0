//! The crate's fixed-key hashes, the same on every machine, in every run and every process
//! (never a randomly keyed `std` hasher):
//!
//! - [`StableHasher`], for fingerprints of states (the world's, an executor's): fast on
//!   words, collisions as a random function's;
//! - [`Fnv1a`], 64-bit FNV-1a, where a hash is written down and compared later: a model
//!   file's hash in a report (`file_fnv1a`), the key of a tool call's arguments, the
//!   determinism self-check's digests. It is the reference function, so that anyone can
//!   recompute what a report prints.

use std::hash::{Hash, Hasher};

/// A fixed-key 64-bit hasher for fingerprints.
///
/// Words are absorbed two at a time with one folded 128-bit multiply (the mixing step of
/// wyhash): every bit of the result depends on every bit of both words and of the state, so
/// structured inputs (small ids, times) are spread over all 64 bits, at about one multiply
/// per two words. Collisions are those of a random function: about one in 2^64 for two given
/// states; among a million states, about one chance in 37 million that two share a
/// fingerprint, among a billion about one in 37 (an explorer that prunes on a collision
/// misses the branch). Never a randomly keyed `std` hasher: its hashes change from
/// one process to the next.
#[derive(Clone, Copy, Debug)]
pub struct StableHasher {
    state: u64,
    /// A word waiting for its partner: words are absorbed two at a time.
    pending: Option<u64>,
}

/// The initial state (the fractional digits of pi).
const SEED: u64 = 0x243F_6A88_85A3_08D3;
/// The constants the two words of a pair are offset by (from wyhash).
const P0: u64 = 0xA076_1D64_78BD_642F;
const P1: u64 = 0xE703_7ED1_A0B4_28DB;
/// The partner of a last word left alone.
const ALONE: u64 = 0x8EBC_6AF0_9C88_C6E3;

/// The 128-bit product of `a` and `b`, its two halves folded together: every bit of the
/// result depends on every bit of both.
fn fold(a: u64, b: u64) -> u64 {
    let m = u128::from(a) * u128::from(b);
    (m as u64) ^ ((m >> 64) as u64)
}

impl StableHasher {
    pub fn new() -> Self {
        Self {
            state: SEED,
            pending: None,
        }
    }

    /// Absorbs the pair `(a, b)`. The state enters through the first factor and is xored
    /// back in, so that a partner that cancels its offset (`b == P1`, one chance in 2^64)
    /// leaves the history in place instead of wiping it.
    fn absorb(&mut self, a: u64, b: u64) {
        self.state ^= fold(a ^ self.state ^ P0, b ^ P1);
    }
}

impl Default for StableHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Hasher for StableHasher {
    fn write_u64(&mut self, word: u64) {
        match self.pending.take() {
            Some(first) => self.absorb(first, word),
            None => self.pending = Some(word),
        }
    }

    /// Bytes in little-endian words of eight, then their count (so that a trailing zero byte
    /// is not lost in the padding).
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        self.write_u64(bytes.len() as u64);
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_u128(&mut self, i: u128) {
        self.write_u64(i as u64);
        self.write_u64((i >> 64) as u64);
    }

    /// As 64 bits on every platform.
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    fn write_i8(&mut self, i: i8) {
        self.write_u64(i as u64);
    }

    fn write_i16(&mut self, i: i16) {
        self.write_u64(i as u64);
    }

    fn write_i32(&mut self, i: i32) {
        self.write_u64(i as u64);
    }

    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }

    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }

    /// Enum discriminants come through here: as 64 bits on every platform.
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as u64);
    }

    fn finish(&self) -> u64 {
        let mut last = *self;
        if let Some(word) = last.pending.take() {
            last.absorb(word, ALONE);
        }
        fold(last.state ^ P0, SEED ^ P1)
    }
}

/// Hashes `items` into `h` whatever order they come in: each on its own, the hashes added up,
/// then the count and the sum. For hash maps, whose iteration order is not part of the state.
pub(crate) fn unordered<H: Hasher, T: Hash>(h: &mut H, items: impl Iterator<Item = T>) {
    let (mut n, mut sum) = (0u64, 0u64);
    for item in items {
        let mut one = StableHasher::new();
        item.hash(&mut one);
        n += 1;
        sum = sum.wrapping_add(one.finish());
    }
    h.write_u64(n);
    h.write_u64(sum);
}

/// FNV-1a, 64 bits (Fowler, Noll and Vo): bytes one at a time, xor then multiply.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a(u64);

/// FNV-1a's 64-bit offset basis and prime.
const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Fnv1a {
    pub fn new() -> Self {
        Fnv1a(FNV_BASIS)
    }

    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Fnv1a::new();
        h.write(bytes);
        h.finish()
    }

    /// The hash of `bytes` as 16 lowercase hex digits (a report's `file_fnv1a`).
    pub fn hex(bytes: &[u8]) -> String {
        format!("{:016x}", Fnv1a::of(bytes))
    }
}

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

impl Hasher for Fnv1a {
    /// Exactly the bytes given, one at a time: integers through the default methods reach
    /// here as their bytes in the machine's order.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published test vectors of 64-bit FNV-1a.
    #[test]
    fn fnv1a_is_the_reference_function() {
        assert_eq!(Fnv1a::of(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv1a::of(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv1a::of(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(Fnv1a::hex(b"a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn unordered_ignores_order_but_not_content() {
        let of = |items: &[(u32, u32)]| {
            let mut h = StableHasher::new();
            unordered(&mut h, items.iter());
            h.finish()
        };
        assert_eq!(of(&[(1, 2), (3, 4)]), of(&[(3, 4), (1, 2)]));
        assert_ne!(of(&[(1, 2), (3, 4)]), of(&[(1, 2), (3, 5)]));
        assert_ne!(of(&[(1, 2)]), of(&[(1, 2), (0, 0)]));
        assert_ne!(of(&[(1, 2), (3, 4)]), of(&[(1, 4), (3, 2)]));
    }
}
