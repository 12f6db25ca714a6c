//! `iogauge sqlio [options] [file...]`: Microsoft's sqlio on Linux and Windows. Threads per
//! file become `numjobs`, outstanding I/Os per thread the queued engine's `iodepth` (io_uring;
//! windowsaio on Windows), `-B` picks the cache flags (N: O_DIRECT + O_DSYNC, H: O_DIRECT, S:
//! O_DSYNC, Y: cached), and a parameter file (`-F`) names targets with their thread counts and
//! sizes, creating (expanding) missing files as sqlio does and keeping them for the next test.
//! `--batch FILE` runs a file of sqlio lines in order. Output is sqlio's, then iogauge's
//! additions.

use crate::compat::LegacyError;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::{Personality, Rendered, Step};
use crate::plan::{Origin, Section};
use crate::studies::Report;

mod batch;
pub use batch::{Batch, BatchEnd, BatchItem, read_batch};

pub const USAGE: &str = "\
sqlio (iogauge sqlio personality)

Usage: iogauge sqlio [options] [file...]
       iogauge sqlio --batch FILE [--pause SECS]

  -kR | -kW            kind of I/O: reads (default) or writes
  -s<secs>             seconds to run (default 30)
  -f<random|sequential|N>
                       access pattern: random, sequential, or N = blocks between I/Os
                       (after each I/O skip N blocks; wraps at the end). Default 64, as sqlio.
  -o<n>                outstanding I/Os per thread, 1 to 256 (the queued engine's iodepth; default 1)
  -b<KB>               I/O size in KB (KiB), 1 to 1024 (default 2)
  -t<n>                threads per file, 1 to 256 (default 1)
  -B<N|Y|H|S>          buffering: N = no caching (O_DIRECT + O_DSYNC, default), H = device
                       cache only (O_DIRECT), S = page cache, written through (O_DSYNC),
                       Y = page cache (cached)
  -L<S|P>              print latency metrics and the histogram (both timers are iogauge's
                       monotonic clock)
  -F<file>             parameter file: one target per line, 'path threads mask size_MB';
                       '#' starts a comment; missing files are created to size_MB MB (MiB)
  -d<dir>[,<dir>...]   run on the same file name in each directory (sqlio's -d<drives>)
  file                 test file(s), which must exist (default testfile.dat); create them
                       with a parameter file first

The test file is kept for the next command, as sqlio keeps it. --batch runs a file of sqlio
command lines ('sqlio' first on each line; 'timeout /T N' lines pause; 'rem', '::', '#' and
'@echo' lines are skipped) after checking every line; --pause SECS waits between tests.
iogauge adds --json (the full report) and --allow-overwrite.
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Random,
    Sequential,
    /// Blocks skipped after each I/O.
    Stride(u64),
}

/// One target file.
#[derive(Debug, Clone)]
pub struct Target {
    pub path: PathBuf,
    pub threads: u32,
    pub mask: String,
    /// From a parameter file: the size the file must have, in MiB.
    pub size_mb: Option<u64>,
    /// The file's size before the run (`None`: it does not exist yet).
    pub existing: Option<u64>,
}

/// A parsed sqlio command line.
#[derive(Debug, Clone)]
pub struct Sqlio {
    pub write: bool,
    pub secs: u64,
    pub pattern: Pattern,
    pub outstanding: u32,
    pub block_kb: u64,
    pub buffering: char,
    pub latency: bool,
    pub param_file: Option<PathBuf>,
    pub targets: Vec<Target>,
    pub notices: Vec<String>,
}

fn err(msg: impl Into<String>) -> LegacyError {
    LegacyError::Usage {
        tool: "sqlio",
        why: msg.into(),
    }
}

fn number(opt: &str, v: &str, min: u64, max: u64) -> Result<u64, LegacyError> {
    super::whole_number("sqlio", &format!("{opt}{v}"), v, min, max)
}

/// Parses one sqlio command line (the arguments after `sqlio`).
pub fn parse(args: &[String]) -> Result<Sqlio, LegacyError> {
    let mut s = Sqlio {
        write: false,
        secs: 30,
        pattern: Pattern::Stride(64),
        outstanding: 1,
        block_kb: 2,
        buffering: 'N',
        latency: false,
        param_file: None,
        targets: Vec::new(),
        notices: Vec::new(),
    };
    let mut threads: Option<u32> = None;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    for a in args {
        match a.strip_prefix('-') {
            Some(body) => option(&mut s, a, body, &mut threads, &mut dirs)?,
            None => files.push(a.clone()),
        }
    }
    if let Some(pf) = s.param_file.clone() {
        if !files.is_empty() || !dirs.is_empty() {
            return Err(err(format!(
                "-F{}: a parameter file names the targets; drop the file names and -d",
                crate::rawpath::display(&pf)
            )));
        }
        s.targets = read_param_file(&pf)?;
        if let Some(t) = threads {
            s.notices.push(format!(
                "-t{t} ignored: the parameter file sets the threads of each file"
            ));
        }
    } else {
        s.targets = existing_targets(files, &dirs, threads.unwrap_or(1))?;
    }
    for t in &s.targets {
        let size = t.size_mb.map_or(t.existing.unwrap_or(0), |m| m << 20);
        if size < s.block_kb << 10 {
            return Err(err(format!(
                "{}: {size} bytes, smaller than one {} KB I/O",
                crate::rawpath::display(&t.path),
                s.block_kb
            )));
        }
        if t.mask != "0x0" && t.mask != "0" {
            s.notices.push(format!(
                "affinity mask {} for {} is not applied: iogauge lets the kernel place threads",
                t.mask,
                crate::rawpath::display(&t.path)
            ));
        }
    }
    Ok(s)
}

/// One option `a` (`-` then `body`): sqlio's letters with their values attached.
fn option(
    s: &mut Sqlio,
    a: &str,
    body: &str,
    threads: &mut Option<u32>,
    dirs: &mut Vec<PathBuf>,
) -> Result<(), LegacyError> {
    let mut chars = body.chars();
    let Some(opt) = chars.next() else {
        return Err(err("'-': an option letter must follow the dash"));
    };
    let v = chars.as_str();
    let flag = format!("-{opt}");
    if v.is_empty() {
        return Err(err(format!(
            "{flag}: needs its value attached, as in -kW, -s60, -o8, -b64"
        )));
    }
    match opt {
        'k' => {
            s.write = match v.to_ascii_uppercase().as_str() {
                "R" => false,
                "W" => true,
                _ => return Err(err(format!("-k{v}: expected -kR (reads) or -kW (writes)"))),
            }
        }
        's' => s.secs = number("-s", v, 1, 7 * 24 * 3600)?,
        'f' => {
            s.pattern = match v.to_ascii_lowercase().as_str() {
                "random" => Pattern::Random,
                "sequential" => Pattern::Sequential,
                n => match n.parse::<u64>() {
                    Ok(0) => Pattern::Sequential,
                    Ok(k) => Pattern::Stride(k),
                    Err(_) => {
                        return Err(err(format!(
                            "-f{v}: expected -frandom, -fsequential or -f<blocks between I/Os>"
                        )));
                    }
                },
            }
        }
        'o' => s.outstanding = number("-o", v, 1, 256)? as u32,
        'b' => s.block_kb = number("-b", v, 1, 1024)?,
        't' => *threads = Some(number("-t", v, 1, 256)? as u32),
        'B' => {
            let c = v.to_ascii_uppercase();
            if !["N", "Y", "H", "S"].contains(&c.as_str()) {
                return Err(err(format!(
                    "-B{v}: expected -BN (no caching), -BH (device cache), -BS (page cache, \
                     write-through) or -BY (page cache)"
                )));
            }
            s.buffering = c.chars().next().expect("one letter");
        }
        'L' => {
            if !["S", "P"].contains(&v.to_ascii_uppercase().as_str()) {
                return Err(err(format!("-L{v}: expected -LS or -LP")));
            }
            s.latency = true;
        }
        'F' => s.param_file = Some(crate::rawpath::path(v)),
        'd' if crate::platform::DRIVE_LETTERS && v.bytes().all(|c| c.is_ascii_alphabetic()) => {
            // sqlio's own form: one letter per drive (-dEFG), the file at each drive's root.
            for letter in v.chars() {
                let p = PathBuf::from(format!("{}:\\", letter.to_ascii_uppercase()));
                if !p.is_dir() {
                    return Err(err(format!("-d{v}: drive {letter}: is not there")));
                }
                dirs.push(p);
            }
        }
        'd' => {
            for d in v.split(',') {
                let p = crate::rawpath::path(d);
                if !p.is_dir() {
                    return Err(err(match crate::platform::DRIVE_LETTERS {
                        true => format!(
                            "-d{v}: '{d}' is not a directory; -d takes drive letters (-dEF) or \
                             directories separated by commas"
                        ),
                        false => format!(
                            "-d{v}: '{d}' is not a directory; on Linux -d takes directories \
                             separated by commas (-d/mnt/e,/mnt/f), not Windows drive letters"
                        ),
                    }));
                }
                dirs.push(p);
            }
        }
        _ => {
            return Err(err(format!(
                "{a}: unknown or unsupported option; accepted: -k -s -f -o -b -t -B -L -F -d"
            )));
        }
    }
    Ok(())
}

/// A sqlio path written for Windows (`E:\testfile.dat`, `c:/t.dat`, a backslash), on Linux:
/// refused with what it means there, rather than made a file named `E:\testfile.dat` in the current
/// directory or reported missing.
fn windows_path(name: &str, what: &str) -> Result<(), LegacyError> {
    if crate::platform::DRIVE_LETTERS {
        return Ok(());
    }
    let b = name.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if !drive && !name.contains('\\') {
        return Ok(());
    }
    Err(err(format!(
        "{what} {name} is a Windows path: drive letters and backslashes are not paths on Linux; \
         name the Linux path instead (/mnt/e/testfile.dat), or the directory with -d \
         (-d/mnt/e testfile.dat)"
    )))
}

/// The test files named on the command line (in each `-d` directory when given), which must
/// exist: without a parameter file sqlio has no size to create them with.
fn existing_targets(
    mut files: Vec<String>,
    dirs: &[PathBuf],
    threads: u32,
) -> Result<Vec<Target>, LegacyError> {
    if files.is_empty() {
        files.push("testfile.dat".into());
    }
    let mut targets = Vec::new();
    for f in &files {
        let paths: Vec<PathBuf> = if dirs.is_empty() {
            vec![crate::rawpath::path(f)]
        } else {
            dirs.iter()
                .map(|d| d.join(crate::rawpath::path(f)))
                .collect()
        };
        windows_path(f, "the test file")?;
        for path in paths {
            let existing = crate::files::fsinfo::size_of(&path);
            if existing.is_none() {
                return Err(err(format!(
                    "{}: no such file; create it first with a parameter file (-F) that gives \
                     its size",
                    crate::rawpath::display(&path)
                )));
            }
            targets.push(Target {
                path,
                threads,
                mask: "0x0".into(),
                size_mb: None,
                existing,
            });
        }
    }
    Ok(targets)
}

/// `path threads mask size_MB` per line; `#` comments.
fn read_param_file(pf: &Path) -> Result<Vec<Target>, LegacyError> {
    let text = crate::files::named::read_input_text(pf, 1 << 20, "a parameter file is a few lines")
        .map_err(|e| err(format!("-F{}: {e}", crate::rawpath::display(pf))))?;
    let mut targets = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("{}:{}", crate::rawpath::display(pf), i + 1);
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 4 {
            return Err(err(format!(
                "{at}: expected 'path threads mask size_MB', got '{line}'"
            )));
        }
        let threads =
            super::whole_number("sqlio", &format!("{at}: threads {}", f[1]), f[1], 1, 256)? as u32;
        let hex = f[2].trim_start_matches("0x").trim_start_matches("0X");
        if u64::from_str_radix(hex, 16).is_err() {
            return Err(err(format!(
                "{at}: mask '{}': expected hex such as 0x0",
                f[2]
            )));
        }
        let size_mb = f[3]
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| err(format!("{at}: size '{}': expected MB, above 0", f[3])))?;
        windows_path(f[0], &format!("{at}:"))?;
        let path = crate::rawpath::path(f[0]);
        let existing = crate::files::fsinfo::size_of(&path);
        if existing.is_none() && !crate::files::fsinfo::parent_dir(&path).is_dir() {
            return Err(err(format!(
                "{at}: directory of {} does not exist",
                crate::rawpath::display(&path)
            )));
        }
        targets.push(Target {
            path,
            threads,
            mask: f[2].to_string(),
            size_mb: Some(size_mb),
            existing,
        });
    }
    if targets.is_empty() {
        return Err(err(format!(
            "-F{}: names no target",
            crate::rawpath::display(pf)
        )));
    }
    Ok(targets)
}

