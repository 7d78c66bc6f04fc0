//! The ip/tc commands that build a lab, in order. `--dry-run` prints them;
//! `up` runs them; so what people copy by hand is exactly what linerate does.

use crate::conditions::Backend;
use crate::emulator::DEVICE;
use crate::layout::Lab;

/// One step of bringing a lab up.
pub enum Step {
    Run(Vec<String>),
    /// Start the emulator in the router namespace; it creates `lab0` in every host.
    StartEmulator,
}

fn cmd(parts: &[&str]) -> Step {
    Step::Run(parts.iter().map(|s| s.to_string()).collect())
}

/// Every step, in order, to build `lab` from nothing.
pub fn steps(lab: &Lab) -> Vec<Step> {
    let mtu = lab.spec.mtu.to_string();
    let mut s = Vec::new();
    for ns in lab.namespaces() {
        s.push(cmd(&["ip", "netns", "add", &ns]));
        s.push(cmd(&["ip", "-n", &ns, "link", "set", "lo", "up"]));
    }
    if lab.spec.links > 1 {
        s.extend(crate::links::steps(lab).into_iter().map(Step::Run));
        return s;
    }
    let router = lab.router.as_deref();
    match (lab.backend, router, &lab.spec.fabric) {
        (Backend::Emulator, _, _) => s.push(Step::StartEmulator),
        (Backend::Htb, _, Some(fabric)) => s.extend(
            crate::kernel_fabric::steps(lab, fabric)
                .into_iter()
                .map(Step::Run),
        ),
        (_, None, _) => {
            let (a, b) = (&lab.hosts[0].netns, &lab.hosts[1].netns);
            s.push(cmd(&[
                "ip", "link", "add", DEVICE, "netns", a, "type", "veth", "peer", "name", DEVICE,
                "netns", b,
            ]));
        }
        (_, Some(r), _) => {
            for h in &lab.hosts {
                s.push(cmd(&[
                    "ip", "link", "add", DEVICE, "netns", &h.netns, "type", "veth", "peer", "name",
                    &h.name, "netns", r,
                ]));
                s.push(cmd(&[
                    "ip", "-n", r, "link", "set", &h.name, "mtu", &mtu, "up",
                ]));
                s.push(cmd(&[
                    "ip",
                    "-n",
                    r,
                    "addr",
                    "add",
                    &format!("{}/28", h.gateway_v4),
                    "dev",
                    &h.name,
                ]));
                s.push(cmd(&[
                    "ip",
                    "-n",
                    r,
                    "addr",
                    "add",
                    &format!("{}/64", h.gateway_v6),
                    "dev",
                    &h.name,
                    "nodad",
                ]));
            }
            s.push(cmd(&[
                "ip",
                "netns",
                "exec",
                r,
                "sysctl",
                "-qw",
                "net.ipv4.ip_forward=1",
            ]));
            s.push(cmd(&[
                "ip",
                "netns",
                "exec",
                r,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.forwarding=1",
            ]));
        }
    }
    for h in &lab.hosts {
        let ns = h.netns.as_str();
        if lab.backend == Backend::Emulator {
            // The kernel orphans packets handed to a TUN device, so TCP's own
            // queue limit stops counting them; a ring that holds a whole
            // window keeps the host from dropping its own packets in bursts.
            s.push(cmd(&[
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
        s.push(cmd(&[
            "ip", "-n", ns, "link", "set", DEVICE, "mtu", &mtu, "up",
        ]));
        if lab
            .spec
            .fabric
            .as_ref()
            .is_some_and(|f| f.ecn_threshold_bytes.is_some())
        {
            // Switches that mark need senders that negotiate ECN.
            s.push(cmd(&[
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv4.tcp_ecn=1",
            ]));
        }
        s.push(cmd(&[
            "ip",
            "-n",
            ns,
            "addr",
            "add",
            &format!("{}/28", h.v4),
            "dev",
            DEVICE,
        ]));
        s.push(cmd(&[
            "ip",
            "-n",
            ns,
            "addr",
            "add",
            &format!("{}/64", h.v6),
            "dev",
            DEVICE,
            "nodad",
        ]));
        // Kernel switches route like a router: each host's gateway is its
        // switch's port.
        if lab.backend == Backend::Htb || (router.is_some() && lab.backend != Backend::Emulator) {
            s.push(cmd(&[
                "ip",
                "-n",
                ns,
                "route",
                "add",
                "default",
                "via",
                &h.gateway_v4.to_string(),
            ]));
            s.push(cmd(&[
                "ip",
                "-n",
                ns,
                "-6",
                "route",
                "add",
                "default",
                "via",
                &h.gateway_v6.to_string(),
            ]));
        } else {
            s.push(cmd(&[
                "ip", "-n", ns, "route", "add", "default", "dev", DEVICE,
            ]));
            s.push(cmd(&[
                "ip", "-n", ns, "-6", "route", "add", "default", "dev", DEVICE,
            ]));
        }
    }
    s.extend(qdisc_steps(lab, "add").into_iter().map(Step::Run));
    s
}

/// tc commands that put the lab's conditions on every egress (`add` or `replace`).
pub fn qdisc_steps(lab: &Lab, verb: &str) -> Vec<Vec<String>> {
    let c = &lab.spec.conditions;
    let args = match lab.backend {
        Backend::Netem => Some(c.netem_args()),
        Backend::Veth => c.tbf_args(lab.spec.mtu),
        Backend::Emulator | Backend::Htb => None,
    };
    let Some(args) = args else { return Vec::new() };
    // Egress of every link end that carries traffic between hosts.
    let ends: Vec<(String, String)> = match &lab.router {
        Some(r) => lab
            .hosts
            .iter()
            .map(|h| (r.clone(), h.name.clone()))
            .collect(),
        None => lab
            .hosts
            .iter()
            .map(|h| (h.netns.clone(), DEVICE.to_string()))
            .collect(),
    };
    ends.into_iter()
        .map(|(ns, dev)| {
            let mut v: Vec<String> = ["tc", "-n", &ns, "qdisc", verb, "dev", &dev, "root"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            v.extend(args.iter().cloned());
            v
        })
        .collect()
}
