//! Personalities of the legacy tools our users have runbooks for: SASIOTEST (`sasiotest`),
//! sqlio (`sqlio`) and SAS's iotest.sh (`iotest`). Each one turns its tool's command line into
//! ordinary sections (they run through the same resolve → run path as everything else, never
//! an I/O path of their own) and turns the RunReport back into that tool's output, followed,
//! clearly separated, by what iogauge knows that the old tool did not. Parsing may look at the
//! file system (does the file exist, how large is it) to give the tool's own errors before
//! anything runs; it never creates or changes anything, and nothing here prints.

pub mod iotest;
pub mod sasiotest;
pub mod sqlio;

use crate::plan::Section;
use crate::studies::Report;

/// iogauge's own flags, accepted by every personality (anywhere on the line).
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags {
    /// Print the full RunReport as JSON instead of the legacy output.
    pub json: bool,
    pub allow_overwrite: bool,
    pub skip_space_check: bool,
    /// Replace a results file iogauge did not write.
    pub overwrite_output: bool,
}

/// A legacy command line a personality refuses, in one line (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LegacyError {
    /// What the tool would refuse, or iogauge cannot do as the tool did: `TOOL: why`.
    #[error("{tool}: {why}")]
    Usage { tool: &'static str, why: String },
    /// `TOOL: OPTION: expected a whole number from MIN to MAX` (`option` as the user wrote
    /// it, value included).
    #[error("{tool}: {option}: expected a whole number from {min} to {max}")]
    WholeNumber {
        tool: &'static str,
        option: String,
        min: u64,
        max: u64,
    },
    /// A batch file's line (`FILE:LINE`) and what is wrong with it.
    #[error("{at}: {error}")]
    At { at: String, error: Box<LegacyError> },
    #[error(
        "{0}: unknown iogauge flag here; the personalities accept --json, --allow-overwrite, \
         --skip-space-check and --overwrite-output"
    )]
    Flag(String),
}

/// A size the SAS tools would not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}': expected a size such as 8k, 512K, 5m, 2G")]
pub struct SasSize(pub String);

/// Splits iogauge's `--` flags from a legacy argument list.
pub fn split_flags(args: &[String]) -> Result<(Vec<String>, Flags), LegacyError> {
    let mut rest = Vec::new();
    let mut f = Flags::default();
    for a in args {
        match a.as_str() {
            "--json" => f.json = true,
            "--allow-overwrite" => f.allow_overwrite = true,
            "--skip-space-check" => f.skip_space_check = true,
            "--overwrite-output" => f.overwrite_output = true,
            s if s.starts_with("--")
                && !s.starts_with("--batch")
                && !s.starts_with("--pause")
                && !s.starts_with("--results")
                && s != "--verify" =>
            {
                return Err(LegacyError::Flag(s.to_string()));
            }
            _ => rest.push(normalize_dash(a)),
        }
    }
    Ok((rest, f))
}

/// Runbooks are copied from PDFs, whose typesetting turns `-w` into `–w`: read en and em
/// dashes at the start of an argument as the hyphen they were.
fn normalize_dash(a: &str) -> String {
    match a.strip_prefix(['\u{2013}', '\u{2014}']) {
        Some(rest) => format!("-{rest}"),
        None => a.to_string(),
    }
}

