//! Starting a peer's server and running its client as child processes:
//! waiting until the server listens (from the kernel's socket table, which
//! works inside a namespace too), bounding the client's time, and reading
//! both ends' CPU time from /proc. Only processes started here are signalled.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};

use crate::tools::ToolError;

/// A server child, terminated when dropped.
pub struct Server {
    child: Child,
    argv: Vec<String>,
    /// The end of its stderr, once the pipe closes.
    said: std::sync::mpsc::Receiver<String>,
}

/// How much of a server's stderr an error quotes.
const SAID_TAIL: usize = 512;

/// Drains a server's stderr on a thread, so a chatty server never blocks
/// on a full pipe, and sends its last `SAID_TAIL` bytes when it closes.
fn drain_stderr(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(mut pipe) = child.stderr.take() {
        std::thread::spawn(move || {
            let (mut tail, mut buf) = (Vec::new(), [0u8; 4096]);
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                tail.extend_from_slice(&buf[..n]);
                let over = tail.len().saturating_sub(SAID_TAIL);
                tail.drain(..over);
            }
            let _ = tx.send(String::from_utf8_lossy(&tail).trim().to_string());
        });
    }
    rx
}

fn spawn(argv: &[String], out: Stdio, err: Stdio) -> Result<Child, ToolError> {
    let (prog, args) = argv.split_first().ok_or(ToolError::EmptyCommand)?;
    Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| ToolError::Io {
            doing: "starting",
            program: Some(prog.to_string()),
            error: e,
        })
}

impl Server {
    /// Starts `argv` and waits until its process listens on TCP `port`.
    pub fn start(argv: Vec<String>, port: u16, within: Duration) -> Result<Server, ToolError> {
        Server::start_on(argv, port, false, within)
    }

    /// Starts `argv` and waits until its process listens on `port`: a TCP
    /// listener, or with `udp` a bound datagram socket.
    pub fn start_on(
        argv: Vec<String>,
        port: u16,
        udp: bool,
        within: Duration,
    ) -> Result<Server, ToolError> {
        let mut child = spawn(&argv, Stdio::null(), Stdio::piped())?;
        let said = drain_stderr(&mut child);
        let mut server = Server { child, argv, said };
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                // A child of the server may hold the pipe open after it
                // exits: wait for the rest no longer than for a listener.
                let left = deadline.saturating_duration_since(Instant::now());
                return Err(ToolError::ExitedAtOnce {
                    command: server.argv.join(" "),
                    status,
                    said: server.said.recv_timeout(left).unwrap_or_default(),
                });
            }
            let ready = if udp {
                bound_udp(server.child.id(), port)
            } else {
                listening(server.child.id(), port)
            };
            if ready {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(ToolError::NotListening {
                    command: server.argv.join(" "),
                    port,
                    within,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// CPU seconds the server and its reaped children used so far.
    pub fn cpu_seconds(&self) -> f64 {
        cpu_seconds(self.child.id()).unwrap_or(0.0)
    }

    /// Ends the server (SIGTERM, then SIGKILL after three seconds) and
    /// waits for it, so its port is free again.
    pub fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            if let Some(pid) = Pid::from_raw(self.child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
            let deadline = Instant::now() + Duration::from_secs(3);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether process `pid` has a TCP socket listening on `port`, from its
/// namespace's /proc/PID/net/tcp{,6}.
pub fn listening(pid: u32, port: u16) -> bool {
    let want = format!(":{port:04X}");
    ["tcp", "tcp6"].iter().any(|f| {
        std::fs::read_to_string(format!("/proc/{pid}/net/{f}")).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.len() > 3 && c[1].ends_with(&want) && c[3] == "0A"
            })
        })
    })
}

/// Whether process `pid` has a UDP socket bound to `port`, from
/// /proc/PID/net/udp{,6}.
pub fn bound_udp(pid: u32, port: u16) -> bool {
    let want = format!(":{port:04X}");
    ["udp", "udp6"].iter().any(|f| {
        std::fs::read_to_string(format!("/proc/{pid}/net/{f}")).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.len() > 3 && c[1].ends_with(&want)
            })
        })
    })
}

