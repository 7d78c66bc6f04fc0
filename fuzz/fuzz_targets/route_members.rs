//! The readers of `ip -j route` output and of /proc/net/dev tables on
//! arbitrary bytes: never panic, and members come two or more at a time.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_probe::members::{device_bytes, from_routes};

fuzz_target!(|data: &[u8]| {
    let bond = |dev: &str| Some((vec![format!("{dev}a"), format!("{dev}b")], "layer3+4".into()));
    if let Some(m) = from_routes(data, bond, Some(1)) {
        assert!(m.devices.len() >= 2);
    }
    let text = String::from_utf8_lossy(data);
    let _ = device_bytes(&text, "link1");
});
