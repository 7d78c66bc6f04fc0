//! The SQLite archive on a real file: many writers at once, migrations,
//! documents back whole, a file that is not an archive.
// A failed expectation is the test's failure, in helpers too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use linerate_archive::{Entry, Judgement, SeriesKey, SqliteArchive, Unit};

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("linerate-archive-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
fn eight_writers_at_once_lose_no_row() {
    let dir = Dir::new("writers");
    let path = dir.0.join("archive.db");
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut archive = SqliteArchive::open(&path).expect("open");
                for i in 0..50 {
                    let e = entry(&format!("dtn{w}"), 9e9, f64::from(i));
                    archive
                        .record(&e, format!("{{\"n\":{i}}}").as_bytes())
                        .expect("record");
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("a writer");
    }
    let archive = SqliteArchive::open(&path).unwrap();
    assert_eq!(archive.count().unwrap(), 400);
    let series = archive.series_since(0.0).unwrap();
    assert_eq!(series.len(), 8);
    assert!(series.iter().all(|s| s.runs == 50), "{series:?}");
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
        let found = linerate_archive::record(&mut archive, entry("dtn1", value, f64::from(i)), doc)
            .unwrap();
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