impl Sqlio {
    /// The access pattern in sqlio's words ("random", "sequential").
    pub fn describe_pattern(&self) -> String {
        match self.pattern {
            Pattern::Random => "random".into(),
            Pattern::Sequential => "sequential".into(),
            Pattern::Stride(k) => format!("sequential, {k} blocks skipped after each"),
        }
    }

    /// sqlio's output for `r`, then iogauge's additions.
    pub fn output(&self, r: &Report) -> String {
        let mut o = format!(
            "sqlio v1.5.SG (iogauge {} sqlio personality)\n",
            r.tool.version
        );
        if self.latency {
            o += "using system counter for latency timings, 1000000000 counts per second\n";
        }
        if let Some(pf) = &self.param_file {
            let _ = writeln!(o, "parameter file used: {}", crate::rawpath::display(pf));
            for t in &self.targets {
                let _ = writeln!(
                    o,
                    "\tfile {} with {} thread{} (0-{}) using mask {} ({})",
                    crate::rawpath::display(&t.path),
                    t.threads,
                    if t.threads == 1 { "" } else { "s" },
                    t.threads - 1,
                    t.mask,
                    u64::from_str_radix(t.mask.trim_start_matches("0x"), 16).unwrap_or(0)
                );
            }
        }
        for t in &self.targets {
            let _ = writeln!(
                o,
                "{} thread{} {} for {} secs {} file {}",
                t.threads,
                if t.threads == 1 { "" } else { "s" },
                if self.write { "writing" } else { "reading" },
                self.secs,
                if self.write { "to" } else { "from" },
                crate::rawpath::display(&t.path)
            );
        }
        let _ = writeln!(
            o,
            "\tusing {}KB {} IOs",
            self.block_kb,
            self.describe_pattern()
        );
        if self.outstanding > 1 {
            let _ = writeln!(
                o,
                "\tenabling multiple I/Os per thread with {} outstanding",
                self.outstanding
            );
        }
        let _ = writeln!(
            o,
            "\t{}",
            match self.buffering {
                'N' => "buffering set to not use file nor disk caches (as is SQL Server)",
                'H' => "buffering set to use hardware disk cache (but not file cache)",
                'S' => "buffering set to use software file cache, written through",
                _ => "buffering set to use both file and disk caches",
            }
        );
        o += &self.sizing();
        for n in &self.notices {
            let _ = writeln!(o, "{n}");
        }
        o += "initialization done\n";
        o += &self.cumulative(r);
        o + &crate::report::extras::extras(r, "the legacy tool")
    }

