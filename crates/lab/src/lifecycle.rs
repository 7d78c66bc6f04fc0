//! A lab's life: up, set, status, down.

use std::io::{BufRead, BufReader};
use std::net::IpAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::conditions::{Backend, Conditions};
use crate::detect::{self, KernelSupport};
use crate::exec;
pub use crate::spec::{Host, KernelSupportRecord, Lab, LabSpec, MAX_HOSTS};
use crate::state::{self, ProcessId};
use crate::topology::{self, Step};
use crate::{EmulatorFailure, LabError, SpecError};
use linerate_emulator::{EmulatedHost, EmulatorPlan};

/// How long `lab set` waits for the emulator to take new conditions; it
/// looks for them every few milliseconds.
const APPLY_TIMEOUT: Duration = Duration::from_secs(2);

fn free_index() -> u8 {
    let used: Vec<u8> = state::names()
        .iter()
        .filter_map(|n| Lab::load(n).ok())
        .map(|l| l.index)
        .collect();
    (0..=255u8).find(|i| !used.contains(i)).unwrap_or(255)
}

impl Lab {
    /// The PID of the process forwarding the lab's packets in user space
    /// (its emulator), while it runs.
    pub fn forwarder_pid(&self) -> Option<u32> {
        self.emulator.as_ref().filter(|e| e.alive()).map(|e| e.pid)
    }

    /// Lays out a lab without touching the system.
    pub fn plan(
        spec: LabSpec,
        index: u8,
        backend: Backend,
        backend_reason: String,
    ) -> Result<Lab, LabError> {
        spec.validate()?;
        if backend == Backend::Htb {
            let why = match &spec.fabric {
                None => Some(SpecError::HtbWithoutFabric),
                Some(f) => crate::kernel_fabric::refusal(f),
            };
            if let Some(why) = why {
                return Err(why.into());
            }
        }
        if backend != Backend::Emulator && spec.fabric.is_none() && !spec.router && spec.hosts > 2 {
            return Err(SpecError::HostsWithoutRouter.into());
        }
        let hosts = (1..=spec.hosts)
            .map(|i| crate::links::host(&spec, index, i))
            .collect();
        let router =
            (spec.router || backend == Backend::Emulator).then(|| format!("lr-{}-r", spec.name));
        // A plan made without probing the kernel shows the bond that works everywhere.
        let bond = crate::links::bond_record(&spec, &KernelSupport::default());
        Ok(Lab {
            spec,
            index,
            backend,
            hosts,
            router,
            emulator: None,
            backend_reason,
            kernel: None,
            bond,
            link_conditions: Default::default(),
            host_conditions: Default::default(),
        })
    }

