//! A net job's socket, made before its group starts: the port each clone uses (fio's: the
//! job's port, plus the clone's number), and a unix listener's socket file, which is the
//! run's own: bound at a path that was free (checked before anything runs), and removed when
//! the job's engine is dropped, only while the path still names the socket bound there.

use std::path::{Path, PathBuf};

use crate::engine::NetSocket;
use crate::engine::net::{self, Proto};
use crate::files::ownership::{self, Identity};
use crate::plan::JobSpec;

use super::{TargetError, usage};

/// A unix listener's path is free: bind makes the socket file there and replaces nothing.
pub(super) fn check_free(job: &JobSpec) -> Result<(), TargetError> {
    let Some(ep) = job.net.as_ref() else {
        return Ok(());
    };
    if ep.proto != Proto::Unix || !ep.listen {
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

/// The job's socket, bound (and listening) or its peer found.
pub(super) fn open(job: &JobSpec) -> Result<NetSocket, TargetError> {
    // Each clone its own port (resolution checked they fit).
    let ep = job
        .net
        .as_ref()
        .expect("a net job has its endpoint")
        .for_clone(job.clone);
    let what = match ep.proto {
        Proto::Unix => ep.host.clone().unwrap_or_default(),
        _ => format!("{} port {}", ep.proto.as_str(), ep.port),
    };
    let prepared = net::socket::prepare(&ep).map_err(|e| {
        let msg = format!("{}: {what}: {e}", job.label("ioengine"));
        match e.raw_os_error() {
            Some(libc::EADDRINUSE | libc::EACCES | libc::EADDRNOTAVAIL) => usage(msg),
            _ if e.kind() == std::io::ErrorKind::NotFound => usage(msg),
            _ if e.kind() == std::io::ErrorKind::InvalidInput => usage(msg),
            _ => TargetError::Io(msg),
        }
    })?;
    let guard: Option<Box<dyn Send>> = match (&prepared, ep.proto) {
        (net::Prepared::Listener(_), Proto::Unix) => {
            let path = PathBuf::from(ep.host.clone().unwrap_or_default());
            let st = rustix::fs::lstat(&path)
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
        if let Ok(st) = rustix::fs::lstat(&self.path) {
            if Identity::of(&st) == self.id {
                let _ = std::fs::remove_file(&self.path);
            }
        }
        ownership::unwatch(&self.path);
    }
}
