//! linerate's memory across runs: every result recorded in an archive (an
//! SQLite file by default, a PostgreSQL server for a site), its series'
//! history, and whether the latest run is outside what is normal for its
//! series. A result that cannot be recorded waits in a spool folder for
//! the next run; nothing is lost.
#![forbid(unsafe_code)]

pub mod entry;
pub mod import;
pub mod normal;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod packed;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod spool;
#[cfg(feature = "sqlite")]
pub mod sqlite;

use std::path::{Path, PathBuf};

pub use entry::{Entry, SeriesKey, Unit};
pub use normal::{Band, Better, Judgement};
#[cfg(feature = "postgres")]
pub use postgres::{PostgresArchive, PostgresUrl};
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
    /// The PostgreSQL server refused, or could not be reached.
    #[cfg(feature = "postgres")]
    #[error("the archive {at}: {error}")]
    Postgres {
        /// The archive, without its password.
        at: String,
        /// What the server or the connection said.
        error: ::postgres::Error,
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
    /// `--archive postgres://...` that is not a connection URL (not
    /// repeated: it may hold a password).
    #[error(
        "--archive: not a PostgreSQL URL; give postgres://USER:PASSWORD@HOST[:PORT]/DB \
         (the value is not repeated here: it may hold a password)"
    )]
    BadPostgresUrl,
    /// `--archive` names a kind of archive this build does not have.
    #[error("--archive {given}: use a path, sqlite:PATH, postgres://USER@HOST/DB, or none")]
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

/// A scheduled run that did not happen (docs/guide.md#watching-paths).
#[derive(Debug, Clone, PartialEq)]
pub struct MissedRun {
    /// The schedule's name.
    pub schedule: String,
    /// The test's name.
    pub test: String,
    /// When the run was due, seconds since the epoch.
    pub due_at: f64,
    /// Why it did not happen, in words.
    pub why: String,
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
    /// A site archive on a PostgreSQL server.
    #[cfg(feature = "postgres")]
    Postgres(PostgresUrl),
    /// Nowhere (`--no-archive`, `--archive none`).
    Off,
}

impl Location {
    /// The location `--archive` or `LINERATE_ARCHIVE` names: a path,
    /// `sqlite:PATH`, `postgres://...`, or `none`.
    pub fn parse(given: &str) -> Result<Location, ArchiveError> {
        if given == "none" {
            return Ok(Location::Off);
        }
        if let Some(path) = given.strip_prefix("sqlite:") {
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        if given.starts_with("postgres://") || given.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return PostgresUrl::parse(given)
                .map(Location::Postgres)
                .ok_or(ArchiveError::BadPostgresUrl);
        }
        if given.contains("://") {
            // The value may hold a password: only its scheme is repeated.
            let scheme = given.split("://").next().unwrap_or_default();
            return Err(ArchiveError::UnknownLocation {
                given: format!("{scheme}://..."),
            });
        }
        Ok(Location::Sqlite(PathBuf::from(given)))
    }

    /// The default: `archive.db` in linerate's data folder.
    pub fn default_for(data_dir: &Path) -> Location {
        Location::Sqlite(data_dir.join("archive.db"))
    }

    /// The value of `LINERATE_ARCHIVE` that names this location, password
    /// and all: for another process's environment (never its command line,
    /// which other users see), never for printing.
    pub fn as_setting(&self) -> String {
        match self {
            Location::Sqlite(p) => format!("sqlite:{}", p.display()),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => url.as_setting().to_string(),
            Location::Off => "none".to_string(),
        }
    }

    /// The archive, as messages name it (never with a password).
    pub fn shown(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => url.shown().to_string(),
            Location::Off => "none".to_string(),
        }
    }
}

/// Seconds since the Unix epoch, now.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
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

