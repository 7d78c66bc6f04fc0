//! What the lab this process runs in (under `lab exec`) says of the path.

use linerate_verdict::KnownPath;

/// What is known of the path from the lab this thread runs in, if any: on
/// a lab with several links, of the links that carry traffic to `targets`.
pub fn known_path_here(targets: &[std::net::IpAddr]) -> KnownPath {
    let Some(lab) = linerate_lab::netns::lab_here() else {
        return KnownPath::default();
    };
    let mut path = linerate_lab::netns::conditions_of(&lab, targets)
        .map(|c| KnownPath::of_lab_link(c.rate_bps, c.rtt_us, c.jitter_us))
        .unwrap_or_default();
    path.forwarder_pid = lab.forwarder_pid();
    path
}
