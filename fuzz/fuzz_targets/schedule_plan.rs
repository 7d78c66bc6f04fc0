//! A schedule file, any text: never a panic; every test of the plan has a
//! command a schedule runs, an interval over 0, a jitter under it and a
//! limit within it, and a name no other test has.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_schedule::plan::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok((plan, _errors)) = parse(text, "fuzz") else {
        return;
    };
    for (i, t) in plan.tests.iter().enumerate() {
        assert!(["bench", "latency", "mesh", "send"].contains(&t.argv[0].as_str()));
        assert!(!t.every.is_zero() && t.jitter < t.every && t.limit <= t.every);
        assert!(plan.tests[..i].iter().all(|o| o.name != t.name));
    }
});
