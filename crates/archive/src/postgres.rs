//! The site archive on a PostgreSQL server: the same rows as the SQLite
//! file (docs/archive.md#the-site-archive), in tables named `linerate_*`
//! so that they can share a database with other things. Many hosts write
//! at once: each result is one short transaction, and a series two hosts
//! begin together is made once. The schema's version is a row of
//! `linerate_schema`; migrations run under an advisory lock, so that the
//! first hosts to meet a new version do not race.

use std::str::FromStr;
use std::time::Duration;

use postgres::config::Host;
use postgres::{Client, Config, NoTls};

use crate::entry::{Entry, SeriesKey, Unit};
use crate::packed::{compress, decompress};
use crate::{ArchiveError, MissedRun, Row, SeriesSummary, Store};

/// How long connecting to the server may take before the result goes to
/// the spool; a statement waits as long for a lock.
pub const SERVER_WAIT: Duration = Duration::from_secs(5);

/// The advisory lock the migrations hold: "linerate" in ASCII.
const MIGRATION_LOCK: i64 = 0x6c69_6e65_7261_7465;

/// The schema, one step a version, as for SQLite.
const MIGRATIONS: &[&str] = &[
    // 1: the results and their series.
    "CREATE TABLE linerate_series (
        id TEXT PRIMARY KEY,
        key TEXT NOT NULL,
        tool TEXT NOT NULL,
        kind TEXT NOT NULL,
        source TEXT NOT NULL,
        destination TEXT NOT NULL,
        path TEXT NOT NULL,
        unit TEXT NOT NULL
     );
     CREATE TABLE linerate_results (
        id BIGSERIAL PRIMARY KEY,
        series TEXT NOT NULL REFERENCES linerate_series(id),
        started_at DOUBLE PRECISION NOT NULL,
        tool_version TEXT NOT NULL,
        value DOUBLE PRECISION,
        verdict TEXT,
        interrupted BOOLEAN NOT NULL,
        recorded_at DOUBLE PRECISION NOT NULL,
        document BYTEA NOT NULL,
        document_row BIGINT REFERENCES linerate_results(id),
        UNIQUE (series, started_at)
     );
     CREATE TABLE linerate_acknowledgements (
        series TEXT PRIMARY KEY REFERENCES linerate_series(id),
        level_from DOUBLE PRECISION NOT NULL,
        acknowledged_at DOUBLE PRECISION NOT NULL
     );
     CREATE INDEX linerate_results_by_time ON linerate_results(started_at);
     CREATE INDEX linerate_series_by_hosts ON linerate_series(source, destination, kind);",
    // 2: a scheduled run that did not happen, and why.
    "CREATE TABLE linerate_missed (
        id BIGSERIAL PRIMARY KEY,
        schedule TEXT NOT NULL,
        test TEXT NOT NULL,
        due_at DOUBLE PRECISION NOT NULL,
        why TEXT NOT NULL,
        recorded_at DOUBLE PRECISION NOT NULL
     );
     CREATE INDEX linerate_missed_by_time ON linerate_missed(due_at);",
];

/// A PostgreSQL archive's address (`postgres://USER:PASSWORD@HOST/DB`, or
/// `postgresql://`). Its password is never shown: [`PostgresUrl::shown`]
/// and its `Debug` leave it out.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl {
    url: String,
    shown: String,
}

impl PostgresUrl {
    /// The URL `given`, checked: `None` when it is not a PostgreSQL
    /// connection URL.
    pub fn parse(given: &str) -> Option<PostgresUrl> {
        if !(given.starts_with("postgres://") || given.starts_with("postgresql://")) {
            return None;
        }
        let config = Config::from_str(given).ok()?;
        Some(PostgresUrl {
            url: given.to_string(),
            shown: shown(&config),
        })
    }

    /// The URL as given, password and all: for another process's
    /// environment, never for printing.
    pub fn as_setting(&self) -> &str {
        &self.url
    }

    /// The address without its password, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// `postgres://USER@HOST:PORT/DB` of a configuration: what a person needs
/// to know which archive it is, nothing secret.
fn shown(config: &Config) -> String {
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(h, port)| match h {
            Host::Tcp(name) => format!("{name}:{port}"),
            Host::Unix(dir) => format!("{}:{port}", dir.display()),
        })
        .collect();
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{}/{db}", hosts.join(","))
}

/// An open connection to a site archive.
pub struct PostgresArchive {
    client: Client,
    shown: String,
}