    /// sqlio's lines on each file's size: expanded when smaller than asked.
    fn sizing(&self) -> String {
        let mut o = String::new();
        for t in &self.targets {
            let Some(mb) = t.size_mb else { continue };
            let need = mb << 20;
            let have = t.existing.unwrap_or(0);
            if have < need {
                let _ = writeln!(
                    o,
                    "size of file {} needs to be: {need} bytes",
                    crate::rawpath::display(&t.path)
                );
                let _ = writeln!(o, "current file size:\t{have} bytes");
                let _ = writeln!(o, "need to expand by:\t{} bytes", need - have);
                let _ = writeln!(
                    o,
                    "expanding {} ... done.",
                    crate::rawpath::display(&t.path)
                );
            }
            let _ = writeln!(
                o,
                "using specified size: {mb} MB for file: {}",
                crate::rawpath::display(&t.path)
            );
        }
        o
    }

    /// sqlio's figures for `r`: I/Os per second, MB (2^20 bytes, as sqlio's) per second and
    /// the mean latency in ms; the CUMULATIVE DATA and a batch's summary both print these.
    pub fn figures(&self, r: &Report) -> Option<Figures> {
        let m = &r.groups.first()?.total;
        let d = if self.write { &m.write } else { &m.read };
        let secs = m.elapsed_ns as f64 / 1e9;
        let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        Some((
            per_s(d.ios as f64),
            per_s(d.bytes as f64 / 1048576.0),
            d.lat_ns.as_ref().map(|l| l.mean / 1e6),
        ))
    }

