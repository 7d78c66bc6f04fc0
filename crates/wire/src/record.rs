//! Records on the data connections of a transfer: a fixed 17-byte header,
//! `tag[1] file[4] offset[8] len[4]` (big-endian); a block's header is
//! followed by `len` payload bytes and the XXH3-64 of those bytes (8 bytes,
//! big-endian), a hole's and a round end's by nothing. The checksum trails
//! the payload so both ends can hash each piece while it is still in cache.

use crate::codec::{Reader, codes};
use crate::transfer::MAX_BLOCK_LEN;
use crate::{Flaw, WireError};

/// Bytes of a record's header: `tag[1] file[4] offset[8] len[4]`.
pub const RECORD_HEADER_LEN: usize = 17;
/// The checksum after a block's payload.
pub const BLOCK_TRAILER_LEN: usize = 8;

/// What opens each piece of a transfer's data connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// `len` bytes of file `file` at `offset` follow, then their XXH3-64.
    Block {
        /// The file's id in the manifest.
        file: u32,
        /// Where in the file.
        offset: u64,
        /// Bytes that follow.
        len: u32,
    },
    /// `len` bytes of file `file` at `offset` are all zero and not sent.
    Hole {
        /// The file's id in the manifest.
        file: u32,
        /// Where in the file.
        offset: u64,
        /// Bytes of zeros.
        len: u32,
    },
    /// The sender has nothing more for this pass on this connection.
    RoundEnd,
}

codes! {
    /// The first byte of a record.
    enum Tag: u8, unknown = unknown_tag {
        Block = 1,
        Hole = 2,
        RoundEnd = 3,
    }
}

fn unknown_tag(tag: u8) -> WireError {
    WireError::Malformed {
        what: "record",
        flaw: Flaw::UnknownTag(tag),
    }
}

impl Record {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; RECORD_HEADER_LEN] {
        let (tag, file, offset, len) = match *self {
            Record::Block { file, offset, len } => (Tag::Block, file, offset, len),
            Record::Hole { file, offset, len } => (Tag::Hole, file, offset, len),
            Record::RoundEnd => (Tag::RoundEnd, 0, 0, 0),
        };
        let mut out = [0u8; RECORD_HEADER_LEN];
        out[0] = tag.code();
        out[1..5].copy_from_slice(&file.to_be_bytes());
        out[5..13].copy_from_slice(&offset.to_be_bytes());
        out[13..17].copy_from_slice(&len.to_be_bytes());
        out
    }

    /// Decodes a header; the payload length is bounded before anything is read.
    pub fn decode(b: &[u8]) -> Result<Record, WireError> {
        let mut r = Reader::new("record", b).sub(RECORD_HEADER_LEN)?;
        let tag = Tag::from_code(r.u8()?)?;
        let (file, offset, len) = (r.u32()?, r.u64()?, r.u32()?);
        if tag != Tag::RoundEnd && (len == 0 || len > MAX_BLOCK_LEN) {
            return Err(WireError::OutOfRange {
                field: "record length",
                value: u64::from(len),
                range: 1..=u64::from(MAX_BLOCK_LEN),
            });
        }
        if offset.checked_add(u64::from(len)).is_none() {
            return Err(WireError::InvalidField {
                field: "record offset",
                reason: "offset + length overflows",
            });
        }
        Ok(match tag {
            Tag::Block => Record::Block { file, offset, len },
            Tag::Hole => Record::Hole { file, offset, len },
            Tag::RoundEnd => Record::RoundEnd,
        })
    }
}
