//! fio's job-file syntax → sections: `[global]` and job sections, `;`/`#` comments, bare
//! options, `include`, `${VAR}` and `$ncpus`/`$mb_memory`/`$pagesize`, arithmetic, and fio's
//! surprising reading of a value after `= ` (the unit is dropped). Every option keeps the file
//! and line it came from, so errors point at it. Pure text: nothing here looks options up
//! beyond their kind, validates values or touches the files the jobs name (`spec::resolve`
//! and `files::targets` do); the only file system access is reading the job files themselves.

mod expr;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::plan::options::{self, Kind};
use crate::plan::{Entry, Origin, Section};

/// Includes nested deeper than this are refused (a loop, or a mistake).
const MAX_INCLUDE_DEPTH: usize = 16;
/// The largest job file read (with its includes counted one by one): fio's own examples are a
/// few KiB, and a device or a runaway file must not eat memory.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// A job file that cannot be read as fio would read it: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFileError {
    pub path: PathBuf,
    /// 1-based; 0 when the file itself could not be read.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for JobFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for JobFileError {}

/// What `$ncpus`, `$mb_memory`, `$pagesize` and `${VAR}` stand for.
pub struct Env<'a> {
    pub var: &'a dyn Fn(&str) -> Option<String>,
    pub ncpus: u64,
    pub mb_memory: u64,
    pub pagesize: u64,
}

impl Env<'_> {
    /// This machine's values and the process environment.
    pub fn system() -> Env<'static> {
        static VAR: fn(&str) -> Option<String> = |k| std::env::var(k).ok();
        let ncpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let memory = crate::host::memory();
        let (mb_memory, pagesize) = (memory.total_bytes >> 20, memory.page_bytes);
        Env {
            var: &VAR,
            ncpus,
            mb_memory,
            pagesize,
        }
    }
}

/// One `[name]` section as written.
#[derive(Debug, Clone)]
pub struct RawSection {
    pub name: String,
    pub entries: Vec<Entry>,
    /// Its header: file and line.
    pub origin: Origin,
}

impl RawSection {
    /// fio treats any section whose name starts with "global" as a global one.
    pub fn is_global(&self) -> bool {
        self.name.starts_with("global")
    }
}

/// A job file read: its sections in order, and what the reader should know.
#[derive(Debug, Clone, Default)]
pub struct JobFile {
    pub sections: Vec<RawSection>,
    pub warnings: Vec<String>,
}

impl JobFile {
    /// The jobs, each with the global options above it: `defaults` first (fio's command-line
    /// options given with a job file: the file's values win over them), then every global
    /// section above the job, then the job's own options, then `overrides` (iogauge's `--set`,
    /// which wins over everything). `only`: run just these sections (fio's `--section`).
    pub fn jobs(&self, defaults: &[Entry], overrides: &[Entry], only: &[String]) -> Vec<Section> {
        let mut global: Vec<Entry> = defaults.to_vec();
        let mut jobs = Vec::new();
        for raw in &self.sections {
            if raw.is_global() {
                global.extend(raw.entries.iter().cloned());
                continue;
            }
            if !only.is_empty() && !only.contains(&raw.name) {
                continue;
            }
            let mut s = Section::new(raw.name.clone());
            s.entries = global.clone();
            s.entries.extend(raw.entries.iter().cloned());
            s.entries.extend(overrides.iter().cloned());
            jobs.push(s);
        }
        jobs
    }
}

/// Reads the job file at `path`.
pub fn parse_file(path: &Path, env: &Env<'_>) -> Result<JobFile, JobFileError> {
    let mut out = JobFile::default();
    let mut stack = Vec::new();
    read_into(path, env, &mut out, &mut stack, None)?;
    Ok(out)
}

