//! fio's I/O log, versions 2 and 3, read as fio 3.x's `read_iolog` reads it: a version line,
//! then one action per line. File actions (`FILE add|open|close`, with a leading timestamp in
//! version 3) and I/O actions (`FILE read|write|trim|sync|datasync OFFSET LENGTH`; version 2
//! adds `wait`, version 3 puts the issue time in microseconds first). iogauge's own
//! `write_iolog` also writes `sync_file_range OFFSET LENGTH`, which is read back here (fio
//! 3.33's reader skips it).
//!
//! Where fio's reader prints an error and goes on (an action it does not know, a line it
//! cannot parse) this one refuses the log with the line's number: a replay that quietly left
//! out part of the workload would measure something else. A blktrace binary is recognised
//! and refused by name.

use std::collections::HashMap;
use std::fmt;

/// What one line of the log does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Read,
    Write,
    Trim,
    /// fsync(2) of the file.
    Sync,
    /// fdatasync(2) of the file.
    Datasync,
    /// sync_file_range(2) over `offset..offset + len` (iogauge's logs; fio 3.33 writes the
    /// word but its reader skips it).
    SyncFileRange,
    /// Version 2 only: stall until `offset` milliseconds after the job's start, as fio 3.x's
    /// replay does (its documentation says microseconds since the previous wait; its code
    /// compares milliseconds since the start).
    Wait,
}

impl Action {
    fn from_word(w: &str) -> Option<Action> {
        Some(match w {
            "read" => Action::Read,
            "write" => Action::Write,
            "trim" => Action::Trim,
            "sync" => Action::Sync,
            "datasync" => Action::Datasync,
            "sync_file_range" => Action::SyncFileRange,
            "wait" => Action::Wait,
            _ => return None,
        })
    }

    /// A read, write or trim: an I/O with data (or blocks) of its own.
    pub fn is_io(self) -> bool {
        matches!(self, Action::Read | Action::Write | Action::Trim)
    }

    /// fio's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Action::Read => "read",
            Action::Write => "write",
            Action::Trim => "trim",
            Action::Sync => "sync",
            Action::Datasync => "datasync",
            Action::SyncFileRange => "sync_file_range",
            Action::Wait => "wait",
        }
    }
}

/// One I/O action of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// Version 3: when it was issued, in microseconds from the recording's start; version 2: 0.
    pub t_us: u64,
    pub offset: u64,
    pub len: u64,
    /// Index into [`Trace::files`].
    pub file: u32,
    pub action: Action,
}

/// A log read back: its files in the order they were added, and its I/O actions in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    pub version: u8,
    /// The file names as the log writes them (relative ones relative to where it is replayed).
    pub files: Vec<String>,
    pub ops: Vec<Op>,
    /// What fio skips with a message and so does this reader (version 3's `wait` lines).
    pub notes: Vec<String>,
}

/// Why a log cannot be replayed: the line (1-based) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

const VERSION_2: &str = "fio version 2 iolog";
const VERSION_3: &str = "fio version 3 iolog";

/// The first bytes of a blktrace binary (`BLK_IO_TRACE_MAGIC | version` in either byte
/// order).
fn is_blktrace(bytes: &[u8]) -> bool {
    // 0x656174 then the version byte, in the recording machine's order.
    matches!(
        bytes.get(..4),
        Some([_, 0x74, 0x61, 0x65]) | Some([0x65, 0x61, 0x74, _])
    )
}