/// An archive: where results are recorded and read back. One for each
/// kind of location ([`SqliteArchive`], [`PostgresArchive`]).
pub trait Store {
    /// Records one result, its entries (one, or a many-host run's pairs)
    /// and its document, in one transaction: the first entry's row keeps
    /// the document, the others point to it. A result recorded before
    /// (the same series and start) is kept once. The entries' rows.
    fn record_all(&mut self, entries: &[Entry], document: &[u8]) -> Result<Vec<i64>, ArchiveError>;
    /// Records a result of one entry ([`Store::record_all`]): its row.
    fn record(&mut self, entry: &Entry, document: &[u8]) -> Result<i64, ArchiveError> {
        let rows = self.record_all(std::slice::from_ref(entry), document)?;
        Ok(rows.first().copied().unwrap_or_default())
    }
    /// A series' runs that were not cut short, oldest first, at most the
    /// latest `limit`.
    fn runs(&mut self, series: &str, limit: usize) -> Result<Vec<Row>, ArchiveError>;
    /// Every series with at least one run since `since` (seconds since
    /// the epoch), with its latest run's time.
    fn series_since(&mut self, since: f64) -> Result<Vec<SeriesSummary>, ArchiveError>;
    /// Hands every recorded document to `each`, oldest first: all (each
    /// once), or those of one series' runs. How many.
    fn each_document(
        &mut self,
        series: Option<&str>,
        each: &mut dyn FnMut(&[u8]) -> Result<(), ArchiveError>,
    ) -> Result<usize, ArchiveError>;
    /// The document of the result whose row is `id` (a pair's row gives
    /// its run's document), as it was recorded.
    fn document(&mut self, id: i64) -> Result<Option<Vec<u8>>, ArchiveError>;
    /// How many results the archive holds.
    fn count(&mut self) -> Result<u64, ArchiveError>;
    /// A person acknowledged the series' change whose first run started
    /// at `level_from`: its runs from then on are its normal.
    fn acknowledge(&mut self, series: &str, level_from: f64) -> Result<(), ArchiveError>;
    /// Where the series' acknowledged level begins, if one was.
    fn acknowledged(&mut self, series: &str) -> Result<Option<f64>, ArchiveError>;
    /// Records a scheduled run that did not happen.
    fn record_missed(&mut self, missed: &MissedRun) -> Result<(), ArchiveError>;
    /// The scheduled runs due since `since` (seconds since the epoch) that
    /// did not happen, oldest first.
    fn missed_since(&mut self, since: f64) -> Result<Vec<MissedRun>, ArchiveError>;
    /// Where it is, as messages name it (never with a password).
    fn place(&self) -> String;
}

/// Opens the archive at `location` to read it: an SQLite file must
/// already be one (nothing is moved); `None` for [`Location::Off`].
pub fn open(location: &Location) -> Result<Option<Box<dyn Store>>, ArchiveError> {
    Ok(match location {
        #[cfg(feature = "sqlite")]
        Location::Sqlite(path) => Some(Box::new(SqliteArchive::open(path)?)),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Some(Box::new(PostgresArchive::connect(url)?)),
        _ => None,
    })
}

/// An archive opened to write into, and where a file that was not an
/// archive went.
pub type Opened = (Box<dyn Store>, Option<PathBuf>);

/// Opens the archive at `location` to write into it: an SQLite file that
/// is not a database is moved aside first (where to, said in the answer).
pub fn open_to_write(location: &Location) -> Result<Option<Opened>, ArchiveError> {
    Ok(match location {
        #[cfg(feature = "sqlite")]
        Location::Sqlite(path) => {
            let (archive, aside) = SqliteArchive::open_setting_aside(path)?;
            Some((Box::new(archive), aside))
        }
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Some((Box::new(PostgresArchive::connect(url)?), None)),
        _ => None,
    })
}

/// Records `document` (a result document's JSON) with its `entries`
/// (one, or a many-host run's pairs), and judges each series with it.
pub fn record(
    archive: &mut dyn Store,
    entries: Vec<Entry>,
    document: &[u8],
) -> Result<Vec<Recorded>, ArchiveError> {
    let rows = archive.record_all(&entries, document)?;
    entries
        .into_iter()
        .zip(rows)
        .map(|(entry, id)| {
            let (history, judgement) = judge_series(archive, &entry.series, entry.unit)?;
            Ok(Recorded {
                id,
                entry,
                judgement,
                history,
            })
        })
        .collect()
}

/// A series' latest runs (those with a figure, oldest first) and the
/// judgement of its latest one; the indexes of a change point into them.
pub fn judge_series(
    archive: &mut dyn Store,
    series: &str,
    unit: Unit,
) -> Result<(Vec<Row>, Judgement), ArchiveError> {
    let level_from = archive.acknowledged(series)?;
    let history: Vec<Row> = archive
        .runs(series, HISTORY_READ)?
        .into_iter()
        .filter(|r| r.value.is_some_and(f64::is_finite))
        .filter(|r| level_from.is_none_or(|from| r.started_at >= from))
        .collect();
    let values: Vec<f64> = history.iter().filter_map(|r| r.value).collect();
    let judgement = match level_from {
        Some(_) => normal::judge_acknowledged(&values, unit.better()),
        None => normal::judge(&values, unit.better()),
    };
    Ok((history, judgement))
}

/// What recording a run's result at the end of the run did.
#[derive(Debug)]
pub struct Keeping {
    /// A file that was not an archive, moved to here.
    pub set_aside: Option<PathBuf>,
    /// Results that waited in the spool and are now recorded.
    pub delivered: usize,
    /// Why the spool still waits, if delivering it stopped.
    pub spool_error: Option<ArchiveError>,
    /// What became of this result.
    pub outcome: Outcome,
}

