//! fio's `net` and `netsplice` engines: each I/O is one block sent on, or received from, a
//! socket (tcp, tcpv6, udp, udpv6, unix), never a file. A receiver's clock starts once its
//! peer is there (fio's too); a stream ends cleanly when the peer closes it (end of the
//! connection, or fio's "close" datagram), and a sender whose receiver closed first ends
//! cleanly too. `pingpong` sends each block back, so each I/O's latency is a round trip.
//! netsplice moves a tcp stream's blocks through a pipe with splice(2) and vmsplice(2).
//! A datagram sender stamps each block's last 24 bytes with fio's sequence trailer, and a
//! receiver counts the blocks that never came (fio's `drop_ios`).

use std::net::Ipv4Addr;

/// The protocols, as fio's `protocol` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Tcp,
    Tcp6,
    Udp,
    Udp6,
    Unix,
}

impl Proto {
    pub fn as_str(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Tcp6 => "tcpv6",
            Proto::Udp => "udp",
            Proto::Udp6 => "udpv6",
            Proto::Unix => "unix",
        }
    }
    pub fn datagram(self) -> bool {
        matches!(self, Proto::Udp | Proto::Udp6)
    }
    pub fn tcp(self) -> bool {
        matches!(self, Proto::Tcp | Proto::Tcp6)
    }
    pub fn v6(self) -> bool {
        matches!(self, Proto::Tcp6 | Proto::Udp6)
    }
}

/// One job's end of a connection, as its options give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub proto: Proto,
    /// tcp/udp: the host a sender goes to, or the multicast group a receiver joins; unix: the
    /// socket's path.
    pub host: Option<String>,
    pub port: u16,
    /// Waits for the connection (tcp, unix `listen`; every udp reader).
    pub listen: bool,
    /// The job writes (sends); else it reads.
    pub sends: bool,
    pub pingpong: bool,
    pub nodelay: bool,
    /// Socket buffer size (`window_size`; 0: the kernel's).
    pub window: u32,
    /// TCP_MAXSEG (0: the kernel's).
    pub mss: u32,
    /// Multicast time-to-live of a sender.
    pub ttl: u32,
    /// The interface (by address) multicast goes out of or is received on.
    pub interface: Option<Ipv4Addr>,
    /// netsplice: through a pipe.
    pub splice: bool,
}

impl Endpoint {
    /// Clone `clone`'s end: the job's port plus the clone's number (fio's).
    pub fn for_clone(&self, clone: u32) -> Endpoint {
        let mut ep = self.clone();
        if ep.proto != Proto::Unix {
            ep.port = ep.port.saturating_add(clone as u16);
        }
        ep
    }

    /// The connection in words, for the report.
    pub fn describe(&self) -> String {
        let at = match (self.proto, &self.host) {
            (Proto::Unix, h) => h.clone().unwrap_or_default(),
            (_, Some(h)) => format!("{h}:{}", self.port),
            (_, None) => format!("port {}", self.port),
        };
        let role = match (self.listen, self.sends) {
            (true, true) => "accepts a connection and sends",
            (true, false) => "waits for its sender and receives",
            (false, true) => "connects and sends",
            (false, false) => "connects and receives",
        };
        let echo = if self.pingpong {
            ", each block echoed back (pingpong)"
        } else {
            ""
        };
        format!("{} {at}: {role}{echo}", self.proto.as_str())
    }
}

/// What each I/O is, for the report's engine line.
pub fn calls(splice: bool) -> &'static str {
    if splice {
        "send/recv of one block on a socket, through a pipe with splice(2) and vmsplice(2) (tcp)"
    } else {
        "send/recv (sendto/recvfrom for udp) of one block on a socket"
    }
}