/// Reads job-file text as if it were the file `path` (includes are relative to its directory).
pub fn parse_str(text: &str, path: &Path, env: &Env<'_>) -> Result<JobFile, JobFileError> {
    let mut out = JobFile::default();
    let mut stack = vec![path.to_path_buf()];
    let text = job_text(text.as_bytes()).expect("a str is UTF-8");
    parse_text(&text, path, env, &mut out, &mut stack)?;
    Ok(out)
}

fn read_into(
    path: &Path,
    env: &Env<'_>,
    out: &mut JobFile,
    stack: &mut Vec<PathBuf>,
    from: Option<(&Path, usize)>,
) -> Result<(), JobFileError> {
    let fail = |message: String| match from {
        Some((p, line)) => JobFileError {
            path: p.to_path_buf(),
            line,
            message,
        },
        None => JobFileError {
            path: path.to_path_buf(),
            line: 0,
            message,
        },
    };
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if stack.contains(&canonical) {
        return Err(fail(format!(
            "include {}: includes itself (through {})",
            path.display(),
            stack.len()
        )));
    }
    if stack.len() >= MAX_INCLUDE_DEPTH {
        return Err(fail(format!(
            "include {}: more than {MAX_INCLUDE_DEPTH} levels of include",
            path.display()
        )));
    }
    let what = match from {
        Some(_) => format!("include {}", path.display()),
        None => "the job file".to_string(),
    };
    let bytes =
        crate::files::named::read_input(path, MAX_FILE_BYTES, "job files are text of a few KiB")
            .map_err(|e| fail(format!("{what}: {e}")))?;
    let text = job_text(&bytes).map_err(|(line, e)| JobFileError {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    })?;
    stack.push(canonical);
    let r = parse_text(&text, path, env, out, stack);
    stack.pop();
    r
}

/// A job file's text: a leading byte-order mark dropped, CR LF or CR-only line ends read as
/// LF, and bytes that are not UTF-8 carried losslessly (see `rawpath`: `filename=t\xe9` names
/// the file whose name is those bytes). The error is a line holding a reserved character.
fn job_text(bytes: &[u8]) -> Result<String, (usize, crate::rawpath::Reserved)> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let mut text = String::with_capacity(bytes.len());
    // Lines end at LF, CR LF or a lone CR.
    let mut rest = bytes;
    let mut line = 1;
    while !rest.is_empty() {
        let end = rest.iter().position(|b| *b == b'\n' || *b == b'\r');
        let (content, next) = match end {
            Some(at) if rest[at] == b'\r' && rest.get(at + 1) == Some(&b'\n') => {
                (&rest[..at], &rest[at + 2..])
            }
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        text.push_str(&crate::rawpath::from_bytes(content).map_err(|e| (line, e))?);
        text.push('\n');
        rest = next;
        line += 1;
    }
    Ok(text)
}

