//! The LAN study: bandwidth against streams, MTU 1500 against 9000, IPv4
//! against IPv6, direct against through a relay node (kernel forwarding).

use std::collections::BTreeMap;
use std::time::SystemTime;

use linerate_lab::{BackendChoice, Conditions, LabSpec};
use serde_json::json;

use super::bed::Bed;
use super::{Collector, StudyCommon, StudyEvent, timed};
use crate::StudyError;
use linerate_compare::document::ManyRuns;

/// What the LAN study sweeps.
#[derive(Debug, Clone)]
pub struct LanStudy {
    /// What every study takes.
    pub common: StudyCommon,
    /// Stream counts to sweep (1 and 4 when quick).
    pub streams: Vec<u16>,
}

/// The stream counts every variant is compared at.
const COMPARED: [u16; 2] = [1, 4];

/// Runs the LAN study, telling `on` of every run.
pub fn lan(a: &LanStudy, on: &mut dyn FnMut(StudyEvent)) -> Result<ManyRuns, StudyError> {
    let c = &a.common;
    let started = SystemTime::now();
    let t = c.seconds();
    let streams: Vec<u16> = if c.quick {
        COMPARED.to_vec()
    } else {
        a.streams.clone()
    };
    let spec = |router: bool, mtu: u32| LabSpec {
        name: c.lab_name.clone(),
        hosts: 2,
        router,
        mtu,
        backend: BackendChoice::Veth,
        conditions: Conditions::default(),
        fabric: None,
        links: 1,
        bond: None,
    };
    let cc = c.cc.as_deref();
    let run = |bed: &Bed, p: u16, v6: bool| bed.bench(timed(t, p), cc, v6, &c.command_line);
    let mut col = Collector {
        points: Vec::new(),
        on,
    };
    {
        let bed = Bed::up(spec(false, 1500), &c.linerate)?;
        (col.on)(StudyEvent::LabUp("direct veth link, MTU 1500".into()));
        for &p in &streams {
            let factors = json!({"streams": p, "mtu": 1500, "ip": 4, "path": "direct"});
            col.add("streams", factors, run(&bed, p, false)?);
        }
        for p in COMPARED {
            let factors = json!({"streams": p, "mtu": 1500, "ip": 6, "path": "direct"});
            col.add("ipv6", factors, run(&bed, p, true)?);
        }
    }
    {
        let bed = Bed::up(spec(false, 9000), &c.linerate)?;
        (col.on)(StudyEvent::LabUp("direct veth link, MTU 9000".into()));
        for p in COMPARED {
            let factors = json!({"streams": p, "mtu": 9000, "ip": 4, "path": "direct"});
            col.add("mtu9000", factors, run(&bed, p, false)?);
        }
    }
    {
        let bed = Bed::up(spec(true, 1500), &c.linerate)?;
        (col.on)(StudyEvent::LabUp(
            "through a relay (router namespace, kernel forwarding), MTU 1500".into(),
        ));
        for p in COMPARED {
            let factors = json!({"streams": p, "mtu": 1500, "ip": 4, "path": "relay"});
            col.add("relay", factors, run(&bed, p, false)?);
        }
    }
    let points = col.points;
    let mut findings = BTreeMap::new();
    let mut definitions = BTreeMap::new();
    let rate = |series: &str, p: u16| {
        points
            .iter()
            .find(|x| {
                x.series == series
                    && x.factors.get("streams").and_then(|v| v.as_u64()) == Some(u64::from(p))
            })
            .map(|x| x.result.summary.bits_per_second)
    };
    for p in COMPARED {
        let base = rate("streams", p);
        for (series, key) in [
            ("ipv6", "ipv6_over_ipv4"),
            ("mtu9000", "mtu9000_over_mtu1500"),
            ("relay", "relay_over_direct"),
        ] {
            if let (Some(b), Some(x)) = (base, rate(series, p)) {
                findings.insert(format!("{key}_P{p}"), x / b);
            }
        }
    }
    definitions.insert("*_over_*_P{n}".into(), "Throughput of the variant divided by the direct, MTU 1500, IPv4 run with the same number of streams.".into());
    let best = (0..points.len())
        .filter(|i| points[*i].series == "streams")
        .max_by(|x, y| {
            let bps = |i: usize| points[i].result.summary.bits_per_second;
            bps(*x).total_cmp(&bps(*y))
        })
        .unwrap_or(0);
    let parameters = json!({"streams": streams, "seconds": t, "quick": c.quick, "cc": c.cc});
    Ok(ManyRuns {
        kind: "study",
        detail: "lan".into(),
        started,
        parameters,
        points,
        headline: best,
        findings,
        definitions,
    })
}
