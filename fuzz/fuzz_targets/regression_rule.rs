//! The archive's regression rule on arbitrary series (any f64, NaN and
//! infinities included): never a panic; a change is named only after the
//! runs that confirm it, against a band whose ends are in order; the same
//! for a series whose change was acknowledged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_archive::normal::{Better, CONFIRM, Judgement, judge, judge_acknowledged};

fuzz_target!(|data: &[u8]| {
    let values: Vec<f64> = data
        .chunks_exact(8)
        .take(200)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let judged = [Better::Higher, Better::Lower]
        .into_iter()
        .flat_map(|b| [judge(&values, b), judge_acknowledged(&values, b)]);
    for judgement in judged {
        match judgement {
            Judgement::Regression(c) | Judgement::Improvement(c) => {
                assert!(c.runs >= CONFIRM);
                assert!(c.first < values.len());
                assert!(!(c.band.low > c.band.high));
            }
            Judgement::Normal(b) => assert!(!(b.low > b.high)),
            Judgement::TooFewRuns { have, need } => assert!(have < need),
        }
    }
});
