//! Packets as the TUN device hands them over: a virtio-net header, then an
//! IP packet that may be a TCP super-packet of many segments (GSO).
//!
//! Forwarding super-packets whole is what makes the emulator fast; deciding
//! fates per segment is what makes it faithful. `Packet` gives both: it
//! counts the segments inside and rebuilds any run of them as one packet.

use std::net::IpAddr;

/// Bytes of the virtio-net header before each packet on a TUN device with IFF_VNET_HDR.
pub const VNET_HDR_LEN: usize = 10;
const NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_TCPV6: u8 = 4;
const GSO_ECN: u8 = 0x80;
const TCP: u8 = 6;
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;

/// virtio_net_hdr, little-endian as the kernel writes it on x86 and arm64.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    /// VIRTIO_NET_HDR_F_* flags.
    pub flags: u8,
    /// VIRTIO_NET_HDR_GSO_* type.
    pub gso_type: u8,
    /// Bytes of the headers before the payload.
    pub hdr_len: u16,
    /// Payload bytes per segment of a GSO packet.
    pub gso_size: u16,
    /// Where checksumming starts.
    pub csum_start: u16,
    /// Where, from there, the checksum goes.
    pub csum_offset: u16,
}

impl VnetHdr {
    /// The header at the start of `b`, if `b` is long enough.
    pub fn parse(b: &[u8]) -> Option<VnetHdr> {
        let b: &[u8; VNET_HDR_LEN] = b.get(..VNET_HDR_LEN)?.try_into().ok()?;
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        Some(VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u16_at(2),
            gso_size: u16_at(4),
            csum_start: u16_at(6),
            csum_offset: u16_at(8),
        })
    }

    /// The header as the kernel reads it.
    pub fn encode(&self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
        b
    }
}

/// A TCP packet's layout, when it can be cut into segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TcpLayout {
    v6: bool,
    ip_len: usize,
    /// IP plus TCP header bytes.
    headers: usize,
    payload: usize,
    seg_size: usize,
}

/// One packet read from a TUN device (virtio-net header included).
#[derive(Debug)]
pub struct Packet<'a> {
    /// Its virtio-net header.
    pub hdr: VnetHdr,
    /// The IP packet after it.
    pub ip: &'a [u8],
    tcp: Option<TcpLayout>,
}

impl<'a> Packet<'a> {
    /// Parses what the kernel wrote; `None` for anything too short to be IP.
    pub fn parse(frame: &'a [u8]) -> Option<Packet<'a>> {
        let hdr = VnetHdr::parse(frame)?;
        let ip = &frame[VNET_HDR_LEN..];
        let version = ip.first()? >> 4;
        if version != 4 && version != 6 {
            return None;
        }
        let tcp = tcp_layout(&hdr, ip);
        Some(Packet { hdr, ip, tcp })
    }

    /// The packet's destination address.
    pub fn destination(&self) -> Option<IpAddr> {
        match self.ip[0] >> 4 {
            4 => {
                let d: [u8; 4] = self.ip.get(16..20)?.try_into().ok()?;
                Some(IpAddr::from(d))
            }
            _ => {
                let d: [u8; 16] = self.ip.get(24..40)?.try_into().ok()?;
                Some(IpAddr::from(d))
            }
        }
    }

    /// The IP header's TOS byte (IPv4) or traffic class (IPv6): DSCP in
    /// the upper six bits, ECN in the lower two.
    pub fn tos(&self) -> u8 {
        match self.ip[0] >> 4 {
            4 => self.ip.get(1).copied().unwrap_or(0),
            _ => ((self.ip[0] & 0x0f) << 4) | (self.ip.get(1).copied().unwrap_or(0) >> 4),
        }
    }

    /// Addresses, protocol and ports (when TCP or UDP): what a switch's
    /// ECMP hash takes, so one flow keeps one path.
    pub fn flow_key(&self) -> &'a [u8] {
        let (addrs, proto, l4) = match self.ip[0] >> 4 {
            4 => (
                12..20,
                self.ip.get(9).copied(),
                usize::from(self.ip[0] & 0x0f) * 4,
            ),
            _ => (8..40, self.ip.get(6).copied(), 40),
        };
        let end = if matches!(proto, Some(6 | 17)) {
            l4 + 4
        } else {
            addrs.end
        };
        self.ip.get(addrs.start..end).unwrap_or(self.ip)
    }

