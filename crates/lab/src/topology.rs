//! The ip/tc commands that build a lab, in order. `--dry-run` prints them;
//! `up` runs them; so what people copy by hand is exactly what linerate does.

use crate::conditions::Backend;
use crate::ipcmd;
use crate::spec::Lab;
use linerate_emulator::DEVICE;

/// One step of bringing a lab up.
pub enum Step {
    Run(Vec<String>),
    /// Start the emulator in the router namespace; it creates `lab0` in every host.
    StartEmulator,
}

/// Every step, in order, to build `lab` from nothing.
pub fn steps(lab: &Lab) -> Vec<Step> {
    let mtu = lab.spec.mtu.to_string();
    let mut s: Vec<Vec<String>> = Vec::new();
    for ns in lab.namespaces() {
        s.push(ipcmd::cmd(&["ip", "netns", "add", &ns]));
        s.push(ipcmd::cmd(&["ip", "-n", &ns, "link", "set", "lo", "up"]));
    }
    if lab.spec.links > 1 {
        s.extend(crate::links::steps(lab));
        return s.into_iter().map(Step::Run).collect();
    }
    let router = lab.router.as_deref();
    let mut emulator = false;
    match (lab.backend, router, &lab.spec.fabric) {
        (Backend::Emulator, _, _) => emulator = true,
        (Backend::Htb, _, Some(fabric)) => s.extend(crate::kernel_fabric::steps(lab, fabric)),
        (_, None, _) => {
            let (a, b) = (&lab.hosts[0].netns, &lab.hosts[1].netns);
            s.push(ipcmd::veth(DEVICE, a, DEVICE, b));
        }
        (_, Some(r), _) => {
            for h in &lab.hosts {
                s.push(ipcmd::veth(DEVICE, &h.netns, &h.name, r));
                s.push(ipcmd::up(r, &h.name, &mtu));
                s.extend(ipcmd::addrs(
                    r,
                    &h.name,
                    &format!("{}/28", h.gateway_v4),
                    &format!("{}/64", h.gateway_v6),
                ));
            }
            s.push(ipcmd::sysctl(r, "net.ipv4.ip_forward=1"));
            s.push(ipcmd::sysctl(r, "net.ipv6.conf.all.forwarding=1"));
        }
    }
    let mut hosts = Vec::new();
    for h in &lab.hosts {
        hosts.extend(host_steps(lab, h, &mtu));
    }
    hosts.extend(qdisc_steps(lab, "add"));
    let mut steps: Vec<Step> = s.into_iter().map(Step::Run).collect();
    if emulator {
        steps.push(Step::StartEmulator);
    }
    steps.extend(hosts.into_iter().map(Step::Run));
    steps
}

/// A host's end of its link up, with its addresses and routes.
fn host_steps(lab: &Lab, h: &crate::spec::Host, mtu: &str) -> Vec<Vec<String>> {
    let ns = h.netns.as_str();
    let mut s = Vec::new();
    if lab.backend == Backend::Emulator {
        // The kernel orphans packets handed to a TUN device, so TCP's own
        // queue limit stops counting them; a ring that holds a whole
        // window keeps the host from dropping its own packets in bursts.
        s.push(ipcmd::cmd(&[
            "ip",
            "-n",
            ns,
            "link",
            "set",
            DEVICE,
            "txqueuelen",
            "10000",
        ]));
    }
    s.push(ipcmd::up(ns, DEVICE, mtu));
    if lab
        .spec
        .fabric
        .as_ref()
        .is_some_and(|f| f.ecn_threshold_bytes.is_some())
    {
        // Switches that mark need senders that negotiate ECN.
        s.push(ipcmd::sysctl(ns, "net.ipv4.tcp_ecn=1"));
    }
    s.extend(ipcmd::addrs(
        ns,
        DEVICE,
        &format!("{}/28", h.v4),
        &format!("{}/64", h.v6),
    ));
    // Kernel switches route like a router: each host's gateway is its
    // switch's port.
    if lab.backend == Backend::Htb || (lab.router.is_some() && lab.backend != Backend::Emulator) {
        let (gw4, gw6) = (h.gateway_v4.to_string(), h.gateway_v6.to_string());
        s.extend(ipcmd::routes_via(ns, ("default", &gw4), ("default", &gw6)));
    } else {
        s.push(ipcmd::route(ns, false, "default", &["dev", DEVICE]));
        s.push(ipcmd::route(ns, true, "default", &["dev", DEVICE]));
    }
    s
}

/// A link end whose egress carries traffic between hosts: its namespace
/// and device.
pub type LinkEnd = (String, String);

/// Each link end and the qdisc its conditions need (its arguments after
/// `root`), or none: the router's link into each host has that host's
/// conditions (`lab set --host`), or the lab's.
pub fn qdisc_plan(lab: &Lab) -> Vec<(LinkEnd, Option<Vec<String>>)> {
    let args = |c: &crate::Conditions| match lab.backend {
        Backend::Netem => Some(c.netem_args()),
        Backend::Veth => c.tbf_args(lab.spec.mtu),
        Backend::Emulator | Backend::Htb => None,
    };
    lab.hosts
        .iter()
        .map(|h| match &lab.router {
            Some(r) => (
                (r.clone(), h.name.clone()),
                args(lab.conditions_into(&h.name)),
            ),
            None => (
                (h.netns.clone(), DEVICE.to_string()),
                args(&lab.spec.conditions),
            ),
        })
        .collect()
}

/// `tc -n NS qdisc VERB dev DEV root ARGS`.
pub fn qdisc_argv((ns, dev): &LinkEnd, verb: &str, args: &[String]) -> Vec<String> {
    let mut v: Vec<String> = ["tc", "-n", ns, "qdisc", verb, "dev", dev, "root"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(args.iter().cloned());
    v
}

/// tc commands that put the lab's conditions on every egress (`add` or `replace`).
pub fn qdisc_steps(lab: &Lab, verb: &str) -> Vec<Vec<String>> {
    qdisc_plan(lab)
        .into_iter()
        .filter_map(|(end, args)| Some(qdisc_argv(&end, verb, &args?)))
        .collect()
}
