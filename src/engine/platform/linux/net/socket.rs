//! net's sockets, as fio's engine makes them: a listener (tcp, tcpv6, unix) or a datagram
//! receiver is bound before the group starts, so a sender of the same run always finds it; a
//! sender connects, and a listener accepts, at its job's start (after `startdelay`), waiting in
//! steps that look at the caller's stop condition. A connected socket gets 100 ms send and
//! receive timeouts, so no call blocks past the job's end. fio's link messages frame a datagram
//! stream: the sender's "open" before its first datagram, its "close" after its last.

use crate::platform::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use rustix::net::{
    AddressFamily, RecvFlags, SendFlags, SocketAddrAny, SocketAddrUnix, SocketFlags, SocketType,
    sockopt,
};

use crate::engine::net::{Endpoint, Proto};

/// The longest a blocking call waits before the caller looks at its clock and stop flag.
pub const STEP: Duration = Duration::from_millis(100);

/// fio's link messages: a magic word and a command, each 32 bits.
const LINK_MAGIC: u32 = 0x6c69_6e6b;
const LINK_OPEN: u32 = 0x98;
const LINK_CLOSE: u32 = 0x89;

/// fio writes "open" in network order and "close" in little-endian order; both are read back
/// as written.
pub fn open_message() -> [u8; 8] {
    let mut m = [0; 8];
    m[..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
    m[4..].copy_from_slice(&LINK_OPEN.to_be_bytes());
    m
}

pub fn close_message() -> [u8; 8] {
    let mut m = [0; 8];
    m[..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
    m[4..].copy_from_slice(&LINK_CLOSE.to_le_bytes());
    m
}

/// A job's socket as made before its group starts.
#[derive(Debug)]
pub enum Prepared {
    /// tcp, tcpv6 or unix with `listen`: bound and listening.
    Listener(OwnedFd),
    /// tcp, tcpv6 or unix without `listen`: where it connects at its start.
    Connect(Peer),
    /// udp or udpv6 that reads: bound to the port (and in its multicast group).
    Receiver(OwnedFd),
    /// udp or udpv6 that writes: its socket and where its datagrams go.
    Sender(OwnedFd, SocketAddr),
}

#[derive(Debug, Clone)]
pub enum Peer {
    Inet(SocketAddr),
    Unix(PathBuf),
}

/// The address `ep` names: its host (a name looked up, or a literal) and port, in the
/// protocol's family.
pub fn inet_address(ep: &Endpoint) -> io::Result<SocketAddr> {
    let host = ep.host.as_deref().unwrap_or_default();
    let v6 = ep.proto.v6();
    let found = (host, ep.port)
        .to_socket_addrs()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{host}: {e}")))?
        .find(|a| a.is_ipv6() == v6);
    found.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{host}: no IPv{} address", if v6 { 6 } else { 4 }),
        )
    })
}

