//! `iogauge iotest -i N -t DIR -b BLOCKS -s KB`: SAS's iotest.sh. N writers at once each
//! write their own file of BLOCKS blocks of KB KiB (dd-like: buffered, one I/O at a time),
//! then N readers read them back, then the files are removed. Output: per-iteration real
//! times, the results file's RESULTS (invocation, target details, statistics), and the verdict
//! the SAS KB asks administrators to reach by hand: MB/s per CPU core against SAS's guidance,
//! files smaller than RAM, and CPU time against real time.

use crate::compat::LegacyError;
use std::fmt::Write;
use std::path::PathBuf;

use super::{Personality, Rendered, Step};
use crate::plan::{Origin, Section};
use crate::result::JobReport;
use crate::studies::Report;

pub const USAGE: &str = "\
iotest (iogauge personality of SAS's iotest.sh)

Usage: iogauge iotest -i N -t DIR -b BLOCKS -s KB [--results FILE] [--verify]

  -i N        concurrent iterations: N writers at once, then N readers (default 1, at most 256)
  -t DIR      directory on the file system to test (must exist)
  -b BLOCKS   blocks per file
  -s KB       block size in KB (KiB): each file is BLOCKS x KB KiB

Writers write whole blocks, one at a time, through the page cache (as dd does); iogauge
times each writer up to its final fsync, so a file smaller than RAM is not measured as the
page cache's speed. Readers read one block at a time after iogauge drops the files' cached
pages. The files are removed at the end. Results go to iotest.sh.results.N in the current
directory (or --results FILE), as iotest.sh writes them. MB = 2^20 bytes.

--verify (iogauge's addition): every block written carries a header and a CRC-32C of its
data; after the readers, every file is read back once more (cache dropped) and checked, and
a block not as written is named (file, offset, what was found) with exit status 1. The timed
writes and reads are not slowed by the check beyond computing the checksum as they write.
";

/// A parsed iotest invocation.
#[derive(Debug, Clone)]
pub struct Iotest {
    pub iterations: u32,
    pub dir: PathBuf,
    pub blocks: u64,
    pub block_kb: u64,
    pub results: PathBuf,
    /// The invocation as iotest.sh would echo it.
    pub invocation: String,
    /// iogauge's `--verify`: check every file after the readers.
    pub verify: bool,
}

fn err(msg: impl Into<String>) -> LegacyError {
    LegacyError::Usage {
        tool: "iotest",
        why: msg.into(),
    }
}

/// Parses the arguments after `iotest`. `Ok(None)`: no arguments, print the usage.
pub fn parse(args: &[String]) -> Result<Option<Iotest>, LegacyError> {
    if args.is_empty() {
        return Ok(None);
    }
    let (mut i, mut t, mut b, mut s, mut results) = (None, None, None, None, None);
    let mut verify = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, attached) = if a.starts_with("--") {
            (a.as_str(), None)
        } else if let Some((flag, rest)) = a
            .char_indices()
            .nth(2)
            .filter(|_| a.starts_with('-'))
            .map(|(at, _)| a.split_at(at))
        {
            (flag, Some(rest.to_string()))
        } else {
            (a.as_str(), None)
        };
        let mut value = || {
            attached
                .clone()
                .or_else(|| it.next().cloned())
                .ok_or_else(|| err(format!("{flag} needs a value")))
        };
        match flag {
            "-i" => i = Some(int("-i", &value()?, 1, 256)?),
            "-t" => t = Some(crate::rawpath::path(&value()?)),
            "-b" => b = Some(int("-b", &value()?, 1, u64::MAX)?),
            "-s" => s = Some(int("-s", &value()?, 1, 1 << 20)?),
            "--results" => results = Some(crate::rawpath::path(&value()?)),
            "--verify" => verify = true,
            other => {
                return Err(err(format!(
                    "{other}: unknown option; usage: iotest -i N -t DIR -b BLOCKS -s KB"
                )));
            }
        }
    }
    let iterations = i.unwrap_or(1) as u32;
    let dir = t.ok_or_else(|| err("-t DIR is required: the directory to test"))?;
    let blocks = b.ok_or_else(|| err("-b BLOCKS is required: blocks per file"))?;
    let block_kb = s.ok_or_else(|| err("-s KB is required: the block size in KB"))?;
    if !dir.is_dir() {
        return Err(err(format!(
            "-t {}: no such directory",
            crate::rawpath::display(&dir)
        )));
    }
    if blocks.checked_mul(block_kb << 10).is_none() {
        return Err(err(format!(
            "-b {blocks} -s {block_kb}: the file size overflows"
        )));
    }
    let results =
        results.unwrap_or_else(|| PathBuf::from(format!("iotest.sh.results.{iterations}")));
    // Whether it may be written (iogauge's own, or --overwrite-output) is checked before the
    // run, by the CLI.
    let invocation = format!(
        "iotest.sh -i {iterations} -t {} -b {blocks} -s {block_kb}",
        crate::rawpath::display(&dir)
    );
    Ok(Some(Iotest {
        iterations,
        dir,
        blocks,
        block_kb,
        results,
        invocation,
        verify,
    }))
}

