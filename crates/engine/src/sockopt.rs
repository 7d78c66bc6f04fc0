//! The typed socket-option layer every stream goes through.

use std::io;
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

use linerate_wire::{BenchParams, TransferRequest};

use crate::spec::{SocketParams, TransferSpec};
use socket2::SockRef;

/// A data connection silent for this long is dead.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// What a data connection's socket is set to: the shared socket options
/// of every session kind, and the two a bench adds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamOptions {
    /// The options every session kind shares.
    pub socket: SocketParams,
    /// Senders use MSG_ZEROCOPY.
    pub zerocopy: bool,
    /// SO_RCVLOWAT, applied on receiving sockets only.
    pub rcvlowat: Option<u32>,
}

/// The options of a bench session, the same at both ends; each is applied
/// only where it means something (the receive buffer bounds the window at the
/// receiver, SO_RCVLOWAT is set on receiving sockets only).
impl From<&BenchParams> for StreamOptions {
    fn from(p: &BenchParams) -> Self {
        StreamOptions {
            socket: p.options.socket.clone(),
            zerocopy: p.options.zerocopy,
            rcvlowat: p.plan.rcvlowat,
        }
    }
}

impl StreamOptions {
    /// A latency session's, the same at both ends.
    pub fn for_latency(p: &linerate_wire::LatencyParams) -> StreamOptions {
        StreamOptions {
            socket: p.socket.clone(),
            zerocopy: false,
            rcvlowat: None,
        }
    }

    /// A transfer sender's: the spec's socket options, its rate cap split
    /// over the streams.
    pub fn for_sender(spec: &TransferSpec) -> StreamOptions {
        let mut socket = spec.socket.clone();
        if let Some(rate) = spec.rate {
            socket.pacing_rate = Some((rate / u64::from(spec.streams.max(1))).max(1));
        }
        StreamOptions {
            socket,
            ..StreamOptions::default()
        }
    }

    /// A transfer receiver's: the socket options the sender asked for.
    pub fn for_receiver(req: &TransferRequest) -> StreamOptions {
        StreamOptions {
            socket: req.socket.clone(),
            ..StreamOptions::default()
        }
    }
}

/// Bounds how long a data connection may stay silent in either direction.
pub fn set_idle_timeouts(conn: &TcpStream) -> io::Result<()> {
    conn.set_read_timeout(Some(IDLE_TIMEOUT))?;
    conn.set_write_timeout(Some(IDLE_TIMEOUT))
}

/// Socket buffer sizes the kernel actually granted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Granted {
    /// SO_SNDBUF as granted.
    pub sndbuf: u32,
    /// SO_RCVBUF as granted.
    pub rcvbuf: u32,
}

impl StreamOptions {
    /// Options that only take effect before the handshake (MSS, and buffer
    /// sizes, which decide the window scale announced in the SYN).
    pub fn apply_before_connect(&self, sock: &socket2::Socket) -> io::Result<()> {
        let mss = self.socket.mss.or_else(|| {
            // A window under a few of the largest segments: segments a
            // quarter of it, announced in the SYN so both ends send them,
            // as a small buffer makes them at iperf3's ends
            // (docs/defaults.md#window-clamp).
            let w = self.socket.rcvbuf?;
            (w < MIN_CLAMP_SEGMENTS * LARGEST_MSS).then_some((w / MIN_CLAMP_SEGMENTS).max(MIN_MSS))
        });
        if let Some(mss) = mss {
            sock.set_tcp_mss(mss).map_err(ctx("TCP_MAXSEG"))?;
        }
        self.apply_buffers(sock)
    }