fn new_socket(family: AddressFamily, kind: SocketType) -> io::Result<OwnedFd> {
    Ok(rustix::net::socket_with(
        family,
        kind,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

fn family(ep: &Endpoint) -> AddressFamily {
    match ep.proto {
        Proto::Unix => AddressFamily::UNIX,
        p if p.v6() => AddressFamily::INET6,
        _ => AddressFamily::INET,
    }
}

/// Makes the socket of `ep` before its group starts: a listener or receiver bound (and
/// listening), a sender's socket and destination, or a connector's peer. A unix listener's
/// path must be free: bind makes the socket file there, and never replaces what is there.
pub fn prepare(ep: &Endpoint) -> io::Result<Prepared> {
    let kind = match ep.proto {
        Proto::Udp | Proto::Udp6 => SocketType::DGRAM,
        _ => SocketType::STREAM,
    };
    if ep.proto == Proto::Unix {
        let path = PathBuf::from(ep.host.clone().unwrap_or_default());
        if !ep.listen {
            return Ok(Prepared::Connect(Peer::Unix(path)));
        }
        let fd = new_socket(AddressFamily::UNIX, kind)?;
        rustix::net::bind(&fd, &SocketAddrUnix::new(path.as_path())?)?;
        rustix::net::listen(&fd, 10)?;
        return Ok(Prepared::Listener(fd));
    }
    if !ep.listen && ep.sends {
        let to = inet_address(ep)?;
        if ep.proto.datagram() {
            let fd = new_socket(family(ep), kind)?;
            set_buffers(fd.as_fd(), ep)?;
            if let SocketAddr::V4(a) = to {
                if a.ip().is_multicast() {
                    if let Some(i) = ep.interface {
                        sockopt::set_ip_multicast_if(&fd, &i)?;
                    }
                    sockopt::set_ip_multicast_ttl(&fd, ep.ttl)?;
                }
            }
            return Ok(Prepared::Sender(fd, to));
        }
        return Ok(Prepared::Connect(Peer::Inet(to)));
    }
    if !ep.listen && !ep.proto.datagram() {
        return Ok(Prepared::Connect(Peer::Inet(inet_address(ep)?)));
    }
    // A listener, or a datagram receiver: every address of the port (or its multicast group).
    let fd = new_socket(family(ep), kind)?;
    // Several receivers of one multicast group share its port (fio's netio_multicast.fio);
    // a tcp listener takes its port alone (REUSEADDR only lets it past connections still
    // in TIME_WAIT).
    sockopt::set_socket_reuseaddr(&fd, true)?;
    if ep.proto.datagram() {
        sockopt::set_socket_reuseport(&fd, true)?;
    }
    set_buffers(fd.as_fd(), ep)?;
    let group = match (&ep.host, ep.proto.datagram()) {
        (Some(h), true) => match inet_address(ep)? {
            SocketAddr::V4(a) if a.ip().is_multicast() => Some(*a.ip()),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{h}: a receiver takes only a multicast group (224.0.0.0 to 239.255.255.255)"
                    ),
                ));
            }
        },
        _ => None,
    };
    let any: SocketAddr = match (ep.proto.v6(), group) {
        (true, _) => (std::net::Ipv6Addr::UNSPECIFIED, ep.port).into(),
        (false, Some(g)) => (g, ep.port).into(),
        (false, None) => (std::net::Ipv4Addr::UNSPECIFIED, ep.port).into(),
    };
    if let Some(g) = group {
        let on = ep.interface.unwrap_or(std::net::Ipv4Addr::UNSPECIFIED);
        sockopt::set_ip_add_membership(&fd, &g, &on)?;
    }
    rustix::net::bind(&fd, &any)?;
    if ep.proto.datagram() {
        return Ok(Prepared::Receiver(fd));
    }
    rustix::net::listen(&fd, 10)?;
    Ok(Prepared::Listener(fd))
}

/// `window_size` (both buffers of a socket that both sends and receives, else the one it
/// uses, as fio's).
fn set_buffers(fd: BorrowedFd<'_>, ep: &Endpoint) -> io::Result<()> {
    if ep.window == 0 {
        return Ok(());
    }
    let receives = !ep.sends || ep.pingpong;
    let sends = ep.sends || ep.pingpong;
    if receives {
        sockopt::set_socket_recv_buffer_size(fd, ep.window as usize)?;
    }
    if sends {
        sockopt::set_socket_send_buffer_size(fd, ep.window as usize)?;
    }
    Ok(())
}

/// A connected stream's options (`nodelay`, `mss`, `window_size`) and the step timeouts.
pub fn connected(fd: &OwnedFd, ep: &Endpoint) -> io::Result<()> {
    if ep.proto.tcp() {
        if ep.nodelay {
            sockopt::set_tcp_nodelay(fd, true)?;
        }
        if ep.mss > 0 {
            set_mss(fd.as_fd(), ep.mss)?;
        }
    }
    set_buffers(fd.as_fd(), ep)?;
    timeouts(fd)
}

/// 100 ms send and receive timeouts: a blocked call returns EAGAIN in time for the caller
/// to look at its clock.
pub fn timeouts(fd: &OwnedFd) -> io::Result<()> {
    sockopt::set_socket_timeout(fd, sockopt::Timeout::Recv, Some(STEP))?;
    sockopt::set_socket_timeout(fd, sockopt::Timeout::Send, Some(STEP))?;
    Ok(())
}

