//! The papers' before/after figure on a lab WAN. Both lab hosts start
//! from this machine's own settings, then the plan for the path is applied
//! inside them with `tune apply`'s machinery and reverted after each
//! "after" run, alternating, so the gain is measured the way a user would
//! get it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use linerate_lab::BackendChoice;
use linerate_result::stats::median;
use linerate_tune::{SysRoot, Target, apply, facts, plan};
use serde_json::json;

use super::bed::Bed;
use super::{Collector, StudyCommon, StudyEvent, timed, wan_lab};
use crate::StudyError;
use linerate_compare::document::ManyRuns;

/// What the tuning study measures.
#[derive(Debug, Clone)]
pub struct TuningStudy {
    /// What every study takes.
    pub common: StudyCommon,
    /// RTT of the lab WAN, µs.
    pub rtt_us: u64,
    /// Bottleneck rate of the lab WAN, and the plan's target.
    pub rate_bps: u64,
    /// Before/after rounds, alternating (default 3, 1 when quick).
    pub rounds: Option<u32>,
    /// Backend for the WAN conditions.
    pub backend: BackendChoice,
}

/// The host's own values of every sysctl the audit reads, as settings, so
/// a fresh namespace can start where this machine is.
fn host_settings() -> Vec<plan::Setting> {
    let f = facts::collect(&SysRoot::live(), Some("lo"));
    f.sysctls
        .iter()
        .filter(|(k, _)| !k.ends_with("available_congestion_control"))
        .map(|(k, v)| plan::Setting::new(k, v, "this machine's value"))
        .collect()
}

/// Runs the tuning study, telling `on` of every run.
pub fn tuning(a: &TuningStudy, on: &mut dyn FnMut(StudyEvent)) -> Result<ManyRuns, StudyError> {
    let c = &a.common;
    let started = SystemTime::now();
    let t = c.seconds();
    let rounds = a.rounds.unwrap_or(if c.quick { 1 } else { 3 }).max(1);
    let rtt_s = a.rtt_us as f64 / 1e6;
    let host = facts::collect(&SysRoot::live(), None);
    let target = Target {
        rate_bps: a.rate_bps as f64,
        rtt_s,
        loss: None,
        streams: Some(1),
        mss: None,
    };
    let the_plan = plan::make(&host, target);
    let bed = Bed::up(wan_lab(c, a.backend, a.rtt_us, a.rate_bps), &c.linerate)?;
    on(StudyEvent::LabUp(format!(
        "lab {} on backend {} ({}); {rounds} rounds of {t} s, 1 stream",
        bed.lab.spec.name,
        bed.lab.backend.as_str(),
        bed.lab.backend_reason,
    )));
    let state_dir = std::env::temp_dir().join(format!("linerate-tuning-{}", std::process::id()));
    let states: Vec<(String, PathBuf)> = bed
        .lab
        .hosts
        .iter()
        .map(|h| (h.netns.clone(), state_dir.join(format!("{}.json", h.name))))
        .collect();
    let mut col = Collector {
        points: Vec::new(),
        on,
    };
    let result = before_and_after(c, &bed, &the_plan, &states, rounds, &mut col);
    let _ = std::fs::remove_dir_all(&state_dir);
    let report = result?;
    let points = std::mem::take(&mut col.points);
    let of = |series: &str| {
        median(
            points
                .iter()
                .filter(|p| p.series == series)
                .map(|p| p.result.summary.bits_per_second),
        )
    };
    let (before, after) = (of("before"), of("after"));
    let mut findings = BTreeMap::new();
    findings.insert("before_median_bps".into(), before);
    findings.insert("after_median_bps".into(), after);
    let gain = if before > 0.0 { after / before } else { 0.0 };
    findings.insert("gain".into(), gain);
    findings.insert("planned_buffer_bytes".into(), the_plan.buffer_bytes as f64);
    let mut definitions = BTreeMap::new();
    definitions.insert(
        "gain".into(),
        "Median received throughput of one stream with the plan's sysctls applied in both lab hosts, divided by the median with this machine's own settings in them; runs alternate before/after and the plan is reverted after each after-run.".into(),
    );
    let parameters = json!({
        "rtt_ms": rtt_s * 1e3, "rate_bps": a.rate_bps, "seconds": t, "rounds": rounds,
        "quick": c.quick, "cc": c.cc, "plan": the_plan,
        "applied": report.changed, "skipped": report.skipped,
    });
    drop(bed);
    Ok(ManyRuns {
        kind: "study",
        detail: "tuning".into(),
        started,
        parameters,
        headline: points.len().saturating_sub(1),
        points,
        findings,
        definitions,
    })
}

/// Both hosts from this machine's settings; then each round one run
/// before and one with the plan applied, reverted after it.
fn before_and_after(
    c: &StudyCommon,
    bed: &Bed,
    the_plan: &plan::Plan,
    states: &[(String, PathBuf)],
    rounds: u32,
    col: &mut Collector,
) -> Result<apply::Report, StudyError> {
    let proc_sys = Path::new("/proc/sys");
    // A fresh namespace has the kernel's defaults, not the host's.
    let mirror = host_settings();
    for (ns, _) in states {
        bed.in_host(ns, || {
            apply::set(&mirror, proc_sys)?;
            Ok(())
        })?;
    }
    let mut report = apply::Report::default();
    let spec = timed(c.seconds(), 1);
    let cc = c.cc.as_deref();
    for round in 1..=rounds {
        let doc = bed.bench(spec.clone(), cc, false, &c.command_line)?;
        col.add("before", json!({"round": round, "settings": "host"}), doc);
        for (ns, state) in states {
            let label = format!("netns {ns}");
            report = bed.in_host(ns, || {
                let settings = &the_plan.settings;
                Ok(apply::apply(
                    settings,
                    proc_sys,
                    state,
                    &label,
                    "study tuning",
                )?)
            })?;
        }
        let after = bed.bench(spec.clone(), cc, false, &c.command_line);
        for (ns, state) in states {
            bed.in_host(ns, || Ok(apply::revert(proc_sys, state)?))?;
        }
        col.add("after", json!({"round": round, "settings": "plan"}), after?);
    }
    Ok(report)
}
