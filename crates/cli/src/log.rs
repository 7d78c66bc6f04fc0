//! The log lines of the ends that run unattended (`serve`, `recv`,
//! `agent`): tracing events with a level, inside a span per connection
//! (its peer) and per session (its id's first 8 hex digits and its kind),
//! written to standard error as text or as one JSON object a line. Other
//! commands install no subscriber: their in-process servers stay quiet.

use clap::{Args, ValueEnum};
use tracing_subscriber::filter::LevelFilter;

/// How much is logged, and in which form.
#[derive(Args, Clone, Debug, Default)]
pub struct LogFlags {
    /// Least level of the lines logged: error, warn, info, debug or trace.
    /// Default: info (warn for `agent`).
    #[arg(long, value_name = "LEVEL", value_parser = parse_level)]
    pub log_level: Option<LevelFilter>,
    /// Log lines as text, or as one JSON object a line (for collectors).
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    pub log_format: LogFormat,
}

/// The form of each log line.
#[derive(Clone, Copy, Debug, Default, ValueEnum)]
pub enum LogFormat {
    /// `TIME LEVEL span{fields}: message`.
    #[default]
    Text,
    /// `{"timestamp":..,"level":..,"message":..,"span":{..}}`.
    Json,
}

fn parse_level(s: &str) -> Result<LevelFilter, String> {
    s.parse::<LevelFilter>()
        .map_err(|_| format!("'{s}' is not a log level (error, warn, info, debug, trace)"))
}

impl LogFlags {
    /// Installs the process's subscriber; `default` is the command's level.
    pub fn init(&self, default: LevelFilter) {
        let builder = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_max_level(self.log_level.unwrap_or(default))
            .with_target(false)
            .with_ansi(false);
        // A second subscriber (none here) would be refused: the first stands.
        let _ = match self.log_format {
            LogFormat::Text => builder.try_init(),
            LogFormat::Json => builder
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false)
                .try_init(),
        };
    }
}
