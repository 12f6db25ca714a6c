//! The net and netsplice engines on Linux (see `engine::net` for what they do): sockets
//! through rustix, netsplice's pipe through splice(2) and vmsplice(2).

use crate::platform::fd::{AsFd, OwnedFd};
use std::io;

use rustix::net::{RecvFlags, SendFlags, SocketAddrAny};
use rustix::pipe::{IoSliceRaw, SpliceFlags};

use crate::engine::net::Endpoint;
use crate::engine::{Dir, Engine, FlushCall, IoUnit, Queued};

pub mod socket;

pub use socket::{Prepared, prepare};

impl Prepared {
    /// Whether the socket waits for its peer (a listener), rather than being connected.
    pub fn is_listener(&self) -> bool {
        matches!(self, Prepared::Listener(_))
    }
}

/// Whether `e`, from making a socket, says its address cannot be had (taken, not allowed, not
/// this host's): the user's option at fault.
pub fn refused_address(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EADDRINUSE | libc::EACCES | libc::EADDRNOTAVAIL)
    )
}

/// What one call on the socket did.
enum Step {
    Moved(usize),
    /// Nothing within the socket's timeout.
    Wait,
    /// The peer is gone (end of stream, a reset, a closed pipe, fio's close datagram).
    Ended,
    Failed(io::Error),
}

impl Step {
    fn of(r: crate::platform::sys::io::Result<usize>, stream: bool) -> Step {
        use crate::platform::sys::io::Errno;
        match r {
            Ok(0) if stream => Step::Ended,
            Ok(n) => Step::Moved(n),
            Err(Errno::AGAIN | Errno::INTR) => Step::Wait,
            Err(Errno::PIPE | Errno::CONNRESET) => Step::Ended,
            Err(e) => Step::Failed(e.into()),
        }
    }
}

/// fio's sequence trailer of a datagram: magic, sequence number, block size, little-endian.
const SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;
const TRAILER: usize = 24;

pub struct Net {
    ep: Endpoint,
    prepared: Option<Prepared>,
    sock: Option<OwnedFd>,
    /// Where datagrams go: the sender's destination, a pingpong receiver's sender.
    to: Option<SocketAddrAny>,
    /// netsplice's pipe (read end, write end).
    pipe: Option<(OwnedFd, OwnedFd)>,
    send_seq: u64,
    recv_seq: u64,
    /// The sender's blocks are not the receiver's size: sequence numbers are not counted.
    seq_off: bool,
    dropped: u64,
    /// pingpong: the block has gone one way (`held` bytes not yet reported), and `back` bytes
    /// of its echo have come or gone.
    echo: Option<(usize, usize)>,
    /// Kept until the engine is dropped (a unix listener's socket file).
    _guard: Option<Box<dyn Send>>,
}

impl Net {
    pub fn new(ep: Endpoint, prepared: Prepared, guard: Option<Box<dyn Send>>) -> io::Result<Net> {
        let pipe = match ep.splice {
            true => Some(rustix::pipe::pipe()?),
            false => None,
        };
        Ok(Net {
            ep,
            prepared: Some(prepared),
            sock: None,
            to: None,
            pipe,
            send_seq: 0,
            recv_seq: 0,
            seq_off: false,
            dropped: 0,
            echo: None,
            _guard: guard,
        })
    }