    /// sqlio's CUMULATIVE DATA: I/Os and MB per second, with -L the latency and histogram.
    fn cumulative(&self, r: &Report) -> String {
        let mut o = String::new();
        if let (Some(g), Some((iops, mbs, _))) = (r.groups.first(), self.figures(r)) {
            let m = &g.total;
            let d = if self.write { &m.write } else { &m.read };
            o += "CUMULATIVE DATA:\nthroughput metrics:\n";
            let _ = writeln!(o, "IOs/sec: {iops:8.2}");
            let _ = writeln!(o, "MBs/sec: {mbs:8.2}");
            if let (true, Some(l)) = (self.latency, &d.lat_ns) {
                o += "latency metrics:\n";
                let _ = writeln!(o, "Min_Latency(ms): {}", l.min / 1_000_000);
                let _ = writeln!(o, "Avg_Latency(ms): {:.0}", l.mean / 1e6);
                let _ = writeln!(o, "Max_Latency(ms): {}", l.max / 1_000_000);
                o += &histogram(l);
            }
        }
        o
    }
}

/// sqlio's figures of a test: I/Os per second, MB per second, mean latency (ms).
pub type Figures = (f64, f64, Option<f64>);

/// sqlio's histogram: whole milliseconds 0 to 23, then 24+, as percentages of I/Os.
fn histogram(l: &crate::result::LatReport) -> String {
    let total = l.count.max(1) as f64;
    let mut ms = String::from("ms:");
    let mut pct = String::from("%: ");
    for b in 0..=24u64 {
        let hi = if b == 24 {
            u64::MAX
        } else {
            (b + 1) * 1_000_000
        };
        let n = l.count_between(b * 1_000_000, hi);
        let label = if b == 24 {
            "24+".to_string()
        } else {
            b.to_string()
        };
        let _ = write!(ms, " {label:>2}");
        let _ = write!(pct, "{:>3}", (100.0 * n as f64 / total).round() as u64);
    }
    format!("histogram:\n{ms}\n{pct}\n")
}

