//! Bad flags: the flag's own name in the message, and exit code 2, for
//! what clap cannot check alone (a value out of range, two flags that say
//! the same thing).

use linerate_engine::EngineError;
use linerate_engine::spec::WireError;

/// A command line that cannot run as given; `main` exits with 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The flags of `bench` by the parameter each sets.
pub const BENCH_FLAGS: &[(&str, &str)] = &[
    ("streams", "-P/--streams"),
    ("duration_ms", "-t/--time"),
    ("bytes", "-n/--bytes"),
    ("write_len", "-l/--len"),
    ("read_len", "--read-len"),
    ("interval_ms", "-i/--interval"),
    ("omit_ms", "--omit"),
    ("congestion", "--cc"),
    ("mss", "-M/--mss"),
    ("udp.rate_bps", "-b/--bitrate"),
];

/// The flags of `send` by the parameter each sets.
pub const SEND_FLAGS: &[(&str, &str)] = &[
    ("streams", "-P/--streams"),
    ("block_len", "--block"),
    ("interval_ms", "-i/--interval"),
];

/// `e` as a usage error naming the flag, when it refuses a parameter one of
/// `flags` sets; otherwise `e` as it is.
pub fn flag_error(e: EngineError, flags: &[(&str, &str)]) -> anyhow::Error {
    if let EngineError::Wire(WireError::InvalidField { field, reason }) = &e
        && let Some((_, flag)) = flags.iter().find(|(f, _)| f == field)
    {
        return UsageError(format!("{flag}: {reason}")).into();
    }
    e.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_parameter_is_named_by_its_flag() {
        let e = EngineError::Wire(WireError::InvalidField {
            field: "write_len",
            reason: "must be between 1 byte and 256 MiB",
        });
        let e = flag_error(e, BENCH_FLAGS);
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert_eq!(
            e.to_string(),
            "-l/--len: must be between 1 byte and 256 MiB"
        );
        let other = flag_error(EngineError::SessionIdInUse, BENCH_FLAGS);
        assert!(other.downcast_ref::<UsageError>().is_none());
    }
}
