//! Where a many-host run's agents come from: ranks of srun or mpirun
//! (every rank runs the same command; rank 0 coordinates), or agents this
//! process starts itself over ssh, in a lab's host namespaces, or as local
//! processes. Agents started here are children: waited for after the run,
//! and ended by PID if they outlive it.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use linerate_fleet::{Launch, Launcher};

use crate::usage::UsageError;

/// The environment variable that carries a run's token to its ranks.
pub const RUN_TOKEN: &str = "LINERATE_RUN_TOKEN";

/// The run's token from the environment (srun passes the job's
/// environment to every rank; mpirun with `-x LINERATE_RUN_TOKEN`).
pub fn run_token() -> Option<String> {
    std::env::var(RUN_TOKEN).ok().filter(|t| !t.is_empty())
}

/// A fresh token for a run whose agents this process starts.
pub fn new_token() -> anyhow::Result<String> {
    let token = linerate_engine::transfer::Token::random()
        .map_err(|e| anyhow::anyhow!("no randomness for a run token: {e}"))?;
    Ok(token.0)
}

/// The coordinator's port unless `--coordinator` names one.
pub const COORDINATOR_PORT: u16 = 5301;

#[derive(Args, Clone, Debug)]
pub struct LaunchArgs {
    /// Start one agent on each host over ssh, in rank order (h1,h2,...), with the
    /// user's ssh config and keys.
    #[arg(long, value_delimiter = ',', value_name = "HOSTS", conflicts_with_all = ["lab", "local"])]
    pub hosts: Vec<String>,
    /// The ssh command, with any options, that reaches each of --hosts.
    #[arg(long, value_name = "CMD", default_value = "ssh")]
    pub ssh: String,
    /// linerate's path on the --hosts, when it is not on their PATH.
    #[arg(long, value_name = "PATH", default_value = "linerate")]
    pub remote_path: String,
    /// Run one agent in each host namespace of this lab (h1 is rank 0).
    #[arg(long, value_name = "NAME", conflicts_with = "local")]
    pub lab: Option<String>,
    /// Run N agents as processes on this host's loopback (a scale test).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=4096))]
    pub local: Option<u32>,
    /// Where agents reach the coordinator: HOST or HOST:PORT. Under mpirun, rank 0's
    /// host (required); under srun, default the job's first host; with --hosts, default
    /// this host's address towards the first of them.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub coordinator: Option<String>,
}

/// How this process takes part.
pub enum Role {
    /// A rank of srun or mpirun other than 0: join the coordinator.
    Agent {
        launch: Launch,
        coordinator: SocketAddr,
    },
    /// Rank 0 of srun or mpirun: coordinate, and be an agent too.
    RankZero {
        launch: Launch,
        coordinator: SocketAddr,
    },
    /// Start the agents here and coordinate them.
    Starter(Starter),
}

/// Agents this process starts.
pub enum Starter {
    Ssh { hosts: Vec<String> },
    Lab { lab: Box<linerate_lab::Lab> },
    Local { agents: u32 },
}

impl Starter {
    pub fn launcher(&self) -> &'static str {
        match self {
            Starter::Ssh { .. } => "ssh",
            Starter::Lab { .. } => "lab",
            Starter::Local { .. } => "local",
        }
    }

    pub fn size(&self) -> u32 {
        match self {
            Starter::Ssh { hosts } => hosts.len() as u32,
            Starter::Lab { lab } => lab.hosts.len() as u32,
            Starter::Local { agents } => *agents,
        }
    }

    /// The network namespace the coordinator must run in to reach the agents.
    pub fn netns(&self) -> Option<&str> {
        match self {
            Starter::Lab { lab } => Some(&lab.hosts[0].netns),
            _ => None,
        }
    }

    /// The address the coordinator listens on, as the agents reach it:
    /// any free port unless `--coordinator` names one (agents started here
    /// are told the port).
    pub fn listen(&self, a: &LaunchArgs) -> anyhow::Result<SocketAddr> {
        if let Some(c) = &a.coordinator {
            return resolve(c);
        }
        let port = 0;
        Ok(match self {
            Starter::Ssh { hosts } => SocketAddr::new(towards(&hosts[0])?, port),
            Starter::Lab { lab } => SocketAddr::new(IpAddr::V4(lab.hosts[0].v4), port),
            Starter::Local { .. } => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
        })
    }
}

