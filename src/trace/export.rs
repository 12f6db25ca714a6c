//! A trace as fio's I/O log (`iogauge trace export --iolog`): its reads, writes and syncs on
//! its files, in issue order, with their issue times, for fio's `read_iolog` (or iogauge's) to
//! replay. The files are named as the replay names them (`f<index>-<name>`, relative), never
//! by their recorded paths, so a replay in another directory cannot reach the recorded files.
//! Calls that failed, moved nothing, or whose offset the trace could not know are left out
//! (an I/O log has no way to say them), and counted. Pure: the caller renders and writes it.

use super::iolog::{Action, Op as LogOp};
use super::recording::{NO_FILE, Op, Recording, flag};

/// The log's parts: file names, entries, the end time (µs), and the calls left out.
pub struct Exported {
    pub files: Vec<String>,
    pub entries: Vec<LogOp>,
    pub end_us: u64,
    pub left_out: u64,
}

/// The replay's name for file `i` of the trace, from its recorded path: its index and its
/// base name (printable characters only), so a listing reads like the program's.
pub fn replay_name(i: usize, recorded: &str) -> String {
    let base = recorded.rsplit('/').next().unwrap_or("");
    let clean: String = base
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .take(48)
        .collect();
    format!("f{i}-{clean}")
}

/// `r`'s I/O as an I/O log; `tid`: only that thread's.
pub fn iolog(r: &Recording, tid: Option<u32>) -> Exported {
    let mut used = vec![None::<u32>; r.footer.files.len()];
    let mut files = Vec::new();
    let mut entries = Vec::new();
    let mut left_out = 0;
    for e in r.events.iter().filter(|e| tid.is_none_or(|t| e.tid == t)) {
        let action = match e.op {
            Op::Read => Action::Read,
            Op::Write => Action::Write,
            Op::Fsync => Action::Sync,
            Op::Fdatasync => Action::Datasync,
            Op::SyncFileRange => Action::SyncFileRange,
            // A file system's sync has no action in an I/O log.
            Op::Syncfs => {
                left_out += 1;
                continue;
            }
            _ => continue,
        };
        let io = action.is_io();
        // A directory's sync is on no file of the log.
        if e.file == NO_FILE
            || e.result < 0
            || (io && (e.result == 0 || e.flags & flag::OFFSET_UNKNOWN != 0))
        {
            left_out += 1;
            continue;
        }
        let file = *used[e.file as usize].get_or_insert_with(|| {
            files.push(replay_name(
                e.file as usize,
                &r.footer.files[e.file as usize].path,
            ));
            files.len() as u32 - 1
        });
        let (offset, len) = match action {
            Action::Read | Action::Write => (e.offset, e.result as u64),
            Action::SyncFileRange => (e.offset, e.len),
            _ => (0, 0),
        };
        entries.push(LogOp {
            t_us: e.t / 1000,
            offset,
            len,
            file,
            action,
        });
    }
    Exported {
        files,
        entries,
        end_us: r.footer.duration_ns / 1000,
        left_out,
    }
}