fn int(flag: &str, v: &str, min: u64, max: u64) -> Result<u64, LegacyError> {
    super::whole_number("iotest", &format!("{flag} {v}"), v, min, max)
}

/// SAS's guidance (KB article): MB/s per core for small to average systems, for large ones,
/// and the least any SAS file system should give.
pub const PER_CORE_SMALL_MB_S: f64 = 75.0;
pub const PER_CORE_LARGE_MB_S: f64 = 100.0;
pub const MINIMUM_MB_S: f64 = 100.0;

impl Iotest {
    pub fn file_bytes(&self) -> u64 {
        self.blocks * (self.block_kb << 10)
    }

    /// Screen output and the results file's text.
    pub fn output(&self, r: &Report) -> (String, String) {
        let mb = self.file_bytes() as f64 / 1048576.0;
        let jobs = |gi: usize| -> Vec<&JobReport> {
            r.groups
                .get(gi)
                .map_or(Vec::new(), |g| g.jobs.iter().collect())
        };
        let (writers, readers) = (jobs(0), jobs(1));
        let secs = |j: &JobReport| j.measurement.elapsed_ns as f64 / 1e9;
        let mut o = String::new();
        for (phase, js) in [("readtest", &readers), ("writetest", &writers)] {
            for (k, j) in js.iter().enumerate() {
                let _ = writeln!(o, "iotest.sh-{phase}.out.{}:Real {:.2}", k + 1, secs(j));
            }
        }
        let avg = |js: &[&JobReport]| {
            if js.is_empty() {
                0.0
            } else {
                js.iter().map(|j| secs(j)).sum::<f64>() / js.len() as f64
            }
        };
        let (rt, wt) = (avg(&readers), avg(&writers));
        let rate = |t: f64| if t > 0.0 { mb / t } else { 0.0 };
        let mut res = String::from("\nRESULTS\n-------\n");
        let _ = writeln!(res, "INVOCATION : {}\n", self.invocation);
        res += "TARGET DETAILS\n";
        let _ = writeln!(res, "directory : {}", crate::rawpath::display(&self.dir));
        if let Some(t) = r.targets.first() {
            if let Some(sp) = &t.space {
                let used = sp.total_bytes - sp.free_bytes;
                let denom = used + sp.avail_bytes;
                let pct = if denom == 0 {
                    0
                } else {
                    (used * 100).div_ceil(denom)
                };
                let _ = writeln!(
                    res,
                    "df : {} {} {} {} {pct}% {}",
                    t.mount_source,
                    sp.total_bytes / 1024,
                    used / 1024,
                    sp.avail_bytes / 1024,
                    t.mount_point
                );
            }
            let _ = writeln!(
                res,
                "mount point : {} on {} type {} ({})",
                t.mount_source, t.mount_point, t.fs_type, t.mount_options
            );
        }
        let _ = writeln!(
            res,
            "filesize : {} bytes or {mb:.2} megabytes\n",
            self.file_bytes()
        );
        res += "STATISTICS\n";
        let _ = writeln!(res, "average read time in seconds : {rt:.2}");
        let _ = writeln!(
            res,
            "average read throughput rate : {:.2} megabytes per second",
            rate(rt)
        );
        let _ = writeln!(res, "average write time in seconds : {wt:.2}");
        let _ = writeln!(
            res,
            "average write throughput rate : {:.2} megabytes per second",
            rate(wt)
        );
        res += &self.verdict(r, &writers, &readers, mb);
        (
            o.clone() + &res + &crate::report::extras::extras(r, "the legacy tool"),
            o + &res,
        )
    }

