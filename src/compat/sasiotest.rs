//! `iogauge sasiotest FILE [options]`: SAS's SASIOTEST utility on Linux. Its options become
//! one job: cached I/O is buffered I/O, `-sgio` is O_DIRECT with one preadv/pwritev of
//! `-numpages` pages per call, `-unbuffered` is O_DIRECT one page per call, `-writethru` is
//! O_DSYNC, `-ran` reads random pages with repeats, `-rw` reads a random page and writes it
//! back, and `-ran -unbuffered` is "read with history" (buffered random reads with the kernel's
//! normal read-ahead). Output is SASIOTEST's, then iogauge's additions.

use crate::compat::LegacyError;
use std::fmt::Write;
use std::fs;
use std::path::PathBuf;

use super::{Personality, Rendered, Step, parse_sas_size};
use crate::plan::{Origin, Section};
use crate::studies::Report;

pub const USAGE: &str = "\
SAS I/O Test Utility (iogauge sasiotest personality)

Usage: iogauge sasiotest filename [options]

  filename      required, and it MUST be the first argument: the file to read or write.
  -r            read the file (the default).
  -w            write the file (created, or rewritten if an earlier run created it; the file
                is left in place for later reads, as SASIOTEST leaves it).
  -rw           read a random page, then write that page back (SAS UPDATE mode); as many
                pages as the file has, repeats allowed.
  -seq          sequential access (the default).
  -ran          read random pages, as many as the file has, repeats allowed.
  -filesize N   bytes to write, or to read from the start of the file (800k, 512K, 5m, 2G);
                default 1M. A larger file is read only up to N.
  -pagesize N   bytes per page (8k, 128K, 1M); default 8K.
  -sgio         scatter/gather: O_DIRECT, and each call moves -numpages pages (preadv/pwritev
                over an iovec of separate page buffers). Requires -numpages. The file size must
                be a multiple of pagesize x numpages, and the page size a multiple of the
                device's logical block size.
  -numpages M   pages per SGIO call (required with -sgio).
  -unbuffered   O_DIRECT, one page per call. With -r -ran: read with history (buffered random
                reads, the kernel's normal read-ahead, no random-access hint).
  -writethru    write through the page cache to the device (O_DSYNC).
  -verify       iogauge's addition, with -w or -rw: every page written carries a header and
                a CRC-32C of its data, and after the timed run every page is read back (the
                cache dropped first) and checked; a page not as written is named (file,
                offset, what was found) and the exit status is 1. The throughput above does
                not include the check.

Reads require the file to exist and hold at least -filesize bytes; the file size must be a
multiple of the page size. Only one process may write a file at a time; readers may share it.
Sizes are powers of 1024 (1M = 1048576 bytes); throughput is in MB/Sec with MB = 2^20 bytes.
iogauge adds --json (the full report) and --allow-overwrite (write a file iogauge did not
create).
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    Write,
    ReadWrite,
}

/// A parsed SASIOTEST invocation.
#[derive(Debug, Clone)]
pub struct Sasiotest {
    pub file: PathBuf,
    pub mode: Mode,
    pub random: bool,
    pub filesize: u64,
    pub pagesize: u64,
    pub sgio: bool,
    pub numpages: u32,
    pub unbuffered: bool,
    pub writethru: bool,
    /// iogauge's `-verify`: check what the run wrote.
    pub verify: bool,
    /// SASIOTEST's own WARNING lines, printed before the action line.
    pub notices: Vec<String>,
}

fn err(msg: impl Into<String>) -> LegacyError {
    LegacyError::Usage {
        tool: "sasiotest",
        why: msg.into(),
    }
}