/// What a legacy command line asks for.
#[derive(Debug)]
pub enum Invocation {
    /// Print this usage text (exit 0).
    Usage(&'static str),
    /// One test of a personality (sasiotest, sqlio, iotest).
    One(Box<dyn Personality>, Flags),
    /// `sqlio --batch FILE [--pause SECS]`.
    SqlioBatch(sqlio::Batch, Flags),
}

/// A legacy tool's test: the one run it asks for, and its output made from the report. The
/// CLI runs the step, prints the screen text and writes the results file.
pub trait Personality: std::fmt::Debug {
    /// The sections of the run, and whether its files are kept.
    fn step(&self) -> Step;
    /// The old tool's output for `r`, and the results file it writes, if any.
    fn render(&self, r: &Report) -> Rendered;
    /// The results file `render` will name, so the CLI can check it before the run.
    fn results_file(&self) -> Option<&std::path::Path> {
        None
    }
}

/// A personality's output: what goes to the screen, and a results file (path, text).
#[derive(Debug, Clone)]
pub struct Rendered {
    pub screen: String,
    pub file: Option<(std::path::PathBuf, String)>,
}

/// The personalities, by command name.
pub const NAMES: [&str; 3] = ["sasiotest", "sqlio", "iotest"];

/// Parses `iogauge NAME ARGS...` for a personality NAME.
pub fn parse(name: &str, args: &[String]) -> Result<Invocation, LegacyError> {
    let (args, flags) = split_flags(args)?;
    match name {
        "sasiotest" => Ok(match sasiotest::parse(&args)? {
            None => Invocation::Usage(sasiotest::USAGE),
            Some(t) => Invocation::One(Box::new(t), flags),
        }),
        "iotest" => Ok(match iotest::parse(&args)? {
            None => Invocation::Usage(iotest::USAGE),
            Some(t) => Invocation::One(Box::new(t), flags),
        }),
        "sqlio" => {
            if args.is_empty() {
                return Ok(Invocation::Usage(sqlio::USAGE));
            }
            match args.iter().position(|a| a.starts_with("--batch")) {
                None => Ok(Invocation::One(Box::new(sqlio::parse(&args)?), flags)),
                Some(b) => Ok(Invocation::SqlioBatch(
                    sqlio::Batch::parse(&args, b)?,
                    flags,
                )),
            }
        }
        other => unreachable!("{other} is not a personality"),
    }
}

/// One measured run a personality asks for.
#[derive(Debug, Clone)]
pub struct Step {
    pub sections: Vec<Section>,
    /// Keep the files the run creates (SASIOTEST's written file, sqlio's test file).
    pub keep: bool,
    /// The tool's own words for the fio options iogauge's warnings suggest (see
    /// [`in_own_words`]).
    pub words: Words,
}

/// Phrases of iogauge's warnings that name fio options, each with the tool's own.
pub type Words = &'static [(&'static str, &'static str)];

use crate::result::{ADVICE_HIDDEN, ADVICE_READ, ADVICE_WRITE};

/// SASIOTEST's flags for that advice.
pub const SASIOTEST_WORDS: Words = &[
    (
        ADVICE_READ,
        "(-unbuffered, or a -filesize larger than RAM, measures the device)",
    ),
    (ADVICE_WRITE, "(-writethru or -unbuffered time the device)"),
    (ADVICE_HIDDEN, "(-writethru or -unbuffered times it)"),
];

/// sqlio's.
pub const SQLIO_WORDS: Words = &[
    (
        ADVICE_READ,
        "(-BH or -BN, or a test file larger than RAM, measures the device)",
    ),
    (
        ADVICE_WRITE,
        "(-BS or -BN write through, -BH bypasses the cache: they time the device)",
    ),
    (ADVICE_HIDDEN, "(-BS, -BN or -BH times it)"),
];

/// A warning in the tool's own words: each phrase of `words` replaced by the tool's.
pub fn in_own_words(words: Words, warning: &str) -> String {
    words
        .iter()
        .fold(warning.to_string(), |w, (fio, own)| w.replace(fio, own))
}

/// `text` as a whole number in `min..=max`, or the one-line error "`TOOL: OPTION: expected a
/// whole number from MIN to MAX`" (`option` as the user wrote it, value included).
pub fn whole_number(
    tool: &'static str,
    option: &str,
    text: &str,
    min: u64,
    max: u64,
) -> Result<u64, LegacyError> {
    text.parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| LegacyError::WholeNumber {
            tool,
            option: option.to_string(),
            min,
            max,
        })
}

/// Sizes the SAS tools accept: a number with an optional K, M, G or T (powers of 1024, either
/// case, an optional trailing B).
pub fn parse_sas_size(text: &str) -> Result<u64, SasSize> {
    let t = text.trim();
    let t = t.strip_suffix(['b', 'B']).unwrap_or(t);
    let (digits, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_lowercase() {
                'k' => 1 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                't' => 1 << 40,
                _ => {
                    return Err(SasSize(text.to_string()));
                }
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&n| n > 0)
        .ok_or_else(|| SasSize(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sas_sizes_are_powers_of_1024() {
        assert_eq!(parse_sas_size("800k"), Ok(800 << 10));
        assert_eq!(parse_sas_size("512K"), Ok(512 << 10));
        assert_eq!(parse_sas_size("5m"), Ok(5 << 20));
        assert_eq!(parse_sas_size("2G"), Ok(2 << 30));
        assert_eq!(parse_sas_size("10gb"), Ok(10 << 30));
        assert_eq!(parse_sas_size("8192"), Ok(8192));
        assert!(parse_sas_size("8x").is_err());
        assert!(parse_sas_size("0").is_err());
        assert!(parse_sas_size("").is_err());
    }

    #[test]
    fn typeset_dashes_read_as_hyphens() {
        let (rest, f) =
            split_flags(&["test.out".into(), "\u{2013}w".into(), "--json".into()]).unwrap();
        assert_eq!(rest, ["test.out", "-w"]);
        assert!(f.json);
    }
}