impl Personality for Sqlio {
    /// All targets in one group: every thread of every file at once.
    fn step(&self) -> Step {
        let o = || Origin::Profile("sqlio");
        let flag = |flag| Origin::Flag {
            tool: "sqlio",
            flag,
        };
        let bs = self.block_kb << 10;
        let mut sections = Vec::new();
        for (i, t) in self.targets.iter().enumerate() {
            let mut s = Section::new(format!("sqlio{i}"));
            let rw = match (self.pattern, self.write) {
                (Pattern::Random, false) => "randread".to_string(),
                (Pattern::Random, true) => "randwrite".to_string(),
                (Pattern::Sequential, false) => "read".to_string(),
                (Pattern::Sequential, true) => "write".to_string(),
                (Pattern::Stride(k), w) => {
                    format!("{}:{}", if w { "write" } else { "read" }, k * bs)
                }
            };
            let file = if self.param_file.is_some() {
                "-F"
            } else {
                "FILE"
            };
            s.set(
                "filename",
                &crate::rawpath::filename_value(&t.path),
                flag(file),
            )
            .set("rw", &rw, flag("-k/-f"))
            .set("bs", &bs.to_string(), flag("-b"))
            .set("numjobs", &t.threads.to_string(), flag("-t"))
            .set(
                "ioengine",
                crate::engine::platform::QUEUED_ENGINE,
                flag("-o"),
            )
            .set("iodepth", &self.outstanding.to_string(), flag("-o"))
            .set("runtime", &format!("{}s", self.secs), flag("-s"))
            .set("time_based", "1", o())
            // sqlio keeps whatever the cache holds.
            .set("invalidate", "0", o());
            if let Some(mb) = t.size_mb {
                // Rounded down to whole I/Os.
                let size = (mb << 20) / bs * bs;
                s.set("size", &size.to_string(), flag("-F"))
                    .set("overwrite", "1", o());
            }
            match self.buffering {
                'N' => {
                    s.set("direct", "1", flag("-BN"))
                        .set("sync", "dsync", flag("-BN"));
                }
                'H' => {
                    s.set("direct", "1", flag("-BH"));
                }
                'S' => {
                    s.set("sync", "dsync", flag("-BS"));
                }
                _ => {}
            }
            sections.push(s);
        }
        Step {
            sections,
            keep: true,
            words: super::SQLIO_WORDS,
        }
    }

