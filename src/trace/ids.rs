//! Maps keyed by the trace's own numbers — an event's index, a file's id — hashed with a
//! few multiplies. A replay looks several of them up for each call it makes, and std's SipHash,
//! built for keys an attacker picks, cost a replay of `dd bs=1` about 0.1 µs a call of its
//! 1 µs. These keys are no one's choice: an event's index is its place in the trace, and a
//! file id is checked against the trace's files when it is read (`recording::check`); the
//! finish spreads them over both ends of the hash (the table finds a bucket by its low bits
//! and tells entries apart by its high ones).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// A map keyed by trace numbers.
pub type IdMap<K, V> = HashMap<K, V, BuildIds>;

/// Builds the [`Ids`] hasher.
#[derive(Debug, Default, Clone, Copy)]
pub struct BuildIds;

impl BuildHasher for BuildIds {
    type Hasher = Ids;
    fn build_hasher(&self) -> Ids {
        Ids(0)
    }
}

/// The state of one key's hash: its words folded together.
#[derive(Debug)]
pub struct Ids(u64);

/// An odd constant with its bits spread (from the golden ratio).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

impl Ids {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(K);
    }
}

impl Hasher for Ids {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        // MurmurHash3's 64-bit finalizer: each bit of the key moves about half the hash's
        // bits, the low ones too (a multiply alone moves only the bits above it).
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^ (x >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash<T: std::hash::Hash>(t: T) -> u64 {
        BuildIds.hash_one(t)
    }

    /// Dense keys (what event indices and file ids are) and keys that differ only in their
    /// high bits land in different buckets and carry different tags: neither end of the hash
    /// is constant over them.
    #[test]
    fn keys_spread_over_both_ends_of_the_hash() {
        let buckets = |keys: &[u64]| {
            let low: std::collections::HashSet<u64> =
                keys.iter().map(|&k| hash(k) & 1023).collect();
            let high: std::collections::HashSet<u64> =
                keys.iter().map(|&k| hash(k) >> 57).collect();
            (low.len(), high.len())
        };
        let dense: Vec<u64> = (0..1024).collect();
        let (low, high) = buckets(&dense);
        assert!(low > 600, "dense keys fill {low} of 1024 buckets");
        assert_eq!(high, 128, "dense keys take every tag");
        let high_bits: Vec<u64> = (0..1024).map(|k| k << 40).collect();
        let (low, high) = buckets(&high_bits);
        assert!(
            low > 600,
            "keys apart in their high bits fill {low} of 1024 buckets"
        );
        assert_eq!(high, 128);
        // A pair's halves are not interchangeable.
        assert_ne!(hash((1u32, 2u32)), hash((2u32, 1u32)));
    }

    #[test]
    fn a_map_keyed_by_ids_finds_what_was_put_in() {
        let mut m: IdMap<usize, usize> = IdMap::default();
        for i in 0..100_000 {
            m.insert(i * 7, i);
        }
        assert!((0..100_000).all(|i| m.get(&(i * 7)) == Some(&i)));
        assert_eq!(m.get(&1), None);
    }
}
