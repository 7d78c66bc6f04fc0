//! The transfer sender's state machine on arbitrary message sequences.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_session::transfer_sender::Event;
use linerate_session::{Session, SessionError, TransferSender};
use linerate_wire::RefusalCode;

#[path = "../common/session_ops.rs"]
mod ops;

fuzz_target!(|data: &[u8]| {
    let Some((&verify, data)) = data.split_first() else {
        return;
    };
    let now = std::time::Instant::now();
    let sender = TransferSender::new(now, ops::request(false, verify % 2 == 0));
    ops::run(data, sender, |s, now, how| {
        while let Some(e) = s.poll_event() {
            if let Event::OpenStreams = e {
                s.streams_open(now);
            }
        }
        match how % 9 {
            0 | 1 => s.entries(vec![ops::entry(u64::from(how))]),
            2 => s.entries_end(now),
            3 | 4 => s.progress(now),
            5 => s.reading_time(std::time::Duration::from_secs(u64::from(how))),
            8 => s.abort(SessionError::local(RefusalCode::Internal, "unreadable")),
            _ => {}
        }
    });
});