    fn send(&mut self, buf: &mut [u8]) -> Step {
        let Some(sock) = &self.sock else {
            return Step::Failed(io::Error::from_raw_os_error(libc::ENOTCONN));
        };
        if self.ep.proto.datagram() && self.echo.is_none() && buf.len() >= TRAILER {
            let (t, len) = (buf.len() - TRAILER, buf.len() as u64);
            buf[t..t + 8].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
            buf[t + 8..t + 16].copy_from_slice(&self.send_seq.to_le_bytes());
            buf[t + 16..].copy_from_slice(&len.to_le_bytes());
            self.send_seq += 1;
        }
        let stream = !self.ep.proto.datagram();
        if let Some((r, w)) = &self.pipe {
            let step = buf.len().min(PIPE_STEP);
            return match to_pipe(w, &buf[..step]) {
                Ok(n) => Step::of(drain(r, sock, n), stream),
                Err(e) => Step::Failed(e.into()),
            };
        }
        let r = match &self.to {
            Some(a) => rustix::net::sendto(sock, buf, SendFlags::NOSIGNAL, a),
            None => rustix::net::send(sock, buf, SendFlags::NOSIGNAL),
        };
        match Step::of(r, stream) {
            // A datagram larger than the path takes: the job's error, said plainly.
            Step::Failed(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => Step::Failed(
                crate::engine::with_context(e, "bs is larger than one datagram".into()),
            ),
            s => s,
        }
    }

    fn recv(&mut self, buf: &mut [u8], first: bool) -> Step {
        let Some(sock) = &self.sock else {
            return Step::Failed(io::Error::from_raw_os_error(libc::ENOTCONN));
        };
        if !self.ep.proto.datagram() {
            let got = match &self.pipe {
                Some((r, w)) => {
                    let step = buf.len().min(PIPE_STEP);
                    rustix::pipe::splice(sock, None, w, None, step, SpliceFlags::MOVE).and_then(
                        |n| match n {
                            0 => Ok(0),
                            n => from_pipe(r, &mut buf[..n]),
                        },
                    )
                }
                None => rustix::net::recv(sock, &mut *buf, RecvFlags::empty()).map(|(n, _)| n),
            };
            // fio's sender ends a stream with its close message too.
            if first && matches!(got, Ok(8)) && buf[..8] == socket::close_message() {
                return Step::Ended;
            }
            return Step::of(got, true);
        }
        let (n, from) = match rustix::net::recvfrom(sock, &mut *buf, RecvFlags::empty()) {
            Ok((_, n, from)) => (n, from),
            Err(e) => return Step::of(Err(e), false),
        };
        if n == 8 && buf[..8] == socket::close_message() {
            return Step::Ended;
        }
        if n == 0 {
            return Step::Wait;
        }
        if n == 8 && buf[..8] == socket::open_message() {
            return Step::Wait;
        }
        if self.ep.pingpong && self.echo.is_none() {
            self.to = from;
        }
        // A whole block only: a short one's tail is an earlier datagram's.
        if self.echo.is_none() && n == buf.len() {
            self.count_sequence(buf);
        }
        Step::Moved(n)
    }

    /// A datagram's sequence trailer: the blocks between the last one seen and this one were
    /// dropped on the way.
    fn count_sequence(&mut self, d: &[u8]) {
        if self.seq_off || d.len() < TRAILER {
            return;
        }
        let t = d.len() - TRAILER;
        let word = |i: usize| u64::from_le_bytes(d[t + i..t + i + 8].try_into().expect("8 bytes"));
        if word(0) != SEQ_MAGIC {
            return;
        }
        if word(16) != d.len() as u64 {
            self.seq_off = true;
            return;
        }
        let seq = word(8);
        self.dropped += seq.saturating_sub(self.recv_seq);
        self.recv_seq = seq + 1;
    }

    /// pingpong's second half: the block back the other way, in the unit's own buffer.
    fn echo_more(&mut self, u: &mut IoUnit) -> Queued {
        let len = u.len();
        let back_dir = u.dir;
        loop {
            let (held, back) = self.echo.expect("echoing");
            let Some(buf) = u.pages_mut().next() else {
                return Queued::Done(Ok(held));
            };
            let rest = &mut buf[back..len];
            let step = match back_dir {
                Dir::Read => self.send(rest),
                _ => self.recv(rest, false),
            };
            match step {
                Step::Moved(n) if self.ep.proto.datagram() || back + n >= len => {
                    self.echo = None;
                    return Queued::Done(Ok(held));
                }
                Step::Moved(n) => self.echo = Some((held, back + n)),
                Step::Wait => return Queued::Waiting,
                Step::Ended => {
                    self.echo = None;
                    return Queued::End;
                }
                Step::Failed(e) => {
                    self.echo = None;
                    return Queued::Done(Err(e));
                }
            }
        }
    }
}

/// Bytes per trip through netsplice's pipe (a pipe's default capacity, fio's step).
const PIPE_STEP: usize = 64 << 10;

/// The `len` bytes in the pipe into the socket: all of them (a timeout waits again), so
/// nothing of one I/O is left in the pipe for the next; fewer only when the peer is gone.
fn drain(r: &OwnedFd, sock: &OwnedFd, len: usize) -> crate::platform::sys::io::Result<usize> {
    let mut done = 0;
    while done < len {
        match rustix::pipe::splice(r, None, sock, None, len - done, SpliceFlags::MOVE) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(crate::platform::sys::io::Errno::AGAIN | crate::platform::sys::io::Errno::INTR) => {
            }
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(done)
}

/// The buffer into the pipe (vmsplice).
fn to_pipe(w: &OwnedFd, buf: &[u8]) -> crate::platform::sys::io::Result<usize> {
    // SAFETY: vmsplice only reads `buf`, which is not changed until the pipe has been drained
    // into the socket by the splice that follows in the same call.
    unsafe { rustix::pipe::vmsplice(w, &[IoSliceRaw::from_slice(buf)], SpliceFlags::empty()) }
}

/// The pipe's bytes into the buffer (vmsplice), all `buf.len()` of them.
fn from_pipe(r: &OwnedFd, buf: &mut [u8]) -> crate::platform::sys::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let to = &mut buf[done..];
        // SAFETY: `r` is the pipe's read end: vmsplice copies into `to`, the unit's own
        // buffer, which nothing else uses meanwhile.
        let n = unsafe {
            rustix::pipe::vmsplice(r, &[IoSliceRaw::from_slice_mut(to)], SpliceFlags::empty())
        }?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

impl Engine for Net {
    fn start(&mut self, keep_waiting: &mut dyn FnMut() -> bool) -> io::Result<bool> {
        let ep = self.ep.clone();
        let sock = match self.prepared.take() {
            Some(Prepared::Listener(l)) => socket::accept(&l, keep_waiting)?,
            Some(Prepared::Connect(peer)) => socket::connect(&peer, &ep, keep_waiting)?,
            Some(Prepared::Receiver(fd)) => match socket::await_open(&fd, keep_waiting)? {
                Some(from) => {
                    self.to = Some(from);
                    Some(fd)
                }
                None => None,
            },
            Some(Prepared::Sender(fd, to)) => {
                let to = SocketAddrAny::from(to);
                socket::send_link(&fd, Some(&to), true)?;
                self.to = Some(to);
                Some(fd)
            }
            None => return Err(io::Error::other("net: started twice")),
        };
        let Some(sock) = sock else {
            return Ok(false);
        };
        if ep.proto.datagram() {
            socket::timeouts(&sock)?;
        } else {
            socket::connected(&sock, &ep)?;
        }
        self.sock = Some(sock);
        Ok(true)
    }

    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        if self.echo.is_some() {
            return self.echo_more(u);
        }
        let (first, len) = (u.done == 0, u.len());
        let step = match u.dir {
            Dir::Write => self.send(u.rest_mut()),
            Dir::Read => self.recv(u.rest_mut(), first),
            Dir::Trim => Step::Failed(io::Error::from_raw_os_error(libc::EINVAL)),
        };
        match step {
            Step::Moved(n) if self.ep.proto.datagram() && u.dir == Dir::Read && n < len => {
                // A datagram is one I/O, however short.
                u.set_len(n);
                self.after(u, n)
            }
            Step::Moved(n) => self.after(u, n),
            Step::Wait => Queued::Waiting,
            Step::Ended => Queued::End,
            Step::Failed(e) => Queued::Done(Err(e)),
        }
    }

    fn dropped(&self) -> u64 {
        self.dropped
    }

    fn flush(&mut self, _: usize, _: FlushCall) -> io::Result<()> {
        Ok(())
    }
}

impl Net {
    /// `n` bytes of the unit went its way: done, or (pingpong, once whole) its echo.
    fn after(&mut self, u: &mut IoUnit, n: usize) -> Queued {
        let whole = self.ep.proto.datagram() || u.done + n >= u.len();
        if self.ep.pingpong && whole {
            self.echo = Some((n, 0));
            return self.echo_more(u);
        }
        Queued::Done(Ok(n))
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // fio's close datagram ends the receiver's stream; sent thrice, for one lost on the way
        // to a receiver that is behind.
        if let (Some(sock), true) = (&self.sock, self.ep.sends && self.ep.proto.datagram()) {
            for _ in 0..3 {
                let _ = socket::send_link(sock, self.to.as_ref(), false);
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        if let Some(sock) = &self.sock {
            let _ = rustix::net::shutdown(sock.as_fd(), rustix::net::Shutdown::Write);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::net::Proto;

    fn ep(listen: bool, sends: bool, port: u16) -> Endpoint {
        Endpoint {
            proto: Proto::Tcp,
            host: (!listen).then(|| "127.0.0.1".to_string()),
            port,
            listen,
            sends,
            pingpong: false,
            nodelay: true,
            window: 0,
            mss: 0,
            ttl: 1,
            interface: None,
            splice: false,
        }
    }

    fn port_of(p: &Prepared) -> u16 {
        let Prepared::Listener(fd) = p else {
            panic!("a listener")
        };
        let a = rustix::net::getsockname(fd).unwrap();
        std::net::SocketAddr::try_from(a).unwrap().port()
    }

    #[test]
    fn a_tcp_stream_moves_each_block_and_ends_when_the_sender_goes() {
        let rx_ep = ep(true, false, 0);
        let listener = socket::prepare(&rx_ep).unwrap();
        let port = port_of(&listener);
        let mut rx = Net::new(rx_ep, listener, None).unwrap();
        let receiver = std::thread::spawn(move || {
            assert!(rx.start(&mut || true).unwrap());
            let mut got = Vec::new();
            let mut u = IoUnit::one(Dir::Read, 0, 4096);
            loop {
                match rx.queue(0, &mut u) {
                    Queued::Done(Ok(n)) => {
                        u.done += n;
                        if u.done == 4096 {
                            got.extend_from_slice(u.pages_mut().next().unwrap());
                            u.done = 0;
                        }
                    }
                    Queued::Waiting => {}
                    Queued::End => return got,
                    other => panic!("{other:?}"),
                }
            }
        });
        let tx_ep = ep(false, true, port);
        let mut tx = Net::new(tx_ep.clone(), socket::prepare(&tx_ep).unwrap(), None).unwrap();
        assert!(tx.start(&mut || true).unwrap());
        for b in 0..3u8 {
            let mut u = IoUnit::one(Dir::Write, 0, 4096);
            u.pages_mut().next().unwrap().fill(b + 1);
            while u.done < 4096 {
                match tx.queue(0, &mut u) {
                    Queued::Done(Ok(n)) => u.done += n,
                    Queued::Waiting => {}
                    other => panic!("{other:?}"),
                }
            }
        }
        drop(tx);
        let got = receiver.join().unwrap();
        assert_eq!(got.len(), 3 * 4096);
        assert!(
            got.chunks(4096)
                .enumerate()
                .all(|(i, c)| c.iter().all(|&x| x == i as u8 + 1))
        );
    }

    #[test]
    fn a_connection_nobody_accepts_is_refused_and_a_wait_can_be_given_up() {
        let rx_ep = ep(true, false, 0);
        let listener = socket::prepare(&rx_ep).unwrap();
        let port = port_of(&listener);
        let mut rx = Net::new(rx_ep, listener, None).unwrap();
        let mut asked = 0;
        // Nobody connects: the wait ends when told to, with no error.
        assert!(
            !rx.start(&mut || {
                asked += 1;
                asked < 3
            })
            .unwrap()
        );
        drop(rx);
        let tx_ep = ep(false, true, port);
        let mut tx = Net::new(tx_ep.clone(), socket::prepare(&tx_ep).unwrap(), None).unwrap();
        let e = tx.start(&mut || true).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused, "{e}");
    }

    #[test]
    fn datagrams_missing_from_the_sequence_are_counted() {
        let mut e = Net::new(
            ep(true, false, 0),
            Prepared::Connect(socket::Peer::Unix("x".into())),
            None,
        )
        .unwrap();
        let datagram = |seq: u64, bs: u64| {
            let mut d = vec![0u8; 1024];
            let t = d.len() - TRAILER;
            d[t..t + 8].copy_from_slice(&SEQ_MAGIC.to_le_bytes());
            d[t + 8..t + 16].copy_from_slice(&seq.to_le_bytes());
            d[t + 16..].copy_from_slice(&bs.to_le_bytes());
            d
        };
        for seq in [0, 1, 4, 5, 9] {
            e.count_sequence(&datagram(seq, 1024));
        }
        assert_eq!(e.dropped, 2 + 3);
        // A sender that says another block size: its numbers are not the receiver's to count.
        e.count_sequence(&datagram(20, 512));
        e.count_sequence(&datagram(40, 1024));
        assert_eq!(e.dropped, 5);
    }
}