    /// Buffers as asked: with CAP_NET_ADMIN beyond net.core.{r,w}mem_max
    /// (SO_*BUFFORCE), else up to it. A receive buffer also caps the
    /// advertised window, once connected ([`clamp_window`]).
    fn apply_buffers(&self, fd: impl AsFd) -> io::Result<()> {
        use rustix::net::sockopt;
        if let Some(b) = self.socket.sndbuf
            && setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, clamp_int(b)).is_err()
        {
            sockopt::set_socket_send_buffer_size(&fd, b as usize)
                .map_err(|e| ctx("SO_SNDBUF")(e.into()))?;
        }
        if let Some(b) = self.socket.rcvbuf
            && setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, clamp_int(b)).is_err()
        {
            sockopt::set_socket_recv_buffer_size(&fd, b as usize)
                .map_err(|e| ctx("SO_RCVBUF")(e.into()))?;
        }
        Ok(())
    }

    /// Everything that can be set on a connected socket; on an accepted socket
    /// this includes the buffers, which then shrink or grow the window.
    /// Nagle stays on: writes are far larger than a segment, and coalescing
    /// the tail of each write measured cheaper than TCP_NODELAY.
    pub fn apply_connected(&self, fd: impl AsFd, accepted: bool) -> io::Result<()> {
        let sock = SockRef::from(&fd);
        if accepted {
            self.apply_buffers(&fd)?;
        }
        if let Some(b) = self.socket.rcvbuf {
            clamp_window(&fd, b)?;
        }
        if let Some(cc) = &self.socket.congestion {
            sock.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "TCP_CONGESTION {cc}: {e} (see net.ipv4.tcp_available_congestion_control)"
                    ),
                )
            })?;
        }
        if let Some(tos) = self.socket.tos {
            let is_v6 = sock.local_addr().map(|a| a.is_ipv6()).unwrap_or(false);
            if is_v6 {
                rustix::net::sockopt::set_ipv6_tclass(&fd, u32::from(tos))
                    .map_err(|e| ctx("IPV6_TCLASS")(e.into()))?;
            } else {
                sock.set_tos_v4(u32::from(tos)).map_err(ctx("IP_TOS"))?;
            }
        }
        if let Some(rate) = self.socket.pacing_rate {
            setsockopt_u64(&fd, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, rate)
                .map_err(ctx("SO_MAX_PACING_RATE"))?;
        }
        if self.zerocopy {
            setsockopt_int(&fd, libc::SOL_SOCKET, libc::SO_ZEROCOPY, 1)
                .map_err(ctx("SO_ZEROCOPY"))?;
        }
        if self.socket.nodelay {
            sock.set_tcp_nodelay(true).map_err(ctx("TCP_NODELAY"))?;
        }
        if let Some(bytes) = self.socket.notsent_lowat {
            let bytes = i32::try_from(bytes).unwrap_or(i32::MAX);
            setsockopt_int(&fd, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, bytes)
                .map_err(ctx("TCP_NOTSENT_LOWAT"))?;
        }
        Ok(())
    }
}

/// A window clamp below this many segments holds TCP to a segment or two
/// per round trip (the receiver's silly-window avoidance): `--window 4K`
/// on loopback (64 KiB segments) ran at 348 kbit/s clamped, where iperf3's
/// `-w 4K`, a buffer only, ran at 1.1 Gbit/s. Below it `--window` sets the
/// buffer only, as iperf3's `-w` does (docs/defaults.md#window-clamp).
pub const MIN_CLAMP_SEGMENTS: u32 = 4;
/// Loopback's segment size (MTU 65536), the largest a path has.
const LARGEST_MSS: u32 = 65483;
/// The smallest segment TCP_MAXSEG takes (TCP_MIN_MSS).
const MIN_MSS: u32 = 88;

/// On a connected socket, caps the window it advertises at `bytes`
/// (TCP_WINDOW_CLAMP), so `--window 4M` means a 4 MiB window and not
/// whatever the kernel makes of a doubled buffer; unless that is under
/// [`MIN_CLAMP_SEGMENTS`] of the connection's segment size. Whether it did.
pub fn clamp_window(fd: impl AsFd, bytes: u32) -> io::Result<bool> {
    let mss = SockRef::from(&fd).tcp_mss().map_err(ctx("TCP_MAXSEG"))?;
    if bytes < MIN_CLAMP_SEGMENTS.saturating_mul(mss) {
        return Ok(false);
    }
    set_window_clamp(fd, bytes)?;
    Ok(true)
}

/// Caps the window this socket advertises.
pub fn set_window_clamp(fd: impl AsFd, bytes: u32) -> io::Result<()> {
    setsockopt_int(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_WINDOW_CLAMP,
        clamp_int(bytes),
    )
    .map_err(ctx("TCP_WINDOW_CLAMP"))
}

fn clamp_int(v: u32) -> libc::c_int {
    libc::c_int::try_from(v).unwrap_or(libc::c_int::MAX)
}

/// Microseconds the kernel polls the device queue in a receive that finds
/// nothing (SO_BUSY_POLL), for `latency --busy-poll`.
pub const BUSY_POLL_US: libc::c_int = 50;

/// Asks the kernel to poll the device in an empty receive; whether it
/// could (a value above net.core.busy_read needs CAP_NET_ADMIN; devices
/// without NAPI, such as loopback, ignore it).
pub fn set_busy_poll(fd: impl AsFd) -> bool {
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_BUSY_POLL, BUSY_POLL_US).is_ok()
}

/// Hands the kernel datagrams of `size` bytes many at a time (UDP_SEGMENT,
/// GSO); whether the kernel took it.
pub fn set_udp_segment(fd: impl AsFd, size: u32) -> bool {
    setsockopt_int(fd, libc::SOL_UDP, UDP_SEGMENT, clamp_int(size)).is_ok()
}

// From linux/udp.h; the libc crate has them for uclibc only.
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

/// Takes coalesced runs of datagrams in one receive (UDP_GRO); whether
/// the kernel took it.
pub fn set_udp_gro(fd: impl AsFd) -> bool {
    setsockopt_int(fd, libc::SOL_UDP, UDP_GRO, 1).is_ok()
}