    fn render(&self, r: &Report) -> Rendered {
        Rendered {
            screen: self.output(r),
            file: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_article_s_options_map_to_one_job_per_file() {
        let d = tempfile::tempdir().unwrap();
        let pf = d.path().join("param.txt");
        let f = d.path().join("testfile.dat");
        std::fs::write(
            &pf,
            format!("{} 2 0x0 100\n#d:\\testfile.dat 2 0x0 100\n", f.display()),
        )
        .unwrap();
        let s = parse(&args(&[
            "-kW",
            "-s10",
            "-fsequential",
            "-o8",
            "-b64",
            &format!("-F{}", pf.display()),
        ]))
        .unwrap();
        assert!(s.write && s.secs == 10 && s.outstanding == 8 && s.block_kb == 64);
        assert_eq!(s.targets.len(), 1);
        assert_eq!((s.targets[0].threads, s.targets[0].size_mb), (2, Some(100)));
        let step = s.step();
        let get = |k: &str| {
            step.sections[0]
                .entries
                .iter()
                .rev()
                .find(|e| e.key == k)
                .and_then(|e| e.value.clone())
        };
        assert_eq!(get("numjobs").as_deref(), Some("2"));
        assert_eq!(get("iodepth").as_deref(), Some("8"));
        assert_eq!(get("size").as_deref(), Some("104857600"));
        assert_eq!(get("direct").as_deref(), Some("1"));
        assert_eq!(get("sync").as_deref(), Some("dsync"));
    }

    #[test]
    fn bad_values_name_the_option() {
        for (a, want) in [
            ("-kX", "-kX"),
            ("-t300", "-t300"),
            ("-o0", "-o0"),
            ("-BZ", "-BZ"),
            ("-fbogus", "-fbogus"),
            (
                "-dEFG",
                match crate::platform::DRIVE_LETTERS {
                    true => "drive E: is not there",
                    false => "not a directory",
                },
            ),
            ("-q1", "unknown"),
        ] {
            let e = parse(&args(&[a])).unwrap_err().to_string();
            assert!(e.contains(want) && !e.contains('\n'), "{a}: {e}");
        }
    }
}
