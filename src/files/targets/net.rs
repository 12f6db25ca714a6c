//! A net job's socket, made before its group starts: the port each clone uses (fio's: the
//! job's port, plus the clone's number), and a unix listener's socket file, which is the
//! run's own: bound at a path that was free (checked before anything runs), and removed when
//! the job's engine is dropped, only while the path still names the socket bound there.

use std::path::{Path, PathBuf};

use crate::engine::NetSocket;
use crate::engine::net::{self, Proto};
use crate::engine::platform::{self, net::Prepared};
use crate::files::ownership::{self, Identity};
use crate::plan::JobSpec;

use super::{TargetError, usage};

/// Before anything runs: a unix listener's path is free (bind makes the socket file there
/// and replaces nothing); a tcp or udp job's host is found and its port can be bound now (the
/// socket made and closed at once). A job of the run that takes a port another takes first
/// is found when its group's sockets are made.
pub(super) fn check(job: &JobSpec) -> Result<(), TargetError> {
    let Some(ep) = job.net.as_ref() else {
        return Ok(());
    };
    let ep = ep.for_clone(job.clone);
    if ep.proto != Proto::Unix {
        return prepare(job, &ep).map(drop);
    }
    if !ep.listen {
        return Ok(());
    }
    let p = Path::new(ep.host.as_deref().unwrap_or_default());
    if p.symlink_metadata().is_ok() {
        return Err(usage(format!(
            "{}: {} is there: a unix receiver binds a new socket and never replaces what is \
             at its path (remove it, or name a free path)",
            job.label("filename"),
            p.display()
        )));
    }
    Ok(())
}

/// The socket of `ep` made, or why not, naming the option at fault.
fn prepare(job: &JobSpec, ep: &net::Endpoint) -> Result<Prepared, TargetError> {
    platform::net::prepare(ep).map_err(|e| {
        let unix = ep.proto == Proto::Unix;
        let refused = platform::net::refused_address(&e);
        let (option, bad_input) = match e.raw_os_error() {
            _ if refused && unix => ("filename", true),
            _ if refused => ("port", true),
            // A host that is not found, a receiver's host that is not a multicast group.
            _ if e.kind() == std::io::ErrorKind::InvalidInput => ("hostname", true),
            _ => ("ioengine", false),
        };
        let msg = match (option, unix) {
            ("hostname", _) => format!("{}: {e}", job.label(option)),
            (_, true) => format!(
                "{}: {}: {e}",
                job.label(option),
                ep.host.as_deref().unwrap_or("")
            ),
            _ => format!(
                "{}: {} port {}: {e}",
                job.label(option),
                ep.proto.as_str(),
                ep.port
            ),
        };
        if bad_input {
            usage(msg)
        } else {
            TargetError::Io(msg)
        }
    })
}

/// The job's socket, bound (and listening) or its peer found.
pub(super) fn open(job: &JobSpec) -> Result<NetSocket, TargetError> {
    // Each clone its own port (resolution checked they fit).
    let ep = job
        .net
        .as_ref()
        .expect("a net job has its endpoint")
        .for_clone(job.clone);
    let prepared = prepare(job, &ep)?;
    let guard: Option<Box<dyn Send>> = match (prepared.is_listener(), ep.proto) {
        (true, Proto::Unix) => {
            let path = PathBuf::from(ep.host.clone().unwrap_or_default());
            let st = crate::platform::sys::fs::lstat(&path)
                .map_err(|e| TargetError::Io(format!("{}: {e}", path.display())))?;
            let id = Identity::of(&st);
            ownership::watch(&path, id, None);
            Some(Box::new(SocketFile { path, id }))
        }
        _ => None,
    };
    Ok(NetSocket {
        endpoint: ep,
        prepared,
        guard,
    })
}

/// A unix socket file the run bound: removed when dropped, if its path still names it.
struct SocketFile {
    path: PathBuf,
    id: Identity,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Ok(st) = crate::platform::sys::fs::lstat(&self.path) {
            if Identity::of(&st) == self.id {
                let _ = std::fs::remove_file(&self.path);
            }
        }
        ownership::unwatch(&self.path);
    }
}
