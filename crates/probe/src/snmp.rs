//! The host's UDP counters from /proc/net/snmp and /proc/net/snmp6, which
//! count for the reader's network namespace.

/// Datagrams the host dropped because a socket's receive buffer was full,
/// IPv4 and IPv6 together; `None` where the files cannot be read.
pub fn udp_rcvbuf_errors() -> Option<u64> {
    let v4 = std::fs::read_to_string("/proc/net/snmp").ok()?;
    let v6 = std::fs::read_to_string("/proc/net/snmp6").unwrap_or_default();
    Some(
        parse_snmp(&v4, "Udp", "RcvbufErrors")? + parse_snmp6(&v6, "Udp6RcvbufErrors").unwrap_or(0),
    )
}

/// One counter from /proc/net/snmp's pairs of lines, a header line of
/// names and a line of values, each led by `group:`.
pub fn parse_snmp(text: &str, group: &str, name: &str) -> Option<u64> {
    let lead = format!("{group}:");
    let mut lines = text
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(&lead));
    let names = lines.next()?;
    let values = lines.next()?;
    let at = names.split_whitespace().position(|n| n == name)?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// One counter from /proc/net/snmp6's lines of a name and a value.
pub fn parse_snmp6(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        (f.next() == Some(name)).then(|| f.next()?.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNMP: &str = "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n\
                        Udp: 53180097 100 6953170 60228397 6953171 0\n\
                        UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n\
                        UdpLite: 0 0 0 0 9 0\n";

    #[test]
    fn reads_the_named_counter_of_its_group() {
        assert_eq!(parse_snmp(SNMP, "Udp", "RcvbufErrors"), Some(6_953_171));
        assert_eq!(parse_snmp(SNMP, "UdpLite", "RcvbufErrors"), Some(9));
        assert_eq!(parse_snmp(SNMP, "Udp", "Nothing"), None);
        assert_eq!(parse_snmp("Udp: a b\n", "Udp", "a"), None);
        let six = "Udp6InDatagrams  \t 5\nUdp6RcvbufErrors \t 12\n";
        assert_eq!(parse_snmp6(six, "Udp6RcvbufErrors"), Some(12));
        assert_eq!(parse_snmp6(six, "Udp6Missing"), None);
    }

    #[test]
    fn this_host_has_the_counter() {
        assert!(udp_rcvbuf_errors().is_some());
    }
}