fn parse_text(
    text: &str,
    path: &Path,
    env: &Env<'_>,
    out: &mut JobFile,
    stack: &mut Vec<PathBuf>,
) -> Result<(), JobFileError> {
    for (i, raw_line) in text.lines().enumerate() {
        let line = i + 1;
        let err = |message: String| JobFileError {
            path: path.to_path_buf(),
            line,
            message,
        };
        // A comment starts at the first ';' or '#', wherever it is (as fio reads it).
        let content = match raw_line.find([';', '#']) {
            Some(at) => &raw_line[..at],
            None => raw_line,
        };
        let content = content
            .trim_end()
            .trim_start_matches(|c: char| c.is_whitespace());
        if content.is_empty() {
            continue;
        }
        let content = expand_env(content, env).map_err(|e| err(e.to_string()))?;
        let content = content.as_str();
        if let Some(rest) = content.strip_prefix('[') {
            let Some(end) = rest.find(']') else {
                return Err(err(format!(
                    "{content}: a section header needs a closing ']'"
                )));
            };
            let name = rest[..end].trim();
            if name.is_empty() {
                return Err(err("[]: a section needs a name".into()));
            }
            out.sections.push(RawSection {
                name: name.to_string(),
                entries: Vec::new(),
                origin: Origin::File {
                    path: path.to_path_buf(),
                    line,
                },
            });
            continue;
        }
        if let Some(target) = content
            .strip_prefix("include")
            .filter(|r| r.starts_with(char::is_whitespace))
        {
            let target = target.trim();
            let dir = path.parent().unwrap_or(Path::new("."));
            let p = if crate::rawpath::path(target).is_absolute() {
                crate::rawpath::path(target)
            } else {
                dir.join(crate::rawpath::path(target))
            };
            read_into(&p, env, out, stack, Some((path, line)))?;
            continue;
        }
        let (key, value) = match content.split_once('=') {
            Some((k, v)) => (k.trim_end(), Some(v)),
            None => (content, None),
        };
        if key.is_empty() {
            return Err(err(format!("{content}: expected OPTION=VALUE or OPTION")));
        }
        let Some(section) = out.sections.last_mut() else {
            return Err(err(format!(
                "{key}: an option before any [section]; put it under [global] or a job"
            )));
        };
        let value = match value {
            Some(v) => Some(
                read_value(key, v, env, path, line, &mut out.warnings)
                    .map_err(|e| err(e.to_string()))?,
            ),
            None => None,
        };
        section.entries.push(Entry {
            key: key.to_string(),
            value,
            origin: Origin::File {
                path: path.to_path_buf(),
                line,
            },
        });
    }
    Ok(())
}

/// What is wrong with one line's value (the file and line are added around it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum LineError {
    #[error("{text}: '${{' without a closing '}}'")]
    UnclosedVariable { text: String },
    #[error("${{{name}}}: the environment variable {name} is not set")]
    Unset { name: String },
    #[error("{key}={value}: {source}")]
    Arithmetic {
        key: String,
        value: String,
        source: expr::ExprError,
    },
    #[error(
        "{key}={value}: fio fails to parse a word after '= ' (the blank is kept); write \
         {key}={trimmed}"
    )]
    WordAfterBlank {
        key: String,
        value: String,
        trimmed: String,
    },
}

/// `${VAR}` → the variable's value; an unset variable is an error (fio would leave a path
/// like `${FIO_DIR}/x` that names nothing the user meant).
fn expand_env(text: &str, env: &Env<'_>) -> Result<String, LineError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(LineError::UnclosedVariable { text: text.into() });
        };
        let name = &after[..end];
        match (env.var)(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(LineError::Unset { name: name.into() });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The keywords fio replaces in values.
fn keywords(env: &Env<'_>) -> [(&'static str, u64); 3] {
    [
        ("$ncpus", env.ncpus),
        ("$mb_memory", env.mb_memory),
        ("$pagesize", env.pagesize),
    ]
}