/// What became of a run's result.
#[derive(Debug)]
pub enum Outcome {
    /// Recorded, and each of its series judged.
    Recorded(Vec<Recorded>),
    /// The archive could not take it: it waits in the spool.
    Kept {
        /// Why the archive could not take it.
        error: ArchiveError,
        /// The spooled file.
        kept: PathBuf,
    },
    /// Neither the archive nor the spool could take it.
    Lost {
        /// Why the archive could not take it.
        error: ArchiveError,
        /// Why the spool could not, if there is one.
        spool: Option<ArchiveError>,
    },
}

/// Records a run's result as its last step, never failing: delivers what
/// waits in `spool` first (oldest first), then records `document`; when
/// the archive cannot take it (locked past its wait, a full disk, a server
/// gone) it waits in `spool` for the next run.
pub fn record_or_keep(
    location: &Location,
    spool: Option<&spool::Spool>,
    entries: Vec<Entry>,
    document: &[u8],
) -> Keeping {
    let (mut set_aside, mut delivered, mut spool_error) = (None, 0, None);
    let recorded = open_to_write(location).and_then(|opened| {
        let Some((mut archive, aside)) = opened else {
            return Err(ArchiveError::UnknownLocation {
                given: location.shown(),
            });
        };
        set_aside = aside;
        if let Some(spool) = spool {
            match spool.drain(|waiting| deliver(archive.as_mut(), waiting)) {
                Ok(n) => delivered = n,
                Err(e) => spool_error = Some(e),
            }
        }
        record(archive.as_mut(), entries, document)
    });
    let outcome = match recorded {
        Ok(r) => Outcome::Recorded(r),
        Err(error) => match spool.map(|s| s.keep(document)) {
            Some(Ok(kept)) => Outcome::Kept { error, kept },
            Some(Err(e)) => Outcome::Lost {
                error,
                spool: Some(e),
            },
            None => Outcome::Lost { error, spool: None },
        },
    };
    Keeping {
        set_aside,
        delivered,
        spool_error,
        outcome,
    }
}

/// Every run of `series` (those with a figure, oldest first) with the
/// judgement its series had when it was the latest, as recording judged
/// it: the runs before it that recording reads, from an acknowledged
/// level's first run where one began before it.
pub fn judged_history(
    archive: &mut dyn Store,
    series: &str,
    unit: Unit,
) -> Result<Vec<(Row, Judgement)>, ArchiveError> {
    let level_from = archive.acknowledged(series)?;
    let rows: Vec<Row> = archive
        .runs(series, usize::MAX >> 1)?
        .into_iter()
        .filter(|r| r.value.is_some_and(f64::is_finite))
        .collect();
    let values: Vec<f64> = rows.iter().filter_map(|r| r.value).collect();
    Ok(rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut from = (i + 1).saturating_sub(HISTORY_READ);
            let acknowledged = level_from.filter(|t| row.started_at >= *t);
            if let Some(t) = acknowledged {
                from = from.max(rows.partition_point(|r| r.started_at < t));
            }
            let window = &values[from..=i];
            let judgement = match acknowledged {
                Some(_) => normal::judge_acknowledged(window, unit.better()),
                None => normal::judge(window, unit.better()),
            };
            (row.clone(), judgement)
        })
        .collect())
}

/// Acknowledges the change `series` is in (a regression or an improvement
/// named): its runs from the change's first on are its normal from now.
/// When the change began; `None` when the series is not outside its normal.
pub fn acknowledge(
    archive: &mut dyn Store,
    series: &SeriesSummary,
) -> Result<Option<f64>, ArchiveError> {
    let (history, judgement) = judge_series(archive, &series.id, series.unit)?;
    let change = match judgement {
        Judgement::Regression(c) | Judgement::Improvement(c) => c,
        _ => return Ok(None),
    };
    let Some(first) = history.get(change.first) else {
        return Ok(None);
    };
    archive.acknowledge(&series.id, first.started_at)?;
    Ok(Some(first.started_at))
}

/// Delivers everything waiting in `spool` to `archive` (`linerate
/// archive flush`): how many were recorded.
pub fn flush(archive: &mut dyn Store, spool: &spool::Spool) -> Result<usize, ArchiveError> {
    spool.drain(|waiting| deliver(archive, waiting))
}

/// Records one spooled result; one that is not a result stays in the
/// spool for a person to read, never lost.
fn deliver(archive: &mut dyn Store, waiting: &[u8]) -> Result<bool, ArchiveError> {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(waiting) else {
        return Ok(false);
    };
    match import::entries_of(&doc) {
        import::Imported::Result(entries) => archive.record_all(&entries, waiting).map(|_| true),
        import::Imported::Skipped(_) => Ok(false),
    }
}
