//! What a job's writes carry: the data mode (random stamped per write, refilled, zeros, a
//! pattern) and its shape — how compressible (zeros at the end of each chunk) and how
//! dedupable (the share of writes that repeat another's data, and which data they repeat:
//! fio's `dedupe_mode`, `dedupe_working_set_percentage`, `dedupe_global`).

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Random, incompressible bytes, each written block stamped unique.
    Random,
    /// Fresh random bytes before every write.
    Refill,
    Zero,
    /// `buffer_pattern`'s bytes, repeated, in every write.
    Pattern,
}

/// What the bytes written look like beyond their mode: how compressible and how dedupable
/// (fio's buffer_compress_percentage, buffer_compress_chunk, dedupe_percentage,
/// scramble_buffers, buffer_pattern).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataShape {
    /// Of each `compress_chunk` bytes, this share is zeros (the rest random).
    pub compress_pct: u8,
    pub compress_chunk: u64,
    /// Share of writes whose data repeats another write's (their stamps are the same).
    pub dedupe_pct: u8,
    /// Which data a repeating write takes (fio's `dedupe_mode`): 0, write 0's (`repeat`);
    /// else that of one of about this many unique writes (`working_set`), drawn by the
    /// write's number.
    pub dedupe_set: u64,
    /// `dedupe_global`: this job's place among the jobs sharing their working sets, and how
    /// many share them. Their unique writes' stamps carry their place, and their bytes one
    /// template, so a repeating write of one may repeat another's unique write.
    pub dedupe_share: Option<(u32, u32)>,
    /// Stamp every write unique (the first 8 bytes of each 512-byte sector).
    pub scramble: bool,
    /// The pattern of `DataMode::Pattern`.
    pub pattern: Vec<u8>,
    /// Where in `pattern` each write pastes its own offset (fio's `%o`, 8 bytes).
    pub pattern_offsets: Vec<usize>,
    /// The pattern restarts every this many bytes of a write, its `%o` pieces holding where
    /// (`verify_pattern_interval`; 0: once per write).
    pub pattern_segment: u64,
}

impl DataShape {
    /// Each write's bytes depend on where it goes (`%o`, or a pattern restarted within it):
    /// it is filled as it is prepared, not copied from the slot's template.
    pub fn pattern_per_write(&self) -> bool {
        !self.pattern_offsets.is_empty() || self.pattern_segment > 0
    }
}

impl Default for DataShape {
    fn default() -> Self {
        DataShape {
            compress_pct: 0,
            compress_chunk: 512,
            dedupe_pct: 0,
            dedupe_set: 0,
            dedupe_share: None,
            scramble: true,
            pattern: Vec::new(),
            pattern_offsets: Vec::new(),
            pattern_segment: 0,
        }
    }
}

impl DataShape {
    /// The stamp write `seq` carries, if any. dedupe_percentage of writes repeat another's
    /// data: write 0's (`repeat`), or (`working_set`) one unique write's among about
    /// `dedupe_set`, of this job or, shared (`dedupe_global`), of any job sharing them. Each
    /// choice follows from the write's number, so the same writes repeat the same data each
    /// run and a check can make the bytes again.
    pub fn stamp_of(&self, mode: DataMode, seq: u64) -> Option<u64> {
        if mode != DataMode::Random || !self.scramble {
            return None;
        }
        let own = self.dedupe_share.map_or(0, |(me, _)| me);
        if !self.repeats(seq) {
            return Some(tagged(own, seq));
        }
        let pct = u64::from(self.dedupe_pct);
        if self.dedupe_set == 0 || pct >= 100 {
            return Some(tagged(own, 0));
        }
        // The working set: the unique writes among the first `dedupe_set` / (1 - pct) writes,
        // about `dedupe_set` of them; a draw lands on one and steps to the next unique write.
        let h = mix(seq);
        let range = (self.dedupe_set * 100 / (100 - pct)).max(1);
        let mut c = h % range;
        while self.repeats(c) {
            c += 1;
        }
        let owner = self
            .dedupe_share
            .map_or(0, |(_, n)| ((h >> 40) % u64::from(n.max(1))) as u32);
        Some(tagged(owner, c))
    }

    /// Whether write `seq` repeats another's data (dedupe_percentage of them, by its number).
    fn repeats(&self, seq: u64) -> bool {
        let pick = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        pick % 100 < u64::from(self.dedupe_pct)
    }

    /// Whether the sector at byte `at` of a page carries the write's stamp: not where it
    /// would land in a chunk's zeros (the data stays exactly as compressible as asked).
    pub fn stamps_sector(&self, at: usize) -> bool {
        if self.compress_pct == 0 {
            return true;
        }
        let chunk = self.compress_chunk.max(1) as usize;
        let keep = chunk * (100 - usize::from(self.compress_pct)) / 100;
        at % chunk + 8 <= keep
    }

    /// Zeros the compressible share of each chunk of `buf` (a page, or its start).
    pub fn shape(&self, buf: &mut [u8]) {
        if self.compress_pct == 0 {
            return;
        }
        let chunk = self.compress_chunk.max(1) as usize;
        let keep = chunk * (100 - usize::from(self.compress_pct)) / 100;
        for c in buf.chunks_mut(chunk) {
            let from = keep.min(c.len());
            c[from..].fill(0);
        }
    }

    /// The data in words, for the report.
    pub fn describe(&self, mode: DataMode) -> String {
        let mut s = match mode {
            DataMode::Random if self.dedupe_share.is_some() => {
                "random bytes (one pattern for the jobs sharing a dedupe working set)".to_string()
            }
            DataMode::Random => "random bytes (one pattern per job)".to_string(),
            DataMode::Refill => "fresh random bytes each write".to_string(),
            DataMode::Zero => "zeros: compressible and dedupable".to_string(),
            DataMode::Pattern => format!(
                "the pattern 0x{} repeated: compressible and dedupable",
                self.pattern
                    .iter()
                    .take(16)
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ),
        };
        if matches!(mode, DataMode::Random | DataMode::Refill) {
            if self.compress_pct > 0 {
                s += &format!(
                    ", {}% compressible (zeros at the end of each {}-byte chunk)",
                    self.compress_pct, self.compress_chunk
                );
            } else {
                s += ", incompressible";
            }
        }
        if mode == DataMode::Random {
            s += &match (self.scramble, self.dedupe_pct) {
                (false, _) => ", every write alike (scramble_buffers=0): dedupable".to_string(),
                (true, 0) => ", every write stamped unique".to_string(),
                (true, d) if self.dedupe_set == 0 => {
                    format!(", {d}% of writes repeating the first write's data (dedupable)")
                }
                (true, d) => format!(
                    ", {d}% of writes repeating one of a working set of about {} unique writes' \
                     data{} (dedupable)",
                    self.dedupe_set,
                    match self.dedupe_share {
                        Some((_, n)) if n > 1 => format!(", shared by {n} jobs"),
                        _ => String::new(),
                    }
                ),
            };
        }
        s
    }
}

/// A unique write's stamp: its number, with (`dedupe_global`) its job's place above bit 48.
fn tagged(job: u32, seq: u64) -> u64 {
    seq | (u64::from(job) << 48)
}

/// A second, independent hash of a write's number (splitmix64's finaliser).
fn mix(seq: u64) -> u64 {
    let mut z = seq.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