    /// Segments this packet becomes on the wire.
    pub fn segments(&self) -> usize {
        match self.tcp {
            Some(t) if t.seg_size > 0 && t.payload > 0 => t.payload.div_ceil(t.seg_size),
            _ => 1,
        }
    }

    /// Bytes on the wire, counting the headers each segment carries.
    pub fn wire_bytes(&self) -> u64 {
        let extra = self.tcp.map_or(0, |t| t.headers * (self.segments() - 1));
        (self.ip.len() + extra) as u64
    }

    /// Wire bytes of segment `i` (for the bottleneck's accounting).
    pub fn segment_wire_bytes(&self, i: usize) -> u64 {
        match self.tcp {
            Some(t) if self.segments() > 1 => {
                let start = i * t.seg_size;
                (t.headers + t.payload.saturating_sub(start).min(t.seg_size)) as u64
            }
            _ => self.ip.len() as u64,
        }
    }

    /// Builds segments `first..first + count` as one packet: the virtio
    /// header and rewritten IP/TCP headers go to `head`; the payload is the
    /// returned slice of this packet, so it is never copied here.
    pub fn run(&self, first: usize, count: usize, head: &mut Vec<u8>) -> &'a [u8] {
        head.clear();
        let n = self.segments();
        let t = match self.tcp {
            Some(t) if n > 1 && !(first == 0 && count >= n) => t,
            _ => {
                head.extend_from_slice(&self.hdr.encode());
                return self.ip;
            }
        };
        let start = (first * t.seg_size).min(t.payload);
        let end = ((first + count) * t.seg_size).min(t.payload);
        let payload = &self.ip[t.headers + start..t.headers + end];
        let gso = end - start > t.seg_size;
        let hdr = VnetHdr {
            flags: NEEDS_CSUM,
            gso_type: if gso { self.hdr.gso_type } else { GSO_NONE },
            hdr_len: t.headers as u16,
            gso_size: if gso { t.seg_size as u16 } else { 0 },
            csum_start: t.ip_len as u16,
            csum_offset: 16,
        };
        head.extend_from_slice(&hdr.encode());
        let at = head.len();
        head.extend_from_slice(&self.ip[..t.headers]);
        let h = &mut head[at..];
        let tcp_len = t.headers - t.ip_len + payload.len();
        if t.v6 {
            h[4..6].copy_from_slice(&(tcp_len as u16).to_be_bytes());
        } else {
            let total = (t.headers + payload.len()) as u16;
            h[2..4].copy_from_slice(&total.to_be_bytes());
            // The kernel numbers the IP ids of a super-packet's segments consecutively.
            let id = u16::from_be_bytes([h[4], h[5]]).wrapping_add(first as u16);
            h[4..6].copy_from_slice(&id.to_be_bytes());
            h[10..12].copy_from_slice(&[0, 0]);
            let sum = !fold(sum16(&h[..t.ip_len], 0));
            h[10..12].copy_from_slice(&sum.to_be_bytes());
        }
        let th = t.ip_len;
        let seq = u32::from_be_bytes([h[th + 4], h[th + 5], h[th + 6], h[th + 7]])
            .wrapping_add(start as u32);
        h[th + 4..th + 8].copy_from_slice(&seq.to_be_bytes());
        if first > 0 {
            h[th + 13] &= !TCP_CWR;
        }
        if first + count < n {
            h[th + 13] &= !(TCP_FIN | TCP_PSH);
        }
        // With NEEDS_CSUM the checksum field holds the pseudo-header sum and
        // the receiving stack trusts the rest, as it does for the original.
        let pseudo = if t.v6 {
            sum16(&h[8..40], tcp_len as u32 + u32::from(TCP))
        } else {
            sum16(&h[12..20], tcp_len as u32 + u32::from(TCP))
        };
        h[th + 16..th + 18].copy_from_slice(&fold(pseudo).to_be_bytes());
        payload
    }
}

