//! Running code inside a network namespace. setns(2) moves only the calling
//! thread, so work that must happen in a namespace gets its own thread.

use std::fs::File;
use std::os::fd::AsFd;

use crate::{Conditions, Lab, LabError};

/// Moves the calling thread into the named namespace (/run/netns/NAME).
pub fn enter(netns: &str) -> Result<(), LabError> {
    let path = format!("/run/netns/{netns}");
    let f = File::open(&path).map_err(|e| LabError::io("opening", &path, e))?;
    rustix::thread::move_into_link_name_space(
        f.as_fd(),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .map_err(|e| LabError::io("entering the namespace of", &path, e.into()))
}

/// Runs `f` on a thread inside `netns`, or on this thread for `None`.
pub fn run_in<T: Send, E: From<LabError> + Send>(
    netns: Option<&str>,
    f: impl FnOnce() -> Result<T, E> + Send,
) -> Result<T, E> {
    let Some(ns) = netns else { return f() };
    std::thread::scope(|s| {
        s.spawn(|| {
            enter(ns)?;
            f()
        })
        .join()
        .map_err(|_| LabError::Panicked(ns.to_string()))?
    })
}

/// The lab whose host namespace this thread runs in (under `lab exec`), if any.
pub fn lab_here() -> Option<Lab> {
    use std::os::unix::fs::MetadataExt;
    let id = |path: &str| std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    let here = id("/proc/thread-self/ns/net")?;
    crate::state::names()
        .iter()
        .filter_map(|name| Lab::load(name).ok())
        .find(|lab| {
            lab.hosts
                .iter()
                .any(|h| id(&format!("/run/netns/{}", h.netns)) == Some(here))
        })
}

/// The link conditions of the lab whose host namespace this thread runs in
/// (under `lab exec`), if any: with several links, those of the links that
/// carry traffic to `targets` (all of a bond's), their rates summed.
pub fn conditions_here(targets: &[std::net::IpAddr]) -> Option<Conditions> {
    conditions_of(&lab_here()?, targets)
}

/// The link conditions of `lab` toward `targets`: with several links,
/// those of the links that carry traffic to them, their rates summed; the
/// router's link into a target host, where `lab set --host` changed it.
pub fn conditions_of(lab: &Lab, targets: &[std::net::IpAddr]) -> Option<Conditions> {
    let into = lab
        .hosts
        .iter()
        .find(|h| targets.iter().any(|t| *t == h.v4 || *t == h.v6));
    let mut c = match into {
        Some(h) => lab.conditions_into(&h.name).clone(),
        None => lab.spec.conditions.clone(),
    };
    if lab.spec.links > 1 && !targets.is_empty() {
        c.rate_bps = crate::links::rate_toward(lab, targets);
    }
    Some(c)
}