/// What this process is in the run the flags and environment describe.
pub fn role(a: &LaunchArgs) -> anyhow::Result<Role> {
    let launch = linerate_fleet::launch::detect(&|v| std::env::var(v).ok(), None)?;
    let ranked = matches!(
        launch.launcher,
        Launcher::Slurm | Launcher::OpenMpi | Launcher::Pmi
    );
    if ranked && launch.size > 1 {
        let coordinator = match (&a.coordinator, launch.hosts.first()) {
            (Some(c), _) => resolve(c)?,
            (None, Some(first)) => resolve(first)?,
            (None, None) => {
                return Err(UsageError(format!(
                    "--coordinator: under {} give rank 0's host, where the agents meet",
                    launch.launcher.name()
                ))
                .into());
            }
        };
        return Ok(if launch.is_coordinator() {
            Role::RankZero {
                launch,
                coordinator,
            }
        } else {
            Role::Agent {
                launch,
                coordinator,
            }
        });
    }
    let starter = if !a.hosts.is_empty() {
        if a.hosts.len() < 2 {
            return Err(UsageError("--hosts: a run needs at least two hosts".into()).into());
        }
        Starter::Ssh {
            hosts: a.hosts.clone(),
        }
    } else if let Some(name) = &a.lab {
        Starter::Lab {
            lab: Box::new(linerate_lab::Lab::load(name).with_context(|| format!("--lab {name}"))?),
        }
    } else if let Some(agents) = a.local {
        Starter::Local { agents }
    } else {
        return Err(UsageError(
            "no agents: give --hosts (ssh), --lab NAME or --local N, or run as the ranks of srun or mpirun".into(),
        )
        .into());
    };
    Ok(Role::Starter(starter))
}

/// HOST or HOST:PORT (the coordinator's port by default) to an address.
pub fn resolve(host: &str) -> anyhow::Result<SocketAddr> {
    crate::bench_cmd::resolve_on(host, COORDINATOR_PORT, false, false)
        .context("the coordinator's address")
}

/// This host's address on the route to `host` (no packet is sent).
fn towards(host: &str) -> anyhow::Result<IpAddr> {
    let target = (host, 22)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .with_context(|| {
            format!(
                "cannot resolve {host} to find this host's address towards it; give --coordinator"
            )
        })?;
    let any = match target {
        SocketAddr::V4(_) => "0.0.0.0:0",
        SocketAddr::V6(_) => "[::]:0",
    };
    let probe = UdpSocket::bind(any).context("a socket to find the route")?;
    probe
        .connect(target)
        .with_context(|| format!("no route to {host}"))?;
    Ok(probe.local_addr()?.ip())
}

/// The `linerate agent` arguments of rank `rank`.
pub fn agent_args(
    coordinator: SocketAddr,
    rank: u32,
    size: u32,
    name: &str,
    timeout: Duration,
) -> Vec<String> {
    vec![
        "agent".into(),
        "--coordinator".into(),
        coordinator.to_string(),
        "--rank".into(),
        rank.to_string(),
        "--size".into(),
        size.to_string(),
        "--name".into(),
        name.into(),
        "--timeout".into(),
        format!("{}ms", timeout.as_millis()),
    ]
}

/// Local agent `rank`'s own loopback address (127.77.0.1, 127.77.0.2,
/// ...), so that each looks like a host of its own to its peers' doors.
fn local_address(rank: u32) -> Ipv4Addr {
    Ipv4Addr::new(127, 77, (rank / 250) as u8, (rank % 250 + 1) as u8)
}

/// The agents this process started, ended by PID if they outlive the run.
pub struct Children(Vec<Launched>);

/// One started agent (or the ssh that starts it), and where its stderr goes.
struct Launched {
    rank: u32,
    child: Child,
    stderr: std::path::PathBuf,
    /// Its early exit was told to the coordinator.
    told: bool,
}

