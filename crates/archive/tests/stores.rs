//! Both stores under many writers, as a mesh's agents or a site's hosts
//! write: 8 processes (this test binary run again, as `writer_process`)
//! each record 50 results at once the way a run records its own at its
//! end (`record_or_keep`: the spool delivered first, the result kept there
//! when the archive cannot take it). Into an SQLite file, and into a
//! PostgreSQL server of the test's own, once killed and restarted while
//! the writers write.
// A failed expectation is the test's failure, in helpers too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod pg_cluster;
mod scratch;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use linerate_archive::spool::Spool;
use linerate_archive::{Entry, Location, Outcome, Store};
use linerate_result::{CpuPerGb, HostFacts, Hosts, Limit, ResultDoc, Summary, Verdict};

const WRITERS: usize = 8;
const RESULTS: usize = 50;
/// A writer waits for the word to go on after this many results, where
/// the test asks it to (the server's restart).
const HALF: usize = RESULTS / 2;

use scratch::Dir;

/// Writer `w`'s result `i`: a bench from `dtnW` to `dtn0`, its own
/// series, one second apart.
fn document(w: usize, i: usize) -> Vec<u8> {
    let facts = |name: &str| HostFacts {
        hostname: name.to_string(),
        ..HostFacts::default()
    };
    let verdict = Verdict {
        limit: Limit::PathFull,
        side: None,
        sentence: "the path carried all it could".into(),
        evidence: Default::default(),
    };
    let summary = Summary::new(
        (9e9 + i as f64 * 1e6, 1 << 30, 1.0),
        CpuPerGb::default(),
        0,
        verdict,
    );
    let at = std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000 + i as u64);
    let doc = ResultDoc::new(
        "bench",
        &["linerate".into(), "bench".into(), "dtn0".into()],
        at,
        Hosts {
            client: facts(&format!("dtn{}", w + 1)),
            server: Some(facts("dtn0")),
        },
        serde_json::json!({"streams": 1, "direction": "forward"}),
        summary,
    );
    serde_json::to_vec(&doc).unwrap()
}

