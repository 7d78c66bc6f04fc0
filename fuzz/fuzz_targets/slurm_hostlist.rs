//! Slurm host lists (`SLURM_JOB_NODELIST`) on arbitrary text: never panic,
//! never more hosts than the limit, and no host with a bracket left in it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_fleet::hostlist::{MAX_HOSTS, expand};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(hosts) = expand(&text) {
        assert!(!hosts.is_empty() && hosts.len() <= MAX_HOSTS);
        assert!(hosts.iter().all(|h| !h.contains('[') && !h.contains(']')));
    }
});