fn err(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// Reads a log's bytes.
pub fn parse(bytes: &[u8]) -> Result<Trace, ParseError> {
    if is_blktrace(bytes) {
        return Err(err(
            1,
            "this is a blktrace binary trace, not fio's I/O log: 'iogauge trace import \
             --blktrace FILE -o TRACE' makes it a trace that 'iogauge replay' replays",
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        err(line, "not text: fio's I/O log is lines of text")
    })?;
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let version = if first.starts_with(VERSION_2) {
        2
    } else if first.starts_with(VERSION_3) {
        3
    } else {
        return Err(err(
            1,
            format!(
                "expected `{VERSION_3}` or `{VERSION_2}` as the first line (fio's I/O log), \
                 found `{}`",
                first.chars().take(60).collect::<String>()
            ),
        ));
    };
    let mut r = Reader {
        trace: Trace {
            version,
            ..Trace::default()
        },
        index: HashMap::new(),
        v3_waits: 0,
    };
    for (i, line) in lines.enumerate() {
        r.line(i + 2, line)?;
    }
    if r.v3_waits > 0 {
        r.trace.notes.push(format!(
            "{} wait line(s) skipped: version 3 logs time each line instead (fio skips them too)",
            r.v3_waits
        ));
    }
    Ok(r.trace)
}

struct Reader {
    trace: Trace,
    index: HashMap<String, u32>,
    v3_waits: u64,
}

impl Reader {
    fn line(&mut self, n: usize, line: &str) -> Result<(), ParseError> {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            return Ok(());
        }
        let t_us = if self.trace.version == 3 {
            let t = words.remove(0);
            number(n, "timestamp", t)?
        } else {
            0
        };
        let (name, act) = match words.as_slice() {
            [name, act] | [name, act, _, _] => (*name, *act),
            _ => {
                let want = if self.trace.version == 3 {
                    "TIME FILE add|open|close, or TIME FILE ACTION OFFSET LENGTH"
                } else {
                    "FILE add|open|close, or FILE ACTION OFFSET LENGTH"
                };
                return Err(err(n, format!("expected {want}, found `{}`", line.trim())));
            }
        };
        if words.len() == 2 {
            return self.file_action(n, name, act);
        }
        let Some(action) = Action::from_word(act) else {
            return Err(err(
                n,
                format!(
                    "unknown action `{act}`: expected read, write, trim, sync, datasync, \
                     sync_file_range or wait"
                ),
            ));
        };
        if action == Action::Wait && self.trace.version == 3 {
            self.v3_waits += 1;
            return Ok(());
        }
        let offset = number(n, "offset", words[2])?;
        let len = number(n, "length", words[3])?;
        if action.is_io() && len == 0 {
            return Err(err(n, format!("a {act} of 0 bytes")));
        }
        if action.is_io() && offset.checked_add(len).is_none_or(|e| e > i64::MAX as u64) {
            return Err(err(
                n,
                format!("{act} at {offset} of {len} bytes reaches past the largest file offset"),
            ));
        }
        let file = match action {
            // A wait names no file fio uses.
            Action::Wait => 0,
            _ => *self.index.get(name).ok_or_else(|| {
                err(
                    n,
                    format!(
                        "{name} is used before its `add` line (fio's log adds each file first)"
                    ),
                )
            })?,
        };
        self.trace.ops.push(Op {
            t_us,
            offset,
            len,
            file,
            action,
        });
        Ok(())
    }

    fn file_action(&mut self, n: usize, name: &str, act: &str) -> Result<(), ParseError> {
        match act {
            "add" => {
                if !self.index.contains_key(name) {
                    self.index
                        .insert(name.to_string(), self.trace.files.len() as u32);
                    self.trace.files.push(name.to_string());
                }
                Ok(())
            }
            // Files are opened once for the whole replay.
            "open" | "close" if self.index.contains_key(name) => Ok(()),
            "open" | "close" => Err(err(
                n,
                format!("{name} is used before its `add` line (fio's log adds each file first)"),
            )),
            _ => Err(err(
                n,
                format!("unknown file action `{act}`: expected add, open or close"),
            )),
        }
    }
}

fn number(line: usize, what: &str, word: &str) -> Result<u64, ParseError> {
    word.parse::<u64>()
        .map_err(|_| err(line, format!("{what} `{word}` is not a whole number")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_3_reads_files_io_and_flushes_with_their_times() {
        let log = "fio version 3 iolog\n\
                   0 /tmp/a add\n\
                   0 /tmp/b add\n\
                   3 /tmp/a open\n\
                   10 /tmp/a write 4096 8192\n\
                   25 /tmp/b read 0 512\n\
                   40 /tmp/a sync 0 0\n\
                   41 /tmp/a datasync 0 0\n\
                   42 /tmp/a sync_file_range 4096 8192\n\
                   50 /tmp/b trim 1048576 2147483648\n\
                   60 /tmp/a close\n";
        let t = parse(log.as_bytes()).unwrap();
        assert_eq!(t.version, 3);
        assert_eq!(t.files, ["/tmp/a", "/tmp/b"]);
        let got: Vec<_> = t
            .ops
            .iter()
            .map(|o| (o.t_us, o.file, o.action, o.offset, o.len))
            .collect();
        assert_eq!(
            got,
            [
                (10, 0, Action::Write, 4096, 8192),
                (25, 1, Action::Read, 0, 512),
                (40, 0, Action::Sync, 0, 0),
                (41, 0, Action::Datasync, 0, 0),
                (42, 0, Action::SyncFileRange, 4096, 8192),
                (50, 1, Action::Trim, 1 << 20, 1 << 31),
            ]
        );
        assert!(t.notes.is_empty());
    }

    #[test]
    fn version_2_has_no_times_and_keeps_its_waits() {
        let log = "fio version 2 iolog\nf add\nf open\nf read 0 4096\nf wait 250 0\n\
                   f write 4096 4096\nf close\n";
        let t = parse(log.as_bytes()).unwrap();
        assert_eq!(t.version, 2);
        let acts: Vec<_> = t.ops.iter().map(|o| (o.t_us, o.action, o.offset)).collect();
        assert_eq!(
            acts,
            [
                (0, Action::Read, 0),
                (0, Action::Wait, 250),
                (0, Action::Write, 4096)
            ]
        );
    }

    #[test]
    fn a_file_added_twice_is_one_file_and_version_3_waits_are_skipped_with_a_note() {
        let log = "fio version 3 iolog\n1 f add\n2 f add\n3 f wait 100 0\n4 f read 0 1\n";
        let t = parse(log.as_bytes()).unwrap();
        assert_eq!(t.files, ["f"]);
        assert_eq!(t.ops.len(), 1);
        assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    }

    #[test]
    fn what_fio_could_not_replay_is_refused_with_its_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "expected `fio version 3 iolog`"),
            ("fio version 1 iolog\n", 1, "found `fio version 1 iolog`"),
            (
                "fio version 3 iolog\n0 f add\nx f read 0 1\n",
                3,
                "timestamp `x`",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f read 0\n",
                3,
                "expected TIME FILE",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f copy 0 1\n",
                3,
                "unknown action `copy`",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f read -1 1\n",
                3,
                "offset `-1`",
            ),
            (
                "fio version 3 iolog\n0 f add\n1 f write 0 0\n",
                3,
                "a write of 0 bytes",
            ),
            (
                "fio version 3 iolog\n1 g read 0 1\n",
                2,
                "before its `add` line",
            ),
            (
                "fio version 3 iolog\n1 g open\n",
                2,
                "before its `add` line",
            ),
            (
                "fio version 3 iolog\n1 g remove\n",
                2,
                "unknown file action",
            ),
            (
                "fio version 2 iolog\nf add\nf read 1 9223372036854775807\n",
                3,
                "past the",
            ),
            (
                "fio version 2 iolog\nf add\n\u{fffd} read\u{fffd}",
                3,
                "unknown file action",
            ),
            (
                "fio version 2 iolog\nf add\nf read 0 1 2\n",
                3,
                "expected FILE",
            ),
        ];
        for (log, line, text) in cases {
            let e = parse(log.as_bytes()).unwrap_err();
            assert_eq!(e.line, *line, "{log:?}: {e}");
            assert!(e.to_string().contains(text), "{log:?}: {e}");
        }
        let bin = [0x00u8, 0x74, 0x61, 0x65, 1, 2, 3];
        assert!(parse(&bin).unwrap_err().message.contains("blktrace"));
        let e = parse(b"fio version 2 iolog\nf add\n\xff\xfe\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
    }
}