/// Datagrams the kernel dropped because this socket's receive buffer was
/// full: the counter SO_RXQ_OVFL reports with each datagram, read whole
/// through SO_MEMINFO instead of from every recvmsg's control data.
pub fn socket_drops(fd: impl AsFd) -> io::Result<u32> {
    // The kernel fills SK_MEMINFO_VARS (9) u32s; room for more is harmless.
    let mut info = [0u32; 16];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` and `len` live on the stack for the whole call, `len`
    // holds `info`'s size in bytes and the kernel writes at most that many;
    // the borrowed descriptor stays open.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let at = libc::SK_MEMINFO_DROPS as usize;
    if (len as usize) < (at + 1) * 4 {
        return Err(io::Error::other(
            "SO_MEMINFO: the kernel gave no drop count",
        ));
    }
    Ok(info[at])
}

/// Wakes a blocked reader only once `bytes` are queued.
pub fn set_rcvlowat(fd: impl AsFd, bytes: u32) -> io::Result<()> {
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVLOWAT, v).map_err(ctx("SO_RCVLOWAT"))
}

/// The buffer sizes the kernel granted the socket.
pub fn granted(fd: impl AsFd) -> io::Result<Granted> {
    use rustix::net::sockopt;
    Ok(Granted {
        sndbuf: sockopt::socket_send_buffer_size(&fd).map_err(io::Error::from)? as u32,
        rcvbuf: sockopt::socket_recv_buffer_size(&fd).map_err(io::Error::from)? as u32,
    })
}

fn ctx(what: &'static str) -> impl Fn(io::Error) -> io::Error {
    move |e| io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// setsockopt with a 64-bit value (SO_MAX_PACING_RATE takes one since 4.20).
fn setsockopt_u64(fd: impl AsFd, level: i32, name: i32, value: u64) -> io::Result<()> {
    // SAFETY: `value` lives on the stack for the whole call and the length
    // passed is exactly its size; the borrowed descriptor stays open.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&value as *const u64).cast(),
            std::mem::size_of::<u64>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn setsockopt_int(fd: impl AsFd, level: i32, name: i32, value: libc::c_int) -> io::Result<()> {
    // SAFETY: as above, with a c_int.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// send(2) with MSG_ZEROCOPY: the kernel pins `buf`'s pages instead of copying
/// them. The caller must not change `buf` until completions arrive; the stream
/// sends one immutable buffer, so that holds by construction.
pub fn send_zerocopy(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes during the call and
    // the data path never mutates it afterwards (see above).
    let n = unsafe {
        libc::send(
            fd.as_fd().as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_ZEROCOPY | libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Drains zerocopy completion notices, so they never exhaust optmem.
pub fn drain_error_queue(fd: impl AsFd) {
    use rustix::net::{RecvAncillaryBuffer, RecvFlags, recvmsg};
    let mut space = [std::mem::MaybeUninit::<u8>::uninit(); 256];
    loop {
        let mut anc = RecvAncillaryBuffer::new(&mut space);
        match recvmsg(
            &fd,
            &mut [],
            &mut anc,
            RecvFlags::ERRQUEUE | RecvFlags::DONTWAIT,
        ) {
            Ok(_) => continue,
            Err(_) => break,
        }
    }
}

/// Sends what Nagle is holding back now and leaves Nagle on. The end of a
/// round is a small record after a small tail: held until the receiver's
/// delayed ACK, it cost every transfer 40 ms.
pub fn push(stream: &std::net::TcpStream) -> io::Result<()> {
    // Turning TCP_NODELAY on pushes the pending segments at once.
    stream.set_nodelay(true)?;
    stream.set_nodelay(false)
}

/// Whether the peer closed or reset the TCP connection `tcp`, looked at
/// without waiting or taking what it sent (a UDP stream's connection, a
/// transfer's control connection while the receiver works for it).
pub fn peer_gone(tcp: impl AsFd) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::io::Errno;
    use rustix::net::RecvFlags;
    let tcp = tcp.as_fd();
    let mut fds = [PollFd::new(&tcp, PollFlags::IN | PollFlags::RDHUP)];
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&zero)) {
        Ok(0) | Err(Errno::INTR) => false,
        Err(_) => true,
        Ok(_) => {
            let ev = fds[0].revents();
            if ev.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::RDHUP) {
                return true;
            }
            let mut b = [0u8; 1];
            matches!(
                rustix::net::recv(tcp, &mut b, RecvFlags::PEEK | RecvFlags::DONTWAIT),
                Ok((0, _)) | Err(Errno::CONNRESET | Errno::PIPE | Errno::NOTCONN)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bench -N`: the option reaches the socket at either end, and a
    /// session without it leaves Nagle on.
    #[test]
    fn nodelay_is_set_where_the_session_asks_for_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let asked = StreamOptions {
            socket: SocketParams {
                nodelay: true,
                notsent_lowat: Some(128 << 10),
                ..SocketParams::default()
            },
            ..StreamOptions::default()
        };
        asked.apply_connected(&client, false).unwrap();
        asked.apply_connected(&server, true).unwrap();
        assert!(client.nodelay().unwrap() && server.nodelay().unwrap());
        let other = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        StreamOptions::default()
            .apply_connected(&other, false)
            .unwrap();
        assert!(!other.nodelay().unwrap());
    }
}
