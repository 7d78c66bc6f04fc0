//! Length-prefixed frames on control connections: `type[1] length[4] payload`.

use crate::WireError;

pub const FRAME_HEADER_LEN: usize = 5;
/// Upper bound of a frame's payload. Large enough for a report of an hour-long,
/// many-stream run; small enough that a hostile length cannot exhaust memory.
pub const MAX_FRAME_LEN: u32 = 32 << 20;

/// Room kept for the next frame once the buffer is empty.
const SHRINK_ABOVE: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    Accept = 1,
    Refuse = 2,
    BenchRequest = 3,
    Ready = 4,
    Start = 5,
    Report = 6,
    TransferRequest = 7,
    Entries = 8,
    EntriesEnd = 9,
    Need = 10,
    NeedEnd = 11,
    Finish = 12,
    Digests = 13,
    TransferReport = 14,
}

impl FrameType {
    pub fn from_u8(b: u8) -> Result<FrameType, WireError> {
        Ok(match b {
            1 => FrameType::Accept,
            2 => FrameType::Refuse,
            3 => FrameType::BenchRequest,
            4 => FrameType::Ready,
            5 => FrameType::Start,
            6 => FrameType::Report,
            7 => FrameType::TransferRequest,
            8 => FrameType::Entries,
            9 => FrameType::EntriesEnd,
            10 => FrameType::Need,
            11 => FrameType::NeedEnd,
            12 => FrameType::Finish,
            13 => FrameType::Digests,
            14 => FrameType::TransferReport,
            other => return Err(WireError::UnknownFrameType(other)),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameType,
    pub payload: Vec<u8>,
}

impl Frame {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FRAME_HEADER_LEN + self.payload.len());
        out.push(self.kind as u8);
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
    pub fn new() -> Self {
        Self::default()
    }

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
    let kind = FrameType::from_u8(buf[0])?;
    let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
    if len > MAX_FRAME_LEN {
        return Err(WireError::FrameTooLong {
            len,
            max: MAX_FRAME_LEN,
        });
    }
    Ok((kind, len as usize))
}
