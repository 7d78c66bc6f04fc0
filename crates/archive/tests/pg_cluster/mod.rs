//! A PostgreSQL server of the test's own: Debian's postgresql, a cluster in
//! a temporary folder, run by the `postgres` user when the test runs as
//! root (the server refuses root), listening on 127.0.0.1 at a free port
//! with trust for local connections. Stopped and removed however the test
//! ends. Shared by the archive's tests and the end-to-end tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A running cluster.
pub struct PgCluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
}

/// Debian's PostgreSQL programs (`/usr/lib/postgresql/VERSION/bin`), the
/// newest there.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `program args` as the cluster's owner.
fn as_owner(program: &Path, args: &[&str]) -> Output {
    let mut c = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    c.args(args).output().expect("run a PostgreSQL program")
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    l.local_addr().expect("its address").port()
}

impl PgCluster {
    /// A new cluster, started; `None` (said on stderr) where PostgreSQL is
    /// not installed, which CI never accepts.
    pub fn start(tag: &str) -> Option<PgCluster> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var("CI").is_err(),
                "PostgreSQL is not installed: .ci/run installs postgresql"
            );
            eprintln!("skipped: PostgreSQL is not installed (apt-get install postgresql)");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("linerate-pg-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the cluster's folder");
        if is_root() {
            let st = Command::new("chown")
                .args(["postgres:", dir.to_str().expect("UTF-8 path")])
                .status()
                .expect("chown");
            assert!(st.success(), "chown the cluster's folder to postgres");
        }
        let cluster = PgCluster {
            dir,
            bin,
            port: free_port(),
        };
        let data = cluster.data();
        let out = as_owner(
            &cluster.bin.join("initdb"),
            &[
                "-D",
                &data,
                "-A",
                "trust",
                "-U",
                "linerate",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        );
        assert!(out.status.success(), "initdb: {}", text(&out));
        cluster.up();
        Some(cluster)
    }

    fn data(&self) -> String {
        self.dir
            .join("data")
            .to_str()
            .expect("UTF-8 path")
            .to_string()
    }

    /// Starts the server and waits until it takes connections.
    pub fn up(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        let out = as_owner(
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                &self.data(),
                "-o",
                &options,
                "-l",
                log.to_str().expect("UTF-8 path"),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        assert!(
            out.status.success(),
            "pg_ctl start: {}\n{}",
            text(&out),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Ends the server at once, as a crash would: an immediate shutdown
    /// (no checkpoint; the next start recovers), connections cut.
    pub fn kill(&self) {
        let out = as_owner(
            &self.bin.join("pg_ctl"),
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
        assert!(out.status.success(), "pg_ctl stop: {}", text(&out));
    }

    /// The archive's URL: the cluster's first database.
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The URL of database `db`.
    pub fn url_of(&self, db: &str) -> String {
        format!("postgres://linerate@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs one SQL statement as the cluster's superuser.
    pub fn sql(&self, statement: &str) {
        let out = Command::new(self.bin.join("psql"))
            .args([self.url().as_str(), "-qc", statement])
            .output()
            .expect("psql");
        assert!(out.status.success(), "psql {statement:?}: {}", text(&out));
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = as_owner(
            &self.bin.join("pg_ctl"),
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
