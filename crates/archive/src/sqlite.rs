//! The archive in an SQLite file: one row a result, its document kept
//! whole (compressed) beside the columns history and the regression rule
//! read. WAL mode, so that many processes write at once (a mesh's agents,
//! a schedule, a user's own run) and readers never wait for them; each
//! write is one short transaction that waits for the file's lock at most
//! [`BUSY_WAIT`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::entry::{Entry, SeriesKey, Unit};
use crate::packed::{compress, decompress};
use crate::{ArchiveError, MissedRun, Row, SeriesSummary, Store};

/// How long a write waits for another process's transaction.
pub const BUSY_WAIT: Duration = Duration::from_secs(10);

/// The schema, one step a version: the archive at version N runs steps N
/// and on, in one transaction, and says it is at the last.
const MIGRATIONS: &[&str] = &[
    // 1: the results and their series.
    "CREATE TABLE series (
        id TEXT PRIMARY KEY,
        key TEXT NOT NULL,
        tool TEXT NOT NULL,
        kind TEXT NOT NULL,
        source TEXT NOT NULL,
        destination TEXT NOT NULL,
        path TEXT NOT NULL,
        unit TEXT NOT NULL
     );
     CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        series TEXT NOT NULL REFERENCES series(id),
        started_at REAL NOT NULL,
        tool_version TEXT NOT NULL,
        value REAL,
        verdict TEXT,
        interrupted INTEGER NOT NULL,
        recorded_at REAL NOT NULL,
        document BLOB NOT NULL
     );
     CREATE UNIQUE INDEX results_by_series ON results(series, started_at);
     CREATE INDEX results_by_time ON results(started_at);
     CREATE INDEX series_by_hosts ON series(source, destination, kind);",
    // 2: a many-host run's pairs are rows of one result: the first keeps
    // the document, the others name its row.
    "ALTER TABLE results ADD COLUMN document_row INTEGER REFERENCES results(id);",
    // 3: a change a person acknowledged: the series' normal level begins
    // at its first run.
    "CREATE TABLE acknowledgements (
        series TEXT PRIMARY KEY REFERENCES series(id),
        level_from REAL NOT NULL,
        acknowledged_at REAL NOT NULL
     );",
    // 4: a scheduled run that did not happen, and why.
    "CREATE TABLE missed (
        id INTEGER PRIMARY KEY,
        schedule TEXT NOT NULL,
        test TEXT NOT NULL,
        due_at REAL NOT NULL,
        why TEXT NOT NULL,
        recorded_at REAL NOT NULL
     );
     CREATE INDEX missed_by_time ON missed(due_at);",
];

/// An open SQLite archive.
pub struct SqliteArchive {
    connection: Connection,
    path: PathBuf,
}

impl SqliteArchive {
    /// Opens the archive at `path`, creating it and its folder when
    /// missing, and brings its schema up to date.
    pub fn open(path: &Path) -> Result<SqliteArchive, ArchiveError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|error| ArchiveError::Io {
                path: dir.to_path_buf(),
                error,
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(path, flags).map_err(sql_error(path))?;
        // The wait comes first: switching to WAL itself takes the lock.
        connection
            .busy_timeout(BUSY_WAIT)
            .map_err(sql_error(path))?;
        let mut archive = SqliteArchive {
            connection,
            path: path.to_path_buf(),
        };
        // Processes that create one archive at once meet locks the busy
        // wait does not cover (the switch to WAL, the first migration): one
        // write in 400 of 8 processes found the file busy at once
        // (tests/stores.rs). Such a lock is waited out as the busy wait would.
        let until = std::time::Instant::now() + BUSY_WAIT;
        loop {
            match archive.prepare() {
                Err(ArchiveError::Sqlite { error, .. })
                    if is_busy(&error) && std::time::Instant::now() < until =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => return other.map(|()| archive),
            }
        }
    }