/// A value as fio reads it: keywords replaced, arithmetic worked out, and the unit dropped
/// from a number that follows `= ` (with a warning saying so).
fn read_value(
    key: &str,
    value: &str,
    env: &Env<'_>,
    path: &Path,
    line: usize,
    warnings: &mut Vec<String>,
) -> Result<String, LineError> {
    let mut v = value.trim_end().to_string();
    let mut replaced = false;
    for (word, n) in keywords(env) {
        if v.contains(word) {
            v = v.replace(word, &n.to_string());
            replaced = true;
        }
    }
    let trimmed = v.trim_start();
    if replaced || trimmed.starts_with('(') {
        let n = expr::eval(trimmed).map_err(|source| LineError::Arithmetic {
            key: key.into(),
            value: value.into(),
            source,
        })?;
        return Ok(n.to_string());
    }
    if trimmed.len() == v.len() {
        return Ok(v);
    }
    // A value after "= ": fio's number parser skips the blank but then finds no unit.
    let def = options::lookup(key);
    let kind = def.map(|d| d.kind);
    let numeric = matches!(kind, Some(Kind::Size | Kind::Seconds | Kind::Micros))
        || matches!(
            def.map(|d| d.name),
            Some("bs" | "size" | "offset" | "rate" | "startdelay")
        );
    if matches!(kind, Some(Kind::Choice(_))) {
        return Err(LineError::WordAfterBlank {
            key: key.into(),
            value: value.into(),
            trimmed: trimmed.into(),
        });
    }
    if numeric {
        let digits = trimmed
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(trimmed.len());
        let unit_end = trimmed[digits..]
            .find(|c: char| !c.is_ascii_alphabetic())
            .map_or(trimmed.len(), |e| digits + e);
        if digits > 0 && unit_end > digits {
            let read = format!("{}{}", &trimmed[..digits], &trimmed[unit_end..]);
            warnings.push(format!(
                "{}:{line}: {key} ={value}: fio reads a number after '= ' without its unit, \
                 so this is {read}, not {trimmed}; iogauge does the same (write {key}={trimmed} \
                 for what it seems to mean)",
                path.display()
            ));
            return Ok(read);
        }
    }
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env<'static> {
        static VAR: fn(&str) -> Option<String> = |k| (k == "DIR").then(|| "/data".to_string());
        Env {
            var: &VAR,
            ncpus: 16,
            mb_memory: 1024,
            pagesize: 4096,
        }
    }

    fn parse(text: &str) -> Result<JobFile, JobFileError> {
        parse_str(text, Path::new("/jobs/t.fio"), &env())
    }

    fn values(s: &Section) -> Vec<(String, Option<String>, usize)> {
        s.entries
            .iter()
            .map(|e| {
                let line = match e.origin {
                    Origin::File { line, .. } => line,
                    _ => 0,
                };
                (e.key.clone(), e.value.clone(), line)
            })
            .collect()
    }

    #[test]
    fn globals_apply_to_the_jobs_below_them() {
        let f = parse(
            "; comment\n[global]\nbs=8k\n\n[a]\nrw=read ; trailing\n[global2]\nbs=16k\n# c\n\
             [b]\ntime_based\n",
        )
        .unwrap();
        let jobs = f.jobs(&[], &[], &[]);
        assert_eq!(jobs.len(), 2);
        assert_eq!(
            values(&jobs[0]),
            [
                ("bs".into(), Some("8k".into()), 3),
                ("rw".into(), Some("read".into()), 6)
            ]
        );
        assert_eq!(
            values(&jobs[1]),
            [
                ("bs".into(), Some("8k".into()), 3),
                ("bs".into(), Some("16k".into()), 8),
                ("time_based".into(), None, 11)
            ]
        );
        let only = f.jobs(&[], &[], &["b".into()]);
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].name, "b");
    }

    #[test]
    fn defaults_lose_to_the_file_and_overrides_win() {
        let f = parse("[a]\nsize=1g\n").unwrap();
        let e = |k: &str, v: &str| Entry {
            key: k.into(),
            value: Some(v.into()),
            origin: Origin::Cli,
        };
        let jobs = f.jobs(&[e("size", "2g"), e("bs", "8k")], &[e("runtime", "1")], &[]);
        let v = values(&jobs[0]);
        assert_eq!(v.first().unwrap().1.as_deref(), Some("2g"));
        assert_eq!(
            v[2].1.as_deref(),
            Some("1g"),
            "the file's size comes later, so wins"
        );
        assert_eq!(v[3].0, "runtime");
    }

    #[test]
    fn variables_keywords_and_arithmetic() {
        let f = parse(
            "[a]\ndirectory=${DIR}/x\nnumjobs=$ncpus\nsize=2*$mb_memory\nbs=(2+2)*1k\n\
             bsrange=4k-64k\n",
        )
        .unwrap();
        let v = values(&f.jobs(&[], &[], &[])[0]);
        let got: Vec<_> = v.iter().map(|e| e.1.clone().unwrap()).collect();
        assert_eq!(got, ["/data/x", "16", "2048", "4096", "4k-64k"]);
        let e = parse("[a]\ndirectory=${NOPE}\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("NOPE is not set"), "{e}");
    }

    #[test]
    fn a_unit_after_a_blank_is_dropped_as_fio_does() {
        let f = parse("[a]\nbs = 8k\nruntime= 2m\nfilename = x.dat\niodepth = 4\n").unwrap();
        let v = values(&f.jobs(&[], &[], &[])[0]);
        let got: Vec<_> = v
            .iter()
            .map(|e| (e.0.as_str(), e.1.clone().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                ("bs", "8".to_string()),
                ("runtime", "2".to_string()),
                ("filename", "x.dat".to_string()),
                ("iodepth", "4".to_string())
            ]
        );
        assert_eq!(f.warnings.len(), 2);
        assert!(
            f.warnings[0].starts_with("/jobs/t.fio:2: bs = 8k: fio reads a number")
                && f.warnings[0].contains("this is 8, not 8k"),
            "{}",
            f.warnings[0]
        );
        let e = parse("[a]\nrw = randread\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/jobs/t.fio:2: rw= randread: fio fails"),
            "{e}"
        );
    }

    #[test]
    fn structural_errors_name_the_line() {
        let missing = std::path::Path::new("/jobs").join("nothere.fio");
        let missing = format!("include {}: cannot read", missing.display());
        for (text, line, want) in [
            ("bs=4k\n", 1, "before any [section]"),
            ("[a]\n=4k\n", 2, "expected OPTION=VALUE"),
            ("[a\n", 1, "closing ']'"),
            ("[ ]\n", 1, "needs a name"),
            ("[a]\nsize=(1+\n", 2, "size=(1+"),
            ("[a]\ninclude nothere.fio\n", 2, missing.as_str()),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.to_string().contains(want), "{text:?}: {e}");
        }
    }

    /// The fuzz target's property, checked on every `cargo test` (the fuzzer itself needs a
    /// nightly toolchain): token soup of job-file syntax never makes parsing or resolving panic.
    #[test]
    fn any_token_soup_parses_or_fails_without_panicking() {
        use rand_core::{RngCore, SeedableRng};
        let tokens = [
            "[",
            "]",
            "global",
            "job",
            "=",
            " ",
            "\n",
            ";",
            "#",
            "bs",
            "4k",
            "-",
            ",",
            ":",
            "/",
            "%",
            "(",
            ")",
            "*",
            "$ncpus",
            "$mb_memory",
            "${DIR}",
            "${",
            "}",
            "size",
            "rw",
            "randrw",
            "bssplit",
            "bsrange",
            "random_distribution",
            "zipf",
            "zoned",
            "rate",
            "ioengine",
            "null",
            "libaio",
            "numjobs",
            "999999999999999999999",
            "0",
            "1",
            "100",
            "include",
            "x.fio",
            "filename",
            "wait_for",
            "time_based",
            "kb_base",
            "1000",
            "\u{e9}",
        ];
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        for _ in 0..5000 {
            let n = (rng.next_u64() % 40) as usize;
            let text: String = (0..n)
                .map(|_| tokens[(rng.next_u64() % tokens.len() as u64) as usize])
                .collect();
            if let Ok(f) = parse(&text) {
                let _ = crate::plan::resolve(&f.jobs(&[], &[], &[]), false);
            }
        }
    }

    #[test]
    fn includes_are_relative_to_the_including_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/common.fio"), "[global]\nbs=64k\n").unwrap();
        std::fs::write(
            dir.path().join("main.fio"),
            "include sub/common.fio\n[a]\nrw=read\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("loop.fio"), "include loop.fio\n").unwrap();
        let f = parse_file(&dir.path().join("main.fio"), &env()).unwrap();
        let v = values(&f.jobs(&[], &[], &[])[0]);
        assert_eq!(v[0].1.as_deref(), Some("64k"));
        let e = parse_file(&dir.path().join("loop.fio"), &env()).unwrap_err();
        assert!(e.message.contains("includes itself"), "{e}");
    }
}
