//! A resolved job in fio's words, one line (`--parse-only`).

use super::job::{Distribution, EndFlush, JobSpec, RwMode, SyncMode};

/// fio's per-direction value: one value when the directions used agree, else `R,W,T`.
pub(crate) fn per_direction<T: PartialEq + std::fmt::Display>(
    v: &[T; 3],
    used: [bool; 3],
) -> String {
    let mut used_values = v.iter().zip(used).filter(|(_, u)| *u).map(|(x, _)| x);
    let first = used_values.next().unwrap_or(&v[0]);
    if used_values.all(|x| x == first) {
        first.to_string()
    } else {
        format!("{},{},{}", v[0], v[1], v[2])
    }
}

impl JobSpec {
    /// The resolved job in fio's words, one line (for `--parse-only`).
    pub fn summary(&self) -> String {
        let mut o = self.shape_words();
        self.timing_words(&mut o);
        self.flag_words(&mut o);
        o
    }

    /// What it does and where: pattern, sizes, region, files, engine, queue, direct, sync.
    fn shape_words(&self) -> String {
        let mut o = format!("rw={}", self.rw.as_str());
        if matches!(self.rw, RwMode::ReadWrite | RwMode::RandRw) {
            o += &format!(" rwmixread={}", self.read_pct);
        }
        let sizes = self.sizes.clone().map(|s| s.describe());
        o += &format!(" bs={}", per_direction(&sizes, self.rw.sized_dirs()));
        if self.numpages > 1 {
            o += &format!(" numpages={}", self.numpages);
        }
        match (self.size, self.size_pct) {
            (Some(s), _) => o += &format!(" size={s}"),
            (None, Some(p)) => o += &format!(" size={p}%"),
            (None, None) if self.fill_device => o += " size=(until the file system is full)",
            (None, None) => o += " size=(the existing file's)",
        }
        if let Some(b) = self.io_bytes {
            o += &format!(" io_size={b}");
        }
        if self.offset > 0 || self.offset_pct.is_some() {
            match self.offset_pct {
                Some(p) => o += &format!(" offset={p}%"),
                None => o += &format!(" offset={}", self.offset),
            }
        }
        let paths: Vec<String> = self
            .paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        o += &format!(" files={}", paths.join(":"));
        o += &format!(
            " ioengine={} iodepth={}",
            self.engine.as_str(),
            self.queue.depth
        );
        o += &format!(" direct={}", u8::from(self.direct));
        if self.sync.mode != SyncMode::None {
            o += &format!(" sync={:?}", self.sync.mode).to_lowercase();
        }
        o
    }

    /// How long and how fast: runtime, ramp, delays, loops, rates, think time, randomness.
    fn timing_words(&self, o: &mut String) {
        if let Some(r) = self.timing.runtime {
            *o += &format!(" runtime={}s", r.as_secs_f64());
        }
        if self.timing.time_based {
            *o += " time_based";
        }
        if !self.timing.ramp.is_zero() {
            *o += &format!(" ramp_time={}s", self.timing.ramp.as_secs_f64());
        }
        if !self.pacing.startdelay.is_zero() {
            *o += &format!(" startdelay={}s", self.pacing.startdelay.as_secs_f64());
        }
        if self.timing.loops > 1 {
            *o += &format!(" loops={}", self.timing.loops);
        }
        if let Some(n) = self.number_ios {
            *o += &format!(" number_ios={n}");
        }
        for (name, v) in [
            ("rate", self.pacing.rate_bps),
            ("rate_iops", self.pacing.rate_iops),
        ] {
            if v != [0; 3] {
                *o += &format!(" {name}={}", per_direction(&v, self.rw.dirs()));
            }
        }
        if !self.pacing.thinktime.is_zero() {
            *o += &format!(
                " thinktime={}us thinktime_blocks={}",
                self.pacing.thinktime.as_micros(),
                self.pacing.thinktime_blocks
            );
        }
        if self.rw.is_random() {
            match &self.random.distribution {
                Distribution::Uniform => {}
                d => *o += &format!(" random_distribution={d:?}").to_lowercase(),
            }
            if self.random.pct_random != [100; 3] {
                *o += &format!(
                    " percentage_random={}",
                    per_direction(&self.random.pct_random, self.rw.dirs())
                );
            }
            if !self.random.randommap {
                *o += " norandommap";
            }
            if self.random.align != 0 {
                *o += &format!(" blockalign={}", self.random.align);
            }
        }
    }

    /// What it waits for and the flags it sets.
    fn flag_words(&self, o: &mut String) {
        if let Some(w) = &self.pacing.wait_for {
            *o += &format!(" wait_for={w}");
        }
        for (on, name) in [
            (self.exitall, "exitall"),
            (self.new_group, "new_group"),
            (self.unlink, "unlink"),
            (self.unlink_each_loop, "unlink_each_loop"),
            (self.fill_device, "fill_device"),
            (self.sync.at_end == EndFlush::Fsync, "end_fsync"),
            (self.sync.at_end == EndFlush::Syncfs, "end_syncfs"),
            (self.group_reporting, "group_reporting"),
        ] {
            if on {
                *o += &format!(" {name}");
            }
        }
        if let Some(l) = self.pacing.latency {
            *o += &format!(
                " latency_target={}us latency_window={}us latency_percentile={}{}",
                l.target.as_micros(),
                l.window.as_micros(),
                l.percentile,
                if l.run { " latency_run" } else { "" }
            );
        }
        match self.exit_what {
            _ if !self.exitall => {}
            super::ExitWhat::Group => {}
            super::ExitWhat::Stonewall => *o += " exit_what=stonewall",
            super::ExitWhat::All => *o += " exit_what=all",
        }
        for (name, every) in [
            ("fsync", self.sync.fsync_every),
            ("fdatasync", self.sync.fdatasync_every),
            ("sync_file_range", self.sync.range_every),
        ] {
            if every > 0 {
                *o += &format!(" {name}={every}");
            }
        }
    }
}