/// Parses the arguments after `sasiotest`. `Ok(None)`: no arguments, print the usage.
pub fn parse(args: &[String]) -> Result<Option<Sasiotest>, LegacyError> {
    let Some(first) = args.first() else {
        return Ok(None);
    };
    if first.starts_with('-') {
        return Err(err(format!(
            "{first}: the file name must be the first argument (sasiotest FILE [options])"
        )));
    }
    let mut t = Sasiotest {
        file: crate::rawpath::path(first),
        mode: Mode::Read,
        random: false,
        filesize: 1 << 20,
        pagesize: 8 << 10,
        sgio: false,
        numpages: 0,
        unbuffered: false,
        writethru: false,
        verify: false,
        notices: Vec::new(),
    };
    let (mut filesize, mut pagesize, mut numpages) = (None, None, None);
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| err(format!("{name} needs a value, for example {name} 64k")))
        };
        match a.to_ascii_lowercase().as_str() {
            "-r" => t.mode = Mode::Read,
            "-w" => t.mode = Mode::Write,
            "-rw" => t.mode = Mode::ReadWrite,
            "-seq" => t.random = false,
            "-ran" => t.random = true,
            "-sgio" => t.sgio = true,
            "-unbuffered" => t.unbuffered = true,
            "-writethru" => t.writethru = true,
            "-verify" => t.verify = true,
            "-filesize" => {
                let v = value("-filesize")?;
                filesize = Some(parse_sas_size(v).map_err(|e| err(format!("-filesize {e}")))?);
            }
            "-pagesize" => {
                let v = value("-pagesize")?;
                pagesize = Some(parse_sas_size(v).map_err(|e| err(format!("-pagesize {e}")))?);
            }
            "-numpages" => {
                let v = value("-numpages")?;
                let n = super::whole_number("sasiotest", &format!("-numpages {v}"), v, 1, 65536)?;
                numpages = Some(n as u32);
            }
            other => {
                return Err(err(format!(
                    "{other}: unknown option; accepted: -r -w -rw -seq -ran -filesize N \
                     -pagesize N -sgio -numpages M -unbuffered -writethru -verify"
                )));
            }
        }
    }
    if t.verify && t.mode == Mode::Read {
        return Err(err(
            "-verify checks the pages this run writes: give it with -w or -rw (a file an \
             earlier -w -verify run wrote is checked by iogauge run --verify=crc32c \
             --verify_only=1)",
        ));
    }
    settle(&mut t, filesize, pagesize, numpages)?;
    if t.mode != Mode::Write {
        check_readable(&t)?;
    }
    Ok(Some(t))
}

/// SASIOTEST's defaults (with its warnings) and rules between options: page size, -sgio's
/// pages per call, what -ran and -writethru apply to, whole pages and calls per file, and the
/// device's block size for unbuffered I/O.
fn settle(
    t: &mut Sasiotest,
    filesize: Option<u64>,
    pagesize: Option<u64>,
    numpages: Option<u32>,
) -> Result<(), LegacyError> {
    match filesize {
        Some(f) => t.filesize = f,
        None => t
            .notices
            .push("WARNING: Filesize option not specified. Defaulting to 1 MB file size.".into()),
    }
    match pagesize {
        Some(p) => t.pagesize = p,
        None => t
            .notices
            .push("WARNING: Pagesize option not specified. Defaulting to 8K page size.".into()),
    }
    if t.pagesize < 512 {
        return Err(err(format!(
            "-pagesize {}: a page must be at least 512 bytes",
            t.pagesize
        )));
    }
    match (t.sgio, numpages) {
        (true, None) => {
            return Err(err(
                "-sgio requires -numpages M (the number of pages each scatter/gather call moves)",
            ));
        }
        (true, Some(n)) => t.numpages = n,
        (false, Some(_)) => {
            t.notices
                .push("WARNING: -numpages applies only with -sgio; ignored.".into());
            t.numpages = 1;
        }
        (false, None) => t.numpages = 1,
    }
    if t.sgio && (t.random || t.mode == Mode::ReadWrite) {
        return Err(err(
            "-sgio reads or writes sequentially (-r or -w); it cannot be combined with -ran or -rw",
        ));
    }
    if t.random && t.mode == Mode::Write {
        t.notices
            .push("WARNING: -ran applies to reads; writing sequentially.".into());
        t.random = false;
    }
    if t.writethru && t.mode == Mode::Read {
        t.notices
            .push("WARNING: -writethru applies to writes; reading is unchanged.".into());
        t.writethru = false;
    }
    if t.filesize % t.pagesize != 0 {
        return Err(err(format!(
            "-filesize {} is not a multiple of -pagesize {}: the file size must be a whole \
             number of pages",
            t.filesize, t.pagesize
        )));
    }
    // A file size in whole SGIO calls is the numpages rule every front end shares: resolution
    // checks it, in this tool's flags.
    if t.sgio || (t.unbuffered && !t.history()) {
        if let Some(lbs) = crate::files::fsinfo::logical_block_size_at(&t.file) {
            if t.pagesize % lbs != 0 {
                return Err(err(format!(
                    "-pagesize {}: with {} the page size must be a multiple of the device's \
                     logical block size ({lbs} bytes)",
                    t.pagesize,
                    if t.sgio { "-sgio" } else { "-unbuffered" }
                )));
            }
        }
    }
    Ok(())
}

