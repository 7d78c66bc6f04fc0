//! Why a lab could not be built, changed, entered or taken down: each
//! variant holds what went wrong, and its text is written here once.

use std::path::PathBuf;
use std::time::Duration;

use linerate_emulator::fabric::FabricSpecError;

/// Why a lab could not be built, changed, entered or taken down.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// The machine lacks what a lab needs (root, a tool, a kernel feature).
    #[error(transparent)]
    Missing(#[from] Missing),
    /// A file or a system call failed.
    #[error("{doing} {}: {error}", .path.display())]
    Io {
        /// What was being done.
        doing: &'static str,
        /// To what: a file, a namespace's file, a program.
        path: PathBuf,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// An `ip` or `tc` command failed.
    #[error("`{command}` failed: {stderr}")]
    Command {
        /// The command line as run.
        command: String,
        /// What it wrote to stderr, trimmed.
        stderr: String,
    },
    /// A lab's spec or conditions that cannot be built.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A lab's state on disk that does not read back.
    #[error("{}: unreadable lab state: {error}", .path.display())]
    Corrupt {
        /// The state file.
        path: PathBuf,
        /// Why it does not parse.
        error: serde_json::Error,
    },
    /// A lab's state that could not be written as JSON (a bug).
    #[error("writing a lab's state as JSON: {0}")]
    Unwritable(serde_json::Error),
    /// No lab of that name is up.
    #[error("no lab named {0} is up (see `linerate lab status`)")]
    NotFound(String),
    /// The user-space emulator's process failed to start or left.
    #[error("emulator: {0}")]
    Emulator(#[from] EmulatorFailure),
    /// The user-space emulator failed while forwarding.
    #[error(transparent)]
    Forwarding(#[from] linerate_emulator::EmulatorError),
    /// A lock was poisoned by a panicking thread.
    #[error("a lock was poisoned by a panicking thread")]
    Poisoned,
    /// The thread working in a namespace panicked.
    #[error("the thread working in namespace {0} panicked")]
    Panicked(String),
}

impl LabError {
    /// An I/O error while `doing` something to `path`.
    pub fn io(doing: &'static str, path: impl Into<PathBuf>, error: std::io::Error) -> LabError {
        LabError::Io {
            doing,
            path: path.into(),
            error,
        }
    }
}

/// What the machine lacks for a lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Missing {
    /// Not root.
    #[error(
        "linerate lab needs root: creating network namespaces and links needs CAP_SYS_ADMIN \
         and CAP_NET_ADMIN (run it with sudo)"
    )]
    Root,
    /// No network namespaces.
    #[error("this kernel has no network namespaces (/proc/self/ns/net is missing; CONFIG_NET_NS)")]
    Namespaces,
    /// No `ip` command.
    #[error("the `ip` command (Debian package iproute2) is not installed")]
    IpCommand,
    /// `--backend netem` without netem.
    #[error("--backend netem: this kernel has no netem qdisc (sch_netem); use --backend emulator")]
    Netem,
    /// `--backend emulator` without TUN.
    #[error("--backend emulator needs /dev/net/tun (CONFIG_TUN)")]
    Tun,
    /// A rate on veth without TBF.
    #[error(
        "--rate on the veth backend needs the tbf qdisc, which this kernel lacks; use --backend emulator"
    )]
    Tbf,
    /// Neither netem nor TUN.
    #[error("this kernel has neither netem nor TUN; only --backend veth works here")]
    NetemAndTun,
    /// `--backend htb` without HTB.
    #[error("--backend htb: this kernel has no HTB qdisc (sch_htb); use --backend emulator")]
    Htb,
    /// A fabric without TUN.
    #[error(
        "a --topology lab needs the emulator, and the emulator needs /dev/net/tun (CONFIG_TUN)"
    )]
    TunForFabric,
}