    /// The checks the KB article asks for, done for the reader.
    fn verdict(
        &self,
        r: &Report,
        writers: &[&JobReport],
        readers: &[&JobReport],
        mb: f64,
    ) -> String {
        // Run on several hosts at once (mpirun): per core is over all the hosts' cores.
        let (cpus, on) = match &r.scaleout {
            Some(s) => (
                s.hosts.iter().map(|h| h.cpus).sum::<usize>(),
                format!(" on {} host(s)", s.hosts.len()),
            ),
            None => (r.host.cpus, String::new()),
        };
        let cores = cpus.max(1) as f64;
        let mut o = format!("\nVERDICT (iogauge; MB = 2^20 bytes; {cpus} CPU cores{on})\n");
        for (name, js) in [("write", writers), ("read", readers)] {
            if js.is_empty() {
                continue;
            }
            // iotest.sh's own figure, the STATISTICS above: the file over the streams' average
            // time, per stream; all streams together are that many times it. One rate, printed
            // one way in both places.
            let avg_secs = js
                .iter()
                .map(|j| j.measurement.elapsed_ns as f64 / 1e9)
                .sum::<f64>()
                / js.len() as f64;
            let per_stream = if avg_secs > 0.0 { mb / avg_secs } else { 0.0 };
            let total = per_stream * js.len() as f64;
            let per_core = total / cores;
            let grade = if per_core >= PER_CORE_LARGE_MB_S {
                "meets the guidance for large systems (100+ MB/s per core)"
            } else if per_core >= PER_CORE_SMALL_MB_S {
                "meets the guidance for small and average systems (75 MB/s per core), \
                 below the 100+ for large ones"
            } else {
                "BELOW SAS's guidance of 75 MB/s per core"
            };
            let _ = writeln!(
                o,
                "{name}: {per_stream:.2} MB/s per stream x {} concurrent streams = {total:.2} MB/s \
                 = {per_core:.2} MB/s per core: {grade}",
                js.len()
            );
            if total < MINIMUM_MB_S {
                let _ = writeln!(
                    o,
                    "{name}: BELOW the {MINIMUM_MB_S:.0} MB/s SAS asks of any SAS file system"
                );
            }
            // dd's rule of thumb: CPU (user + system) within 10% of real time means the
            // stream was never waiting on I/O.
            let (cpu, real) = js.iter().fold((0.0, 0.0), |(c, t), j| {
                let m = &j.measurement;
                (
                    c + m.cpu.user_s + m.cpu.system_s,
                    t + m.elapsed_ns as f64 / 1e9,
                )
            });
            if real > 0.0 {
                let share = 100.0 * cpu / real;
                let _ = writeln!(
                    o,
                    "{name}: CPU (user + system) per stream is {share:.0}% of its real time: {}",
                    if share >= 90.0 {
                        "within 10%, so the streams were not waiting on the storage"
                    } else {
                        "more than 10% below. SAS reads this rule for a SAS step (CPU within 10% \
                         of real time: the step is CPU-bound; further below: it waits on I/O); \
                         these streams only move data, so waiting on the storage is what they \
                         do, and this is what the I/O cost in CPU, not a fault: the MB/s per \
                         core above is the verdict"
                    }
                );
            }
        }
        let ram = r.host.memory_bytes;
        if ram > 0 && self.file_bytes() < ram {
            let _ = writeln!(
                o,
                "WARNING: each file ({:.2} MB) is smaller than RAM ({:.2} MB). The KB asks for \
                 files larger than RAM, or the page cache answers instead of the disk; iogauge \
                 flushed each write inside its time and dropped the files' cached pages before \
                 reading, but caches below the file system can still answer. Use -b so that \
                 BLOCKS x KB exceeds RAM for a result to quote.",
                self.file_bytes() as f64 / 1048576.0,
                ram as f64 / 1048576.0
            );
        }
        o
    }
}

impl Personality for Iotest {
    /// Writers in one group, readers in the next.
    fn step(&self) -> Step {
        let o = || Origin::Profile("iotest");
        let flag = |flag| Origin::Flag {
            tool: "iotest",
            flag,
        };
        let pid = std::process::id();
        let bs = (self.block_kb << 10).to_string();
        let size = self.file_bytes().to_string();
        // Phases in turn (each after a stonewall): writers, readers, and with --verify a check
        // of each file (what the writers sealed; verify_only, so it writes nothing).
        let mut phases = vec![("writetest", "write"), ("readtest", "read")];
        if self.verify {
            phases.push(("verify", "write"));
        }
        let mut sections = Vec::new();
        for (phase, rw) in phases {
            for k in 1..=self.iterations {
                let file = self.dir.join(format!("iogauge-iotest.{pid}.{k}"));
                let mut s = Section::new(format!("{phase}.out.{k}"));
                s.set(
                    "filename",
                    &crate::rawpath::filename_value(&file),
                    flag("-t"),
                )
                .set("rw", rw, o())
                .set("bs", &bs, flag("-s"))
                .set("size", &size, flag("-b"))
                .set("ioengine", "psync", o());
                match phase {
                    "writetest" => {
                        s.set("end_fsync", "1", o());
                        if self.verify {
                            // Sealed as written; checked after the readers, not while others
                            // are still being timed.
                            s.set("verify", "crc32c", flag("--verify")).set(
                                "do_verify",
                                "0",
                                flag("--verify"),
                            );
                        }
                    }
                    "verify" => {
                        s.set("verify", "crc32c", flag("--verify")).set(
                            "verify_only",
                            "1",
                            flag("--verify"),
                        );
                    }
                    _ => {}
                }
                if phase != "writetest" && k == 1 {
                    s.set("stonewall", "1", o());
                }
                sections.push(s);
            }
        }
        Step {
            sections,
            keep: false,
            words: &[],
        }
    }

    fn render(&self, r: &Report) -> Rendered {
        let (screen, results) = self.output(r);
        Rendered {
            screen,
            file: Some((self.results.clone(), results)),
        }
    }

    fn results_file(&self) -> Option<&std::path::Path> {
        Some(&self.results)
    }
}
