//! Moving a receiver or a server into the background once its port is
//! bound (and a one-shot receiver's URL is out), and its log into a file.

use std::fs::OpenOptions;
use std::path::Path;

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
