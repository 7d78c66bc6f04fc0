//! Whether the links of a striped run or of a bond carried their shares.
//! A bond (or a multipath route) puts each flow on one member by a hash,
//! so one flow never uses more than one link and a few flows can land on
//! the same one; a striped run gives each link its own streams, so a link
//! that carried less than the others is slower. Either is what held the
//! run below the links' sum, and is named with each link's share.

use linerate_result::{Limit, MemberShare, PathShare, Verdict};

use linerate_probe::members::Spreader;
use linerate_probe::units::fmt_rate;

/// A link that carried less than this fraction of an even share (1/n) is
/// named: idle, or slower than the others.
pub const UNDER_SHARE: f64 = 0.6;
/// A link that carried more than this multiple of an even share took the
/// flows of others.
pub const OVER_SHARE: f64 = 1.4;

/// How the run's data was spread over several links.
pub struct Spread<'a> {
    /// The striped paths, when the run was striped (`--stripe`).
    pub paths: &'a [PathShare],
    /// The members of the bond or multipath route to the peer, when there
    /// was one, and what spread the flows over them.
    pub members: Option<(&'a Spreader, &'a [MemberShare])>,
    /// The run's flows in its data direction.
    pub flows: u32,
    /// The run's payload rate.
    pub bits_per_second: f64,
}

/// `base`, or the links' verdict where they did not carry their shares;
/// each link's share is added to the evidence either way.
pub fn judge(base: Verdict, s: &Spread) -> Verdict {
    if s.paths.len() >= 2 {
        return striped(base, s.paths);
    }
    match s.members {
        // Counters that did not move say nothing (a device not found).
        Some((spreader, members)) if members.len() >= 2 && members.iter().any(|m| m.bytes > 0) => {
            bonded(base, spreader, members, s)
        }
        _ => base,
    }
}

fn shares_evidence(v: &mut Verdict, prefix: &str, shares: &[f64]) {
    let (min, max) = min_max(shares);
    v.evidence.insert(format!("{prefix}s"), shares.len() as f64);
    v.evidence.insert(format!("{prefix}_min_share"), min);
    v.evidence.insert(format!("{prefix}_max_share"), max);
}

fn min_max(shares: &[f64]) -> (f64, f64) {
    shares.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
        (lo.min(x), hi.max(x))
    })
}

fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// "24-26 %", or "25 %" where both round to one figure.
fn pct_range(min: f64, max: f64) -> String {
    let (lo, hi) = ((min * 100.0).round(), (max * 100.0).round());
    if lo == hi {
        format!("{lo:.0} %")
    } else {
        format!("{lo:.0}-{hi:.0} %")
    }
}

fn striped(mut base: Verdict, paths: &[PathShare]) -> Verdict {
    let shares: Vec<f64> = paths.iter().map(|p| p.share).collect();
    shares_evidence(&mut base, "path", &shares);
    let even = 1.0 / paths.len() as f64;
    let Some(slow) = paths
        .iter()
        .filter(|p| p.share < UNDER_SHARE * even)
        .min_by(|a, b| a.share.total_cmp(&b.share))
    else {
        let (min, max) = min_max(&shares);
        base.sentence.push_str(&format!(
            " The {} striped paths carried {} each.",
            paths.len(),
            pct_range(min, max)
        ));
        return base;
    };
    let others: Vec<&PathShare> = paths.iter().filter(|p| p.path != slow.path).collect();
    let others_bps = others.iter().map(|p| p.bits_per_second).sum::<f64>() / others.len() as f64;
    let from = slow
        .local
        .as_deref()
        .map_or(String::new(), |l| format!("{l} -> "));
    let sentence = format!(
        "Links: path {} ({from}{}) carried {} of the payload ({}, {}) while the {} \
         others carried {} each on average: that link is slower than the others (its rate, \
         a fault or other traffic), and a striped run goes at the sum of its links.",
        slow.path,
        slow.remote,
        pct(slow.share),
        fmt_rate(slow.bits_per_second),
        flows(slow.streams.len() as u32),
        others.len(),
        fmt_rate(others_bps),
    );
    Verdict {
        limit: Limit::Links,
        side: None,
        sentence,
        evidence: base.evidence,
    }
}

fn bonded(mut base: Verdict, spreader: &Spreader, members: &[MemberShare], s: &Spread) -> Verdict {
    let shares: Vec<f64> = members.iter().map(|m| m.share).collect();
    shares_evidence(&mut base, "member", &shares);
    let n = members.len();
    let even = 1.0 / n as f64;
    let used: Vec<&MemberShare> = members.iter().filter(|m| m.share >= 0.02).collect();
    let Some(top) = members.iter().max_by(|a, b| a.share.total_cmp(&b.share)) else {
        return base;
    };
    let low = members
        .iter()
        .min_by(|a, b| a.share.total_cmp(&b.share))
        .unwrap_or(top);
    let what = spreader.describe();
    let advice = if spreader.hashes_ports() {
        "a flow never uses more than one member: run several streams per member (-P 4 per \
         link spreads well) or --stripe over each link's own address"
    } else {
        "its hash looks at addresses only, so every flow between two hosts takes the same \
         member whatever -P says (xmit_hash_policy=layer3+4 or \
         fib_multipath_hash_policy=1 spreads by ports too); --stripe over each link's own \
         address uses them all"
    };
    let sentence = if s.flows == 1 || used.len() == 1 {
        format!(
            "Links: {} over {what} of {n} links: the hash put {} on {} ({} of the bytes), so \
             the run had one link's rate ({}); {advice}.",
            flows(s.flows),
            if s.flows == 1 { "it" } else { "them all" },
            top.device,
            pct(top.share),
            fmt_rate(s.bits_per_second),
        )
    } else if top.share > OVER_SHARE * even || low.share < UNDER_SHARE * even {
        format!(
            "Links: {} over {what} of {n} links spread unevenly: {} carried {}, {} {} \
             ({} of {n} links carried traffic); the hash gave some links more flows than \
             others, or a link is slower; {advice}.",
            flows(s.flows),
            top.device,
            pct(top.share),
            low.device,
            pct(low.share),
            used.len(),
        )
    } else {
        let (min, max) = min_max(&shares);
        base.sentence.push_str(&format!(
            " The {n} links of {what} carried {} each.",
            pct_range(min, max)
        ));
        return base;
    };
    Verdict {
        limit: Limit::Links,
        side: None,
        sentence,
        evidence: base.evidence,
    }
}