/// utime + stime + cutime + cstime of a process (also of a zombie), in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command, which may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f
        .get(11..15)?
        .iter()
        .filter_map(|v| v.parse::<f64>().ok())
        .sum();
    let hz = rustix::param::clock_ticks_per_second() as f64;
    Some(ticks / hz.max(1.0))
}

/// A client run to its end.
pub struct ClientRun {
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
    /// It exited with status 0.
    pub success: bool,
    /// CPU seconds it and its children used.
    pub cpu_seconds: f64,
    /// Wall-clock seconds from its start to its end.
    pub wall_seconds: f64,
}

/// Runs a client to completion, killing it after `timeout`.
pub fn run_client(argv: &[String], timeout: Duration) -> Result<ClientRun, ToolError> {
    let started = Instant::now();
    let mut child = spawn(argv, Stdio::piped(), Stdio::piped())?;
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let pid = Pid::from_raw(child.id() as i32).ok_or_else(|| ToolError::NoPid(argv.join(" ")))?;
    let mut timed_out = false;
    // Wait without reaping, so the exited child's CPU times can still be read.
    loop {
        match waitid(
            WaitId::Pid(pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG,
        ) {
            Ok(Some(_)) => break,
            Ok(None) => {}
            Err(e) => {
                return Err(ToolError::Io {
                    doing: "waiting for a client",
                    program: None,
                    error: e.into(),
                });
            }
        }
        if started.elapsed() > timeout {
            timed_out = true;
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let cpu = cpu_seconds(child.id()).unwrap_or(0.0);
    let status = child.wait().map_err(|e| ToolError::Io {
        doing: "reaping a client",
        program: None,
        error: e,
    })?;
    let wall = started.elapsed().as_secs_f64();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if timed_out {
        return Err(ToolError::NotFinished {
            command: argv.join(" "),
            within: timeout,
        });
    }
    Ok(ClientRun {
        stdout,
        stderr,
        success: status.success(),
        cpu_seconds: cpu,
        wall_seconds: wall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_cpu_and_no_listener() {
        assert!(cpu_seconds(std::process::id()).is_some());
        assert!(!listening(std::process::id(), 1));
        assert!(cpu_seconds(u32::MAX).is_none());
    }

    #[test]
    fn clients_are_bounded_in_time() {
        let argv: Vec<String> = ["sleep", "5"].map(String::from).to_vec();
        let t = Instant::now();
        assert!(run_client(&argv, Duration::from_millis(200)).is_err());
        assert!(t.elapsed() < Duration::from_secs(2));
        let ok = run_client(&["echo".to_string(), "hi".into()], Duration::from_secs(5)).unwrap();
        assert!(ok.success);
        assert_eq!(ok.stdout.trim(), "hi");
    }

    /// The error of a `sh -c script` server that never listens on port 1.
    fn sh_server_error(script: &str) -> ToolError {
        let argv: Vec<String> = ["sh", "-c", script].map(String::from).to_vec();
        match Server::start(argv, 1, Duration::from_secs(5)) {
            Ok(_) => panic!("`{script}` listened on port 1"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_server_that_exits_before_it_listens_says_why() {
        let err =
            sh_server_error("echo starting >&2; echo 'bind: Address already in use' >&2; exit 1");
        assert!(matches!(err, ToolError::ExitedAtOnce { .. }), "{err:?}");
        let said = err.to_string();
        assert!(
            said.ends_with("(exit status: 1): starting\nbind: Address already in use"),
            "{said}"
        );
    }

    #[test]
    fn a_chatty_server_is_not_held_by_its_stderr() {
        // 1 MiB on stderr, more than a pipe holds: a pipe nobody read would
        // hold the writer, and the server would not get to its exit.
        let err = sh_server_error("head -c 1048576 /dev/zero | tr '\\0' x >&2; exit 3");
        let said = err.to_string();
        assert!(said.contains("(exit status: 3): xxx"), "{said}");
        assert!(said.len() < 1024, "the tail only: {} bytes", said.len());
    }
}
