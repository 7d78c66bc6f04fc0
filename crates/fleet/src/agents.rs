//! Where a many-host run's agents come from: ranks of srun or mpirun
//! (every rank runs the same command; rank 0 coordinates), or agents this
//! process starts itself over ssh, in a lab's host namespaces, or as local
//! processes. Agents started here are children: waited for after the run,
//! and ended by PID if they outlive it.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{FleetError, Launch, Launcher};
use linerate_engine::address::{self, AddressError, Family};
use linerate_lab::Lab;

/// The environment variable that carries a run's token to its ranks.
pub const RUN_TOKEN: &str = "LINERATE_RUN_TOKEN";

/// The coordinator's port where none is named.
pub const COORDINATOR_PORT: u16 = 5301;

/// Why the agents of a run cannot be found or started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// What was asked cannot run; its text names the flag.
    #[error(transparent)]
    Usage(#[from] Misuse),
    /// The launcher's environment is not what it must be.
    #[error(transparent)]
    Launcher(#[from] FleetError),
    /// The coordinator's address does not resolve.
    #[error("the coordinator's address: {0}")]
    Coordinator(#[from] AddressError),
    /// No route towards the first host, to find this host's address on it.
    #[error("{what} {host}: {source}; give --coordinator")]
    Route {
        /// What failed.
        what: &'static str,
        /// The host routed towards.
        host: String,
        /// The error the system gave.
        source: std::io::Error,
    },
    /// The lab the agents should run in.
    #[error("--lab {name}: {source}")]
    Lab {
        /// The lab's name.
        name: String,
        /// Why it cannot be used.
        source: linerate_lab::LabError,
    },
    /// A lab of more than two hosts without a router: its hosts cannot
    /// reach each other.
    #[error("lab {0} has no router; bring it up with --router")]
    LabWithoutRouter(String),
    /// No randomness for the run's token.
    #[error("no randomness for a run token: {0}")]
    NoRandomness(std::io::Error),
    /// An agent (or the ssh that starts it) did not start.
    #[error("starting the agent of rank {rank}: {source}")]
    Spawn {
        /// The agent's rank.
        rank: u32,
        /// The error the system gave.
        source: std::io::Error,
    },
}

/// Flags that ask for a run that cannot be, in the flags' words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Misuse {
    /// A lab host named twice (the name as given).
    #[error("--lab-hosts names {0} twice")]
    LabHostTwice(String),
    /// Fewer than two lab hosts.
    #[error("--lab-hosts: a run needs at least two hosts")]
    OneLabHost,
    /// Fewer than two hosts.
    #[error("--hosts: a run needs at least two hosts")]
    OneHost,
    /// Under a launcher, no coordinator (the launcher's name).
    #[error("--coordinator: under {0} give rank 0's host, where the agents meet")]
    NoCoordinator(&'static str),
    /// No source of agents.
    #[error(
        "no agents: give --hosts (ssh), --lab NAME or --local N, or run as the ranks of srun or \
         mpirun"
    )]
    NoAgents,
    /// `--ssh` with no command.
    #[error("--ssh: give the ssh command")]
    NoSshCommand,
}

/// Where the agents are to come from, as the user asked.
#[derive(Debug, Clone, Default)]
pub struct AgentSource {
    /// One agent on each host over ssh, in rank order.
    pub hosts: Vec<String>,
    /// The ssh command, with any options, that reaches each host.
    pub ssh: String,
    /// linerate's path on the hosts.
    pub remote_path: String,
    /// One agent in each host namespace of this lab (h1 is rank 0).
    pub lab: Option<String>,
    /// Only these hosts of the lab, in rank order (an allocation).
    pub lab_hosts: Vec<String>,
    /// N agents as processes on this host's loopback.
    pub local: Option<u32>,
    /// Where agents reach the coordinator: HOST or HOST:PORT.
    pub coordinator: Option<String>,
}

/// The run's token from the environment (srun passes the job's
/// environment to every rank; mpirun with `-x LINERATE_RUN_TOKEN`).
pub fn run_token() -> Option<String> {
    std::env::var(RUN_TOKEN).ok().filter(|t| !t.is_empty())
}

/// A fresh token for a run whose agents this process starts.
pub fn new_token() -> Result<String, LaunchError> {
    let token = linerate_secure::Token::random().map_err(LaunchError::NoRandomness)?;
    Ok(token.0)
}