fn flows(n: u32) -> String {
    if n == 1 {
        "1 stream".into()
    } else {
        format!("{n} streams")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Verdict {
        Verdict {
            limit: Limit::PathFull,
            side: None,
            sentence: "Path full.".into(),
            evidence: Default::default(),
        }
    }

    fn path(n: u16, gbps: f64, total: f64) -> PathShare {
        PathShare {
            path: n,
            local: Some(format!("10.{n}.0.1")),
            remote: format!("10.{n}.0.2"),
            streams: vec![n - 1],
            bytes: (gbps * 1.25e8) as u64,
            bits_per_second: gbps * 1e9,
            retransmits: 0,
            share: gbps / total,
        }
    }

    fn member(dev: &str, share: f64) -> MemberShare {
        MemberShare {
            device: dev.into(),
            bytes: (share * 1e9) as u64,
            share,
        }
    }

    fn spread<'a>(
        paths: &'a [PathShare],
        members: Option<(&'a Spreader, &'a [MemberShare])>,
        flows: u32,
    ) -> Spread<'a> {
        Spread {
            paths,
            members,
            flows,
            bits_per_second: 1e9,
        }
    }

    #[test]
    fn a_slow_striped_path_is_named_with_its_share() {
        let paths = [
            path(1, 0.95, 3.05),
            path(2, 0.2, 3.05),
            path(3, 0.95, 3.05),
            path(4, 0.95, 3.05),
        ];
        let v = judge(base(), &spread(&paths, None, 4));
        assert_eq!(v.limit, Limit::Links);
        assert!(
            v.sentence
                .contains("path 2 (10.2.0.1 -> 10.2.0.2) carried 7 %"),
            "{}",
            v.sentence
        );
        let even = [
            path(1, 0.95, 3.8),
            path(2, 0.95, 3.8),
            path(3, 0.95, 3.8),
            path(4, 0.95, 3.8),
        ];
        let v = judge(base(), &spread(&even, None, 4));
        assert_eq!(
            v.limit,
            Limit::PathFull,
            "an even spread keeps the run's own verdict"
        );
        assert!(
            v.sentence
                .ends_with("The 4 striped paths carried 25 % each."),
            "{}",
            v.sentence
        );
        assert_eq!(v.evidence["paths"], 4.0);
    }

    #[test]
    fn one_flow_over_a_bond_is_one_links_rate_and_the_hash_is_named() {
        let bond = Spreader::Multipath {
            hash_policy: Some(1),
        };
        let m = [
            member("link1", 0.0),
            member("link2", 1.0),
            member("link3", 0.0),
        ];
        let v = judge(base(), &spread(&[], Some((&bond, &m)), 1));
        assert_eq!(v.limit, Limit::Links);
        assert!(
            v.sentence
                .contains("the hash put it on link2 (100 % of the bytes)"),
            "{}",
            v.sentence
        );
        assert!(v.sentence.contains("--stripe"));
    }

    #[test]
    fn many_flows_hashed_unevenly_name_the_busiest_and_the_idlest_link() {
        let bond = Spreader::Bond {
            device: "bond0".into(),
            hash: "layer3+4".into(),
        };
        let m = [
            member("eth1", 0.5),
            member("eth2", 0.25),
            member("eth3", 0.25),
            member("eth4", 0.0),
        ];
        let v = judge(base(), &spread(&[], Some((&bond, &m)), 4));
        assert_eq!(v.limit, Limit::Links);
        assert!(
            v.sentence
                .contains("eth1 carried 50 %, eth4 0 % (3 of 4 links"),
            "{}",
            v.sentence
        );
        let even = [
            member("eth1", 0.26),
            member("eth2", 0.24),
            member("eth3", 0.25),
            member("eth4", 0.25),
        ];
        let v = judge(base(), &spread(&[], Some((&bond, &even)), 16));
        assert_eq!(v.limit, Limit::PathFull);
        assert_eq!(v.evidence["member_min_share"], 0.24);
    }

    #[test]
    fn a_hash_of_addresses_only_is_named_as_such() {
        let by_address = Spreader::Multipath {
            hash_policy: Some(0),
        };
        let m = [member("link1", 1.0), member("link2", 0.0)];
        let v = judge(base(), &spread(&[], Some((&by_address, &m)), 8));
        assert!(
            v.sentence.contains("8 streams over a multipath route"),
            "{}",
            v.sentence
        );
        assert!(v.sentence.contains("addresses only"), "{}", v.sentence);
    }
}
