//! Rates, sizes and times in the units an engineer reads them in.

/// Bits per second in the unit an engineer would read.
pub fn fmt_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.1} Mbit/s", bps / 1e6)
    } else {
        format!("{:.0} kbit/s", bps / 1e3)
    }
}

/// Bytes in binary units: "512 B", "1.5 MiB".
pub fn fmt_bytes(b: f64) -> String {
    match binary(b) {
        (v, "B") => format!("{v:.0} B"),
        (v, unit) => format!("{v:.1} {unit}"),
    }
}

/// A size as an axis label: whole units without their tenth ("4 KiB",
/// "1.5 MiB").
pub fn fmt_size_label(b: f64) -> String {
    match binary(b) {
        (v, unit) if (v - v.round()).abs() < 0.05 => format!("{v:.0} {unit}"),
        (v, unit) => format!("{v:.1} {unit}"),
    }
}

fn binary(b: f64) -> (f64, &'static str) {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    (v, UNITS[u])
}

/// Microseconds for people: `850.0 us`, `1.25 ms`.
pub fn fmt_us(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else if us >= 100.0 {
        format!("{us:.0} us")
    } else {
        // A loopback round trip: its tenths are what a tuning moves.
        format!("{us:.1} us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(fmt_rate(41.5e9), "41.50 Gbit/s");
        assert_eq!(fmt_bytes(4.0 * 1024.0 * 1024.0), "4.0 MiB");
        assert_eq!(fmt_bytes(12.0), "12 B");
        assert_eq!(fmt_us(44_000.0), "44.00 ms");
        assert_eq!(fmt_us(250.4), "250 us");
        assert_eq!(fmt_us(12.34), "12.3 us");
    }
}
