//! The root qdisc of every interface, from an rtnetlink RTM_GETQDISC dump.
//! The decoder is separate from the socket so it can be fuzzed: it bounds
//! every length against the buffer and never panics.

use std::collections::BTreeMap;
use std::io::Read;

const NLMSG_HDR: usize = 16;
const TCMSG: usize = 20;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const RTM_NEWQDISC: u16 = 36;
const RTM_GETQDISC: u16 = 38;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
const TCA_KIND: u16 = 1;
const TC_H_ROOT: u32 = 0xFFFF_FFFF;

/// One qdisc of an rtnetlink dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qdisc {
    /// Its interface's index.
    pub ifindex: u32,
    /// Its parent handle (TC_H_ROOT for a root qdisc).
    pub parent: u32,
    /// Its kind (`htb`, `fq_codel`, ...).
    pub kind: String,
}

/// What one datagram of a dump holds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DumpPart {
    /// The qdiscs in it.
    pub qdiscs: Vec<Qdisc>,
    /// It ended the dump (NLMSG_DONE).
    pub done: bool,
    /// A negative errno from an NLMSG_ERROR message.
    pub error: Option<i32>,
}

/// Why an rtnetlink datagram did not decode.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// A message's length does not fit the datagram.
    #[error("netlink message length {0} at offset {1} does not fit the datagram")]
    BadLength(usize, usize),
    /// A message or attribute shorter than its header.
    #[error("truncated {0}")]
    Truncated(&'static str),
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn align4(n: usize) -> usize {
    n.saturating_add(3) & !3
}

/// Decodes one datagram of netlink messages.
pub fn decode(buf: &[u8]) -> Result<DumpPart, DecodeError> {
    let mut part = DumpPart::default();
    let mut at = 0;
    while at + NLMSG_HDR <= buf.len() {
        let len = u32_at(buf, at).ok_or(DecodeError::Truncated("header"))? as usize;
        let kind = u16_at(buf, at + 4).ok_or(DecodeError::Truncated("header"))?;
        if len < NLMSG_HDR || len > buf.len() - at {
            return Err(DecodeError::BadLength(len, at));
        }
        let body = &buf[at + NLMSG_HDR..at + len];
        match kind {
            NLMSG_DONE => part.done = true,
            NLMSG_ERROR => {
                let errno = u32_at(body, 0).ok_or(DecodeError::Truncated("error"))? as i32;
                if errno != 0 {
                    part.error = Some(errno);
                }
                part.done = true;
            }
            RTM_NEWQDISC => part.qdiscs.push(decode_qdisc(body)?),
            _ => {}
        }
        at += align4(len);
    }
    Ok(part)
}

fn decode_qdisc(body: &[u8]) -> Result<Qdisc, DecodeError> {
    if body.len() < TCMSG {
        return Err(DecodeError::Truncated("tcmsg"));
    }
    let ifindex = u32_at(body, 4).ok_or(DecodeError::Truncated("tcmsg"))?;
    let parent = u32_at(body, 12).ok_or(DecodeError::Truncated("tcmsg"))?;
    let mut kind = String::new();
    let mut at = TCMSG;
    while at + 4 <= body.len() {
        let len = u16_at(body, at).ok_or(DecodeError::Truncated("attribute"))? as usize;
        let ty = u16_at(body, at + 2).ok_or(DecodeError::Truncated("attribute"))?;
        if len < 4 || len > body.len() - at {
            return Err(DecodeError::BadLength(len, at));
        }
        if ty & 0x3fff == TCA_KIND {
            let v = &body[at + 4..at + len];
            let end = v.iter().position(|&c| c == 0).unwrap_or(v.len());
            kind = String::from_utf8_lossy(&v[..end]).into_owned();
        }
        at += align4(len);
    }
    Ok(Qdisc {
        ifindex,
        parent,
        kind,
    })
}

/// Dumps the qdiscs of the calling thread's network namespace and keeps
/// the root one of each interface.
pub fn root_qdiscs() -> std::io::Result<BTreeMap<u32, String>> {
    let sock = socket2::Socket::new(
        socket2::Domain::from(libc::AF_NETLINK),
        socket2::Type::RAW,
        Some(socket2::Protocol::from(libc::NETLINK_ROUTE)),
    )?;
    sock.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
    let mut req = Vec::with_capacity(NLMSG_HDR + TCMSG);
    req.extend_from_slice(&((NLMSG_HDR + TCMSG) as u32).to_ne_bytes());
    req.extend_from_slice(&RTM_GETQDISC.to_ne_bytes());
    req.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&[0u8; TCMSG]);
    sock.send(&req)?;
    let mut out = BTreeMap::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = (&sock).read(&mut buf)?;
        let part = decode(&buf[..n]).map_err(std::io::Error::other)?;
        if let Some(errno) = part.error {
            return Err(std::io::Error::from_raw_os_error(-errno));
        }
        for q in part.qdiscs {
            if q.parent == TC_H_ROOT {
                out.insert(q.ifindex, q.kind);
            }
        }
        if part.done || n == 0 {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(kind: u16, body: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&((NLMSG_HDR + body.len()) as u32).to_ne_bytes());
        m.extend_from_slice(&kind.to_ne_bytes());
        m.extend_from_slice(&[0u8; 10]);
        m.extend_from_slice(body);
        while !m.len().is_multiple_of(4) {
            m.push(0);
        }
        m
    }

    fn qdisc_body(ifindex: u32, parent: u32, kind: &str) -> Vec<u8> {
        let mut b = vec![0u8; 4];
        b.extend_from_slice(&ifindex.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        b.extend_from_slice(&parent.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        let v = format!("{kind}\0");
        b.extend_from_slice(&((4 + v.len()) as u16).to_ne_bytes());
        b.extend_from_slice(&TCA_KIND.to_ne_bytes());
        b.extend_from_slice(v.as_bytes());
        while !b.len().is_multiple_of(4) {
            b.push(0);
        }
        b
    }

    #[test]
    fn decodes_a_dump_and_its_end() {
        let mut buf = message(RTM_NEWQDISC, &qdisc_body(2, TC_H_ROOT, "pfifo_fast"));
        buf.extend(message(RTM_NEWQDISC, &qdisc_body(2, 0x10001, "fq")));
        buf.extend(message(NLMSG_DONE, &[0u8; 4]));
        let part = decode(&buf).unwrap();
        assert!(part.done);
        assert_eq!(part.qdiscs.len(), 2);
        assert_eq!(part.qdiscs[0].kind, "pfifo_fast");
        assert_eq!(part.qdiscs[0].parent, TC_H_ROOT);
        assert_eq!(part.qdiscs[1].kind, "fq");
    }

    #[test]
    fn refuses_lengths_past_the_buffer() {
        let mut buf = message(RTM_NEWQDISC, &qdisc_body(2, TC_H_ROOT, "htb"));
        buf[0] = 200;
        assert!(matches!(decode(&buf), Err(DecodeError::BadLength(..))));
        let short = message(RTM_NEWQDISC, &[0u8; 8]);
        assert!(decode(&short).is_err());
    }

    #[test]
    fn this_host_has_a_root_qdisc_on_loopback_or_none() {
        // lo usually has noqueue; the dump itself must succeed unprivileged.
        let map = root_qdiscs().unwrap();
        assert!(map.values().all(|k| !k.is_empty()));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = decode(&bytes);
        }
    }
}
