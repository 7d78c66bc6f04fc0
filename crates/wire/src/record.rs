//! Records on the data connections of a transfer: a fixed 17-byte header,
//! `tag[1] file[4] offset[8] len[4]` (big-endian); a block's header is
//! followed by `len` payload bytes and the XXH3-64 of those bytes (8 bytes,
//! big-endian), a hole's and a round end's by nothing. The checksum trails
//! the payload so both ends can hash each piece while it is still in cache.

use crate::WireError;
use crate::transfer::MAX_BLOCK_LEN;

pub const RECORD_HEADER_LEN: usize = 17;
/// The checksum after a block's payload.
pub const BLOCK_TRAILER_LEN: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// `len` bytes of file `file` at `offset` follow, then their XXH3-64.
    Block { file: u32, offset: u64, len: u32 },
    /// `len` bytes of file `file` at `offset` are all zero and not sent.
    Hole { file: u32, offset: u64, len: u32 },
    /// The sender has nothing more for this pass on this connection.
    RoundEnd,
}

impl Record {
    pub fn encode(&self) -> [u8; RECORD_HEADER_LEN] {
        let (tag, file, offset, len) = match *self {
            Record::Block { file, offset, len } => (1u8, file, offset, len),
            Record::Hole { file, offset, len } => (2, file, offset, len),
            Record::RoundEnd => (3, 0, 0, 0),
        };
        let mut out = [0u8; RECORD_HEADER_LEN];
        out[0] = tag;
        out[1..5].copy_from_slice(&file.to_be_bytes());
        out[5..13].copy_from_slice(&offset.to_be_bytes());
        out[13..17].copy_from_slice(&len.to_be_bytes());
        out
    }

    /// Decodes a header; the payload length is bounded before anything is read.
    pub fn decode(b: &[u8]) -> Result<Record, WireError> {
        let b: &[u8; RECORD_HEADER_LEN] = b
            .get(..RECORD_HEADER_LEN)
            .and_then(|s| s.try_into().ok())
            .ok_or(WireError::Malformed {
                what: "record",
                reason: format!("header shorter than {RECORD_HEADER_LEN} bytes"),
            })?;
        let file = u32::from_be_bytes([b[1], b[2], b[3], b[4]]);
        let mut o = [0u8; 8];
        o.copy_from_slice(&b[5..13]);
        let offset = u64::from_be_bytes(o);
        let len = u32::from_be_bytes([b[13], b[14], b[15], b[16]]);
        if matches!(b[0], 1 | 2) && (len == 0 || len > MAX_BLOCK_LEN) {
            return Err(WireError::InvalidField {
                field: "record length",
                reason: format!("{len} is outside 1..={MAX_BLOCK_LEN}"),
            });
        }
        if offset.checked_add(u64::from(len)).is_none() {
            return Err(WireError::InvalidField {
                field: "record offset",
                reason: "offset + length overflows".into(),
            });
        }
        Ok(match b[0] {
            1 => Record::Block { file, offset, len },
            2 => Record::Hole { file, offset, len },
            3 => Record::RoundEnd,
            t => {
                return Err(WireError::Malformed {
                    what: "record",
                    reason: format!("unknown tag {t}"),
                });
            }
        })
    }
}
