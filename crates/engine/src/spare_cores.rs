//! Whether this host has cores to spare for threads that spin or poll: a
//! spinner or a polling reader needs a core of its own for the whole run,
//! and on a host whose cores other work holds it only takes turns with it
//! (docs/defaults.md#busy-poll-auto).

use std::time::Duration;

use linerate_probe::cpu::HostTicks;
use linerate_result::HostFacts;

/// Whether both ends run on one host, so their threads share its cores.
pub(crate) fn same_host(client: &HostFacts, server: &HostFacts) -> bool {
    !client.boot_id.is_empty() && client.boot_id == server.boot_id
}

/// How long the host is watched before a run decides to spin or poll.
pub(crate) const LOOK: Duration = Duration::from_millis(150);

/// Idle cores on this host, measured over [`LOOK`].
pub(crate) fn free_cores(cpus: u32) -> f64 {
    let before = HostTicks::now();
    std::thread::sleep(LOOK);
    let (busy, _) = HostTicks::now().fractions_since(&before);
    (1.0 - busy) * f64::from(cpus)
}

/// Whether `threads` spinning threads each find a free core among `free`:
/// half a core of slack, as /proc/stat counts in 10 ms ticks and a
/// previous run's teardown may still hold a core for a few of them.
pub(crate) fn room_for(threads: u32, free: f64) -> bool {
    free + 0.5 >= f64::from(threads)
}
