//! Running code inside a network namespace. setns(2) moves only the calling
//! thread, so work that must happen in a namespace gets its own thread.

use std::fs::File;
use std::os::fd::AsFd;

use anyhow::Context;

/// Moves the calling thread into the named namespace (/run/netns/NAME).
pub fn enter(netns: &str) -> anyhow::Result<()> {
    let path = format!("/run/netns/{netns}");
    let f = File::open(&path).with_context(|| format!("opening {path}"))?;
    rustix::thread::move_into_link_name_space(
        f.as_fd(),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .with_context(|| format!("entering namespace {netns}"))?;
    Ok(())
}

/// Runs `f` on a thread inside `netns`, or on this thread for `None`.
pub fn run_in<T: Send>(
    netns: Option<&str>,
    f: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    let Some(ns) = netns else { return f() };
    std::thread::scope(|s| {
        s.spawn(|| {
            enter(ns)?;
            f()
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the thread working in namespace {ns} panicked"))?
    })
}

/// What a lab's link conditions say of its path: the capacity is its
/// rate, the least round trip its RTT less twice its jitter.
pub fn known_path_of(c: &linerate_lab::Conditions) -> linerate_probe::verdict::KnownPath {
    linerate_probe::verdict::KnownPath {
        capacity: c.rate_bps.map(|bps| linerate_probe::verdict::Capacity {
            bits_per_second: bps as f64,
            source: "the lab's --rate",
        }),
        min_rtt_us: Some(c.rtt_us.saturating_sub(2 * c.jitter_us) as f64).filter(|&r| r > 0.0),
    }
}

/// What is known of the path from the lab this thread runs in, if any.
pub fn known_path_here() -> linerate_probe::verdict::KnownPath {
    lab_conditions_here()
        .map(|c| known_path_of(&c))
        .unwrap_or_default()
}

/// The link conditions of the lab whose host namespace this thread runs in
/// (under `lab exec`), if any: its rate is the path's capacity, its RTT
/// the least round trip the path carries.
pub fn lab_conditions_here() -> Option<linerate_lab::Conditions> {
    use std::os::unix::fs::MetadataExt;
    let id = |path: &str| std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    let here = id("/proc/thread-self/ns/net")?;
    let lab = linerate_lab::state::names()
        .iter()
        .filter_map(|name| linerate_lab::Lab::load(name).ok())
        .find(|lab| {
            lab.hosts
                .iter()
                .any(|h| id(&format!("/run/netns/{}", h.netns)) == Some(here))
        })?;
    Some(lab.spec.conditions)
}
