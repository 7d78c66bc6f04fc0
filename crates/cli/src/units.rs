//! Sizes, rates and durations as engineers type them: `128K`, `4M`, `10G`,
//! `2.5gbit`, `500ms`.

/// Bytes: plain number or with K/M/G/T suffix (powers of 1024), optional `B`/`iB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &lower[digits.len()..];
    let mult: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("unknown size unit in '{s}' (use K, M, G or T)")),
    };
    let v: f64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a size (e.g. 128K, 4M)"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("'{s}' is not a size"));
    }
    let bytes = v * mult as f64;
    if bytes > u64::MAX as f64 {
        return Err(format!("'{s}' is too large"));
    }
    Ok(bytes as u64)
}

/// A size that must fit a socket option or buffer (u32, at least 1).
pub fn parse_size_u32(s: &str) -> Result<u32, String> {
    let v = parse_size(s)?;
    if v == 0 || v > u64::from(u32::MAX) {
        return Err(format!("'{s}' must be between 1 byte and 4 GiB"));
    }
    Ok(v as u32)
}

/// Bits per second: number with k/m/g/t suffix (powers of 1000), optional `bit`/`bps`.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let stripped = lower
        .trim_end_matches("bit/s")
        .trim_end_matches("bps")
        .trim_end_matches("bit");
    let digits = stripped.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let mult: f64 = match &stripped[digits.len()..] {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => {
            return Err(format!(
                "unknown rate unit in '{s}' (use k, m, g or t, e.g. 10G)"
            ));
        }
    };
    let v: f64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a rate (e.g. 10G, 500M)"))?;
    let bps = v * mult;
    if !(bps.is_finite() && (1.0..1e18).contains(&bps)) {
        return Err(format!("'{s}' is not a usable rate"));
    }
    Ok(bps as u64)
}

/// Seconds as a plain number, or with `ms`, `s`, `m`, `h`.
pub fn parse_duration_ms(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let mult = match &lower[digits.len()..] {
        "" | "s" => 1000.0,
        "ms" => 1.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(format!("unknown time unit in '{s}' (use ms, s, m or h)")),
    };
    let v: f64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (e.g. 10, 500ms)"))?;
    let ms = v * mult;
    if !(ms.is_finite() && (0.0..1e12).contains(&ms)) {
        return Err(format!("'{s}' is not a usable duration"));
    }
    Ok(ms.round() as u64)
}

/// A stream count the protocol carries: 1 to 1024.
pub fn parse_streams(s: &str) -> Result<u16, String> {
    let max = linerate_engine::spec::MAX_STREAMS;
    match s.trim().parse::<u16>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a stream count (1 to {max})")),
    }
}