impl Children {
    /// Starts every agent of `starter`, each told the run's `token` where
    /// no other user can read it: in its environment, or on ssh's stdin.
    pub fn start(
        starter: &Starter,
        a: &LaunchArgs,
        coordinator: SocketAddr,
        timeout: Duration,
        token: &str,
    ) -> anyhow::Result<Children> {
        let me = std::env::current_exe().context("finding this linerate binary")?;
        let size = starter.size();
        let mut children = Children(Vec::new());
        for rank in 0..size {
            let mut cmd = match starter {
                Starter::Ssh { hosts } => {
                    let host = &hosts[rank as usize];
                    let mut words = a.ssh.split_whitespace();
                    let Some(ssh) = words.next() else {
                        return Err(UsageError("--ssh: give the ssh command".into()).into());
                    };
                    let mut cmd = Command::new(ssh);
                    cmd.args(words).args(["-o", "BatchMode=yes", host]);
                    let args = agent_args(coordinator, rank, size, host, timeout);
                    cmd.arg(format!(
                        "{} {} --token-stdin",
                        a.remote_path,
                        args.join(" ")
                    ));
                    cmd
                }
                Starter::Lab { lab } => {
                    let host = &lab.hosts[rank as usize];
                    let mut cmd = Command::new("ip");
                    cmd.args(["netns", "exec", &host.netns]).arg(&me);
                    cmd.args(agent_args(coordinator, rank, size, &host.name, timeout));
                    cmd
                }
                Starter::Local { .. } => {
                    let mut cmd = Command::new(&me);
                    let name = format!("local{rank}");
                    cmd.args(agent_args(coordinator, rank, size, &name, timeout));
                    cmd.args(["--listen", &format!("{}:0", local_address(rank))]);
                    cmd
                }
            };
            let stderr = std::env::temp_dir()
                .join(format!("linerate-agent-{}-{rank}.err", std::process::id()));
            let log = std::fs::File::create(&stderr)
                .with_context(|| format!("creating {}", stderr.display()))?;
            let over_ssh = matches!(starter, Starter::Ssh { .. });
            cmd.env(RUN_TOKEN, token)
                .stdin(if over_ssh {
                    Stdio::piped()
                } else {
                    Stdio::null()
                })
                .stdout(Stdio::null())
                .stderr(log);
            let mut child = cmd
                .spawn()
                .with_context(|| format!("starting the agent of rank {rank}"))?;
            if let Some(mut stdin) = child.stdin.take() {
                // A line the remote agent reads; then end of input.
                let _ = writeln!(stdin, "{token}");
            }
            children.0.push(Launched {
                rank,
                child,
                stderr,
                told: false,
            });
        }
        Ok(children)
    }

    /// Ranks whose agent (or its ssh) has exited since last asked, with
    /// what it said: one that never joined cannot be reached.
    pub fn launch_failures(&mut self) -> Vec<(u32, String)> {
        let mut out = Vec::new();
        for l in self.0.iter_mut().filter(|l| !l.told) {
            let Ok(Some(status)) = l.child.try_wait() else {
                continue;
            };
            l.told = true;
            let said = std::fs::read_to_string(&l.stderr).unwrap_or_default();
            let last = said.trim().lines().last().unwrap_or("").chars().take(300);
            out.push((
                l.rank,
                format!(
                    "its launch ended ({status}) before it joined: {}",
                    last.collect::<String>()
                ),
            ));
        }
        out
    }

    /// Waits up to `grace` for every agent to leave, then ends the rest.
    pub fn finish(mut self, grace: Duration) {
        let until = Instant::now() + grace;
        while Instant::now() < until
            && self
                .0
                .iter_mut()
                .any(|l| matches!(l.child.try_wait(), Ok(None)))
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.end();
    }

    fn end(&mut self) {
        for l in &mut self.0 {
            if let Ok(None) = l.child.try_wait() {
                let _ = l.child.kill();
                let _ = l.child.wait();
            }
            let _ = std::fs::remove_file(&l.stderr);
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.end();
    }
}

/// Refuses a lab whose hosts cannot reach each other without a router.
pub fn check_lab(lab: &linerate_lab::Lab) -> anyhow::Result<()> {
    if lab.hosts.len() > 2 && lab.router.is_none() {
        bail!(
            "lab {} has no router; bring it up with --router",
            lab.spec.name
        );
    }
    Ok(())
}
