//! ioengine=net and netsplice as a job sets them, with fio's rules: the protocol and port, a
//! tcp job's role (`listen`, or a `hostname` to connect to), a udp or unix reader always the one
//! that waits, one direction per job, and no random offsets (a socket has none).

use std::net::Ipv4Addr;

use super::values::Values;
use crate::engine::net::{Endpoint, Proto};
use crate::plan::SpecError;
use crate::plan::job::*;

/// The most a udp datagram carries (65535 less the IP and UDP headers).
const DATAGRAM_MAX: [u64; 2] = [65_507, 65_527];

/// The job's end of its connection; None for any other engine (an error if one of net's
/// options is given).
pub(super) fn endpoint(
    v: &Values<'_>,
    spec: &JobSpec,
    numjobs: u64,
    warnings: &mut Vec<String>,
) -> Result<Option<Endpoint>, SpecError> {
    if !spec.engine.network() {
        super::engine::own_options_only(v, spec.engine, EngineKind::Net)?;
        return Ok(None);
    }
    let proto = protocol(v)?;
    direction(v, spec)?;
    limits(v, spec, proto)?;
    let sends = spec.rw.modifies();
    let host = match (v.text("hostname"), &spec.target) {
        (Some((h, _)), _) => Some(h),
        (None, TargetSpec::Files(f)) if proto == Proto::Unix => {
            f.first().map(|p| crate::rawpath::display(p).to_string())
        }
        _ => None,
    };
    let listen = role(v, proto, sends, &host, warnings)?;
    let port = port(v, proto, listen, numjobs)?;
    let interface = match v.text("interface") {
        Some((t, _)) => Some(
            t.parse::<Ipv4Addr>()
                .map_err(|_| v.error("interface", "expected an interface's IPv4 address".into()))?,
        ),
        None => None,
    };
    Ok(Some(Endpoint {
        proto,
        host,
        port: port as u16,
        listen,
        sends,
        pingpong: v.bool("pingpong")?,
        nodelay: v.bool("nodelay")?,
        window: v
            .size("window_size", warnings)?
            .unwrap_or(0)
            .min(u64::from(u32::MAX)) as u32,
        mss: v.int("mss")?.unwrap_or(0) as u32,
        ttl: v.int("ttl")?.unwrap_or(1) as u32,
        interface,
        splice: spec.engine == EngineKind::Netsplice,
    }))
}

/// `protocol`: vsock refused (it needs a hypervisor's device).
fn protocol(v: &Values<'_>) -> Result<Proto, SpecError> {
    Ok(match v.choice("protocol")?.as_str() {
        "tcpv6" => Proto::Tcp6,
        "udp" => Proto::Udp,
        "udpv6" => Proto::Udp6,
        "unix" => Proto::Unix,
        "vsock" => {
            return Err(v.error(
                "protocol",
                "not supported: VM sockets need a hypervisor's vsock device; fio runs it, \
                 iogauge does not"
                    .into(),
            ));
        }
        _ => Proto::Tcp,
    })
}

/// What a socket job cannot have: netsplice over anything but tcp, verify, no size to
/// reach (nor a time), a udp block larger than one datagram.
fn limits(v: &Values<'_>, spec: &JobSpec, proto: Proto) -> Result<(), SpecError> {
    let engine = spec.engine.as_str();
    if spec.engine == EngineKind::Netsplice && !proto.tcp() {
        return Err(v.error(
            "protocol",
            "netsplice splices tcp streams only (use ioengine=net)".into(),
        ));
    }
    if spec.verify.is_some() {
        return Err(v.error(
            "verify",
            format!("not done yet over ioengine={engine}: verify a file's data instead"),
        ));
    }
    if spec.size.is_none() && !spec.timing.time_based {
        return Err(v.error(
            "size",
            format!(
                "required with ioengine={engine} (the bytes to send or receive), or time_based \
                 with runtime"
            ),
        ));
    }
    let most = DATAGRAM_MAX[usize::from(proto.v6())];
    if proto.datagram() && spec.max_xfer() > most {
        return Err(v.error(
            "bs",
            format!("larger than one udp datagram ({most} bytes at most)"),
        ));
    }
    Ok(())
}

/// `port`: required for tcp and udp (each clone takes the next one up), none for unix, where
/// one receiver has the path.
fn port(v: &Values<'_>, proto: Proto, listen: bool, numjobs: u64) -> Result<u64, SpecError> {
    let port = v.int("port")?.unwrap_or(0);
    if proto == Proto::Unix {
        if port != 0 {
            return Err(v.error(
                "port",
                "not valid with protocol=unix (the socket is filename)".into(),
            ));
        }
        if numjobs > 1 && listen {
            return Err(v.error(
                "numjobs",
                "one receiver per unix socket: give each its own job and filename".into(),
            ));
        }
    } else if port == 0 {
        return Err(v.error("port", format!("required with protocol={}", proto.as_str())));
    } else if port + numjobs.saturating_sub(1) > 65535 {
        return Err(v.error(
            "port",
            format!("{port}: its {numjobs} clones take one port each, past 65535"),
        ));
    }
    Ok(port)
}

/// One direction per job, at no offset: read or write.
fn direction(v: &Values<'_>, spec: &JobSpec) -> Result<(), SpecError> {
    let why = if spec.rw.is_random() {
        "a socket has no offsets to draw: rw=read or rw=write"
    } else if spec.rw.trims() {
        "a socket has no trim: rw=read or rw=write"
    } else if spec.rw.reads() && spec.rw.writes() {
        "one direction per job (pingpong sends each block back): rw=read or rw=write"
    } else {
        return Ok(());
    };
    Err(v.error(
        "rw",
        format!("{why} with ioengine={}", spec.engine.as_str()),
    ))
}

/// Whether the job waits for its peer: tcp's `listen`; a udp or unix reader always (fio's).
fn role(
    v: &Values<'_>,
    proto: Proto,
    sends: bool,
    host: &Option<String>,
    warnings: &mut Vec<String>,
) -> Result<bool, SpecError> {
    if !proto.tcp() {
        if v.given("listen") {
            return Err(v.error(
                "listen",
                format!(
                    "only for tcp: a {} reader always waits for its sender",
                    proto.as_str()
                ),
            ));
        }
        if host.is_none() && (sends || proto == Proto::Unix) {
            let needs = match proto {
                Proto::Unix => "filename (the socket's path)",
                _ => "hostname (where the datagrams go)",
            };
            return Err(v.error(
                "ioengine",
                format!("protocol={} needs {needs}", proto.as_str()),
            ));
        }
        return Ok(!sends);
    }
    let listen = v.bool("listen")?;
    if listen && host.is_some() {
        warnings.push(
            "hostname is not used by a tcp listener (it accepts on every address of its port)"
                .to_string(),
        );
    }
    if !listen && host.is_none() {
        return Err(v.error(
            "hostname",
            "required for a tcp job that connects (or give listen, for the one that waits)".into(),
        ));
    }
    Ok(listen)
}
