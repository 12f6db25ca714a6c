//! A job thread's descriptor table of its own. The runner opens a job's files and hands them
//! to the job's thread; where nothing else crosses between the two as a descriptor, the
//! thread copies the process's table, keeps its files and the standard streams, and tells the
//! runner, which then closes its own entries for those files. A sole user of a table spares
//! every read and write the kernel's reference on the file (see
//! `platform::process::own_descriptor_table`). Owns that handshake only; which calls a job
//! makes is the engines'.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};

use crate::engine::Files;
use crate::plan::JobSpec;
use crate::platform::fd::{AsRawFd, RawFd};
use crate::platform::process;

/// Spawns the job's thread, named `name`, in `s`: `body` runs there with the job's files, in
/// a table of the thread's own where [`handshake`] allows, and this returns once the runner's
/// copies are closed.
pub(super) fn spawn<'scope, R: Send + 'scope>(
    s: &'scope Scope<'scope, '_>,
    name: String,
    job: &JobSpec,
    files: Files,
    body: impl FnOnce(Files) -> R + Send + 'scope,
) -> ScopedJoinHandle<'scope, R> {
    let (take, release) = handshake(job, &files).unzip();
    let h = std::thread::Builder::new()
        .name(name)
        .spawn_scoped(s, move || {
            if let Some(t) = take {
                t.take(&files);
            }
            body(files)
        })
        .expect("spawning a job thread");
    if let Some(r) = release {
        r.release();
    }
    h
}

/// The job thread's half: takes the files into a table of its own.
struct Take {
    done: SyncSender<bool>,
}

/// The runner's half: closes its entries once the thread has its copies.
struct Release {
    fds: Vec<RawFd>,
    done: Receiver<bool>,
}

/// The handshake for `job`, or None where the thread must share the runner's table: a
/// descriptor would cross back (filecreate's files and unlink_each_loop's new ones are handed
/// to the runner as descriptors, for the clean-up), or the engine holds more than its files
/// (exec's program, net's socket, the defragmenter's donor file).
fn handshake(job: &JobSpec, files: &Files) -> Option<(Take, Release)> {
    let plain = !files.fds.is_empty()
        && files.names.is_empty()
        && files.program.is_none()
        && files.donor.is_none()
        && files.net.is_none()
        && !job.unlink_each_loop;
    if !plain {
        return None;
    }
    let fds = raw(files);
    let (tx, rx) = sync_channel(1);
    Some((Take { done: tx }, Release { fds, done: rx }))
}

fn raw(files: &Files) -> Vec<RawFd> {
    files.fds.iter().map(|f| f.as_raw_fd()).collect()
}

impl Take {
    /// First thing in the job's thread, before it opens anything.
    fn take(self, files: &Files) {
        let alone = process::own_descriptor_table(&raw(files));
        let _ = self.done.send(alone);
    }
}

impl Release {
    /// In the runner's thread, once the job's thread is spawned: waits for it to take its
    /// copies, then closes the runner's (before the next job's thread copies the table, so
    /// no job holds another's files). A thread that could not take them shares the table,
    /// and nothing is closed.
    fn release(self) {
        if self.done.recv() == Ok(true) {
            process::close_copies(&self.fds);
        }
    }
}