/// How this process takes part.
pub enum Role {
    /// A rank of srun or mpirun other than 0: join the coordinator.
    Agent {
        /// Where the launcher put this rank.
        launch: Launch,
        /// Where the coordinator listens.
        coordinator: SocketAddr,
    },
    /// Rank 0 of srun or mpirun: coordinate, and be an agent too.
    RankZero {
        /// Where the launcher put this rank.
        launch: Launch,
        /// Where this process listens as the coordinator.
        coordinator: SocketAddr,
    },
    /// Start the agents here and coordinate them.
    Starter(Starter),
}

/// Agents this process starts.
pub enum Starter {
    /// Over ssh, one per host.
    Ssh {
        /// The hosts, in rank order.
        hosts: Vec<String>,
    },
    /// In a lab's host namespaces.
    Lab {
        /// The lab.
        lab: Box<Lab>,
    },
    /// As processes on this host's loopback.
    Local {
        /// How many.
        agents: u32,
    },
}

impl Starter {
    /// The launcher's name in results.
    pub fn launcher(&self) -> &'static str {
        match self {
            Starter::Ssh { .. } => "ssh",
            Starter::Lab { .. } => "lab",
            Starter::Local { .. } => "local",
        }
    }

    /// How many agents.
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
            Starter::Lab { lab } => lab.hosts.first().map(|h| h.netns.as_str()),
            _ => None,
        }
    }

    /// The address the coordinator listens on, as the agents reach it:
    /// any free port unless `source.coordinator` names one (agents
    /// started here are told the port).
    pub fn listen(&self, source: &AgentSource) -> Result<SocketAddr, LaunchError> {
        if let Some(c) = &source.coordinator {
            return coordinator_address(c);
        }
        let port = 0;
        Ok(match self {
            Starter::Ssh { hosts } => SocketAddr::new(towards(&hosts[0])?, port),
            Starter::Lab { lab } => SocketAddr::new(IpAddr::V4(lab.hosts[0].v4), port),
            Starter::Local { .. } => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
        })
    }
}

/// `lab` with only the hosts named, in that order (all when none are).
fn allocated(mut lab: Lab, names: &[String]) -> Result<Lab, LaunchError> {
    if names.is_empty() {
        return Ok(lab);
    }
    let mut chosen = Vec::with_capacity(names.len());
    for n in names {
        let host = lab.host(n).map_err(|source| LaunchError::Lab {
            name: lab.spec.name.clone(),
            source,
        })?;
        if chosen
            .iter()
            .any(|h: &linerate_lab::lifecycle::Host| h.name == *n)
        {
            return Err(Misuse::LabHostTwice(n.to_string()).into());
        }
        chosen.push(host.clone());
    }
    if chosen.len() < 2 {
        return Err(Misuse::OneLabHost.into());
    }
    lab.hosts = chosen;
    Ok(lab)
}