/// Reads need an existing file holding at least `-filesize` bytes.
fn check_readable(t: &Sasiotest) -> Result<(), LegacyError> {
    let meta = fs::metadata(&t.file).map_err(|e| {
        err(format!(
            "cannot read {}: {e}",
            crate::rawpath::display(&t.file)
        ))
    })?;
    if !meta.is_file() {
        return Err(err(format!(
            "{}: not a regular file",
            crate::rawpath::display(&t.file)
        )));
    }
    if meta.len() < t.pagesize {
        return Err(err(format!(
            "{} is {} bytes, too small for one page of {} bytes",
            crate::rawpath::display(&t.file),
            meta.len(),
            t.pagesize
        )));
    }
    if meta.len() < t.filesize {
        return Err(err(format!(
            "{} is {} bytes, smaller than -filesize {}; give a -filesize of at most the file's \
             size",
            crate::rawpath::display(&t.file),
            meta.len(),
            t.filesize
        )));
    }
    Ok(())
}

impl Sasiotest {
    /// `-r -ran -unbuffered`: buffered random reads with normal read-ahead.
    pub fn history(&self) -> bool {
        self.mode == Mode::Read && self.random && self.unbuffered
    }

    /// Pages in the file (the I/O count of `-ran` and `-rw`).
    pub fn pages(&self) -> u64 {
        self.filesize / self.pagesize
    }

    fn action_line(&self) -> String {
        let f = crate::rawpath::display(&self.file);
        let page = with_article(self.pagesize);
        let iterations = self.filesize / (self.pagesize * u64::from(self.numpages));
        match (self.mode, self.sgio, self.random) {
            (Mode::Write, true, _) => format!(
                "Gather Writing {} pages - {iterations} iterations to file: {f} with {page} \
                 page size.",
                self.numpages
            ),
            (Mode::Read, true, _) => format!(
                "Scatter Reading {} pages - {iterations} iterations from file: {f} with {page} \
                 page size.",
                self.numpages
            ),
            (Mode::Write, false, _) => format!(
                "Sequentially writing {} bytes to file: {f} with {page} page size.",
                self.filesize
            ),
            (Mode::Read, false, false) => format!(
                "Sequentially reading {} bytes from file: {f} with {page} page size.",
                self.filesize
            ),
            (Mode::Read, false, true) if self.history() => format!(
                "Read with History: Reading {} pages from file: {f} with {page} page size.",
                self.pages()
            ),
            (Mode::Read, false, true) => format!(
                "Random Reads: Reading {} pages from file: {f} with {page} page size.",
                self.pages()
            ),
            (Mode::ReadWrite, _, _) => format!(
                "Random Reads and Writes: Reading and Writing {} pages to file: {f} with {page} \
                 page size.",
                self.pages()
            ),
        }
    }

    /// SASIOTEST's output for `r`, then iogauge's additions.
    pub fn output(&self, r: &Report) -> String {
        let mut o = format!(
            "SAS I/O Test Utility: v2.0 (iogauge {} sasiotest personality)\n\n",
            r.tool.version
        );
        for n in &self.notices {
            let _ = writeln!(o, "{n}\n");
        }
        let _ = writeln!(o, "{}", self.action_line());
        if let Some(s) = &r.scaleout {
            let _ = writeln!(
                o,
                "(iogauge: on {} ranks at once, each its own file FILE.rN; the figures are all \
                 ranks' together, over the earliest start to the latest end)",
                s.ranks
            );
        }
        if let Some((g, job)) = r
            .groups
            .first()
            .and_then(|g| g.jobs.first().map(|j| (g, j)))
        {
            // A scale-out run's merge: the group's total is every rank's.
            let m = match r.scaleout {
                Some(_) => &g.total,
                None => &job.measurement,
            };
            // SASIOTEST counts each page once, also in -rw (the write-back is the same page).
            let (label, bytes) = match self.mode {
                Mode::Read => ("Read", m.read.bytes),
                Mode::Write => ("Write", m.write.bytes),
                Mode::ReadWrite => ("Read/Write", m.read.bytes),
            };
            let secs = m.elapsed_ns as f64 / 1e9;
            let mb_s = if secs > 0.0 {
                bytes as f64 / 1048576.0 / secs
            } else {
                0.0
            };
            let _ = writeln!(o, "{label} Throughput: {mb_s:.6} MB/Sec.");
            let _ = writeln!(o, "Elapsed time: {secs:.6} Secs");
        }
        o + &crate::report::extras::extras(r, "the legacy tool")
    }
}

