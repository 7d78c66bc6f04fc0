//! Length-prefixed frames on control connections: `type[1] length[4] payload`.

use crate::WireError;
use crate::message::FrameType;

/// Bytes of a frame's header: `type[1] length[4]`.
pub const FRAME_HEADER_LEN: usize = 5;
/// Upper bound of a frame's payload. Large enough for a report of an hour-long,
/// many-stream run; small enough that a hostile length cannot exhaust memory.
pub const MAX_FRAME_LEN: u32 = 32 << 20;

/// Room kept for the next frame once the buffer is empty.
const SHRINK_ABOVE: usize = 1 << 20;

/// One frame: what it carries and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Which message it carries.
    pub kind: FrameType,
    /// The message's bytes.
    pub payload: Vec<u8>,
}

impl Frame {
    /// The frame's bytes on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FRAME_HEADER_LEN + self.payload.len());
        out.push(self.kind.code());
        out.extend_from_slice(&(self.payload.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.payload);
        out
    }
}

/// Incremental decoder: feed it whatever bytes arrived, take out whole frames.
/// The header is validated as soon as it is complete, so an oversized length or
/// unknown type is refused before its payload is awaited.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
}

impl FrameDecoder {
    /// A decoder holding nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes that arrived.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes of memory held for frames, or parts of them, not taken out
    /// yet (the buffer's capacity: what a budget must count).
    pub fn buffered(&self) -> usize {
        self.buf.capacity()
    }

    /// How many more bytes the next frame needs at least (0 when one is ready).
    pub fn wanted(&self) -> Result<usize, WireError> {
        if self.buf.len() < FRAME_HEADER_LEN {
            return Ok(FRAME_HEADER_LEN - self.buf.len());
        }
        let (_, len) = parse_header(&self.buf)?;
        Ok((FRAME_HEADER_LEN + len).saturating_sub(self.buf.len()))
    }

    /// Takes the next complete frame, if one is buffered.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, WireError> {
        if self.buf.len() < FRAME_HEADER_LEN {
            return Ok(None);
        }
        let (kind, len) = parse_header(&self.buf)?;
        let end = FRAME_HEADER_LEN + len;
        if self.buf.len() < end {
            return Ok(None);
        }
        let payload = self.buf[FRAME_HEADER_LEN..end].to_vec();
        self.buf.drain(..end);
        if self.buf.is_empty() && self.buf.capacity() > SHRINK_ABOVE {
            // A large frame's room is not kept for the connection's life.
            self.buf = Vec::new();
        }
        Ok(Some(Frame { kind, payload }))
    }
}

fn parse_header(buf: &[u8]) -> Result<(FrameType, usize), WireError> {
    let kind = FrameType::from_code(buf[0])?;
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
    if len > MAX_FRAME_LEN {
        return Err(WireError::FrameTooLong {
            len,
            max: MAX_FRAME_LEN,
        });
    }
    Ok((kind, len as usize))
}
