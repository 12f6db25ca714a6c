//! clap's errors as iogauge says every usage error: one line, naming the option, the value
//! and what is accepted, and safe for a terminal.

use clap::error::{ContextKind, ErrorKind};

use super::command;

/// clap's "0 is not in 1..=3600" as "expected a whole number from 1 to 3600".
fn accepted_words(why: &str) -> String {
    if let Some((_, range)) = why.split_once(" is not in ") {
        if let Some((lo, hi)) = range.split_once("..=") {
            return format!("expected a whole number from {lo} to {hi}");
        }
    }
    // Rust's integer parse errors.
    if why.contains("invalid digit") || why.contains("empty string") || why.contains("too large") {
        return "expected a whole number".into();
    }
    why.to_string()
}

/// The command an error is about, from clap's usage line (`Usage: iogauge report [OPTIONS]
/// <RUN.json>`): None for the top level.
fn command_of(e: &clap::Error) -> Option<String> {
    let usage = e.get(ContextKind::Usage)?.to_string();
    let mut words = usage
        .split_whitespace()
        .skip_while(|w| !w.ends_with("iogauge"))
        .skip(1);
    words
        .next()
        .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .map(str::to_string)
}

/// Where an unknown option's command lists what it takes.
fn advice(command: Option<&str>) -> String {
    match command {
        Some(c @ ("run" | "job" | "quick" | "assess" | "sweep")) => {
            format!("; 'iogauge options' lists workload options, 'iogauge {c} --help' all of them")
        }
        Some(c) => format!("; 'iogauge {c} --help' lists its options"),
        None => "; 'iogauge --help' lists the commands and their options".to_string(),
    }
}

pub(super) fn one_line(e: &clap::Error) -> String {
    let arg = e.get(ContextKind::InvalidArg).map(|v| v.to_string());
    let value = e.get(ContextKind::InvalidValue).map(|v| v.to_string());
    let suggested = e.get(ContextKind::SuggestedArg).map(|v| v.to_string());
    match (e.kind(), arg) {
        (ErrorKind::MissingRequiredArgument, Some(a)) => {
            // clap's "the following required arguments were not provided:" and a list on the
            // next lines: the missing one, named, in one line.
            let a = a.trim_end_matches("...");
            let cmd = command_of(e);
            let help = match &cmd {
                Some(c) => format!("; 'iogauge {c} --help' says what it takes"),
                None => String::new(),
            };
            format!("{a} is required{help}")
        }
        (ErrorKind::MissingSubcommand, _) => {
            // clap's "'iogauge trace' requires a subcommand but one was not provided" and a
            // help page: the subcommands, named.
            let cmd = command_of(e).unwrap_or_default();
            let all = command();
            let subs: Vec<String> = (all.find_subcommand(&cmd).into_iter())
                .flat_map(|c| c.get_subcommands())
                .filter(|c| !c.is_hide_set() && c.get_name() != "help")
                .map(|c| c.get_name().to_string())
                .collect();
            format!(
                "iogauge {cmd} takes a command: {}; 'iogauge {cmd} --help' says what each does",
                subs.join(", ")
            )
        }
        (ErrorKind::UnknownArgument, Some(a)) => {
            let cmd = command_of(e);
            let workload = matches!(
                cmd.as_deref(),
                None | Some("run" | "job" | "quick" | "assess" | "sweep")
            );
            let mut s = match (a.starts_with('-'), workload) {
                (true, _) => format!("{a}: unknown option"),
                // `--randrepeat 0`: a workload option's value given as the next word.
                (false, true) => format!(
                    "{a}: unexpected word (a workload option's value goes after '=', as in \
                     --randrepeat=0)"
                ),
                (false, false) => format!("{a}: unexpected word"),
            };
            if let Some(sug) = suggested {
                s += &format!(" (did you mean {sug}?)");
            }
            s + &advice(cmd.as_deref())
        }
        (_, Some(a)) => {
            let first = e.render().to_string();
            let first = first
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            // clap names the option with its value's name (`--seconds <N>`): the option alone,
            // and what is accepted said the way every other message says it.
            let flag = a.split_whitespace().next().unwrap_or(&a);
            match value {
                Some(v) => {
                    let why = first.rsplit_once("': ").map_or(first.as_str(), |(_, w)| w);
                    format!("{flag}={v}: {}", accepted_words(why))
                }
                None => format!("{flag}: {first}"),
            }
        }
        _ => e
            .render()
            .to_string()
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string(),
    }
}

/// A message made safe for a terminal: control characters (an escape sequence from a job
/// file, a newline in a value) are shown escaped, and a run of more than 160 non-blank
/// characters (a 1 MB key) is cut to its start and a count of what was cut.
pub fn for_terminal(msg: &str) -> String {
    let msg = crate::rawpath::shown(msg);
    const LONGEST: usize = 160;
    const KEPT: usize = 60;
    let mut out = String::with_capacity(msg.len().min(4096));
    for (i, word) in msg.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let n = word.chars().count();
        let shown: String = if n > LONGEST {
            let head: String = word.chars().take(KEPT).collect();
            let cut = word.len() - head.len();
            format!("{head}…[{cut} more bytes]")
        } else {
            word.to_string()
        };
        for c in shown.chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
    }
    out
}
