//! What the lab this process runs in (under `lab exec`) says of the path.

use linerate_probe::verdict::KnownPath;

/// What is known of the path from the lab this thread runs in, if any.
pub fn known_path_here() -> KnownPath {
    linerate_lab::netns::conditions_here()
        .map(|c| KnownPath::of_lab_link(c.rate_bps, c.rtt_us, c.jitter_us))
        .unwrap_or_default()
}