    /// The lab `name` as its state on disk records it.
    pub fn load(name: &str) -> Result<Lab, LabError> {
        let path = state::state_file(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LabError::NotFound(name.into()));
            }
            Err(e) => return Err(LabError::io("reading", &path, e)),
        };
        serde_json::from_str(&text).map_err(|error| LabError::Corrupt { path, error })
    }

    fn save(&self) -> Result<(), LabError> {
        let text = serde_json::to_vec_pretty(self).map_err(LabError::Unwritable)?;
        state::write_atomic(&state::state_file(&self.spec.name), &text)
    }

    /// Every namespace the lab made (hosts, router, kernel switches).
    pub fn namespaces(&self) -> Vec<String> {
        let mut v: Vec<String> = self.hosts.iter().map(|h| h.netns.clone()).collect();
        v.extend(self.router.clone());
        if let Some(f) = self
            .spec
            .fabric
            .as_ref()
            .filter(|_| self.backend == Backend::Htb)
        {
            let g = linerate_emulator::fabric::graph::Graph::build(f);
            v.extend(crate::kernel_fabric::switch_namespaces(self, &g));
        }
        v
    }

    /// The lab's host called `name` (h1, h2, ...).
    pub fn host(&self, name: &str) -> Result<&Host, LabError> {
        self.hosts.iter().find(|h| h.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
            LabError::from(SpecError::NoHost {
                lab: self.spec.name.clone(),
                host: name.to_string(),
                hosts: names.iter().map(|n| n.to_string()).collect(),
            })
        })
    }

    /// Namespace of a host name, or of the router (`r`).
    pub fn netns_of(&self, name: &str) -> Result<String, LabError> {
        if name == "r" {
            return self
                .router
                .clone()
                .ok_or_else(|| SpecError::NoRouter.into());
        }
        Ok(self.host(name)?.netns.clone())
    }

    /// The commands `up` runs, for `--dry-run`.
    pub fn script(&self) -> Vec<String> {
        topology::steps(self)
            .into_iter()
            .map(|s| match s {
                Step::Run(argv) => argv.join(" "),
                Step::StartEmulator => format!(
                    "ip netns exec {} linerate lab emulator --plan {}   # creates TUN device lab0 in every host and forwards between them{}",
                    self.router.as_deref().unwrap_or("?"),
                    state::emulator_plan_file(&self.spec.name).display(),
                    self.spec.fabric.as_ref().map_or(String::new(), |f| format!(
                        " through a {} fabric",
                        f.topology.as_str()
                    ))
                ),
            })
            .collect()
    }

    /// Brings a lab up; `exe` is the linerate binary that runs the emulator.
    /// On any failure everything created so far is removed again.
    pub fn up(spec: LabSpec, exe: &Path) -> Result<Lab, LabError> {
        detect::require_lab_privileges()?;
        spec.validate()?;
        let _lock = state::lock(&spec.name)?;
        if let Ok(existing) = Lab::load(&spec.name) {
            if existing.spec == spec {
                return Ok(existing);
            }
            return Err(SpecError::UpWithOtherSettings(spec.name.clone()).into());
        }
        let kernel = detect::probe()?;
        let (backend, reason) = crate::backend::choose(&spec, &kernel)?;
        let mut lab = Lab::plan(spec, free_index(), backend, reason)?;
        lab.bond = crate::links::bond_record(&lab.spec, &kernel);
        lab.kernel = Some(kernel.into());
        // Recorded before anything exists, so a crash half-way can still be cleaned up.
        lab.save()?;
        match lab.build(exe) {
            Ok(()) => Ok(lab),
            Err(e) => {
                let _ = lab.down();
                Err(e)
            }
        }
    }

    /// The file the emulator follows: written at `up`, rewritten by `set`.
    fn write_impairments(&self) -> Result<Vec<u8>, LabError> {
        let imp = serde_json::to_vec_pretty(&self.spec.conditions.impairments())
            .map_err(LabError::Unwritable)?;
        state::write_atomic(&state::impairments_file(&self.spec.name), &imp)?;
        Ok(imp)
    }

    /// Hands the running emulator new conditions and returns once it has
    /// them in force, so traffic started next meets them. (It used to take
    /// up to 100 ms: a bench started at once ran its first 93 MiB at the old
    /// 0 ms, and chose settings for a short path it then did not have.)
    fn set_emulated(&self) -> Result<(), LabError> {
        let wrote = self.write_impairments()?;
        let plan: Option<EmulatorPlan> = std::fs::read(state::emulator_plan_file(&self.spec.name))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        // An emulator started by an older build does not acknowledge.
        let Some(applied) = plan.and_then(|p| p.applied) else {
            return Ok(());
        };
        let deadline = Instant::now() + APPLY_TIMEOUT;
        loop {
            if std::fs::read(&applied).is_ok_and(|a| a == wrote) {
                return Ok(());
            }
            if self.emulator.as_ref().is_none_or(|p| !p.alive()) {
                return Err(EmulatorFailure::NotRunning(self.spec.name.clone()).into());
            }
            if Instant::now() >= deadline {
                return Err(EmulatorFailure::NotApplied {
                    within: APPLY_TIMEOUT,
                    log: state::emulator_log_file(&self.spec.name),
                }
                .into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn build(&mut self, exe: &Path) -> Result<(), LabError> {
        self.write_impairments()?;
        for step in topology::steps(self) {
            match step {
                Step::Run(argv) => exec::run(&argv)?,
                Step::StartEmulator => {
                    self.emulator = Some(self.start_emulator(exe)?);
                    self.save()?;
                }
            }
        }
        Ok(())
    }

    fn start_emulator(&self, exe: &Path) -> Result<ProcessId, LabError> {
        let name = &self.spec.name;
        let plan = EmulatorPlan {
            hosts: self
                .hosts
                .iter()
                .map(|h| EmulatedHost {
                    name: h.name.clone(),
                    netns: PathBuf::from(format!("/run/netns/{}", h.netns)),
                    addrs: vec![IpAddr::V4(h.v4), IpAddr::V6(h.v6)],
                })
                .collect(),
            impairments: state::impairments_file(name),
            applied: Some(state::applied_file(name)),
            counters: state::counters_file(name),
            fabric: self.spec.fabric.clone(),
        };
        let plan_path = state::emulator_plan_file(name);
        let text = serde_json::to_vec_pretty(&plan).map_err(LabError::Unwritable)?;
        state::write_atomic(&plan_path, &text)?;
        let log_path = state::emulator_log_file(name);
        let log =
            std::fs::File::create(&log_path).map_err(|e| LabError::io("creating", &log_path, e))?;
        let router = self.router.as_deref().unwrap_or_default();
        let mut child = Command::new("ip")
            .args(["netns", "exec", router])
            .arg(exe)
            .args(["lab", "emulator", "--plan"])
            .arg(&plan_path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            // Its own process group: a Ctrl-C meant for `lab up` must not take the lab down.
            .process_group(0)
            .spawn()
            .map_err(|e| LabError::io("starting", exe, e))?;
        let pid = child.id();
        let stdout = child.stdout.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            if let Some(out) = stdout {
                let _ = BufReader::new(out).read_line(&mut line);
            }
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        if line.trim() != "ready" {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(EmulatorFailure::NotStarted {
                said: log.trim().to_string(),
            }
            .into());
        }
        ProcessId::of(pid).ok_or_else(|| LabError::from(EmulatorFailure::Exited))
    }

    /// Changes the conditions of a running lab.
    pub fn set(&mut self, conditions: Conditions) -> Result<(), LabError> {
        conditions.validate()?;
        if self.spec.fabric.is_some() {
            return Err(SpecError::SetFabric(self.spec.name.clone()).into());
        }
        if self.backend == Backend::Veth && conditions.needs_emulation() {
            return Err(SpecError::SetVeth(self.spec.name.clone()).into());
        }
        conditions.fits(self.backend)?;
        if self.spec.links > 1 {
            return self.set_links(None, conditions);
        }
        let before = self.clone();
        self.spec.conditions = conditions;
        // The lab's conditions are every link's again.
        self.host_conditions.clear();
        let applied = match self.backend {
            Backend::Emulator => self.set_emulated(),
            Backend::Netem | Backend::Veth | Backend::Htb => self.apply_qdiscs(&before),
        };
        if let Err(e) = applied {
            self.spec.conditions = before.spec.conditions;
            self.host_conditions = before.host_conditions;
            return Err(e);
        }
        self.save()
    }

    /// Changes the conditions of the router's link into `host` alone
    /// (`lab set --host`): what reaches that host crosses them; the other
    /// hosts' links keep theirs.
    pub fn set_host(&mut self, host: &str, conditions: Conditions) -> Result<(), LabError> {
        conditions.validate()?;
        let kernel_links = matches!(self.backend, Backend::Veth | Backend::Netem);
        if self.router.is_none() || !kernel_links || self.spec.links > 1 {
            return Err(SpecError::NoHostLink(self.spec.name.clone()).into());
        }
        if !self.hosts.iter().any(|h| h.name == host) {
            return Err(SpecError::NoHost {
                host: host.to_string(),
                lab: self.spec.name.clone(),
                hosts: self.hosts.iter().map(|h| h.name.clone()).collect(),
            }
            .into());
        }
        if self.backend == Backend::Veth && conditions.needs_emulation() {
            return Err(SpecError::SetVeth(self.spec.name.clone()).into());
        }
        conditions.fits(self.backend)?;
        let before = self.clone();
        self.host_conditions.insert(host.to_string(), conditions);
        if let Err(e) = self.apply_qdiscs(&before) {
            self.host_conditions = before.host_conditions;
            return Err(e);
        }
        self.save()
    }

    /// Changes the conditions of one of the lab's parallel links (`lab set
    /// --link`), or of every link where `link` is None.
    pub fn set_link(&mut self, link: Option<u8>, conditions: Conditions) -> Result<(), LabError> {
        if link.is_some() && self.spec.links < 2 {
            return Err(SpecError::OneLink(self.spec.name.clone()).into());
        }
        if link.is_none() {
            return self.set(conditions);
        }
        conditions.validate()?;
        conditions.fits(self.backend)?;
        if self.backend == Backend::Veth && conditions.needs_emulation() {
            return Err(SpecError::SetVethLinks(self.spec.name.clone()).into());
        }
        self.set_links(link, conditions)
    }

    fn set_links(&mut self, link: Option<u8>, conditions: Conditions) -> Result<(), LabError> {
        let before = (self.spec.conditions.clone(), self.link_conditions.clone());
        match link {
            Some(k) if !(1..=self.spec.links).contains(&k) => {
                return Err(SpecError::NoLink {
                    link: k,
                    lab: self.spec.name.clone(),
                    links: self.spec.links,
                }
                .into());
            }
            Some(k) => {
                self.link_conditions.insert(k, conditions);
            }
            None => {
                self.spec.conditions = conditions;
                self.link_conditions.clear();
            }
        }
        if let Err(e) = crate::links::apply(self, link) {
            (self.spec.conditions, self.link_conditions) = before;
            return Err(e);
        }
        self.save()
    }

    /// Puts the lab's conditions on every link end, from `before`'s: an
    /// end that had a qdisc and is to have none goes back to the default.
    fn apply_qdiscs(&self, before: &Lab) -> Result<(), LabError> {
        let had = topology::qdisc_plan(before);
        for (end, qdisc) in topology::qdisc_plan(self) {
            let argv = match qdisc {
                Some(args) => topology::qdisc_argv(&end, "replace", &args),
                None if had.iter().any(|(e, q)| *e == end && q.is_some()) => {
                    topology::qdisc_argv(&end, "del", &[])
                }
                None => continue,
            };
            exec::run(&argv)?;
        }
        Ok(())
    }

    /// Removes everything the lab created. Safe to repeat, and safe after a crash.
    pub fn down(&self) -> Result<(), LabError> {
        down_named(&self.spec.name, self.emulator.as_ref(), &self.namespaces())
    }

    /// Live counters: the emulator's, as it last wrote them, or a kernel
    /// fabric's ports read now.
    pub fn counters(&self) -> Option<serde_json::Value> {
        if let Some(f) = self
            .spec
            .fabric
            .as_ref()
            .filter(|_| self.backend == Backend::Htb)
        {
            return Some(serde_json::json!({
                "topology": f.topology.as_str(),
                "ports": crate::kernel_fabric::counters(self, f),
                "unroutable": 0,
                "write_errors": 0,
            }));
        }
        let text = std::fs::read_to_string(state::counters_file(&self.spec.name)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// Takes down a lab by name, with or without its state file.
pub fn down(name: &str) -> Result<bool, LabError> {
    detect::require_lab_privileges()?;
    let lock = state::lock(name)?;
    let removed = match Lab::load(name) {
        Ok(lab) => lab.down().map(|_| true),
        Err(LabError::NotFound(_)) | Err(LabError::Corrupt { .. }) => {
            let leftovers = lab_namespaces(name);
            let found = !leftovers.is_empty() || state::files(name).iter().any(|f| f.exists());
            down_named(name, None, &leftovers)?;
            Ok(found)
        }
        Err(e) => Err(e),
    }?;
    lock.remove();
    Ok(removed)
}

fn lab_namespaces(name: &str) -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return Vec::new();
    };
    let prefix = format!("lr-{name}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(str::to_owned)
        .collect()
}

fn down_named(
    name: &str,
    emulator: Option<&ProcessId>,
    namespaces: &[String],
) -> Result<(), LabError> {
    if let Some(p) = emulator.filter(|p| p.alive()) {
        // The emulator's TUN devices vanish when it exits; end it before the
        // namespaces so the kernel never moves a device back to the host.
        let pid = rustix::process::Pid::from_raw(p.pid as i32);
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            for _ in 0..50 {
                if !p.alive() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if p.alive() {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
    let mut all: Vec<String> = namespaces.to_vec();
    for ns in lab_namespaces(name) {
        if !all.contains(&ns) {
            all.push(ns);
        }
    }
    let mut first_error = None;
    for ns in all {
        if Path::new("/run/netns").join(&ns).exists()
            && let Err(e) = exec::run(&["ip", "netns", "del", &ns])
        {
            first_error.get_or_insert(e);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    for f in state::files(name) {
        let _ = std::fs::remove_file(f);
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::conditions::BackendChoice;

    /// A two-host lab at 44 ms, for tests of how a lab is planned.
    pub(crate) fn spec(backend: BackendChoice, router: bool) -> LabSpec {
        LabSpec {
            name: "t".into(),
            hosts: 2,
            router,
            mtu: 9000,
            backend,
            conditions: Conditions {
                rtt_us: 44_000,
                ..Conditions::default()
            },
            fabric: None,
            links: 1,
            bond: None,
        }
    }

    #[test]
    fn dry_run_script_builds_a_routed_netem_lab() {
        let lab = Lab::plan(
            spec(BackendChoice::Netem, true),
            3,
            Backend::Netem,
            String::new(),
        )
        .unwrap();
        let script = lab.script().join("\n");
        assert!(script.contains("ip netns add lr-t-r"));
        assert!(
            script.contains("ip link add lab0 netns lr-t-h1 type veth peer name h1 netns lr-t-r")
        );
        assert!(script.contains("ip -n lr-t-h2 addr add 10.201.3.34/28 dev lab0"));
        assert!(script.contains("ip -n lr-t-h1 -6 route add default via fd77:0:3:1::1"));
        assert!(
            script.contains("tc -n lr-t-r qdisc add dev h2 root netem limit 1000000 delay 22000us")
        );
    }

    #[test]
    fn emulator_labs_always_have_a_router_namespace_and_no_qdiscs() {
        let lab = Lab::plan(
            spec(BackendChoice::Emulator, false),
            0,
            Backend::Emulator,
            String::new(),
        )
        .unwrap();
        assert_eq!(lab.router.as_deref(), Some("lr-t-r"));
        let script = lab.script().join("\n");
        assert!(script.contains("linerate lab emulator"));
        assert!(!script.contains("tc "));
    }

    #[test]
    fn bad_specs_are_refused_before_anything_is_created() {
        let mut s = spec(BackendChoice::Auto, false);
        s.name = "Has Space".into();
        assert!(s.validate().is_err());
        let mut s = spec(BackendChoice::Veth, false);
        s.hosts = 3;
        s.conditions = Conditions::default();
        assert!(Lab::plan(s, 0, Backend::Veth, String::new()).is_err());
    }
}