/// Marks the IP packet at the start of `ip` Congestion Experienced, as a
/// switch over its ECN threshold does (the IPv4 checksum follows).
pub fn mark_ce(ip: &mut [u8]) {
    const CE: u8 = 0b11;
    match ip.first().map(|b| b >> 4) {
        Some(4) if ip.len() >= 20 => {
            ip[1] |= CE;
            let ihl = (usize::from(ip[0] & 0x0f) * 4).clamp(20, ip.len());
            ip[10..12].copy_from_slice(&[0, 0]);
            let sum = !fold(sum16(&ip[..ihl], 0));
            ip[10..12].copy_from_slice(&sum.to_be_bytes());
        }
        Some(6) if ip.len() >= 40 => ip[1] |= CE << 4,
        _ => {}
    }
}

fn tcp_layout(hdr: &VnetHdr, ip: &[u8]) -> Option<TcpLayout> {
    if hdr.gso_type & !GSO_ECN == GSO_NONE || hdr.flags & NEEDS_CSUM == 0 {
        return None;
    }
    let (v6, ip_len, proto) = match ip[0] >> 4 {
        4 => (false, usize::from(ip[0] & 0x0f) * 4, *ip.get(9)?),
        _ => (true, 40, *ip.get(6)?),
    };
    let expected = if v6 { GSO_TCPV6 } else { GSO_TCPV4 };
    if proto != TCP || hdr.gso_type & !GSO_ECN != expected || ip_len < 20 {
        return None;
    }
    let doff = usize::from(ip.get(ip_len + 12)? >> 4) * 4;
    let headers = ip_len + doff;
    if doff < 20 || headers > ip.len() {
        return None;
    }
    Some(TcpLayout {
        v6,
        ip_len,
        headers,
        payload: ip.len() - headers,
        seg_size: usize::from(hdr.gso_size),
    })
}

fn sum16(b: &[u8], init: u32) -> u32 {
    let mut s = u64::from(init);
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        s += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        s += u64::from(*last) << 8;
    }
    while s > 0xffff_ffff {
        s = (s & 0xffff_ffff) + (s >> 32);
    }
    s as u32
}

