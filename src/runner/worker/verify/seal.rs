//! The job's writes under verification: each block sealed with its header as the write is
//! made, the map told what each acknowledged write left, the journal told what became durable,
//! and verify_backlog's pauses to read the latest writes back.

use std::time::Duration;

use super::super::{Halt, Loop};
use super::Map;
use crate::engine::Engine;
use crate::units::unix_ns;
use crate::verify::{Checksum, FLAG_REGENERABLE, Stamp, seal, swap_header};

impl<E: Engine> Loop<'_, '_, E> {
    /// Seals every block of slot `i`'s write (its data already in place); `write_back`:
    /// update mode's write of the data just read, which cannot be made again from a pattern.
    pub(in crate::runner::worker) fn seal_write(&mut self, i: usize, write_back: bool) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let u = &mut self.slab[i];
        let (file, offset, len) = (u.file, u.offset, u.len() as u64);
        // Another write of the same blocks in flight: the device may apply either last.
        let end = offset + len;
        for (j, s) in self.st.iter_mut().enumerate() {
            if j != i && s.writing && s.file == file && s.offset < end && offset < s.end {
                s.overlapped = true;
                self.st[i].overlapped = true;
                break;
            }
        }
        let s = &mut self.st[i];
        (s.writing, s.file, s.offset, s.end) = (true, file, offset, end);
        let regenerable = !write_back && u.page_len() % 512 == 0;
        let mut stamp = Stamp {
            flags: if regenerable { FLAG_REGENERABLE } else { 0 },
            offset,
            run_id: v.run_id,
            job: v.job,
            seq: s.write_seq,
            generation: 0,
            written_unix_ns: unix_ns(),
            write_offset: offset,
            write_len: len as u32,
        };
        let interval = v.spec.interval as usize;
        let mut block = v.blocks(file, offset, len).start;
        let begun = &mut v.begun[i];
        begun.clear();
        for page in u.pages_mut() {
            for b in page.chunks_exact_mut(interval) {
                stamp.generation = match &v.maps[file] {
                    Map::Own(map) => map.next(block),
                    Map::Shared { map, .. } => {
                        let w = map.begin(block);
                        begun.push(w);
                        w.0
                    }
                };
                if v.spec.checksum != Checksum::Pattern {
                    seal(b, v.spec.checksum, &stamp);
                    if v.spec.header_at > 0 {
                        swap_header(b, v.spec.header_at as usize);
                    }
                }
                stamp.offset += interval as u64;
                block += 1;
            }
        }
    }

    /// Slot `i`'s write completed (`ok`) or failed: the map learns what its blocks hold.
    pub(in crate::runner::worker) fn acknowledge(&mut self, i: usize, ok: bool) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let s = &mut self.st[i];
        if !s.writing {
            return;
        }
        let (file, offset, end, overlapped) = (s.file, s.offset, s.end, s.overlapped);
        let seq = s.write_seq;
        (s.writing, s.overlapped) = (false, false);
        if v.spec.header_at > 0 && v.spec.checksum != Checksum::Pattern {
            // The buffer goes back to the data behind its header, so the next write made
            // from it is the job's pattern again.
            let interval = v.spec.interval as usize;
            for page in self.slab[i].pages_mut() {
                for b in page.chunks_exact_mut(interval) {
                    swap_header(b, v.spec.header_at as usize);
                }
            }
        }
        let range = v.blocks(file, offset, end - offset);
        match &mut v.maps[file] {
            Map::Own(map) => {
                for b in range.clone() {
                    // A failed write may have landed in part: either data may be there.
                    let g = map.next(b);
                    map.acknowledge(b, g, overlapped || !ok);
                }
                // Written again: the phase after the job checks it, whatever a pause did.
                for b in range.clone() {
                    v.set_checked(file, b, false);
                }
            }
            Map::Shared { map, .. } => {
                for (b, w) in range.clone().zip(v.begun[i].drain(..)) {
                    map.end(b, w, ok);
                }
            }
        }
        if ok && v.spec.backlog > 0 {
            v.backlog.push((file, offset, end - offset));
            self.backlog_due = v.backlog.len() as u64 >= v.spec.backlog;
        }
        if ok && v.journal.is_some() && !overlapped {
            v.dirty[file].extend(range.map(|b| (b as u64, seq)));
            if v.write_through {
                // Durable as acknowledged.
                if let Err(e) = v.journal_durable(Some(file)) {
                    self.journal_failed(e);
                }
            }
        }
    }

    /// A flush of `file` (every file: `None`) made its writes durable: journal them.
    pub(in crate::runner::worker) fn made_durable(&mut self, file: Option<usize>) {
        if let Some(Err(e)) = self.verify.as_mut().map(|v| v.journal_durable(file)) {
            self.journal_failed(e);
        }
    }

    fn journal_failed(&mut self, e: std::io::Error) {
        if self.error.is_none() {
            self.error = Some(super::super::JobError {
                file: None,
                offset: None,
                direction: Some("verify".into()),
                errno: e.raw_os_error(),
                message: format!("verify_state_save: the journal could not be written: {e}"),
            });
        }
        self.halt = Halt::Abort;
        self.w
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// verify_backlog: once nothing is in flight, read back the last `backlog_batch` of the
    /// writes since the last pause and check them, then go on with the workload. The reads
    /// are not the job's (not counted), the pause is (its figures include it).
    pub(in crate::runner::worker) fn backlog_pause(&mut self) {
        self.backlog_due = false;
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let batch = v.spec.backlog_batch as usize;
        let from = v.backlog.len().saturating_sub(batch);
        v.backlog_reads.extend(v.backlog.drain(..).skip(from));
        v.in_backlog = true;
        v.active = true;
        let (exhausted, pace) = (self.exhausted, self.pace.on);
        (self.exhausted, self.pace.on) = (false, false);
        let start = self.clock.now();
        self.run();
        let end = self.clock.now();
        (self.exhausted, self.pace.on) = (exhausted, pace);
        if let Some(v) = self.verify.as_mut() {
            v.backlog_reads.clear();
            v.in_backlog = false;
            v.active = false;
            // The pause's reads are counted as read back: so is its time.
            v.stats.elapsed += Duration::from_nanos(self.clock.ns(end.saturating_sub(start)));
        }
    }
}
