//! Root: many-host runs launched the way sites launch them, into network
//! namespaces on one bridge: a real sshd in each namespace (keys made
//! here), Open MPI's mpirun placing ranks through a launch agent that
//! enters the namespace, and Slurm (slurmctld, one slurmd per namespace in
//! its own UTS namespace, one munge) with `srun -N 4`. Then a 5-host lab
//! whose receiver sits behind a 10 Gbit/s bottleneck: incast reaches it,
//! and an agent killed mid-run is named. Everything started is ended by
//! PID and every namespace deleted, however the test ends.

use crate::common;

use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tree::TempDir;
use common::{Guard, alone_with_traffic, linerate, read_json, require_root, run};

/// Namespaces `lrs-TAG-n1..` on bridge `lrb-TAG` (10.S.0.1), host i at 10.S.0.(10+i).
struct Hosts {
    tag: String,
    subnet: u8,
    count: u8,
    /// Processes started for the test; dropped (killed) before the namespaces go.
    procs: Vec<Guard>,
}

fn sh(args: &[&str]) {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Hosts {
    fn up(tag: &str, subnet: u8, count: u8) -> Hosts {
        let hosts = Hosts {
            tag: tag.to_string(),
            subnet,
            count,
            procs: Vec::new(),
        };
        hosts.down_quietly();
        let bridge = hosts.bridge();
        sh(&["ip", "link", "add", &bridge, "type", "bridge"]);
        sh(&[
            "ip",
            "addr",
            "add",
            &format!("10.{subnet}.0.1/24"),
            "dev",
            &bridge,
        ]);
        sh(&["ip", "link", "set", &bridge, "up"]);
        for i in 1..=count {
            let ns = hosts.netns(i);
            let veth = format!("v-{tag}-{i}");
            sh(&["ip", "netns", "add", &ns]);
            sh(&[
                "ip", "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ]);
            sh(&["ip", "link", "set", &veth, "master", &bridge, "up"]);
            sh(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/24", hosts.addr(i)),
                "dev",
                "eth0",
            ]);
            sh(&["ip", "-n", &ns, "link", "set", "eth0", "up"]);
            sh(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
        }
        hosts
    }

    fn bridge(&self) -> String {
        format!("lrb-{}", self.tag)
    }

    fn netns(&self, i: u8) -> String {
        format!("lrs-{}-n{i}", self.tag)
    }

    fn addr(&self, i: u8) -> String {
        format!("10.{}.0.{}", self.subnet, 10 + i)
    }

    fn gateway(&self) -> String {
        format!("10.{}.0.1", self.subnet)
    }

    fn spawn(&mut self, cmd: &mut Command) {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        self.procs.push(Guard(child));
    }

    /// Ends what the test's daemons started in a namespace and left running
    /// (a `slurmstepd` outlives its slurmd): a process still inside keeps the
    /// namespace, and with it the host's end of its veth, after `ip netns del`.
    fn end_what_runs_in(ns: &str) {
        common::wait_until(Duration::from_secs(10), || {
            let out = Command::new("ip").args(["netns", "pids", ns]).output();
            let listed = out.map(|o| o.stdout).unwrap_or_default();
            let pids: Vec<i32> = String::from_utf8_lossy(&listed)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            for &pid in &pids {
                // SAFETY: kill has no memory preconditions; the PID runs in a
                // namespace this test made, so the test started it.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            pids.is_empty()
        });
    }

    fn down_quietly(&self) {
        for i in 1..=self.count {
            Hosts::end_what_runs_in(&self.netns(i));
            let _ = Command::new("ip")
                .args(["netns", "del", &self.netns(i)])
                .output();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge()])
            .output();
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        self.procs.clear();
        self.down_quietly();
    }
}

/// Waits until `addr` takes connections (a daemon came up).
fn wait_listening(addr: &str, within: Duration) {
    let addr: SocketAddr = addr.parse().unwrap();
    let until = Instant::now() + within;
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(Instant::now() < until, "{addr} never listened");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Checks a 4-rank incast result: `launcher`, every rank at its
/// namespace's address (so in its namespace), every flow measured.
fn check_ranks(doc: &serde_json::Value, launcher: &str, hosts: &Hosts) {
    let fleet = &doc["fleet"];
    assert_eq!(fleet["launcher"], launcher);
    let ranks = fleet["hosts"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    for (i, h) in ranks.iter().enumerate() {
        assert!(h.get("failed").is_none(), "{h}");
        let at = h["address"].as_str().unwrap();
        assert!(
            at.starts_with(&format!("{}:", hosts.addr(i as u8 + 1))),
            "{h}"
        );
    }
    let flows = fleet["steps"][0]["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 6);
    assert!(
        flows
            .iter()
            .all(|f| f.get("error").is_none() && f["bytes"].as_u64() > Some(0))
    );
}

/// Runs `cmd` to its end within `limit`; its stderr on failure.
fn finish(mut cmd: Command, limit: Duration) -> std::process::Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(limit);
        // SAFETY: kill has no memory preconditions; the PID is our child's
        // (if it ended already, the signal goes nowhere or is refused).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    let out = child.wait_with_output().unwrap();
    drop(watchdog);
    out
}

const INCAST: &[&str] = &["incast", "--senders", "2", "--sizes", "1M", "-t", "2"];

#[test]
fn ssh_starts_an_agent_in_each_namespace_through_its_sshd() {
    if !require_root("ssh_starts_an_agent_in_each_namespace_through_its_sshd") {
        return;
    }
    let _traffic = common::beside_other_traffic();
    let dir = TempDir::new("ssh");
    let d = dir.0.display().to_string();
    for key in ["id", "host"] {
        sh(&[
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            &format!("{d}/{key}"),
        ]);
    }
    std::fs::copy(format!("{d}/id.pub"), format!("{d}/authorized_keys")).unwrap();
    let config = format!(
        "Port 22\nHostKey {d}/host\nAuthorizedKeysFile {d}/authorized_keys\n\
         PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
         KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n"
    );
    std::fs::write(format!("{d}/sshd_config"), config).unwrap();
    // sshd's privilege separation directory.
    std::fs::create_dir_all("/run/sshd").unwrap();
    let mut hosts = Hosts::up("ssh", 171, 4);
    for i in 1..=4 {
        let ns = hosts.netns(i);
        hosts.spawn(
            Command::new("ip")
                .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e"])
                .args(["-f", &format!("{d}/sshd_config")]),
        );
    }
    for i in 1..=4 {
        wait_listening(&format!("{}:22", hosts.addr(i)), Duration::from_secs(10));
    }
    let list: Vec<String> = (1..=4).map(|i| hosts.addr(i)).collect();
    let ssh = format!(
        "ssh -F /dev/null -i {d}/id -o StrictHostKeyChecking=no \
         -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
    );
    let mut cmd = Command::new(linerate());
    cmd.args(INCAST)
        .args([
            "--hosts",
            &list.join(","),
            "--ssh",
            &ssh,
            "--remote-path",
            linerate(),
        ])
        .args(["--json", "-"]);
    let out = finish(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    check_ranks(&doc, "ssh", &hosts);
    assert_eq!(doc["fleet"]["hosts"][1]["name"], hosts.addr(2));
}

#[test]
fn mpirun_places_the_ranks_in_the_namespaces() {
    if !require_root("mpirun_places_the_ranks_in_the_namespaces") {
        return;
    }
    let _traffic = common::beside_other_traffic();
    let dir = TempDir::new("mpi");
    let hosts = Hosts::up("mpi", 172, 4);
    // Open MPI's launch agent: instead of ssh-ing to host nI, enter its
    // namespace. Each node's daemon keeps its session directory apart: on
    // one machine they raced to create the same job directory under /tmp
    // ("mkdir ... File exists", once in a loaded run).
    let agent = dir.0.join("enter.sh");
    let tmp = dir.0.display();
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\nhost=\"$1\"; shift\nmkdir -p {tmp}/tmp-$host\n\
             exec env TMPDIR={tmp}/tmp-$host nsenter --net=/run/netns/lrs-mpi-$host sh -c \"$*\"\n"
        ),
    )
    .unwrap();
    sh(&["chmod", "+x", agent.to_str().unwrap()]);
    let result = dir.0.join("incast.json");
    let mut cmd = Command::new("mpirun");
    cmd.args(["--allow-run-as-root", "--host", "n1,n2,n3,n4", "-np", "4"])
        .args(["--mca", "plm_rsh_agent", agent.to_str().unwrap()])
        .args(["--mca", "oob_tcp_if_include", "10.172.0.0/24"])
        .args(["--mca", "btl", "self,tcp"])
        // Open MPI 4.1's daemons map the hwloc topology into a hole of
        // their address space, and crashed there once in CI-like runs
        // (hwloc_shmem_topology_write): without the hole, they do not.
        .args(["--mca", "rtc_hwloc_vmhole", "none"])
        // The run's token, exported to every rank as the guide says.
        .env("LINERATE_RUN_TOKEN", "mpi-job-secret")
        .args(["-x", "LINERATE_RUN_TOKEN"])
        .arg(linerate())
        .args(INCAST)
        .args(["--coordinator", &hosts.addr(1), "--json"])
        .arg(&result);
    let out = finish(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_ranks(&read_json(&result), "openmpi", &hosts);
}

#[test]
fn srun_runs_the_ranks_on_slurmd_in_each_namespace() {
    if !require_root("srun_runs_the_ranks_on_slurmd_in_each_namespace") {
        return;
    }
    let _traffic = common::beside_other_traffic();
    let dir = TempDir::new("slurm");
    let d = dir.0.display().to_string();
    let mut hosts = Hosts::up("slm", 173, 4);
    let _munge = munge();
    let me = run_text(&["hostname", "-s"]);
    let mut conf = format!(
        "ClusterName=linerate\nSlurmctldHost={me}({gw})\nSlurmctldPort=6917\nSlurmdPort=6918\n\
         AuthType=auth/munge\nSlurmUser=root\nStateSaveLocation={d}/state\n\
         SlurmdSpoolDir={d}/spool-%n\nSlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd-%n.pid\nSlurmctldLogFile={d}/slurmctld.log\n\
         SlurmdLogFile={d}/slurmd-%n.log\nProctrackType=proctrack/linuxproc\n\
         TaskPlugin=task/none\nSelectType=select/linear\nMpiDefault=none\nMailProg=/bin/true\n\
         ReturnToService=2\n",
        gw = hosts.gateway()
    );
    for i in 1..=4 {
        conf.push_str(&format!(
            "NodeName=n{i} NodeAddr={} CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 State=UNKNOWN\n",
            hosts.addr(i)
        ));
    }
    conf.push_str("PartitionName=lr Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP\n");
    let conf_path = format!("{d}/slurm.conf");
    std::fs::write(&conf_path, conf).unwrap();
    std::fs::create_dir_all(format!("{d}/state")).unwrap();
    hosts.spawn(Command::new("slurmctld").args(["-D", "-f", &conf_path]));
    for i in 1..=4 {
        // Its own network namespace (nsenter keeps the host's sysfs and its
        // cgroup mounts, which slurmd needs; docs/launchers.md) and its own
        // UTS namespace named like its node.
        let inner = format!("hostname n{i} && exec slurmd -D -N n{i} -f {conf_path}");
        let ns = format!("--net=/run/netns/{}", hosts.netns(i));
        hosts.spawn(Command::new("nsenter").args([&ns, "unshare", "--uts", "sh", "-c", &inner]));
    }
    let idle = Instant::now() + Duration::from_secs(60);
    loop {
        let states = run_text_env(&["sinfo", "-h", "-N", "-o", "%T"], &conf_path);
        if states.lines().filter(|l| l.trim() == "idle").count() == 4 {
            break;
        }
        assert!(Instant::now() < idle, "slurmd never idle: {states}");
        std::thread::sleep(Duration::from_millis(500));
    }
    let result = dir.0.join("incast.json");
    let mut cmd = Command::new("srun");
    cmd.env("SLURM_CONF", &conf_path)
        // srun hands the job's environment, the run's token with it, to every rank.
        .env("LINERATE_RUN_TOKEN", "slurm-job-secret")
        .args(["-N", "4", "-n", "4", "--time", "5"])
        .arg(linerate())
        .args(INCAST)
        // Node names do not resolve here: rank 0's address is given.
        .args(["--coordinator", &hosts.addr(1), "--json"])
        .arg(&result);
    let out = finish(cmd, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = read_json(&result);
    check_ranks(&doc, "slurm", &hosts);
    // Each rank ran in its node's UTS namespace.
    let names: Vec<&str> = doc["fleet"]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["n1", "n2", "n3", "n4"]);
}

fn run_text(args: &[&str]) -> String {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn run_text_env(args: &[&str], conf: &str) -> String {
    let out = Command::new(args[0])
        .args(&args[1..])
        .env("SLURM_CONF", conf)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// munged, started here unless one runs already; ended by PID if started here.
fn munge() -> Option<Guard> {
    if std::path::Path::new("/run/munge/munge.socket.2").exists()
        && Command::new("munge")
            .arg("-n")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    {
        return None;
    }
    std::fs::create_dir_all("/run/munge").unwrap();
    if !std::path::Path::new("/etc/munge/munge.key").exists() {
        sh(&["mungekey", "--create"]);
    }
    let child = Command::new("munged")
        .args(["--foreground", "--force"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("munged");
    let guard = Guard(child);
    let until = Instant::now() + Duration::from_secs(10);
    while !Command::new("munge")
        .arg("-n")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(Instant::now() < until, "munged never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(guard)
}

/// A lab taken down however the test ends.
struct TestLab(String);

impl TestLab {
    /// Five hosts behind a router whose links to them are TBF-limited to
    /// `rate` (plain veth); named `tag` and this process's id.
    fn five_hosts(tag: &str, rate: &str) -> TestLab {
        TestLab::routed(tag, "5", rate)
    }

    /// `hosts` hosts behind a kernel router, each link at `rate` (TBF).
    fn routed(tag: &str, hosts: &str, rate: &str) -> TestLab {
        let lab = TestLab(format!("{tag}{}", std::process::id() % 1000));
        let up = run(&[
            "lab",
            "up",
            "--name",
            &lab.0,
            "--hosts",
            hosts,
            "--router",
            "--backend",
            "veth",
            "--rate",
            rate,
        ]);
        assert!(
            up.status.success(),
            "lab up: {}",
            String::from_utf8_lossy(&up.stderr)
        );
        lab
    }

    /// An incast of the lab's agents into h1: 2 senders on each of its 4
    /// other hosts, of 1 MiB writes, each step `secs` long.
    fn incast(&self, secs: &str) -> Command {
        let mut c = Command::new(linerate());
        c.args([
            "incast",
            "--lab",
            &self.0,
            "--senders",
            "2",
            "--sizes",
            "1M",
        ])
        .args(["-t", secs]);
        c
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        let _ = run(&["lab", "down", "--name", &self.0]);
    }
}

/// Runs `incast` with its result on stdout; the result, once it succeeded.
fn incast_result(mut incast: Command) -> (serde_json::Value, String) {
    incast.args(["--json", "-"]);
    let out = finish(incast, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// Eight flows from four hosts into a 2 Gbit/s bottleneck: each flow's
/// verdict finds the path full, and the run names that one shared
/// bottleneck once, with the flows' range and Jain's index; on a quiet and
/// on a busy host.
#[test]
fn an_incast_into_a_full_bottleneck_names_it_once() {
    if !require_root("an_incast_into_a_full_bottleneck_names_it_once") {
        return;
    }
    let _alone = alone_with_traffic();
    let lab = TestLab::five_hosts("inf", "2G");
    for host in ["quiet", "busy"] {
        let _busy = (host == "busy").then(common::BusyCores::start);
        let (doc, _) = incast_result(lab.incast("4"));
        let flows = doc["fleet"]["steps"][0]["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 8);
        let full = flows.iter().filter(|f| f["limit"] == "path_full").count();
        let v = &doc["summary"]["verdict"];
        assert!(
            2 * full >= flows.len(),
            "{host} host: {full} of 8 flows found the path full: {flows:?}"
        );
        assert_eq!(v["limit"], "path_full", "{host} host: {v}");
        let sentence = v["sentence"].as_str().unwrap();
        assert!(
            sentence.contains("one bottleneck they share was full"),
            "{host} host: {sentence}"
        );
        assert!(sentence.contains("Jain's fairness index"), "{sentence}");
    }
}

/// A mesh of three hosts whose links run at 2 Gbit/s, pair by pair: each
/// pair's verdict finds its path full at its share of the lab's rate, and
/// the run says so once instead of naming a slowest pair's limit. The run
/// is recorded in a site archive (a PostgreSQL server of the test's own):
/// every pair is a series of its own, named by its hosts.
#[test]
fn a_mesh_whose_links_are_full_names_that_once_and_archives_every_pair() {
    if !require_root("a_mesh_whose_links_are_full_names_that_once_and_archives_every_pair") {
        return;
    }
    let _alone = alone_with_traffic();
    let pg = common::pg_cluster::PgCluster::start("mesh");
    let archive = pg
        .as_ref()
        .map_or_else(|| "none".to_string(), |pg| pg.url());
    let lab = TestLab::routed("msf", "3", "2G");
    let out = Command::new(linerate())
        .args(["mesh", "--lab", &lab.0, "-t", "2", "--json", "-"])
        .args(["--archive", &archive])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let flows: Vec<&serde_json::Value> = doc["fleet"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["flows"].as_array().unwrap())
        .collect();
    assert_eq!(flows.len(), 6);
    let full = flows.iter().filter(|f| f["limit"] == "path_full").count();
    assert!(2 * full >= flows.len(), "{full} of 6 pairs: {flows:?}");
    for f in flows.iter().filter(|f| f["limit"] == "path_full") {
        let said = f["verdict"].as_str().unwrap();
        assert!(said.contains("of 2.00 Gbit/s, the lab's --rate"), "{said}");
    }
    let v = &doc["summary"]["verdict"];
    assert_eq!(v["limit"], "path_full", "{v}");
    let sentence = v["sentence"].as_str().unwrap();
    assert!(
        sentence.contains(&format!(
            "Path full: {full} of 6 pairs found their path full"
        )),
        "{sentence}"
    );
    assert!(!sentence.contains("Slowest:"), "{sentence}");
    if pg.is_some() {
        every_pair_archived(&archive, &doc);
    }
}

/// `history --json` of the site archive lists the mesh's 6 pairs, each
/// its own series between two of its hosts, with the rate its flow
/// carried; the export gives the run's document back once.
fn every_pair_archived(archive: &str, doc: &serde_json::Value) {
    let out = run(&["history", "--archive", archive, "--json", "-"]);
    assert!(out.status.success(), "{}", common::text(&out));
    let history: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let series = history["series"].as_array().unwrap();
    assert_eq!(series.len(), 6, "{history}");
    let named: std::collections::BTreeMap<u64, &str> = doc["fleet"]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["rank"].as_u64().unwrap(), h["name"].as_str().unwrap()))
        .collect();
    let hosts: Vec<&str> = named.values().copied().collect();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for s in series {
        assert_eq!(s["kind"], "mesh", "{s}");
        assert_eq!(s["runs"], 1, "{s}");
        let (from, to) = (
            s["source"].as_str().unwrap(),
            s["destination"].as_str().unwrap(),
        );
        assert!(
            hosts.contains(&from) && hosts.contains(&to) && from != to,
            "{s}"
        );
        let flow = doc["fleet"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|st| st["flows"].as_array().unwrap())
            .find(|f| {
                named[&f["from"].as_u64().unwrap()] == from
                    && named[&f["to"].as_u64().unwrap()] == to
            })
            .unwrap_or_else(|| panic!("no flow {from} -> {to}"));
        assert_eq!(s["latest"], flow["bits_per_second"], "{s}");
        pairs.push((from.to_string(), to.to_string()));
    }
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 6, "{pairs:?}");
    let out = run(&["archive", "export", "--archive", archive]);
    assert!(out.status.success(), "{}", common::text(&out));
    let lines: Vec<&[u8]> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 1, "the run's document once");
    let back: serde_json::Value = serde_json::from_slice(lines[0]).unwrap();
    assert_eq!(back["fleet"], doc["fleet"]);
}

#[test]
fn incast_into_a_10_gbit_bottleneck_stays_under_it_and_names_an_agent_killed_mid_run() {
    if !require_root(
        "incast_into_a_10_gbit_bottleneck_stays_under_it_and_names_an_agent_killed_mid_run",
    ) {
        return;
    }
    let _alone = alone_with_traffic();
    let lab = TestLab::five_hosts("inc", "10G");
    // 8 flows into h1's 10 Gbit/s link. Forwarding 10 Gbit/s through the
    // lab's router takes both cores, so how near the flows come to the link
    // is the CPU's to give (docs/benchmarks/2026-12-03-loaded-series.md#incast-10g:
    // 8.4 to 9.55 Gbit/s beside busy loops); here they never pass it.
    let (doc, stderr) = incast_result(lab.incast("4"));
    assert_eq!(doc["fleet"]["launcher"], "lab");
    let step = &doc["fleet"]["steps"][0];
    assert_eq!(step["flows"].as_array().unwrap().len(), 8);
    let aggregate = step["aggregate_bits_per_second"].as_f64().unwrap();
    assert!(
        aggregate > 0.0 && aggregate <= 10.5e9,
        "8 flows into a 10 Gbit/s link made {aggregate} bit/s"
    );
    let jain = step["jain_index"].as_f64().unwrap();
    assert!((0.125..=1.0 + 1e-9).contains(&jain));
    assert!(stderr.contains("Jain's fairness index"));

    // The agent of h3 (rank 2) killed mid-step: named, and the run ends in time.
    let dir = TempDir::new("killed");
    let result = dir.0.join("incast.json");
    let started = Instant::now();
    let mut c = lab.incast("6");
    c.args(["--timeout", "60", "--json"])
        .arg(&result)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut running = Guard(c.spawn().unwrap());
    let pid = running.0.id();
    let victim = loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no agent of rank 2"
        );
        // The agents are children of the thread that entered h1's namespace.
        let found = common::agent_of_rank(pid, 2);
        if let Some(v) = found
            && started.elapsed() > Duration::from_secs(4)
        {
            break v;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // SAFETY: kill has no memory preconditions; the PID is a child of the
    // linerate this test started, not yet reaped.
    assert_eq!(unsafe { libc::kill(victim as i32, libc::SIGKILL) }, 0);
    let status = running.0.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(status.code(), Some(1));
    let doc = read_json(&result);
    let h3 = &doc["fleet"]["hosts"][2];
    assert_eq!(h3["name"], "h3");
    assert_eq!(h3["failed"], "its connection was lost");
    let sentence = doc["summary"]["verdict"]["sentence"].as_str().unwrap();
    assert!(sentence.contains("rank 2 (h3)"), "{sentence}");
}
