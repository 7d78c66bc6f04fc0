//! A read-only view of an archive over HTTP (`linerate dashboard`): a grid
//! per test kind (rows: sources, columns: destinations), each cell its
//! series' latest result coloured by the archive's rule and greyed when
//! stale; each series over time; the regressions found; and `/metrics` in
//! the Prometheus text format. The pages are plain HTML and SVG and work
//! without JavaScript (docs/dashboard.md).
#![forbid(unsafe_code)]

pub mod board;
pub mod metrics;
pub mod pages;
pub mod server;

pub use board::{Board, CellState, SeriesState};
pub use server::{Dashboard, serve};

/// Why the dashboard could not start or answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DashboardError {
    /// The archive could not be read.
    #[error(transparent)]
    Archive(#[from] linerate_archive::ArchiveError),
    /// The address could not be listened on.
    #[error("--listen {address}: {error}")]
    Listen {
        /// The address asked for.
        address: std::net::SocketAddr,
        /// What the system said.
        error: std::io::Error,
    },
    /// A figure could not be drawn.
    #[error(transparent)]
    Figure(#[from] linerate_report::ReportError),
}
