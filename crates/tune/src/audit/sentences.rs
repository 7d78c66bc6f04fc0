//! The reasons the audit gives that depend on the figures.

use linerate_probe::units::{fmt_bytes, fmt_rate};

use super::features::Features;

/// Why a buffer maximum matters at this target: `what` the buffer bounds,
/// and what one stream reaches with this maximum as it is (`now_bps`).
pub fn buffer(f: &Features, what: &str, now_bps: Option<f64>) -> String {
    let t = &f.target;
    let ceiling = now_bps.map_or(String::new(), |w| {
        format!(
            "; with this maximum now, one stream tops out near {}",
            fmt_rate(w)
        )
    });
    format!(
        "{what}; {} at {:.1} ms needs {} per stream{ceiling}",
        fmt_rate(t.rate_bps),
        t.rtt_s * 1e3,
        fmt_bytes(f.buffer as f64)
    )
}

pub fn speed(data_nic: bool) -> &'static str {
    if data_nic {
        "the target is above what the fastest link carries"
    } else {
        "slower than the target; not the data interface, presumably"
    }
}

/// The size of the chunks a balloon reports free, from their order (in
/// pages; the size assumes 4 KiB pages, as on x86).
pub fn reporting_chunk(order: u32) -> String {
    format!(
        ", in free chunks of order {order}: {} of 4 KiB pages",
        fmt_bytes(4096.0 * (1u64 << order.min(40)) as f64)
    )
}