/// Message sizes of a latency run: one size (`64`), a list (`1,64,4K`) or
/// a sweep of powers of two (`1..4M`, osu-style), each 1 byte to 64 MiB.
pub fn parse_sizes(s: &str) -> Result<Vec<u32>, String> {
    let max = u64::from(linerate_engine::spec::MAX_MESSAGE_LEN);
    let one = |t: &str| -> Result<u32, String> {
        match parse_size(t)? {
            0 => Err(format!(
                "'{t}': a TCP request carries at least 1 byte (sizes are 1 byte to 64 MiB)"
            )),
            v if v > max => Err(format!("'{t}' is over 64 MiB, the largest message")),
            v => Ok(v as u32),
        }
    };
    if let Some((lo, hi)) = s.split_once("..") {
        let (lo, hi) = (one(lo)?, one(hi)?);
        if lo > hi {
            return Err(format!("'{s}': the sweep must go from small to large"));
        }
        let mut sizes = Vec::new();
        let mut v = u64::from(lo);
        while v <= u64::from(hi) {
            sizes.push(v as u32);
            v = (v + 1).next_power_of_two();
        }
        if sizes.last() != Some(&hi) {
            sizes.push(hi);
        }
        return Ok(sizes);
    }
    let sizes = s.split(',').map(one).collect::<Result<Vec<_>, _>>()?;
    if sizes.len() > 64 {
        return Err(format!("'{s}': at most 64 sizes"));
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("128K"), Ok(128 << 10));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("4X").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size_u32("8G").is_err());
    }

    #[test]
    fn latency_sizes() {
        assert_eq!(parse_sizes("64"), Ok(vec![64]));
        assert_eq!(parse_sizes("1,64,4K"), Ok(vec![1, 64, 4096]));
        assert_eq!(parse_sizes("1..8"), Ok(vec![1, 2, 4, 8]));
        assert_eq!(parse_sizes("3..20"), Ok(vec![3, 4, 8, 16, 20]));
        assert_eq!(parse_sizes("1..4M").map(|v| v.len()), Ok(23));
        assert!(parse_sizes("0").unwrap_err().contains("at least 1 byte"));
        assert!(parse_sizes("0..4M").is_err());
        assert!(parse_sizes("128M").unwrap_err().contains("64 MiB"));
        assert!(parse_sizes("4M..1").is_err());
        assert!(parse_sizes("").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10G"), Ok(10_000_000_000));
        assert_eq!(parse_rate("2.5gbit"), Ok(2_500_000_000));
        assert_eq!(parse_rate("500M"), Ok(500_000_000));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0").is_err());
    }

    proptest::proptest! {
        #[test]
        fn no_input_panics(s in "\\PC{0,12}") {
            let _ = (parse_size(&s), parse_size_u32(&s), parse_rate(&s), parse_duration_ms(&s), parse_sizes(&s));
        }
    }

    #[test]
    fn stream_counts() {
        assert_eq!(parse_streams("1"), Ok(1));
        assert_eq!(parse_streams("1024"), Ok(1024));
        assert!(parse_streams("0").is_err());
        assert!(parse_streams("1025").is_err());
        assert!(parse_streams("-2").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("10"), Ok(10_000));
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("1.5s"), Ok(1500));
        assert_eq!(parse_duration_ms("2m"), Ok(120_000));
        assert!(parse_duration_ms("soon").is_err());
    }
}

/// A time with `us`, `ms` or `s` (a plain number is milliseconds), as microseconds.
pub fn parse_time_us(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let (digits, mult) = if let Some(d) = t.strip_suffix("us") {
        (d, 1.0)
    } else if let Some(d) = t.strip_suffix("ms") {
        (d, 1e3)
    } else if let Some(d) = t.strip_suffix('s') {
        (d, 1e6)
    } else {
        (t.as_str(), 1e3)
    };
    let v: f64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a time (e.g. 44ms, 500us)"))?;
    let us = v * mult;
    if !(us.is_finite() && (0.0..=60e6).contains(&us)) {
        return Err(format!("'{s}' is not a usable time (0 to 60 s)"));
    }
    Ok(us.round() as u64)
}

/// A probability as a percentage (`0.02%`) or a fraction (`0.0002`).
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (digits, scale) = match t.strip_suffix('%') {
        Some(d) => (d, 0.01),
        None => (t, 1.0),
    };
    let v: f64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 0.1%)"))?;
    let p = v * scale;
    if !(0.0..=1.0).contains(&p) {
        return Err(format!("'{s}' is not between 0% and 100%"));
    }
    Ok(p)
}

/// A rate limit that can also be lifted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit(pub Option<u64>);

/// A rate, or `none`/`0` for no limit.
pub fn parse_optional_rate(s: &str) -> Result<RateLimit, String> {
    match s.trim() {
        "none" | "0" | "off" => Ok(RateLimit(None)),
        r => parse_rate(r).map(|r| RateLimit(Some(r))),
    }
}

#[cfg(test)]
mod lab_unit_tests {
    use super::*;

    #[test]
    fn times_and_percentages() {
        assert_eq!(parse_time_us("44ms"), Ok(44_000));
        assert_eq!(parse_time_us("500us"), Ok(500));
        assert_eq!(parse_time_us("1.5"), Ok(1500));
        assert_eq!(parse_time_us("0.088s"), Ok(88_000));
        assert!(parse_time_us("-1ms").is_err());
        assert_eq!(parse_percent("0.02%"), Ok(0.0002));
        assert_eq!(parse_percent("0.5"), Ok(0.5));
        assert!(parse_percent("150%").is_err());
        assert_eq!(parse_optional_rate("none"), Ok(RateLimit(None)));
        assert_eq!(
            parse_optional_rate("10g"),
            Ok(RateLimit(Some(10_000_000_000)))
        );
    }
}