/// TCP_MAXSEG (`mss`).
fn set_mss(fd: BorrowedFd<'_>, mss: u32) -> io::Result<()> {
    let v = mss as libc::c_int;
    // SAFETY: setsockopt reads one c_int from a pointer to a local that outlives the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until `fd` is ready for `events` (POLLIN, POLLOUT), a step at a time while
/// `keep_waiting` says so: false when it said no.
pub fn wait_for(
    fd: BorrowedFd<'_>,
    events: libc::c_short,
    keep_waiting: &mut dyn FnMut() -> bool,
) -> io::Result<bool> {
    loop {
        if !keep_waiting() {
            return Ok(false);
        }
        let mut p = libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        };
        // SAFETY: one pollfd, a local that outlives the call.
        let r = unsafe { libc::poll(&mut p, 1, STEP.as_millis() as libc::c_int) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r > 0 {
            return Ok(true);
        }
    }
}

/// Accepts the one connection of a listener; None when the wait was given up.
pub fn accept(
    listener: &OwnedFd,
    keep_waiting: &mut dyn FnMut() -> bool,
) -> io::Result<Option<OwnedFd>> {
    if !wait_for(listener.as_fd(), libc::POLLIN, keep_waiting)? {
        return Ok(None);
    }
    Ok(Some(rustix::net::accept_with(
        listener,
        SocketFlags::CLOEXEC,
    )?))
}

/// Connects to `peer`; None when the wait was given up. Refused at once (nobody listening)
/// is an error, as in fio: `startdelay` orders a receiver's start before its sender's.
pub fn connect(
    peer: &Peer,
    ep: &Endpoint,
    keep_waiting: &mut dyn FnMut() -> bool,
) -> io::Result<Option<OwnedFd>> {
    let fd = new_socket(family(ep), SocketType::STREAM)?;
    let nonblocking =
        crate::platform::sys::fs::fcntl_getfl(&fd)? | crate::platform::sys::fs::OFlags::NONBLOCK;
    crate::platform::sys::fs::fcntl_setfl(&fd, nonblocking)?;
    let started = match peer {
        Peer::Inet(a) => rustix::net::connect(&fd, a),
        Peer::Unix(p) => rustix::net::connect(&fd, &SocketAddrUnix::new(p.as_path())?),
    };
    let what = match peer {
        Peer::Inet(a) => a.to_string(),
        Peer::Unix(p) => p.display().to_string(),
    };
    let failed = |e: io::Error| {
        crate::engine::with_context(
            e,
            format!("connecting to {what} (is the receiver listening there?)"),
        )
    };
    match started {
        Ok(()) => {}
        Err(
            crate::platform::sys::io::Errno::INPROGRESS | crate::platform::sys::io::Errno::AGAIN,
        ) => {
            if !wait_for(fd.as_fd(), libc::POLLOUT, keep_waiting)? {
                return Ok(None);
            }
            if let Err(e) = sockopt::socket_error(&fd)? {
                return Err(failed(e.into()));
            }
        }
        Err(e) => return Err(failed(e.into())),
    }
    let blocking =
        crate::platform::sys::fs::fcntl_getfl(&fd)? - crate::platform::sys::fs::OFlags::NONBLOCK;
    crate::platform::sys::fs::fcntl_setfl(&fd, blocking)?;
    Ok(Some(fd))
}

/// A datagram receiver's wait for its sender's "open"; the sender's address when it came
/// (None when the wait was given up).
pub fn await_open(
    fd: &OwnedFd,
    keep_waiting: &mut dyn FnMut() -> bool,
) -> io::Result<Option<SocketAddrAny>> {
    let mut m = [0u8; 64];
    loop {
        if !wait_for(fd.as_fd(), libc::POLLIN, keep_waiting)? {
            return Ok(None);
        }
        let (_, n, from) = rustix::net::recvfrom(fd, &mut m[..], RecvFlags::DONTWAIT)?;
        if n == 8 && m[..8] == open_message() {
            return Ok(from);
        }
        // Anything else before the open (a late datagram of an earlier sender) is not this
        // stream's.
    }
}

/// Sends fio's "open" (`open`) or "close" to `to`, or on the connection; errors ignored for
/// the close (the receiver may be gone).
pub fn send_link(fd: &OwnedFd, to: Option<&SocketAddrAny>, open: bool) -> io::Result<()> {
    let m = if open {
        open_message()
    } else {
        close_message()
    };
    let r = match to {
        Some(a) => rustix::net::sendto(fd, &m, SendFlags::NOSIGNAL, a),
        None => rustix::net::send(fd, &m, SendFlags::NOSIGNAL),
    };
    match r {
        Ok(_) => Ok(()),
        Err(e) if open => Err(e.into()),
        Err(_) => Ok(()),
    }
}
