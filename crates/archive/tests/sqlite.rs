//! The SQLite archive on a real file: migrations, documents back whole, a
//! file that is not an archive (many writers at once: tests/stores.rs).
// A failed expectation is the test's failure, in helpers too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scratch;

use std::collections::BTreeMap;

use linerate_archive::{Entry, Judgement, SeriesKey, SqliteArchive, Unit};

use scratch::Dir;

fn entry(source: &str, value: f64, at: f64) -> Entry {
    let key = SeriesKey {
        tool: "linerate".into(),
        kind: "bench".into(),
        source: source.into(),
        destination: "dtn2".into(),
        path: "dtn2".into(),
        settings: BTreeMap::from([("streams".to_string(), serde_json::json!(1))]),
    };
    Entry {
        series: key.id(),
        key,
        started_at: at,
        tool_version: "0.1.0".into(),
        value: Some(value),
        unit: Unit::BitsPerSecond,
        limit: Some("path_full".into()),
        interrupted: false,
    }
}

#[test]
fn a_document_comes_back_whole_and_a_drop_is_named_within_its_confirmation() {
    let dir = Dir::new("doc");
    let path = dir.0.join("a/b/archive.db");
    let mut archive = SqliteArchive::open(&path).unwrap();
    let doc = br#"{"schema":"linerate.result/1","kind":"bench"}"#;
    let mut last = None;
    for i in 0..20 {
        let value = if i < 18 {
            9e9 + f64::from(i % 3) * 1e8
        } else {
            6e9
        };
        let mut found =
            linerate_archive::record(&mut archive, vec![entry("dtn1", value, f64::from(i))], doc)
                .unwrap();
        let found = found.pop().unwrap();
        if i < 19 {
            assert!(
                !matches!(found.judgement, Judgement::Regression(_)),
                "run {i}: {:?}",
                found.judgement
            );
        }
        last = Some(found);
    }
    let last = last.unwrap();
    assert!(
        matches!(last.judgement, Judgement::Regression(ref c) if c.runs == 2),
        "{:?}",
        last.judgement
    );
    assert_eq!(archive.document(last.id).unwrap().unwrap(), doc);
    assert_eq!(archive.document(last.id + 1).unwrap(), None);
}

#[test]
fn a_file_that_is_not_an_archive_is_named_so_and_left_as_it_was() {
    let dir = Dir::new("corrupt");
    let path = dir.0.join("archive.db");
    let junk = vec![b'x'; 8192];
    std::fs::write(&path, &junk).unwrap();
    match SqliteArchive::open(&path) {
        Err(linerate_archive::ArchiveError::Corrupt { path: p }) => assert_eq!(p, path),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("opened junk as an archive"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), junk);
}

#[test]
fn an_archive_of_a_newer_schema_is_refused() {
    let dir = Dir::new("newer");
    let path = dir.0.join("archive.db");
    drop(SqliteArchive::open(&path).unwrap());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(raw);
    assert!(matches!(
        SqliteArchive::open(&path),
        Err(linerate_archive::ArchiveError::Newer { version: 99, .. })
    ));
}

/// A many-host run's pairs are rows of one result: its document is kept
/// once, exported once, and each pair's series gives it back.
#[test]
fn a_result_of_many_pairs_keeps_its_document_once() {
    use linerate_archive::Store;
    let dir = Dir::new("pairs");
    let path = dir.0.join("archive.db");
    let mut archive = SqliteArchive::open(&path).unwrap();
    let pairs: Vec<Entry> = ["dtn1", "dtn3", "dtn4"]
        .iter()
        .map(|s| entry(s, 9e9, 7.0))
        .collect();
    let doc = br#"{"kind":"mesh"}"#;
    let rows = archive.record_all(&pairs, doc).unwrap();
    assert_eq!(rows.len(), 3);
    // Recorded again (a spool delivered twice): nothing new.
    assert_eq!(archive.record_all(&pairs, doc).unwrap(), rows);
    assert_eq!(archive.count().unwrap(), 3);
    let all = |a: &mut SqliteArchive, series: Option<&str>| {
        let mut docs = Vec::new();
        Store::each_document(a, series, &mut |d| {
            docs.push(d.to_vec());
            Ok(())
        })
        .unwrap();
        docs
    };
    assert_eq!(all(&mut archive, None), vec![doc.to_vec()]);
    for pair in &pairs {
        assert_eq!(all(&mut archive, Some(&pair.series)), vec![doc.to_vec()]);
    }
    for row in rows {
        assert_eq!(archive.document(row).unwrap().unwrap(), doc);
    }
}

/// An archive at the first schema (as the first release wrote it) is
/// brought up to date when opened, its rows kept.
#[test]
fn an_archive_of_the_first_schema_is_migrated_with_its_rows() {
    use linerate_archive::Store;
    let dir = Dir::new("migrate");
    let path = dir.0.join("archive.db");
    {
        let mut archive = SqliteArchive::open(&path).unwrap();
        archive.record(&entry("dtn1", 9e9, 1.0), b"{}").unwrap();
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch(
        "CREATE TABLE old (id INTEGER PRIMARY KEY, series TEXT NOT NULL REFERENCES series(id),
                started_at REAL NOT NULL, tool_version TEXT NOT NULL, value REAL, verdict TEXT,
                interrupted INTEGER NOT NULL, recorded_at REAL NOT NULL, document BLOB NOT NULL);
         INSERT INTO old SELECT id, series, started_at, tool_version, value, verdict,
                interrupted, recorded_at, document FROM results;
         DROP TABLE results; ALTER TABLE old RENAME TO results;
         DROP TABLE acknowledgements;
         DROP TABLE missed;
         CREATE UNIQUE INDEX results_by_series ON results(series, started_at);
         CREATE INDEX results_by_time ON results(started_at);
         PRAGMA user_version = 1",
    )
    .unwrap();
    drop(raw);
    let mut archive = SqliteArchive::open(&path).unwrap();
    assert_eq!(archive.count().unwrap(), 1);
    let rows = archive
        .record_all(&[entry("dtn1", 9e9, 2.0), entry("dtn3", 9e9, 2.0)], b"{}")
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(archive.count().unwrap(), 3);
}