    /// Where the archive is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// WAL mode and the schema's migrations, each run once.
    fn prepare(&mut self) -> Result<(), ArchiveError> {
        let sql = sql_error(&self.path);
        let _wal: String = self
            .connection
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(&sql)?;
        self.connection
            .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(&sql)?;
        let tx = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&sql)?;
        let at: usize = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(&sql)?;
        if at > MIGRATIONS.len() {
            return Err(ArchiveError::Newer {
                path: self.path.clone(),
                version: at,
                known: MIGRATIONS.len(),
            });
        }
        for step in &MIGRATIONS[at..] {
            tx.execute_batch(step).map_err(&sql)?;
        }
        tx.execute_batch(&format!("PRAGMA user_version = {}", MIGRATIONS.len()))
            .and_then(|()| tx.commit())
            .map_err(&sql)
    }

    /// Records one result ([`Store::record_all`]): its entries' rows.
    pub fn record_all(
        &mut self,
        entries: &[Entry],
        document: &[u8],
    ) -> Result<Vec<i64>, ArchiveError> {
        let packed = compress(document);
        let now = crate::now();
        let sql = sql_error(&self.path);
        let tx = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&sql)?;
        let mut rows: Vec<i64> = Vec::with_capacity(entries.len());
        for entry in entries {
            let key = serde_json::to_string(&entry.key).unwrap_or_default();
            tx.execute(
                "INSERT OR IGNORE INTO series (id, key, tool, kind, source, destination, path, unit)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    entry.series,
                    key,
                    entry.key.tool,
                    entry.key.kind,
                    entry.key.source,
                    entry.key.destination,
                    entry.key.path,
                    entry.unit.as_str()
                ],
            )
            .map_err(&sql)?;
            let (document, document_row) = crate::packed::kept_by(&rows, &packed);
            // A result already recorded (the same series and start,
            // imported twice) is kept once.
            let added = tx
                .execute(
                    "INSERT OR IGNORE INTO results (series, started_at, tool_version, value,
                        verdict, interrupted, recorded_at, document, document_row)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        entry.series,
                        entry.started_at,
                        entry.tool_version,
                        entry.value,
                        entry.limit,
                        entry.interrupted,
                        now,
                        document,
                        document_row
                    ],
                )
                .map_err(&sql)?;
            let id = match added {
                0 => tx
                    .query_row(
                        "SELECT id FROM results WHERE series = ?1 AND started_at = ?2",
                        params![entry.series, entry.started_at],
                        |r| r.get(0),
                    )
                    .map_err(&sql)?,
                _ => tx.last_insert_rowid(),
            };
            rows.push(id);
        }
        tx.commit().map_err(&sql)?;
        Ok(rows)
    }

    /// Hands every recorded document to `each`, oldest first: all, or one
    /// series'.
    pub fn each_document(
        &self,
        series: Option<&str>,
        mut each: impl FnMut(&[u8]) -> Result<(), ArchiveError>,
    ) -> Result<usize, ArchiveError> {
        let mut statement = self
            .connection
            .prepare(
                // All: each result's document once (a pair row names its
                // result's first row); one series: each of its runs'.
                "SELECT COALESCE(d.document, r.document) FROM results r
                 LEFT JOIN results d ON d.id = r.document_row
                 WHERE (?1 IS NULL AND r.document_row IS NULL) OR r.series = ?1
                 ORDER BY r.started_at, r.id",
            )
            .map_err(sql_error(&self.path))?;
        let mut rows = statement
            .query(params![series])
            .map_err(sql_error(&self.path))?;
        let mut n = 0;
        while let Some(row) = rows.next().map_err(sql_error(&self.path))? {
            let packed: Vec<u8> = row.get(0).map_err(sql_error(&self.path))?;
            let document = decompress(&packed).map_err(|error| ArchiveError::Io {
                path: self.path.clone(),
                error,
            })?;
            each(&document)?;
            n += 1;
        }
        Ok(n)
    }

    /// A series' runs that were not cut short, oldest first, at most the
    /// latest `limit`.
    pub fn runs(&self, series: &str, limit: usize) -> Result<Vec<Row>, ArchiveError> {
        let mut statement = self
            .connection
            .prepare_cached(
                // A series' start times are unique (its index): the index
                // gives them in order and the limit stops the walk.
                "SELECT id, started_at, value, verdict FROM results
                 WHERE series = ?1 AND interrupted = 0
                 ORDER BY started_at DESC LIMIT ?2",
            )
            .map_err(sql_error(&self.path))?;
        let mut rows: Vec<Row> = statement
            .query_map(params![series, limit as i64], |r| {
                Ok(Row {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    value: r.get(2)?,
                    limit: r.get(3)?,
                })
            })
            .and_then(|rows| rows.collect())
            .map_err(sql_error(&self.path))?;
        rows.reverse();
        Ok(rows)
    }

    /// Every series with at least one run since `since` (seconds since
    /// the epoch), with its latest run's time.
    pub fn series_since(&self, since: f64) -> Result<Vec<SeriesSummary>, ArchiveError> {
        let mut statement = self
            .connection
            .prepare(
                // Counted from the (series, started_at) index alone, then
                // joined to the few series rows.
                "SELECT s.id, s.key, s.unit, r.runs, r.latest
                 FROM (SELECT series, COUNT(*) AS runs, MAX(started_at) AS latest
                       FROM results INDEXED BY results_by_series
                       WHERE started_at >= ?1 GROUP BY series) r
                 JOIN series s ON s.id = r.series
                 ORDER BY s.source, s.destination, s.kind, s.id",
            )
            .map_err(sql_error(&self.path))?;
        let found: Vec<(String, String, String, i64, f64)> = statement
            .query_map(params![since], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(sql_error(&self.path))?;
        Ok(found
            .into_iter()
            .filter_map(|(id, key, unit, runs, latest)| {
                let key: SeriesKey = serde_json::from_str(&key).ok()?;
                Some(SeriesSummary {
                    id,
                    key,
                    unit: Unit::from_stored(&unit),
                    runs: runs as usize,
                    latest_at: latest,
                })
            })
            .collect())
    }

    /// The document of the result `id`, as it was recorded.
    pub fn document(&self, id: i64) -> Result<Option<Vec<u8>>, ArchiveError> {
        let packed: Option<Vec<u8>> = self
            .connection
            .query_row(
                "SELECT COALESCE(d.document, r.document) FROM results r
                 LEFT JOIN results d ON d.id = r.document_row WHERE r.id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_error(&self.path))?;
        packed
            .map(|p| {
                decompress(&p).map_err(|error| ArchiveError::Io {
                    path: self.path.clone(),
                    error,
                })
            })
            .transpose()
    }

    /// How many results the archive holds.
    pub fn count(&self) -> Result<u64, ArchiveError> {
        self.connection
            .query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0))
            .map_err(sql_error(&self.path))
    }
}

