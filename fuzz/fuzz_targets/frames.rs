//! The frame decoder and every message decoder on arbitrary bytes, fed in
//! arbitrary chunks: never panics, never buffers past its bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_wire::{FRAME_HEADER_LEN, FrameDecoder, MAX_FRAME_LEN, Message};

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(chunk.max(1));
    let mut dec = FrameDecoder::new();
    for piece in rest.chunks(chunk) {
        dec.push(piece);
        loop {
            match dec.next_frame() {
                Ok(Some(frame)) => {
                    assert!(frame.payload.len() <= MAX_FRAME_LEN as usize);
                    if let Ok(msg) = Message::from_frame(&frame) {
                        // What decodes must encode and decode to the same message.
                        let again = msg.to_frame();
                        let back = Message::from_frame(&again).expect("re-decode");
                        assert_eq!(back, msg);
                    }
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
        assert!(
            dec.wanted()
                .map_or(true, |w| w <= FRAME_HEADER_LEN + MAX_FRAME_LEN as usize)
        );
    }
});