/// What this process is in the run `source` and the launcher's variables
/// (read through `env`) describe.
pub fn role(
    source: &AgentSource,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Role, LaunchError> {
    let launch = crate::launch::detect(env, None)?;
    let ranked = matches!(
        launch.launcher,
        Launcher::Slurm | Launcher::OpenMpi | Launcher::Pmi
    );
    if ranked && launch.size > 1 {
        let coordinator = match (&source.coordinator, launch.hosts.first()) {
            (Some(c), _) => coordinator_address(c)?,
            (None, Some(first)) => coordinator_address(first)?,
            (None, None) => {
                return Err(Misuse::NoCoordinator(launch.launcher.name()).into());
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
    let starter = if !source.hosts.is_empty() {
        if source.hosts.len() < 2 {
            return Err(Misuse::OneHost.into());
        }
        Starter::Ssh {
            hosts: source.hosts.clone(),
        }
    } else if let Some(name) = &source.lab {
        let lab = Lab::load(name).map_err(|source| LaunchError::Lab {
            name: name.clone(),
            source,
        })?;
        // A fabric routes between its hosts itself (kernel switches or the emulator).
        if lab.hosts.len() > 2 && lab.router.is_none() && lab.spec.fabric.is_none() {
            return Err(LaunchError::LabWithoutRouter(name.clone()));
        }
        Starter::Lab {
            lab: Box::new(allocated(lab, &source.lab_hosts)?),
        }
    } else if let Some(agents) = source.local {
        Starter::Local { agents }
    } else {
        return Err(Misuse::NoAgents.into());
    };
    Ok(Role::Starter(starter))
}

/// HOST or HOST:PORT (the coordinator's port by default) to an address.
pub fn coordinator_address(host: &str) -> Result<SocketAddr, LaunchError> {
    Ok(address::resolve(host, COORDINATOR_PORT, Family::Any)?)
}

/// This host's address on the route to `host` (no packet is sent).
fn towards(host: &str) -> Result<IpAddr, LaunchError> {
    let route = |what: &'static str| {
        move |source| LaunchError::Route {
            what,
            host: host.into(),
            source,
        }
    };
    let target = (host, 22)
        .to_socket_addrs()
        .map_err(route("cannot resolve"))?
        .next()
        .ok_or_else(|| route("cannot resolve")(std::io::ErrorKind::NotFound.into()))?;
    let any = match target {
        SocketAddr::V4(_) => "0.0.0.0:0",
        SocketAddr::V6(_) => "[::]:0",
    };
    let probe = UdpSocket::bind(any).map_err(route("no socket to find the route to"))?;
    probe.connect(target).map_err(route("no route to"))?;
    Ok(probe.local_addr().map_err(route("no route to"))?.ip())
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

/// The command that starts rank `rank`'s agent, and whether the token
/// goes on its stdin (over ssh, where the environment does not travel).
fn agent_command(
    starter: &Starter,
    source: &AgentSource,
    linerate: &Path,
    rank: u32,
    coordinator: SocketAddr,
    timeout: Duration,
) -> Result<(Command, bool), LaunchError> {
    let size = starter.size();
    Ok(match starter {
        Starter::Ssh { hosts } => {
            let host = &hosts[rank as usize];
            let mut words = source.ssh.split_whitespace();
            let Some(ssh) = words.next() else {
                return Err(Misuse::NoSshCommand.into());
            };
            let mut cmd = Command::new(ssh);
            cmd.args(words).args(["-o", "BatchMode=yes", host]);
            let args = agent_args(coordinator, rank, size, host, timeout);
            let remote = &source.remote_path;
            cmd.arg(format!("{remote} {} --token-stdin", args.join(" ")));
            (cmd, true)
        }
        Starter::Lab { lab } => {
            let host = &lab.hosts[rank as usize];
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", &host.netns]).arg(linerate);
            cmd.args(agent_args(coordinator, rank, size, &host.name, timeout));
            (cmd, false)
        }
        Starter::Local { .. } => {
            let mut cmd = Command::new(linerate);
            let name = format!("local{rank}");
            cmd.args(agent_args(coordinator, rank, size, &name, timeout));
            cmd.args(["--listen", &format!("{}:0", local_address(rank))]);
            (cmd, false)
        }
    })
}

/// The agents this process started, ended by PID if they outlive the run.
pub struct Children(Vec<Launched>);

/// One started agent (or the ssh that starts it), and where its stderr goes.
struct Launched {
    rank: u32,
    child: Child,
    stderr: PathBuf,
    /// Its early exit was told to the coordinator.
    told: bool,
}

impl Children {
    /// Starts every agent of `starter` (local and lab agents run the
    /// program `linerate`), each told the run's `token` where no other
    /// user can read it: in its environment, or on ssh's stdin.
    pub fn start(
        starter: &Starter,
        source: &AgentSource,
        linerate: &Path,
        coordinator: SocketAddr,
        timeout: Duration,
        token: &str,
    ) -> Result<Children, LaunchError> {
        let mut children = Children(Vec::new());
        for rank in 0..starter.size() {
            let (mut cmd, over_ssh) =
                agent_command(starter, source, linerate, rank, coordinator, timeout)?;
            let spawn = |source| LaunchError::Spawn { rank, source };
            let stderr = std::env::temp_dir()
                .join(format!("linerate-agent-{}-{rank}.err", std::process::id()));
            let log = std::fs::File::create(&stderr).map_err(spawn)?;
            let stdin = if over_ssh {
                Stdio::piped()
            } else {
                Stdio::null()
            };
            cmd.env(RUN_TOKEN, token)
                .stdin(stdin)
                .stdout(Stdio::null())
                .stderr(log);
            let mut child = cmd.spawn().map_err(spawn)?;
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
            let last: String = said
                .trim()
                .lines()
                .last()
                .unwrap_or("")
                .chars()
                .take(300)
                .collect();
            out.push((
                l.rank,
                format!("its launch ended ({status}) before it joined: {last}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn no_launcher(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn without_a_launcher_or_a_source_the_flags_to_give_are_named() {
        let e = role(&AgentSource::default(), &no_launcher).err().unwrap();
        assert!(matches!(e, LaunchError::Usage(Misuse::NoAgents)), "{e}");
        assert!(e.to_string().contains("--hosts"), "{e}");
        let one = AgentSource {
            hosts: vec!["a".into()],
            ..Default::default()
        };
        let e = role(&one, &no_launcher).err().unwrap();
        assert!(matches!(e, LaunchError::Usage(Misuse::OneHost)), "{e}");
    }

    #[test]
    fn ranks_of_srun_meet_at_the_first_host_and_rank_zero_coordinates() {
        let env = |rank: &'static str| {
            move |v: &str| match v {
                "SLURM_PROCID" => Some(rank.to_string()),
                "SLURM_NTASKS" => Some("2".into()),
                "SLURM_JOB_NODELIST" => Some("127.0.0.[1-2]".into()),
                _ => None,
            }
        };
        let source = AgentSource::default();
        match role(&source, &env("0")).unwrap() {
            Role::RankZero { coordinator, .. } => {
                assert_eq!(coordinator.to_string(), "127.0.0.1:5301")
            }
            _ => panic!("rank 0 coordinates"),
        }
        assert!(matches!(
            role(&source, &env("1")).unwrap(),
            Role::Agent { .. }
        ));
    }

    #[test]
    fn local_agents_look_like_hosts_of_their_own() {
        let s = Starter::Local { agents: 300 };
        assert_eq!(s.size(), 300);
        assert_eq!(s.launcher(), "local");
        assert_eq!(local_address(0), Ipv4Addr::new(127, 77, 0, 1));
        assert_eq!(local_address(251), Ipv4Addr::new(127, 77, 1, 2));
        let source = AgentSource::default();
        let c: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let (cmd, over_ssh) = agent_command(
            &s,
            &source,
            Path::new("/bin/linerate"),
            3,
            c,
            Duration::from_secs(2),
        )
        .unwrap();
        assert!(!over_ssh);
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[..3], ["agent", "--coordinator", "127.0.0.1:9"]);
        assert!(
            args.ends_with(&["--listen".into(), "127.77.0.4:0".into()]),
            "{args:?}"
        );
        assert!(args.contains(&"2000ms".to_string()));
    }

    #[test]
    fn over_ssh_the_token_goes_on_stdin_and_the_command_is_the_users() {
        let s = Starter::Ssh {
            hosts: vec!["a".into(), "b".into()],
        };
        let source = AgentSource {
            ssh: "ssh -p 2222".into(),
            remote_path: "/opt/linerate".into(),
            ..Default::default()
        };
        let c: SocketAddr = "10.0.0.1:5301".parse().unwrap();
        let (cmd, over_ssh) =
            agent_command(&s, &source, Path::new("x"), 1, c, Duration::from_secs(1)).unwrap();
        assert!(over_ssh);
        assert_eq!(cmd.get_program(), "ssh");
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[..5], ["-p", "2222", "-o", "BatchMode=yes", "b"]);
        assert!(
            args[5]
                .starts_with("/opt/linerate agent --coordinator 10.0.0.1:5301 --rank 1 --size 2")
        );
        assert!(args[5].ends_with("--token-stdin"));
        let empty = AgentSource::default();
        let e = agent_command(&s, &empty, Path::new("x"), 0, c, Duration::from_secs(1));
        assert!(matches!(e, Err(LaunchError::Usage(_))));
    }

    #[test]
    fn a_listed_coordinator_is_where_the_agents_meet() {
        let s = Starter::Local { agents: 2 };
        let source = AgentSource {
            coordinator: Some("127.0.0.1".into()),
            ..Default::default()
        };
        assert_eq!(s.listen(&source).unwrap().port(), COORDINATOR_PORT);
        assert_eq!(s.listen(&AgentSource::default()).unwrap().port(), 0);
    }
}
