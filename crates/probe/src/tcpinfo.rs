//! TCP_INFO: the kernel's per-connection state, decoded from its raw layout.
//!
//! The struct grows with kernel versions, so the decoder works on the bytes the
//! kernel actually returned and leaves out fields that were not there.

use std::os::fd::AsFd;

use linerate_result::TcpSample;

/// Bytes asked for: more than any current kernel returns.
const TCP_INFO_MAX: usize = 512;

/// Reads TCP_INFO of a connected TCP socket.
pub fn read(fd: impl AsFd) -> std::io::Result<TcpSample> {
    let mut buf = [0u8; TCP_INFO_MAX];
    let len = getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut buf)?;
    decode(&buf[..len])
        .ok_or_else(|| std::io::Error::other("TCP_INFO shorter than its base layout"))
}

/// Bytes this connection has moved both ways (tcpi_bytes_acked plus
/// tcpi_bytes_received): whether a session makes progress, whatever its
/// direction.
pub fn bytes_moved(fd: impl AsFd) -> std::io::Result<u64> {
    let mut buf = [0u8; TCP_INFO_MAX];
    let len = getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut buf)?;
    let b = &buf[..len];
    match (u64_at(b, 120), u64_at(b, 128)) {
        (Some(acked), Some(received)) => Ok(acked.saturating_add(received)),
        _ => Err(std::io::Error::other("TCP_INFO without byte counts")),
    }
}

fn getsockopt_bytes(
    fd: impl AsFd,
    level: i32,
    name: i32,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is valid for writes of `len` bytes for the whole call, the
    // kernel writes at most `len` bytes and stores the written length in `len`;
    // the descriptor is borrowed, so it stays open during the call.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((len as usize).min(buf.len()))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off + 4)
        .map(|s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    b.get(off..off + 8).map(|s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_ne_bytes(a)
    })
}

/// Decodes a `struct tcp_info` (include/uapi/linux/tcp.h). Returns None when the
/// buffer is shorter than the fields every kernel since 2.6 returns.
pub fn decode(b: &[u8]) -> Option<TcpSample> {
    // Offsets follow the uapi layout; u64 fields sit at 8-aligned offsets.
    // ~0 means "no pacing" to the kernel.
    let unset_if_max = |v: Option<u64>| v.filter(|&x| x != u64::MAX);
    Some(TcpSample {
        snd_mss: u32_at(b, 16)?,
        rtt_us: u32_at(b, 68)?,
        rttvar_us: u32_at(b, 72)?,
        snd_ssthresh: u32_at(b, 76)?,
        snd_cwnd: u32_at(b, 80)?,
        rcv_space: u32_at(b, 96)?,
        total_retrans: u32_at(b, 100)?,
        pacing_rate_bps: unset_if_max(u64_at(b, 104)).map(|v| v.saturating_mul(8)),
        min_rtt_us: u32_at(b, 148),
        delivery_rate_bps: u64_at(b, 160).map(|v| v.saturating_mul(8)),
        busy_us: u64_at(b, 168),
        rwnd_limited_us: u64_at(b, 176),
        sndbuf_limited_us: u64_at(b, 184),
        bytes_retrans: u64_at(b, 208),
        snd_wnd: u32_at(b, 228),
        pmtu: u32_at(b, 60),
        rcv_mss: u32_at(b, 20),
        advmss: u32_at(b, 84),
        rcv_rtt_us: u32_at(b, 92),
        bytes_acked: u64_at(b, 120),
        segs_out: u32_at(b, 136),
        segs_in: u32_at(b, 140),
        data_segs_out: u32_at(b, 156),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn put32(b: &mut [u8], off: usize, v: u32) {
        b[off..off + 4].copy_from_slice(&v.to_ne_bytes());
    }
    fn put64(b: &mut [u8], off: usize, v: u64) {
        b[off..off + 8].copy_from_slice(&v.to_ne_bytes());
    }

    #[test]
    fn decodes_known_offsets() {
        let mut b = vec![0u8; 228];
        put32(&mut b, 68, 1234);
        put32(&mut b, 80, 77);
        put64(&mut b, 104, 1000);
        put64(&mut b, 168, 5_000_000);
        put64(&mut b, 176, 2_500_000);
        put64(&mut b, 184, 10);
        let s = decode(&b).unwrap();
        assert_eq!(s.rtt_us, 1234);
        assert_eq!(s.snd_cwnd, 77);
        assert_eq!(s.pacing_rate_bps, Some(8000));
        assert_eq!(s.busy_us, Some(5_000_000));
        assert_eq!(s.rwnd_limited_us, Some(2_500_000));
        assert_eq!(s.sndbuf_limited_us, Some(10));
        assert_eq!(s.snd_wnd, None, "field past the returned length");
        assert_eq!(s.pmtu, Some(0));
        assert_eq!(s.data_segs_out, Some(0));
        assert_eq!(s.segs_out, Some(0));
    }

    #[test]
    fn old_kernel_layout_leaves_new_fields_out() {
        let s = decode(&[0u8; 104]).unwrap();
        assert_eq!(s.busy_us, None);
        assert!(decode(&[0u8; 103]).is_none());
    }

    #[test]
    fn reads_a_live_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let s = read(&c).unwrap();
        assert!(s.snd_mss > 0);
        assert!(s.busy_us.is_some(), "kernel 4.10+ reports busy time");
        // Loopback's MTU is near 64 KiB: the learned path MTU is the route's.
        assert!(s.pmtu.is_some_and(|m| m > 60_000), "{:?}", s.pmtu);
        assert!(s.advmss.is_some_and(|m| m > 60_000), "{:?}", s.advmss);
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = decode(&bytes);
        }
    }
}
