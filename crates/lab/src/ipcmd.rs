//! The ip command lines a lab is built of, one function each, so that
//! plain links, parallel links and kernel switches say them alike.

/// A command line from its words.
pub fn cmd(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// `sysctl -qw SETTING` inside namespace `ns`.
pub fn sysctl(ns: &str, setting: &str) -> Vec<String> {
    cmd(&["ip", "netns", "exec", ns, "sysctl", "-qw", setting])
}

/// A veth pair: `a` in namespace `a_ns`, its peer `b` in `b_ns`.
pub fn veth(a: &str, a_ns: &str, b: &str, b_ns: &str) -> Vec<String> {
    cmd(&[
        "ip", "link", "add", a, "netns", a_ns, "type", "veth", "peer", "name", b, "netns", b_ns,
    ])
}

/// Device `dev` of namespace `ns` up with MTU `mtu`.
pub fn up(ns: &str, dev: &str, mtu: &str) -> Vec<String> {
    cmd(&["ip", "-n", ns, "link", "set", dev, "mtu", mtu, "up"])
}

/// An IPv4 and an IPv6 address (`addr/len` each) on device `dev` of
/// namespace `ns`; the IPv6 one without duplicate address detection, which
/// would hold it back for a second.
pub fn addrs(ns: &str, dev: &str, v4: &str, v6: &str) -> [Vec<String>; 2] {
    [
        cmd(&["ip", "-n", ns, "addr", "add", v4, "dev", dev]),
        cmd(&["ip", "-n", ns, "addr", "add", v6, "dev", dev, "nodad"]),
    ]
}

/// `ip -n NS [-6] route add TO REST...`.
pub fn route(ns: &str, v6: bool, to: &str, rest: &[&str]) -> Vec<String> {
    let mut v = cmd(&["ip", "-n", ns]);
    if v6 {
        v.push("-6".into());
    }
    v.extend(cmd(&["route", "add", to]));
    v.extend(cmd(rest));
    v
}

/// The IPv4 and IPv6 routes of `to4` and `to6` via `gw4` and `gw6`.
pub fn routes_via(
    ns: &str,
    (to4, gw4): (&str, &str),
    (to6, gw6): (&str, &str),
) -> [Vec<String>; 2] {
    [
        route(ns, false, to4, &["via", gw4]),
        route(ns, true, to6, &["via", gw6]),
    ]
}
