//! The transfer receiver's state machine (one-shot, with a token, or a
//! daemon's) on arbitrary message sequences.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_result::SideReport;
use linerate_session::transfer_receiver::Event;
use linerate_session::{Session, SessionError, TransferReceiver};
use linerate_wire::{RefusalCode, TransferTotals};

#[path = "../common/session_ops.rs"]
mod ops;

fuzz_target!(|data: &[u8]| {
    let Some((&one_shot, data)) = data.split_first() else {
        return;
    };
    let now = std::time::Instant::now();
    let token = (one_shot % 2 == 0).then(|| ops::TOKEN.to_string());
    let receiver = TransferReceiver::new(now, ops::accept(), token);
    ops::run(data, receiver, |r, now, how| {
        while let Some(e) = r.poll_event() {
            match e {
                Event::Admit(_) if how % 7 == 0 => {
                    r.abort(SessionError::local(RefusalCode::Busy, "busy"))
                }
                Event::Admit(_) => {
                    r.admitted(now);
                    if how % 3 != 0 {
                        r.streams_connected(now);
                    }
                }
                Event::Entries(batch) => {
                    let need = (0..batch.len() as u64).map(ops::need).collect();
                    r.answer(need, batch.len() as u64, 1 << 20)
                }
                Event::Begin | Event::Listed | Event::Finish => {}
            }
        }
        match how % 4 {
            0 => r.pass_ended(now, vec![ops::need(u64::from(how))], 1, 1 << 20),
            1 => r.pass_ended(now, Vec::new(), 0, 0),
            2 => r.streams_connected(now),
            _ => r.report(
                vec![(0, "d".into())],
                TransferTotals::default(),
                SideReport::default(),
            ),
        }
    });
});