impl PostgresArchive {
    /// Connects (waiting at most [`SERVER_WAIT`]) and brings the schema up
    /// to date.
    pub fn connect(url: &PostgresUrl) -> Result<PostgresArchive, ArchiveError> {
        let error = pg_error(&url.shown);
        let mut config = Config::from_str(&url.url).map_err(&error)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(SERVER_WAIT);
        }
        let wait = SERVER_WAIT.as_millis();
        config.options(&format!(
            "-c lock_timeout={wait} -c statement_timeout={}",
            2 * wait
        ));
        config.application_name("linerate");
        let client = config.connect(NoTls).map_err(&error)?;
        let mut archive = PostgresArchive {
            client,
            shown: url.shown.clone(),
        };
        archive.migrate()?;
        Ok(archive)
    }

    fn migrate(&mut self) -> Result<(), ArchiveError> {
        let error = pg_error(&self.shown);
        let mut tx = self.client.transaction().map_err(&error)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(&error)?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS linerate_schema (version INTEGER NOT NULL)")
            .map_err(&error)?;
        let at: Option<i32> = tx
            .query_opt("SELECT version FROM linerate_schema", &[])
            .map_err(&error)?
            .map(|r| r.get(0));
        let at = usize::try_from(at.unwrap_or(0)).unwrap_or(0);
        if at > MIGRATIONS.len() {
            return Err(ArchiveError::Newer {
                path: self.shown.clone().into(),
                version: at,
                known: MIGRATIONS.len(),
            });
        }
        if at == MIGRATIONS.len() {
            return tx.commit().map_err(&error);
        }
        for step in &MIGRATIONS[at..] {
            tx.batch_execute(step).map_err(&error)?;
        }
        let version = MIGRATIONS.len() as i32;
        tx.execute("DELETE FROM linerate_schema", &[])
            .map_err(&error)?;
        tx.execute(
            "INSERT INTO linerate_schema (version) VALUES ($1)",
            &[&version],
        )
        .map_err(&error)?;
        tx.commit().map_err(&error)
    }
}

