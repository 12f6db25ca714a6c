//! The blocks a random pass with variable I/O sizes has touched (fio's random map): one bit
//! per smallest-size block, so that each pass covers every block exactly once however the
//! sizes fall. Fixed sizes need none of this (the workload's permutation visits each block
//! once); this costs one bit per block, as fio's map does.

#[derive(Debug, Clone)]
pub(crate) struct BlockMap {
    bits: Vec<u64>,
}

impl BlockMap {
    pub(crate) fn new(blocks: u64) -> Self {
        BlockMap {
            bits: vec![0; blocks.div_ceil(64) as usize],
        }
    }

    #[inline]
    pub(crate) fn is_set(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    #[inline]
    pub(crate) fn set(&mut self, b: u64) {
        self.bits[(b / 64) as usize] |= 1 << (b % 64);
    }

    pub(crate) fn clear(&mut self) {
        self.bits.iter_mut().for_each(|w| *w = 0);
    }

    /// Marks up to `most` untouched blocks `first`, `first + step`, … (stopping at one
    /// already touched or at `end`, exclusive); how many were marked. `first` is untouched.
    pub(crate) fn take_run(&mut self, first: u64, step: u64, most: u64, end: u64) -> u64 {
        let mut n = 0;
        let mut b = first;
        while n < most && b < end && !self.is_set(b) {
            self.set(b);
            n += 1;
            b += step;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_stops_at_a_touched_block_and_at_the_end() {
        let mut m = BlockMap::new(130);
        m.set(5);
        assert_eq!(m.take_run(1, 1, 10, 130), 4); // 1..=4, stops before 5
        assert!((1..5).all(|b| m.is_set(b)) && !m.is_set(0));
        assert_eq!(m.take_run(120, 3, 10, 130), 4); // 120, 123, 126, 129
        assert!(m.is_set(129) && !m.is_set(121));
        m.clear();
        assert!(!m.is_set(5) && !m.is_set(129));
    }
}