/// The writer's side: runs only as a child of [`eight_writers`].
#[test]
fn writer_process() {
    let Ok(w) = std::env::var("LINERATE_TEST_WRITER") else {
        return;
    };
    let w: usize = w.parse().unwrap();
    let location = Location::parse(&std::env::var("LINERATE_TEST_ARCHIVE").unwrap()).unwrap();
    let spool = Spool::new(std::env::var("LINERATE_TEST_SPOOL").unwrap());
    let pause = std::env::var("LINERATE_TEST_PAUSE").ok().map(PathBuf::from);
    let (mut kept, mut lost) = (0, 0);
    for i in 0..RESULTS {
        if let (Some(dir), HALF) = (&pause, i) {
            std::fs::write(dir.join(format!("half-{w}")), b"").unwrap();
            let go = dir.join("go");
            let until = Instant::now() + Duration::from_secs(120);
            while !go.exists() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let document = document(w, i);
        let doc: ResultDoc = serde_json::from_slice(&document).unwrap();
        let keeping = linerate_archive::record_or_keep(
            &location,
            Some(&spool),
            Entry::all_of(&doc),
            &document,
        );
        if let Some(e) = keeping.spool_error {
            println!("writer {w}: spool error: {e}");
            lost += 1;
        }
        match keeping.outcome {
            Outcome::Recorded(_) => {}
            Outcome::Kept { error, .. } => {
                println!("writer {w}: kept in the spool: {error}");
                kept += 1;
            }
            Outcome::Lost { error, .. } => {
                println!("writer {w}: lost: {error}");
                lost += 1;
            }
        }
        if pause.is_some() && i < HALF {
            // Paced, so that the server's end finds writers writing.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    println!("writer {w}: tally: kept {kept} lost {lost}");
}

/// Starts the 8 writers into `archive`, each with its own spool under
/// `dir`; with `pause`, each waits at [`HALF`] for `pause/go`.
fn eight_writers(archive: &str, dir: &Path, pause: Option<&Path>) -> Vec<Child> {
    (0..WRITERS)
        .map(|w| {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.args([
                "writer_process",
                "--exact",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("LINERATE_TEST_WRITER", w.to_string())
            .env("LINERATE_TEST_ARCHIVE", archive)
            .env("LINERATE_TEST_SPOOL", dir.join(format!("spool-{w}")))
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
            if let Some(p) = pause {
                c.env("LINERATE_TEST_PAUSE", p);
            }
            c.spawn().unwrap()
        })
        .collect()
}

/// Each writer's (kept, lost, what it said) from its lines; every writer
/// ended well.
fn finish(writers: Vec<Child>) -> Vec<(usize, usize, String)> {
    writers
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            assert!(out.status.success(), "a writer failed: {text}");
            let last = text
                .lines()
                .find_map(|l| l.split_once(": tally: kept ").map(|(_, r)| r.to_string()))
                .unwrap_or_else(|| panic!("a writer's tally: {text}"));
            let mut words = last.split_whitespace();
            let kept = words.next().unwrap().parse().unwrap();
            let lost = words.nth(1).unwrap().parse().unwrap();
            assert_eq!(lost, 0, "a writer lost results: {text}");
            (kept, lost, text)
        })
        .collect()
}

/// 400 rows, 8 series of 50, each document back whole.
fn all_recorded(archive: &mut dyn Store) {
    assert_eq!(archive.count().unwrap(), (WRITERS * RESULTS) as u64);
    let series = archive.series_since(0.0).unwrap();
    assert_eq!(series.len(), WRITERS, "{series:?}");
    assert!(series.iter().all(|s| s.runs == RESULTS), "{series:?}");
    let mut n = 0;
    archive
        .each_document(Some(&series[0].id), &mut |d| {
            serde_json::from_slice::<ResultDoc>(d).unwrap();
            n += 1;
            Ok(())
        })
        .unwrap();
    assert_eq!(n, RESULTS);
    // An acknowledgement is kept, and a later one takes its place.
    let id = &series[0].id;
    assert_eq!(archive.acknowledged(id).unwrap(), None);
    archive.acknowledge(id, 1_800_000_010.0).unwrap();
    archive.acknowledge(id, 1_800_000_020.0).unwrap();
    assert_eq!(archive.acknowledged(id).unwrap(), Some(1_800_000_020.0));
    let s = &series[0];
    let (history, _) = linerate_archive::judge_series(archive, &s.id, s.unit).unwrap();
    assert_eq!(
        history.len(),
        RESULTS - 20,
        "the runs from the acknowledged level on"
    );
    // A scheduled run that did not happen is kept with why, and read
    // back from when it was due.
    let missed = |test: &str, due_at: f64| linerate_archive::MissedRun {
        schedule: "dtns".into(),
        test: test.into(),
        due_at,
        why: "its server's path was held by another schedule's test until its limit".into(),
    };
    archive
        .record_missed(&missed("b-dtn2", 1_800_000_000.0))
        .unwrap();
    archive
        .record_missed(&missed("b-dtn3", 1_800_000_300.0))
        .unwrap();
    assert_eq!(
        archive.missed_since(1_800_000_100.0).unwrap(),
        vec![missed("b-dtn3", 1_800_000_300.0)]
    );
    assert_eq!(archive.missed_since(0.0).unwrap().len(), 2);
}

#[test]
fn eight_processes_at_once_into_sqlite_lose_no_row() {
    let dir = Dir::new("sqlite");
    let path = dir.0.join("archive.db");
    let writers = eight_writers(path.to_str().unwrap(), &dir.0, None);
    let tallies = finish(writers);
    assert!(tallies.iter().all(|t| t.0 == 0), "spooled: {tallies:?}");
    let mut archive = linerate_archive::SqliteArchive::open(&path).unwrap();
    all_recorded(&mut archive);
}

#[test]
fn eight_processes_at_once_into_postgresql_lose_no_row_and_a_restart_loses_none() {
    let Some(pg) = pg_cluster::PgCluster::start("stores") else {
        return;
    };
    let url = pg.url();
    let location = Location::parse(&url).unwrap();
    let connect = || match linerate_archive::open(&location).unwrap() {
        Some(a) => a,
        None => unreachable!("a PostgreSQL location opens"),
    };
    // At once, the server up throughout.
    let dir = Dir::new("pg");
    let tallies = finish(eight_writers(&url, &dir.0, None));
    assert!(tallies.iter().all(|t| t.0 == 0), "spooled: {tallies:?}");
    all_recorded(connect().as_mut());
    // Again into a fresh database, the server killed once the writers
    // are under way and started again when each is half done.
    pg.sql("CREATE DATABASE restart");
    let fresh = pg.url_of("restart");
    let dir = Dir::new("pg-restart");
    let pause = dir.0.join("pause");
    std::fs::create_dir_all(&pause).unwrap();
    let writers = eight_writers(&fresh, &dir.0, Some(&pause));
    let fresh_location = Location::parse(&fresh).unwrap();
    let count = || {
        linerate_archive::open(&fresh_location)
            .ok()
            .flatten()
            .and_then(|mut a| a.count().ok())
    };
    let until = Instant::now() + Duration::from_secs(60);
    while count().unwrap_or(0) < (WRITERS * HALF / 3) as u64 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    pg.kill();
    let halfway = |w: usize| pause.join(format!("half-{w}")).exists();
    let until = Instant::now() + Duration::from_secs(60);
    while !(0..WRITERS).all(halfway) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    pg.up();
    std::fs::write(pause.join("go"), b"").unwrap();
    let tallies = finish(writers);
    let kept: usize = tallies.iter().map(|t| t.0).sum();
    let counts: Vec<usize> = tallies.iter().map(|t| t.0).collect();
    eprintln!("results kept in the spools while the server was down: {counts:?}");
    assert!(
        kept > 0,
        "the server's end found no writer writing: {tallies:?}"
    );
    all_recorded(
        linerate_archive::open(&fresh_location)
            .unwrap()
            .unwrap()
            .as_mut(),
    );
    for w in 0..WRITERS {
        let left = Spool::new(dir.0.join(format!("spool-{w}"))).waiting();
        assert!(left.is_empty(), "writer {w}'s spool still holds {left:?}");
    }
}
