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

/// `e` as a usage error naming the flag of `A` that sets the refused
/// parameter (the flag whose clap id is the parameter's name, so the
/// definition is the only list); otherwise `e` as it is.
pub fn flag_error<A: clap::Args>(e: EngineError) -> anyhow::Error {
    if let EngineError::Wire(WireError::InvalidField { field, reason }) = &e
        && let Some(flag) = flag_setting::<A>(field)
    {
        return UsageError(format!("{flag}: {reason}")).into();
    }
    e.into()
}

/// How `A`'s flag with id `id` is written (`-l/--len`), if it has one.
fn flag_setting<A: clap::Args>(id: &str) -> Option<String> {
    let cmd = A::augment_args(clap::Command::new("linerate"));
    let arg = cmd.get_arguments().find(|a| a.get_id() == id)?;
    Some(match (arg.get_short(), arg.get_long()) {
        (Some(s), Some(l)) => format!("-{s}/--{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench_cmd::BenchArgs;
    use crate::transfer_cmd::SendArgs;

    #[test]
    fn a_refused_parameter_is_named_by_its_flag() {
        let e = EngineError::Wire(WireError::InvalidField {
            field: "write_len",
            reason: "must be between 1 byte and 256 MiB",
        });
        let e = flag_error::<BenchArgs>(e);
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert_eq!(
            e.to_string(),
            "-l/--len: must be between 1 byte and 256 MiB"
        );
        let other = flag_error::<BenchArgs>(EngineError::SessionIdInUse);
        assert!(other.downcast_ref::<UsageError>().is_none());
    }

    /// The parameters the wire refuses by name, each found as the flag
    /// that sets it, also where the flag's name differs.
    #[test]
    fn every_refusable_parameter_has_its_flag() {
        for (field, flag) in [
            ("streams", "-P/--streams"),
            ("duration_ms", "-t/--time"),
            ("bytes", "-n/--bytes"),
            ("read_len", "--read-len"),
            ("interval_ms", "-i/--interval"),
            ("omit_ms", "--omit"),
            ("congestion", "-Z/--cc"),
            ("mss", "-M/--mss"),
            ("udp.rate_bps", "-b/--bitrate"),
        ] {
            assert_eq!(flag_setting::<BenchArgs>(field).as_deref(), Some(flag));
        }
        assert_eq!(
            flag_setting::<SendArgs>("block_len").as_deref(),
            Some("--block")
        );
        assert_eq!(flag_setting::<SendArgs>("run_token"), None);
    }
}
