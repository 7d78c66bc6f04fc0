//! Moving a receiver or a server into the background once its port is
//! bound (and a one-shot receiver's URL is out), and its log into a file.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

/// Forks; the parent exits 0 at once and the child carries on in a new
/// session with stdin from /dev/null and stdout and stderr to `log`, so that
/// nothing holds the caller's pipes (and an ssh session) open.
///
/// Call only while the process has a single thread.
pub fn into_background(log: &Path) -> std::io::Result<()> {
    let log = open_log(log)?;
    let null = OpenOptions::new().read(true).open("/dev/null")?;
    // SAFETY: the caller guarantees a single thread, so the child cannot
    // inherit a lock held by a thread that does not exist in it.
    match unsafe { libc::fork() } {
        -1 => return Err(std::io::Error::last_os_error()),
        0 => {}
        _ => std::process::exit(0),
    }
    rustix::process::setsid()?;
    rustix::stdio::dup2_stdin(&null)?;
    rustix::stdio::dup2_stdout(&log)?;
    rustix::stdio::dup2_stderr(&log)?;
    Ok(())
}

impl DaemonArgs {
    /// Goes where the flags say, once what could fail where the user looks
    /// has been done: into the background (`-D`, saying so as `started`
    /// with where its log goes), or its log into `--logfile`; then writes
    /// `--pidfile`, which goes when the returned value is dropped.
    pub fn start(&self, started: &str) -> anyhow::Result<Option<PidFile>> {
        if self.daemon {
            let log = self
                .logfile
                .clone()
                .unwrap_or_else(|| PathBuf::from("/dev/null"));
            // A reader gone already (`| head -1` done) must not stop the start.
            let _ = writeln!(
                std::io::stdout(),
                "{started}: in the background, logging to {}",
                log.display()
            );
            into_background(&log).context("cannot move to the background")?;
        } else if let Some(file) = &self.logfile {
            log_to(file).with_context(|| format!("--logfile {}", file.display()))?;
        }
        self.pidfile.as_deref().map(PidFile::create).transpose()
    }
}

/// Sends standard error (the log) to `log`, appending.
pub fn log_to(log: &Path) -> std::io::Result<()> {
    rustix::stdio::dup2_stderr(&open_log(log)?)?;
    Ok(())
}

fn open_log(log: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // The log names peers and sessions: for its owner's eyes only.
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(log)
}

/// The pid file of a running daemon (a server, a schedule); removed when
/// it stops.
pub struct PidFile(PathBuf);

impl PidFile {
    /// Writes this process's id to `path`, unless a process whose id it
    /// holds still runs.
    pub fn create(path: &Path) -> anyhow::Result<PidFile> {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            && Path::new(&format!("/proc/{pid}")).exists()
        {
            anyhow::bail!(
                "--pidfile {}: linerate already runs as pid {pid}",
                path.display()
            );
        }
        std::fs::write(path, format!("{}\n", std::process::id()))
            .with_context(|| format!("--pidfile {}: cannot write", path.display()))?;
        Ok(PidFile(path.to_path_buf()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// How a daemon (a server, a schedule) runs: in the foreground, or in
/// the background with its process id and its log in files.
#[derive(Args, Clone, Debug)]
pub struct DaemonArgs {
    /// Go into the background once started (the command returns at once).
    #[arg(long, short = 'D')]
    pub daemon: bool,
    /// Write the process id to FILE, and remove it when the process stops.
    #[arg(long, value_name = "FILE")]
    pub pidfile: Option<PathBuf>,
    /// Append the log to FILE instead of standard error.
    #[arg(long, value_name = "FILE")]
    pub logfile: Option<PathBuf>,
}
