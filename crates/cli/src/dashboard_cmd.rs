//! `linerate dashboard`: the archive served read-only over HTTP (the
//! dashboard crate), on loopback unless the user says otherwise.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use linerate_archive::Location;
use linerate_dashboard::board::Staleness;
use linerate_dashboard::{Dashboard, server};

use crate::archive_cmd::{LocationParser, location, parse_span};
use crate::usage::UsageError;

/// `linerate dashboard`.
#[derive(Args, Clone, Debug)]
#[command(after_help = "Pages:\n  \
    /               a grid per test kind: rows are sources, columns destinations; each cell\n                  \
    its series' latest result, coloured by the archive's rule, grey when stale\n  \
    /series/ID      one series over time with its normal band and last verdict\n  \
    /regressions    the regressions found\n  \
    /metrics        the latest figures in the Prometheus text format\n\n\
Examples:\n  \
    linerate dashboard                               the default archive on 127.0.0.1:8080\n  \
    linerate dashboard --archive postgres://dash@db/linerate --listen 127.0.0.1:9180\n  \
    linerate dashboard --listen 0.0.0.0:8080 --allow-remote   every host that can reach it\n\n\
The pages name hosts and paths: anything but a loopback address needs --allow-remote.")]
pub struct DashboardArgs {
    /// The archive to read (a path, sqlite:PATH or postgres://...). Default: as bench records.
    #[arg(long, value_name = "ARCHIVE", value_parser = LocationParser)]
    pub archive: Option<Location>,
    /// Address and port to serve on.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Serve on an address other hosts can reach (the pages name hosts and paths).
    #[arg(long)]
    pub allow_remote: bool,
    /// Show series with a run in this last span.
    #[arg(long, value_name = "SPAN", default_value = "30d", value_parser = parse_span)]
    pub since: Duration,
    /// Grey a series whose latest run is older than this (default: three of its usual gaps, at least 1m).
    #[arg(long, value_name = "SPAN", value_parser = parse_span)]
    pub stale: Option<Duration>,
}

/// Serves until Ctrl-C or SIGTERM.
pub fn run(args: DashboardArgs) -> anyhow::Result<()> {
    if !args.listen.ip().is_loopback() && !args.allow_remote {
        return Err(UsageError(format!(
            "--listen {}: not a loopback address; the pages name hosts and paths, so serving them \
             to other hosts needs --allow-remote",
            args.listen
        ))
        .into());
    }
    let dashboard = Dashboard {
        location: location(args.archive)?,
        period_seconds: args.since.as_secs_f64(),
        staleness: args
            .stale
            .map_or(Staleness::Adaptive, |d| Staleness::After(d.as_secs_f64())),
    };
    let listening = server::bind(args.listen)?;
    let stop = crate::signals::interrupt_flag();
    eprintln!(
        "linerate: dashboard of {} on http://{}/ (metrics at /metrics); Ctrl-C ends it",
        dashboard.location.shown(),
        listening.address
    );
    server::serve(&listening, &dashboard, &stop, &crate::output::epoch_seconds);
    eprintln!("linerate: dashboard stopped");
    Ok(())
}
