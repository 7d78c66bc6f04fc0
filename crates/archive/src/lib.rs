//! linerate's memory across runs: every result recorded in an archive (an
//! SQLite file by default), its series' history, and whether the latest
//! run is outside what is normal for its series. A result that cannot be
//! recorded waits in a spool folder for the next run; nothing is lost.
#![forbid(unsafe_code)]

pub mod entry;
pub mod import;
pub mod normal;
pub mod spool;
#[cfg(feature = "sqlite")]
pub mod sqlite;

use std::path::{Path, PathBuf};

pub use entry::{Entry, SeriesKey, Unit};
pub use normal::{Band, Better, Judgement};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteArchive;

/// Why the archive could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// A file or folder of the archive or its spool.
    #[error("{}: {error}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// SQLite refused.
    #[cfg(feature = "sqlite")]
    #[error("the archive {}: {error}", .path.display())]
    Sqlite {
        /// The archive's file.
        path: PathBuf,
        /// What SQLite said.
        error: rusqlite::Error,
    },
    /// The file is not an SQLite database.
    #[error("the archive {} is not an SQLite database", .path.display())]
    Corrupt {
        /// The archive's file.
        path: PathBuf,
    },
    /// An archive written by a newer linerate.
    #[error(
        "the archive {} is at schema version {version}; this linerate knows up to {known}",
        .path.display()
    )]
    Newer {
        /// The archive's file.
        path: PathBuf,
        /// Its schema version.
        version: usize,
        /// The newest this build knows.
        known: usize,
    },
    /// `--archive` names a kind of archive this build does not have.
    #[error("--archive {given}: use a path, sqlite:PATH, or none")]
    UnknownLocation {
        /// The value as given.
        given: String,
    },
}

/// One run of a series, as history reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The result's row in the archive.
    pub id: i64,
    /// Seconds since the Unix epoch when it started.
    pub started_at: f64,
    /// Its headline figure.
    pub value: Option<f64>,
    /// Its verdict's limit.
    pub limit: Option<String>,
}

/// A series and how much of it the archive holds.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesSummary {
    /// The series' id.
    pub id: String,
    /// What defines it.
    pub key: SeriesKey,
    /// What its figure measures.
    pub unit: Unit,
    /// Its runs in the period asked for.
    pub runs: usize,
    /// When its latest run started (seconds since the epoch).
    pub latest_at: f64,
}

/// Where results are recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// Nowhere (`--no-archive`, `--archive none`).
    Off,
}

impl Location {
    /// The location `--archive` or `LINERATE_ARCHIVE` names: a path,
    /// `sqlite:PATH`, or `none`.
    pub fn parse(given: &str) -> Result<Location, ArchiveError> {
        if given == "none" {
            return Ok(Location::Off);
        }
        if let Some(path) = given.strip_prefix("sqlite:") {
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        if given.contains("://") {
            return Err(ArchiveError::UnknownLocation {
                given: given.to_string(),
            });
        }
        Ok(Location::Sqlite(PathBuf::from(given)))
    }

    /// The default: `archive.db` in linerate's data folder.
    pub fn default_for(data_dir: &Path) -> Location {
        Location::Sqlite(data_dir.join("archive.db"))
    }
}

/// linerate's data folder: `$XDG_DATA_HOME/linerate`, else
/// `~/.local/share/linerate`; `None` without either variable.
pub fn data_dir() -> Option<PathBuf> {
    let from = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    from("XDG_DATA_HOME")
        .or_else(|| from("HOME").map(|h| h.join(".local/share")))
        .map(|d| d.join("linerate"))
}

/// What recording a result found.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The result's row.
    pub id: i64,
    /// Its series.
    pub entry: Entry,
    /// Its series' judgement with it as the latest run.
    pub judgement: Judgement,
    /// The runs the judgement read, oldest first (those with a figure).
    pub history: Vec<Row>,
}

/// The runs a judgement reads: enough for its window, a change in the
/// making and a level after one.
pub const HISTORY_READ: usize =
    normal::WINDOW + normal::NEW_NORMAL_AFTER + normal::CONFIRM + normal::MIN_HISTORY;

/// Records `document` (a result document's JSON) with its `entry`, and
/// judges its series with it.
#[cfg(feature = "sqlite")]
pub fn record(
    archive: &mut SqliteArchive,
    entry: Entry,
    document: &[u8],
) -> Result<Recorded, ArchiveError> {
    let id = archive.record(&entry, document)?;
    let (history, judgement) = judge_series(archive, &entry.series, entry.unit)?;
    Ok(Recorded {
        id,
        entry,
        judgement,
        history,
    })
}

/// A series' latest runs (those with a figure, oldest first) and the
/// judgement of its latest one; the indexes of a change point into them.
#[cfg(feature = "sqlite")]
pub fn judge_series(
    archive: &SqliteArchive,
    series: &str,
    unit: Unit,
) -> Result<(Vec<Row>, Judgement), ArchiveError> {
    let history: Vec<Row> = archive
        .runs(series, HISTORY_READ)?
        .into_iter()
        .filter(|r| r.value.is_some_and(f64::is_finite))
        .collect();
    let values: Vec<f64> = history.iter().filter_map(|r| r.value).collect();
    let judgement = normal::judge(&values, unit.better());
    Ok((history, judgement))
}