/// SQLite found the file locked by another connection.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// What SQLite said about the archive at `path`, as the archive's error:
/// a file that is not a database is named so.
fn sql_error(path: &Path) -> impl Fn(rusqlite::Error) -> ArchiveError + '_ {
    move |error| {
        if let rusqlite::Error::SqliteFailure(e, _) = &error
            && e.code == rusqlite::ErrorCode::NotADatabase
        {
            return ArchiveError::Corrupt {
                path: path.to_path_buf(),
            };
        }
        ArchiveError::Sqlite {
            path: path.to_path_buf(),
            error,
        }
    }
}

impl Store for SqliteArchive {
    fn record_all(&mut self, entries: &[Entry], document: &[u8]) -> Result<Vec<i64>, ArchiveError> {
        SqliteArchive::record_all(self, entries, document)
    }

    fn runs(&mut self, series: &str, limit: usize) -> Result<Vec<Row>, ArchiveError> {
        SqliteArchive::runs(self, series, limit)
    }

    fn series_since(&mut self, since: f64) -> Result<Vec<SeriesSummary>, ArchiveError> {
        SqliteArchive::series_since(self, since)
    }

    fn each_document(
        &mut self,
        series: Option<&str>,
        each: &mut dyn FnMut(&[u8]) -> Result<(), ArchiveError>,
    ) -> Result<usize, ArchiveError> {
        SqliteArchive::each_document(self, series, each)
    }

    fn document(&mut self, id: i64) -> Result<Option<Vec<u8>>, ArchiveError> {
        SqliteArchive::document(self, id)
    }

    fn count(&mut self) -> Result<u64, ArchiveError> {
        SqliteArchive::count(self)
    }

    fn acknowledge(&mut self, series: &str, level_from: f64) -> Result<(), ArchiveError> {
        self.connection
            .execute(
                "INSERT OR REPLACE INTO acknowledgements (series, level_from, acknowledged_at)
                 VALUES (?1, ?2, ?3)",
                params![series, level_from, crate::now()],
            )
            .map(|_| ())
            .map_err(sql_error(&self.path))
    }

    fn acknowledged(&mut self, series: &str) -> Result<Option<f64>, ArchiveError> {
        self.connection
            .prepare_cached("SELECT level_from FROM acknowledgements WHERE series = ?1")
            .and_then(|mut s| s.query_row(params![series], |r| r.get(0)).optional())
            .map_err(sql_error(&self.path))
    }

    fn record_missed(&mut self, missed: &MissedRun) -> Result<(), ArchiveError> {
        self.connection
            .execute(
                "INSERT INTO missed (schedule, test, due_at, why, recorded_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    missed.schedule,
                    missed.test,
                    missed.due_at,
                    missed.why,
                    crate::now()
                ],
            )
            .map(|_| ())
            .map_err(sql_error(&self.path))
    }

    fn missed_since(&mut self, since: f64) -> Result<Vec<MissedRun>, ArchiveError> {
        let sql = sql_error(&self.path);
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT schedule, test, due_at, why FROM missed WHERE due_at >= ?1
                 ORDER BY due_at, id",
            )
            .map_err(&sql)?;
        let rows = statement
            .query_map(params![since], |r| {
                Ok(MissedRun {
                    schedule: r.get(0)?,
                    test: r.get(1)?,
                    due_at: r.get(2)?,
                    why: r.get(3)?,
                })
            })
            .map_err(&sql)?;
        rows.collect::<Result<_, _>>().map_err(&sql)
    }

    fn place(&self) -> String {
        self.path.display().to_string()
    }
}

impl SqliteArchive {
    /// Opens the archive at `path` to write into it; a file that is not an
    /// SQLite database is moved aside to `PATH.corrupt-SECONDS` (never
    /// written over) and a new archive begun. Where the file went, if it
    /// was moved.
    pub fn open_setting_aside(
        path: &Path,
    ) -> Result<(SqliteArchive, Option<PathBuf>), ArchiveError> {
        match SqliteArchive::open(path) {
            Err(ArchiveError::Corrupt { .. }) => {
                let stamp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let mut aside = path.as_os_str().to_owned();
                aside.push(format!(".corrupt-{stamp}"));
                let aside = PathBuf::from(aside);
                std::fs::rename(path, &aside).map_err(|error| ArchiveError::Io {
                    path: path.to_path_buf(),
                    error,
                })?;
                Ok((SqliteArchive::open(path)?, Some(aside)))
            }
            other => Ok((other?, None)),
        }
    }
}
