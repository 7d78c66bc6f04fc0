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

/// The bottleneck rate (`--rate`) of the lab whose host namespace this
/// thread runs in (under `lab exec`), if it has one: the path's capacity.
pub fn lab_rate_here() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let id = |path: &str| std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    let here = id("/proc/thread-self/ns/net")?;
    linerate_lab::state::names()
        .iter()
        .filter_map(|name| linerate_lab::Lab::load(name).ok())
        .find(|lab| {
            lab.hosts
                .iter()
                .any(|h| id(&format!("/run/netns/{}", h.netns)) == Some(here))
        })?
        .spec
        .conditions
        .rate_bps
}
