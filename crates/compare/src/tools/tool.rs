//! Which tools linerate knows, how each is started, and what provides it.

use serde::Serialize;

/// A memory-to-memory tool `compare` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// `linerate bench`.
    Linerate,
    /// `iperf` 2.
    Iperf2,
    /// `iperf3`.
    Iperf3,
    /// `nuttcp`.
    Nuttcp,
}

/// A program linerate runs beside itself: its name, the binary to look
/// for on PATH and the Debian package that provides it, in one place for
/// every mode of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    /// The name results and flags give it.
    pub name: &'static str,
    /// The program to look for on PATH.
    pub binary: &'static str,
    /// The Debian package that provides it.
    pub package: &'static str,
}

impl Program {
    /// linerate itself.
    pub const LINERATE: Program = Program {
        name: "linerate",
        binary: "linerate",
        package: "linerate (build from source)",
    };
    /// iperf 2 (Debian's `iperf`).
    pub const IPERF2: Program = Program {
        name: "iperf2",
        binary: "iperf",
        package: "iperf",
    };
    /// iperf 3.
    pub const IPERF3: Program = Program {
        name: "iperf3",
        binary: "iperf3",
        package: "iperf3",
    };
    /// nuttcp.
    pub const NUTTCP: Program = Program {
        name: "nuttcp",
        binary: "nuttcp",
        package: "nuttcp",
    };
    /// sockperf.
    pub const SOCKPERF: Program = Program {
        name: "sockperf",
        binary: "sockperf",
        package: "sockperf",
    };
    /// qperf.
    pub const QPERF: Program = Program {
        name: "qperf",
        binary: "qperf",
        package: "qperf",
    };
    /// rsync, run as a daemon for files mode.
    pub const RSYNC: Program = Program {
        name: "rsync",
        binary: "rsync",
        package: "rsync",
    };
}

/// A tool `compare --mode files` runs: each sends a data set to a fresh
/// directory through its own server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileTool {
    /// `linerate send` to `linerate serve --root`.
    Linerate,
    /// `rsync -a` to an rsync daemon.
    Rsync,
}

impl ComparedTool for FileTool {
    const ALL: &'static [FileTool] = &[FileTool::Linerate, FileTool::Rsync];

    fn program(self) -> Program {
        match self {
            FileTool::Linerate => Program::LINERATE,
            FileTool::Rsync => Program::RSYNC,
        }
    }
}

/// Ports a tool's server listens on; nuttcp also needs a data port.
#[derive(Debug, Clone, Copy)]
pub struct Ports {
    /// The port clients connect to.
    pub control: u16,
    /// nuttcp's data port.
    pub data: u16,
}

impl Tool {
    /// The server command. `exe` is the program to run (for linerate, the
    /// running binary).
    pub fn server_argv(self, exe: &str, p: Ports) -> Vec<String> {
        let port = p.control.to_string();
        let v: Vec<&str> = match self {
            Tool::Linerate => vec![exe, "serve", "--port", &port],
            Tool::Iperf2 => vec![exe, "-s", "-p", &port],
            Tool::Iperf3 => vec![exe, "-s", "-p", &port],
            // --nofork keeps nuttcp in the foreground, so its PID is the server's.
            Tool::Nuttcp => {
                return vec![
                    exe.into(),
                    "-S".into(),
                    "--nofork".into(),
                    "-P".into(),
                    port,
                    "-p".into(),
                    p.data.to_string(),
                ];
            }
        };
        v.into_iter().map(String::from).collect()
    }

    /// The client command, with each tool's documented best flags for bulk
    /// throughput: iperf2 `-l 128K` (its default), nuttcp `-l 1m` (its 64K
    /// default is slower), iperf3 defaults. Intervals of 1 s.
    pub fn client_argv(
        self,
        exe: &str,
        host: &str,
        p: Ports,
        streams: u32,
        seconds: u32,
    ) -> Vec<String> {
        let (port, n, t) = (
            p.control.to_string(),
            streams.to_string(),
            seconds.to_string(),
        );
        let v: Vec<String> = match self {
            // With the kernel's scheduling, as the peers run: linerate's
            // defaults pin both ends of a stream to one core and poll on
            // loopback, which no peer does unasked.
            Tool::Linerate => [
                exe,
                "bench",
                &join_host(host, p.control),
                "-P",
                &n,
                "-t",
                &t,
                "-i",
                "1",
                "--affinity",
                "off",
                "--rx-poll",
                "off",
                "--json",
                "-",
            ]
            .map(String::from)
            .to_vec(),
            Tool::Iperf2 => [
                exe, "-c", host, "-p", &port, "-P", &n, "-t", &t, "-i", "1", "-l", "128K", "-y",
                "C",
            ]
            .map(String::from)
            .to_vec(),
            Tool::Iperf3 => [
                exe, "-c", host, "-p", &port, "-P", &n, "-t", &t, "-i", "1", "-J",
            ]
            .map(String::from)
            .to_vec(),
            Tool::Nuttcp => [
                exe,
                "-P",
                &port,
                "-p",
                &p.data.to_string(),
                "-T",
                &t,
                "-i",
                "1",
                "-l",
                "1m",
                "-N",
                &n,
                "-fparse",
                host,
            ]
            .map(String::from)
            .to_vec(),
        };
        v
    }
}

/// What each tool of a comparison mode says about itself.
pub trait ComparedTool: Copy + 'static {
    /// Every tool of the mode, linerate first.
    const ALL: &'static [Self];
    /// The program this tool is.
    fn program(self) -> Program;

    /// The name results and flags give it.
    fn name(self) -> &'static str {
        self.program().name
    }

    /// The program to look for on PATH.
    fn binary(self) -> &'static str {
        self.program().binary
    }

    /// The Debian package that provides it.
    fn package(self) -> &'static str {
        self.program().package
    }

    /// The tool of this mode called `name`.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.name() == name)
    }
}

impl ComparedTool for Tool {
    const ALL: &'static [Tool] = &[Tool::Linerate, Tool::Iperf2, Tool::Iperf3, Tool::Nuttcp];

    fn program(self) -> Program {
        match self {
            Tool::Linerate => Program::LINERATE,
            Tool::Iperf2 => Program::IPERF2,
            Tool::Iperf3 => Program::IPERF3,
            Tool::Nuttcp => Program::NUTTCP,
        }
    }
}

/// `host:port`, with an IPv6 address in brackets.
pub(crate) fn join_host(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Tools engineers ask for that `compare` does not run in memory mode, and why.
pub fn not_runnable(name: &str) -> Option<&'static str> {
    Some(match name {
        "wdt" => "WDT is not packaged in Debian; build it from github.com/facebook/wdt",
        "scp" => "a file tool that needs an sshd and keys; not automated by compare yet",
        "rsync" => "a file tool; compare runs it in --mode files",
        "lftp" => {
            "a file tool that needs an FTP server (proftpd-basic); not automated by compare yet"
        }
        "gridftp" => {
            "a file tool that needs a GridFTP server and credentials; not automated by compare yet"
        }
        "bbcp" => "bbcp is not packaged in Debian",
        _ => return None,
    })
}

/// The first executable called `name` on PATH.
pub fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
