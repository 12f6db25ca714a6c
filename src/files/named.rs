//! The files the user names: reports, logs, results and traces written under one rule (new,
//! or over a file iogauge wrote and nobody changed since; never through a link; a character
//! device or a FIFO always, a FIFO nothing reads yet waited for), and inputs (job, parameter
//! and batch files, saved reports, logs, traces) read only when they are regular files of a
//! bounded size. What proves a file is iogauge's, and the identity-checked opens, are
//! `ownership`'s; the bytes go through `writer`.

use std::io::{self, Write};
use std::path::Path;

use super::ownership::{decoded, open_existing};
use crate::platform::sys::fs::{FileType, OFlags};
use crate::platform::sys::io::Errno;

/// Why an output may not be written, or an input not read: one line, as the user sees it.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{} is not a directory", .0.display())]
    NotDirectory(std::path::PathBuf),
    #[error("directory {} does not exist", .0.display())]
    NoDirectory(std::path::PathBuf),
    #[error("cannot create files in {}: {source}", .dir.display())]
    NotWritable {
        dir: std::path::PathBuf,
        source: io::Error,
    },
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error(transparent)]
    Refused(#[from] crate::files::writer::Refusal),
    #[error("not a regular file")]
    NotRegular,
    #[error("cannot read: {0}")]
    Unreadable(io::Error),
    /// An input past its cap: the cap and why it is enough.
    #[error("larger than {} MiB; {why}", .max >> 20)]
    TooLarge { max: u64, why: String },
    #[error("not UTF-8 text (byte {0} is not)")]
    NotUtf8(usize),
}

/// Checks, before a run, that the report, log or results file `path` may be written: its
/// directory exists, and the file is new, or a regular file iogauge wrote and nobody changed
/// since, or `replace` (the user's `--overwrite-output`) allows replacing it. Never a link.
pub fn check_output(path: &Path, replace: bool) -> Result<(), FileError> {
    decoded(path)?;
    if is_stream(path) {
        return Ok(());
    }
    check_dir(crate::files::fsinfo::parent_dir(path))?;
    crate::files::writer::check_path(path, replace)?;
    Ok(())
}

/// A character device or a FIFO (`/dev/null`, `/dev/stdout` on a terminal or a pipe), directly
/// or through links: writing to one replaces nothing, so it is always allowed.
fn is_stream(path: &Path) -> bool {
    crate::platform::sys::fs::stat(path).is_ok_and(|st| {
        let kind = FileType::from_raw_mode(st.st_mode);
        kind == FileType::CharacterDevice || kind == FileType::Fifo
    })
}

/// Checks that `dir` is a directory iogauge may create files in; the error names it.
pub fn check_dir(dir: &Path) -> Result<(), FileError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(FileError::NotDirectory(dir.into())),
        Err(_) => return Err(FileError::NoDirectory(dir.into())),
    }
    crate::platform::sys::fs::access(dir, crate::platform::sys::fs::Access::WRITE_OK).map_err(|e| {
        FileError::NotWritable {
            dir: dir.into(),
            source: e.into(),
        }
    })
}

/// Writes a report, log or results file under [`check_output`]'s rule, checked again when it
/// is written (the path may have changed since the run began), through the one audited
/// writer (`files::writer`: a new file, flushed, renamed into place, marked as iogauge's).
pub fn write_output(path: &Path, bytes: &[u8], replace: bool) -> io::Result<()> {
    decoded(path)?;
    if is_stream(path) {
        let (fd, st) = open_existing(path, OFlags::WRONLY, true)?;
        if !matches!(
            FileType::from_raw_mode(st.st_mode),
            FileType::CharacterDevice | FileType::Fifo
        ) {
            return Err(io::Error::other(
                "changed while the run went on; left alone",
            ));
        }
        // Blocking again (a pipe may be full), and written whole.
        let now = crate::platform::sys::fs::fcntl_getfl(&fd)?;
        crate::platform::sys::fs::fcntl_setfl(&fd, now - OFlags::NONBLOCK)?;
        return std::fs::File::from(fd).write_all(bytes);
    }
    crate::files::writer::write_path(path, bytes, replace).map_err(io::Error::from)
}

/// [`write_output`], waiting for a reader where `path` is a FIFO nothing reads yet (a trace
/// piped to a compressor that is started later): without one, the open fails at once
/// (ENXIO) and what the run made would be lost. `waiting` is called once, when the wait
/// begins; `give_up` is asked every 100 ms, and the last error is returned when it says so.
pub fn write_output_when_read(
    path: &Path,
    bytes: &[u8],
    replace: bool,
    waiting: &dyn Fn(),
    give_up: &dyn Fn() -> bool,
) -> io::Result<()> {
    let mut told = false;
    loop {
        match write_output(path, bytes, replace) {
            Err(e) if Errno::from_io_error(&e) == Some(Errno::NXIO) && is_fifo(path) => {
                if give_up() {
                    return Err(e);
                }
                if !told {
                    waiting();
                    told = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            r => return r,
        }
    }
}

fn is_fifo(path: &Path) -> bool {
    crate::platform::sys::fs::stat(path)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Fifo)
}

/// Reads an input file iogauge was given (a job file, a parameter or batch file, a saved
/// report): a regular file of at most `max` bytes, opened without blocking, so a FIFO or a
/// device named by mistake is refused at once, never read. `why` says why the cap is enough.
pub fn read_input(path: &Path, max: u64, why: &str) -> Result<Vec<u8>, FileError> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(FileError::Unreadable)?;
    if !meta.is_file() {
        return Err(FileError::NotRegular);
    }
    let (fd, st) = open_existing(path, OFlags::RDONLY, true).map_err(FileError::Unreadable)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(FileError::NotRegular);
    }
    let too_big = || FileError::TooLarge {
        max,
        why: why.to_string(),
    };
    if st.st_size as u64 > max {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(FileError::Unreadable)?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_text(path: &Path, max: u64, why: &str) -> Result<String, FileError> {
    String::from_utf8(read_input(path, max, why)?)
        .map_err(|e| FileError::NotUtf8(e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::ownership::{Verdict, verdict};
    use crate::platform::fd::AsFd;

    #[test]
    fn outputs_are_new_or_ours_never_links() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        write_output(&p, b"one", false).unwrap();
        let (fd, st) = open_existing(&p, OFlags::RDONLY, false).unwrap();
        if verdict(fd.as_fd(), &st) == Verdict::Foreign {
            skip_test!("no user xattrs here");
            return;
        }
        write_output(&p, b"two", false).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let precious = d.path().join("precious");
        std::fs::write(&precious, b"keep me").unwrap();
        assert!(
            check_output(&precious, false)
                .unwrap_err()
                .to_string()
                .contains("--overwrite-output")
        );
        assert!(write_output(&precious, b"x", false).is_err());
        let link = d.path().join("link.json");
        if let Err(e) = crate::platform::testing::symlink(&precious, &link) {
            eprintln!("skipped: {e}");
            return;
        }
        assert!(
            check_output(&link, true)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        assert!(write_output(&link, b"x", true).is_err());
        assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
        write_output(&precious, b"replaced", true).unwrap();
        assert_eq!(std::fs::read(&precious).unwrap(), b"replaced");
        assert!(check_output(Path::new("/nonexistent-dir/r.json"), false).is_err());
        assert!(
            check_output(d.path(), true)
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        // Streams replace nothing: /dev/null, or stdout when it is a pipe or a terminal.
        check_output(Path::new("/dev/null"), false).unwrap();
        write_output(Path::new("/dev/null"), b"gone", false).unwrap();
    }
}