fn fold(mut s: u32) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A TCPv4 super-packet as the kernel hands it over: `segs` segments of `mss`.
    fn super_packet(payload: usize, mss: u16, flags: u8) -> Vec<u8> {
        let mut f = VnetHdr {
            flags: NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 52,
            gso_size: mss,
            csum_start: 20,
            csum_offset: 16,
        }
        .encode()
        .to_vec();
        let total = (52 + payload) as u16;
        let mut ip = vec![
            0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, TCP, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        let mut tcp = vec![0u8; 32];
        tcp[4..8].copy_from_slice(&1000u32.to_be_bytes());
        tcp[12] = 8 << 4;
        tcp[13] = flags;
        f.extend(ip);
        f.extend(tcp);
        f.extend((0..payload).map(|i| i as u8));
        f
    }

    #[test]
    fn counts_segments_and_wire_bytes() {
        let f = super_packet(10_000, 1448, 0x18);
        let p = Packet::parse(&f).unwrap();
        assert_eq!(p.segments(), 7);
        assert_eq!(p.wire_bytes(), 10_052 + 6 * 52);
        assert_eq!(p.segment_wire_bytes(6), 52 + 10_000 - 6 * 1448);
        assert_eq!(p.destination(), Some("10.0.0.2".parse().unwrap()));
    }

    #[test]
    fn a_middle_run_gets_its_own_sequence_length_id_and_flags() {
        let f = super_packet(10_000, 1448, TCP_CWR | TCP_PSH | TCP_FIN | 0x10);
        let p = Packet::parse(&f).unwrap();
        let mut head = Vec::new();
        let payload = p.run(2, 3, &mut head);
        assert_eq!(payload.len(), 3 * 1448);
        assert_eq!(payload[0], (2 * 1448) as u8);
        let hdr = VnetHdr::parse(&head).unwrap();
        assert_eq!((hdr.gso_type, hdr.gso_size), (GSO_TCPV4, 1448));
        let ip = &head[VNET_HDR_LEN..];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, 52 + 3 * 1448);
        assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 0x1236);
        assert_eq!(fold(sum16(&ip[..20], 0)), 0xffff, "IPv4 header checksum");
        assert_eq!(
            u32::from_be_bytes(ip[24..28].try_into().unwrap()),
            1000 + 2 * 1448
        );
        assert_eq!(
            ip[33], 0x10,
            "CWR only on the first, FIN and PSH only on the last"
        );
    }

    #[test]
    fn a_single_segment_run_is_not_gso_and_the_last_keeps_fin() {
        let f = super_packet(3000, 1448, TCP_FIN | 0x10);
        let p = Packet::parse(&f).unwrap();
        let mut head = Vec::new();
        let payload = p.run(2, 1, &mut head);
        assert_eq!(payload.len(), 3000 - 2 * 1448);
        assert_eq!(VnetHdr::parse(&head).unwrap().gso_type, GSO_NONE);
        assert_eq!(head[VNET_HDR_LEN + 33], TCP_FIN | 0x10);
    }

    #[test]
    fn the_whole_run_is_the_original() {
        let f = super_packet(3000, 1448, 0x10);
        let p = Packet::parse(&f).unwrap();
        let mut head = Vec::new();
        let payload = p.run(0, 3, &mut head);
        assert_eq!([head.as_slice(), payload].concat(), f);
    }

    #[test]
    fn tos_flow_key_and_ce_marks_read_the_ip_header() {
        let mut f = super_packet(3000, 1448, 0x10);
        f[VNET_HDR_LEN + 1] = (10 << 2) | 0b10;
        // The marked header's checksum is computed afresh; start from a valid one.
        let sum = !fold(sum16(&f[VNET_HDR_LEN..VNET_HDR_LEN + 20], 0));
        f[VNET_HDR_LEN + 10..VNET_HDR_LEN + 12].copy_from_slice(&sum.to_be_bytes());
        let p = Packet::parse(&f).unwrap();
        assert_eq!(p.tos() >> 2, 10, "DSCP af11");
        assert_eq!(p.flow_key().len(), 8 + 4, "addresses and ports");
        let mut ip = f[VNET_HDR_LEN..].to_vec();
        mark_ce(&mut ip);
        assert_eq!(ip[1] & 3, 3);
        assert_eq!(fold(sum16(&ip[..20], 0)), 0xffff, "checksum still holds");
        let mut v6 = vec![0x60 | 0x2, 0x80, 0, 0];
        v6.resize(40, 0);
        mark_ce(&mut v6);
        assert_eq!(((v6[0] & 0x0f) << 4) | (v6[1] >> 4), 0x28 | 0b11);
    }

    proptest! {
        #[test]
        fn runs_cover_the_payload_exactly(payload in 1usize..65_000, mss in 536u16..9000, cut in 0usize..50) {
            let f = super_packet(payload, mss, 0x10);
            let p = Packet::parse(&f).unwrap();
            let n = p.segments();
            let cut = cut % n;
            let mut head = Vec::new();
            let mut joined = Vec::new();
            for (first, count) in [(0, cut), (cut, n - cut)] {
                if count == 0 { continue; }
                let payload = p.run(first, count, &mut head);
                let whole = [head.as_slice(), payload].concat();
                joined.extend_from_slice(&whole[VNET_HDR_LEN + 52..]);
            }
            prop_assert_eq!(&joined[..], &f[VNET_HDR_LEN + 52..]);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Some(p) = Packet::parse(&bytes) {
                let n = p.segments();
                let _ = p.wire_bytes();
                let mut head = Vec::new();
                let _ = p.run(0, 1, &mut head);
                let _ = p.run(n - 1, 1, &mut head);
                let _ = p.destination();
                let _ = (p.tos(), p.flow_key());
                mark_ce(&mut bytes.clone());
            }
        }
    }
}