/// "a 65536" or "an 8192", as the number is spoken ("an eight…", "an eleven…", "an
/// eighteen…").
fn with_article(n: u64) -> String {
    let s = n.to_string();
    let an =
        s.starts_with('8') || (s.len() % 3 == 2 && (s.starts_with("11") || s.starts_with("18")));
    format!("{} {s}", if an { "an" } else { "a" })
}

impl Personality for Sasiotest {
    /// The one job this invocation is.
    fn step(&self) -> Step {
        let o = || Origin::Profile("sasiotest");
        let flag = |flag| Origin::Flag {
            tool: "sasiotest",
            flag,
        };
        let mut s = Section::new("sasiotest");
        s.set(
            "filename",
            &crate::rawpath::filename_value(&self.file),
            flag("FILE"),
        )
        .set("bs", &self.pagesize.to_string(), flag("-pagesize"))
        .set("size", &self.filesize.to_string(), flag("-filesize"))
        // SASIOTEST measures whatever the cache holds: it never drops it.
        .set("invalidate", "0", o());
        let rw = match (self.mode, self.random) {
            (Mode::Read, false) => "read",
            (Mode::Read, true) => "randread",
            (Mode::Write, _) => "write",
            (Mode::ReadWrite, _) => "update",
        };
        s.set("rw", rw, o());
        if self.random || self.mode == Mode::ReadWrite {
            s.set("norandommap", "1", o());
        }
        if self.history() {
            s.set("fadvise_hint", "0", o());
        } else if self.sgio {
            s.set("direct", "1", flag("-sgio"))
                .set(
                    "ioengine",
                    crate::engine::platform::SGIO_ENGINE,
                    flag("-sgio"),
                )
                .set("numpages", &self.numpages.to_string(), flag("-numpages"));
        } else if self.unbuffered {
            s.set("direct", "1", flag("-unbuffered"));
        }
        if self.writethru {
            s.set("sync", "dsync", o());
        }
        if self.verify {
            s.set("verify", "crc32c", flag("-verify"));
        }
        Step {
            sections: vec![s],
            keep: self.mode == Mode::Write,
            words: super::SASIOTEST_WORDS,
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
    fn articles_follow_speech() {
        assert_eq!(with_article(8192), "an 8192");
        assert_eq!(with_article(65536), "a 65536");
        assert_eq!(with_article(4096), "a 4096");
        assert_eq!(with_article(11264), "an 11264");
        assert_eq!(with_article(1048576), "a 1048576");
    }

    #[test]
    fn defaults_warn_and_sgio_needs_numpages() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("t.out");
        let f = f.to_str().unwrap();
        let t = parse(&args(&[f, "-w"])).unwrap().unwrap();
        assert_eq!(
            (t.filesize, t.pagesize, t.notices.len()),
            (1 << 20, 8192, 2)
        );
        let e = parse(&args(&[f, "-w", "-sgio", "-pagesize", "4k"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("-sgio requires -numpages"), "{e}");
        let e = parse(&args(&[
            f,
            "-w",
            "-sgio",
            "-pagesize",
            "4k",
            "-numpages",
            "3",
        ]))
        .unwrap()
        .unwrap();
        // The whole-calls rule is resolution's, told in this tool's flags.
        let e = crate::plan::resolve(&e.step().sections, false)
            .unwrap_err()
            .to_string()
            .to_string();
        assert!(
            e.starts_with("sasiotest -numpages=3: size per file (-filesize ")
                && e.contains("not a multiple of -pagesize x -numpages (4096 x 3"),
            "{e}"
        );
        assert!(
            parse(&args(&["-w", f]))
                .unwrap_err()
                .to_string()
                .contains("first argument")
        );
        assert!(parse(&args(&[])).unwrap().is_none());
    }

    #[test]
    fn reads_need_a_large_enough_file() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("small");
        let fs_ = f.to_str().unwrap();
        assert!(
            parse(&args(&[fs_, "-r"]))
                .unwrap_err()
                .to_string()
                .contains("cannot read")
        );
        std::fs::write(&f, vec![1u8; 4096]).unwrap();
        let e = parse(&args(&[fs_, "-r", "-pagesize", "8k", "-filesize", "8k"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("too small for one page of 8192 bytes"), "{e}");
        let e = parse(&args(&[fs_, "-r", "-pagesize", "4k", "-filesize", "8k"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("smaller than -filesize"), "{e}");
        assert!(parse(&args(&[fs_, "-r", "-pagesize", "4k", "-filesize", "4k"])).is_ok());
    }
}