impl Store for PostgresArchive {
    fn record_all(&mut self, entries: &[Entry], document: &[u8]) -> Result<Vec<i64>, ArchiveError> {
        let error = pg_error(&self.shown);
        let packed = compress(document);
        let now = crate::now();
        let mut tx = self.client.transaction().map_err(&error)?;
        let mut rows: Vec<i64> = Vec::with_capacity(entries.len());
        for entry in entries {
            let key = serde_json::to_string(&entry.key).unwrap_or_default();
            tx.execute(
                "INSERT INTO linerate_series (id, key, tool, kind, source, destination, path, unit)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
                &[
                    &entry.series,
                    &key,
                    &entry.key.tool,
                    &entry.key.kind,
                    &entry.key.source,
                    &entry.key.destination,
                    &entry.key.path,
                    &entry.unit.as_str(),
                ],
            )
            .map_err(&error)?;
            let (document, document_row) = crate::packed::kept_by(&rows, &packed);
            // A result already recorded (imported twice, or delivered from
            // a spool by two runs at once) is kept once.
            let added = tx
                .query_opt(
                    "INSERT INTO linerate_results (series, started_at, tool_version, value,
                        verdict, interrupted, recorded_at, document, document_row)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                     ON CONFLICT (series, started_at) DO NOTHING RETURNING id",
                    &[
                        &entry.series,
                        &entry.started_at,
                        &entry.tool_version,
                        &entry.value,
                        &entry.limit,
                        &entry.interrupted,
                        &now,
                        &document,
                        &document_row,
                    ],
                )
                .map_err(&error)?;
            let id: i64 = match added {
                Some(row) => row.get(0),
                None => tx
                    .query_one(
                        "SELECT id FROM linerate_results WHERE series = $1 AND started_at = $2",
                        &[&entry.series, &entry.started_at],
                    )
                    .map_err(&error)?
                    .get(0),
            };
            rows.push(id);
        }
        tx.commit().map_err(&error)?;
        Ok(rows)
    }

    fn runs(&mut self, series: &str, limit: usize) -> Result<Vec<Row>, ArchiveError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows: Vec<Row> = self
            .client
            .query(
                "SELECT id, started_at, value, verdict FROM linerate_results
                 WHERE series = $1 AND NOT interrupted
                 ORDER BY started_at DESC LIMIT $2",
                &[&series, &limit],
            )
            .map_err(pg_error(&self.shown))?
            .iter()
            .map(|r| Row {
                id: r.get(0),
                started_at: r.get(1),
                value: r.get(2),
                limit: r.get(3),
            })
            .collect();
        rows.reverse();
        Ok(rows)
    }

    fn series_since(&mut self, since: f64) -> Result<Vec<SeriesSummary>, ArchiveError> {
        let found = self
            .client
            .query(
                "SELECT s.id, s.key, s.unit, r.runs, r.latest
                 FROM (SELECT series, COUNT(*) AS runs, MAX(started_at) AS latest
                       FROM linerate_results WHERE started_at >= $1 GROUP BY series) r
                 JOIN linerate_series s ON s.id = r.series
                 ORDER BY s.source, s.destination, s.kind, s.id",
                &[&since],
            )
            .map_err(pg_error(&self.shown))?;
        Ok(found
            .iter()
            .filter_map(|r| {
                let key: SeriesKey = serde_json::from_str(r.get::<_, &str>(1)).ok()?;
                Some(SeriesSummary {
                    id: r.get(0),
                    key,
                    unit: Unit::from_stored(r.get(2)),
                    runs: usize::try_from(r.get::<_, i64>(3)).unwrap_or(0),
                    latest_at: r.get(4),
                })
            })
            .collect())
    }

    fn each_document(
        &mut self,
        series: Option<&str>,
        each: &mut dyn FnMut(&[u8]) -> Result<(), ArchiveError>,
    ) -> Result<usize, ArchiveError> {
        let error = pg_error(&self.shown);
        let mut tx = self.client.transaction().map_err(&error)?;
        // A portal reads a large archive a batch at a time.
        let portal = tx
            .bind(
                // All: each result's document once (a pair row names its
                // result's first row); one series: each of its runs'.
                "SELECT COALESCE(d.document, r.document) FROM linerate_results r
                 LEFT JOIN linerate_results d ON d.id = r.document_row
                 WHERE ($1::TEXT IS NULL AND r.document_row IS NULL) OR r.series = $1
                 ORDER BY r.started_at, r.id",
                &[&series],
            )
            .map_err(&error)?;
        let mut n = 0;
        loop {
            let batch = tx.query_portal(&portal, 1000).map_err(&error)?;
            if batch.is_empty() {
                break;
            }
            for row in &batch {
                let document = decompress(row.get(0)).map_err(|e| ArchiveError::Io {
                    path: self.shown.clone().into(),
                    error: e,
                })?;
                each(&document)?;
                n += 1;
            }
        }
        tx.commit().map_err(&error)?;
        Ok(n)
    }

    fn document(&mut self, id: i64) -> Result<Option<Vec<u8>>, ArchiveError> {
        let row = self
            .client
            .query_opt(
                "SELECT COALESCE(d.document, r.document) FROM linerate_results r
                 LEFT JOIN linerate_results d ON d.id = r.document_row WHERE r.id = $1",
                &[&id],
            )
            .map_err(pg_error(&self.shown))?;
        row.map(|r| {
            decompress(r.get(0)).map_err(|error| ArchiveError::Io {
                path: self.shown.clone().into(),
                error,
            })
        })
        .transpose()
    }

    fn record_missed(&mut self, missed: &MissedRun) -> Result<(), ArchiveError> {
        self.client
            .execute(
                "INSERT INTO linerate_missed (schedule, test, due_at, why, recorded_at)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &missed.schedule,
                    &missed.test,
                    &missed.due_at,
                    &missed.why,
                    &crate::now(),
                ],
            )
            .map(|_| ())
            .map_err(pg_error(&self.shown))
    }

    fn missed_since(&mut self, since: f64) -> Result<Vec<MissedRun>, ArchiveError> {
        let rows = self
            .client
            .query(
                "SELECT schedule, test, due_at, why FROM linerate_missed WHERE due_at >= $1
                 ORDER BY due_at, id",
                &[&since],
            )
            .map_err(pg_error(&self.shown))?;
        Ok(rows
            .iter()
            .map(|r| MissedRun {
                schedule: r.get(0),
                test: r.get(1),
                due_at: r.get(2),
                why: r.get(3),
            })
            .collect())
    }

    fn count(&mut self) -> Result<u64, ArchiveError> {
        let n: i64 = self
            .client
            .query_one("SELECT COUNT(*) FROM linerate_results", &[])
            .map_err(pg_error(&self.shown))?
            .get(0);
        Ok(u64::try_from(n).unwrap_or(0))
    }

    fn acknowledge(&mut self, series: &str, level_from: f64) -> Result<(), ArchiveError> {
        self.client
            .execute(
                "INSERT INTO linerate_acknowledgements (series, level_from, acknowledged_at)
                 VALUES ($1, $2, $3)
                 ON CONFLICT (series) DO UPDATE
                 SET level_from = EXCLUDED.level_from, acknowledged_at = EXCLUDED.acknowledged_at",
                &[&series, &level_from, &crate::now()],
            )
            .map(|_| ())
            .map_err(pg_error(&self.shown))
    }

    fn acknowledged(&mut self, series: &str) -> Result<Option<f64>, ArchiveError> {
        Ok(self
            .client
            .query_opt(
                "SELECT level_from FROM linerate_acknowledgements WHERE series = $1",
                &[&series],
            )
            .map_err(pg_error(&self.shown))?
            .map(|r| r.get(0)))
    }

    fn place(&self) -> String {
        self.shown.clone()
    }
}

/// What the server (or the way to it) said, as the archive's error.
fn pg_error(shown: &str) -> impl Fn(postgres::Error) -> ArchiveError + '_ {
    move |error| ArchiveError::Postgres {
        at: shown.to_string(),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_shown() {
        let url = PostgresUrl::parse("postgres://dtn:s3cret@db.example:6543/perf").unwrap();
        assert_eq!(url.shown(), "postgres://dtn@db.example:6543/perf");
        assert!(!format!("{url:?}").contains("s3cret"));
        let url = PostgresUrl::parse("postgresql://db/perf?password=s3cret&user=a").unwrap();
        assert_eq!(url.shown(), "postgres://a@db:5432/perf");
        assert!(PostgresUrl::parse("mysql://db/perf").is_none());
        assert!(PostgresUrl::parse("postgres://db:notaport/perf").is_none());
    }
}