/// A lab's spec or conditions that cannot be built, in the flags' words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// A probability outside 0 to 1.
    #[error("{0} must be between 0% and 100%")]
    Probability(&'static str),
    /// A loss burst under one packet.
    #[error("--loss-burst is a mean burst length in packets, at least 1")]
    LossBurst,
    /// Jitter beyond the one-way delay.
    #[error("jitter larger than the one-way delay (half the RTT) is not meaningful")]
    Jitter,
    /// A rate of zero.
    #[error("--rate must be above zero")]
    ZeroRate,
    /// A reorder depth of zero.
    #[error("--reorder-depth is the packets a reordered one overtakes, at least 1")]
    ReorderDepth,
    /// Reordering by displacement asked of netem.
    #[error(
        "netem reorders only by sending a packet past its whole delay line: add --reorder-model \
         netem for that, or use --backend emulator, whose default model displaces a reordered \
         packet by a few packets"
    )]
    NetemReorder,
    /// A lab name that is not 1 to 8 lowercase letters or digits.
    #[error("lab name {0:?}: use 1 to 8 lowercase letters or digits")]
    Name(String),
    /// A fabric's own spec.
    #[error(transparent)]
    Fabric(#[from] FabricSpecError),
    /// `--hosts` against a topology's.
    #[error("--hosts {hosts} does not match the {topology} topology's {needs} hosts")]
    HostsForTopology {
        /// Hosts asked for.
        hosts: u8,
        /// The topology's name.
        topology: &'static str,
        /// Hosts it has.
        needs: u8,
    },
    /// WAN conditions on a fabric.
    #[error(
        "a fabric's links take --rate, --queue and --hop-delay from its own flags; WAN \
         conditions (--rtt, --loss, ...) are for labs without --topology"
    )]
    WanOnFabric,
    /// Hosts out of range.
    #[error("--hosts must be 2 to {most} (a --topology takes up to {most_fabric})")]
    Hosts {
        /// The most without a topology.
        most: u8,
        /// The most with one.
        most_fabric: u8,
    },
    /// An MTU out of range.
    #[error("--mtu must be 1280 to 65000 (IPv6 needs 1280)")]
    Mtu,
    /// Links out of range.
    #[error("--links must be 1 to {0}")]
    Links(u8),
    /// Parallel links on a fabric.
    #[error(
        "--links gives hosts on one link or one router parallel links; a --topology's hosts \
         have one link each"
    )]
    LinksOnFabric,
    /// A bond of one link.
    #[error("--bond joins a host's links: give it --links 2 or more")]
    BondOfOne,
    /// Parallel links between more than two hosts without a router.
    #[error("more than two hosts with --links need --router")]
    LinksWithoutRouter,
    /// More than two hosts without a router or the emulator.
    #[error("more than two hosts need --router (or the emulator backend)")]
    HostsWithoutRouter,
    /// Emulation asked of plain veth.
    #[error(
        "--backend veth makes only a rate (TBF); delay, jitter, loss, reordering and duplication \
         need netem or the emulator"
    )]
    VethEmulates,
    /// A fabric on netem or veth.
    #[error(
        "--topology labs run on the emulator (--backend emulator or auto) or on kernel switches \
         (--backend htb)"
    )]
    FabricBackend,
    /// Parallel links on the emulator or HTB.
    #[error(
        "--links: the emulator makes one link per host; parallel links are veth pairs, so use \
         --backend veth (a rate per link) or netem"
    )]
    LinksBackend,
    /// Parallel links on netem without netem.
    #[error("--backend netem: this kernel has no netem qdisc (sch_netem); use --backend veth")]
    LinksNetem,
    /// Emulation on parallel links without netem.
    #[error(
        "--links with delay, jitter, loss, reordering or duplication needs netem, which this \
         kernel lacks (the emulator makes one link per host; parallel links are veth pairs with \
         a rate at most)"
    )]
    LinksEmulate,
    /// A rate on parallel links without TBF.
    #[error("--rate on parallel links needs the tbf qdisc, which this kernel lacks")]
    LinksTbf,
    /// `--backend htb` without a topology.
    #[error(
        "--backend htb builds the switches of a --topology; a lab without one uses netem, the \
         emulator or veth"
    )]
    HtbWithoutFabric,
    /// A lossless (PFC) class on kernel switches.
    #[error(
        "a lossless class (PFC pause) needs --backend emulator: kernel qdiscs send no pause frames"
    )]
    HtbPause,
    /// ECN marking on kernel switches.
    #[error(
        "--ecn-threshold needs --backend emulator: kernel switches here queue in plain FIFOs \
         (this kernel has no RED qdisc to mark with)"
    )]
    HtbEcn,
    /// A hop delay on kernel switches.
    #[error(
        "--hop-delay needs netem on every port, which --backend htb does not use; use --backend \
         emulator"
    )]
    HtbHopDelay,
    /// A host the lab does not have.
    #[error("lab {lab} has no host {host}; it has {}", .hosts.join(", "))]
    NoHost {
        /// The lab.
        lab: String,
        /// The host asked for.
        host: String,
        /// Its hosts.
        hosts: Vec<String>,
    },
    /// The router of a lab without one.
    #[error("this lab has no router")]
    NoRouter,
    /// `lab up` of a lab that is up with other settings.
    #[error(
        "lab {0} is already up with other settings: change conditions with `linerate lab set`, \
         or `linerate lab down --name {0}` first"
    )]
    UpWithOtherSettings(String),
    /// `lab set` on a fabric.
    #[error(
        "lab {0} is a fabric: its rates, classes and thresholds are set at `lab up`; take it \
         down and up again to change them"
    )]
    SetFabric(String),
    /// `lab set` of emulation on plain veth.
    #[error(
        "lab {0} runs on plain veth (rate only); bring it up with --backend emulator or netem \
         for delay, loss or reordering"
    )]
    SetVeth(String),
    /// `--link` on a lab of one link.
    #[error("--link: lab {0} has one link (bring it up with --links N for more)")]
    OneLink(String),
    /// `lab set` of emulation on parallel veth links.
    #[error("lab {0} runs on plain veth (a rate per link): delay, loss or reordering need netem")]
    SetVethLinks(String),
    /// `--host` on a lab whose hosts share no router's kernel links.
    #[error(
        "--host: lab {0} has no link of its own per host that the kernel shapes; \
         bring it up with --router and --backend veth or netem"
    )]
    NoHostLink(String),
    /// A `--link` past the lab's links.
    #[error("--link {link}: lab {lab} has links 1 to {links}")]
    NoLink {
        /// The link asked for.
        link: u8,
        /// The lab.
        lab: String,
        /// Its links.
        links: u8,
    },
}

/// How the user-space emulator's process failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulatorFailure {
    /// It is not running.
    #[error("the emulator of lab {0} is not running; take the lab down and up again")]
    NotRunning(String),
    /// It did not acknowledge new conditions in time.
    #[error(
        "the emulator did not put the new conditions in force within {} s (see {})",
        .within.as_secs(), .log.display()
    )]
    NotApplied {
        /// The time it had.
        within: Duration,
        /// Its log.
        log: PathBuf,
    },
    /// It did not say it was ready.
    #[error("did not start: {said}")]
    NotStarted {
        /// What its log holds, trimmed.
        said: String,
    },
    /// It exited right after starting.
    #[error("exited right after starting")]
    Exited,
}
