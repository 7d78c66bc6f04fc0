//! `linerate study tuning`: the papers' before/after figure on a lab WAN.
//! Both lab hosts start from this machine's own settings, then the plan
//! for the path is applied inside them with `tune apply`'s machinery and
//! reverted after each "after" run, alternating, so the gain is measured
//! the way a user would get it.

use std::path::{Path, PathBuf};

use linerate_tune::{SysRoot, Target, apply, facts, plan};

use super::*;

#[derive(Args)]
#[command(
    after_help = "Example:\n  linerate study tuning --json tuning.json     44 ms, 10 Gbit/s, 3 rounds\n  linerate study tuning --rtt 88ms --rate 1gbit --quick"
)]
pub struct TuningArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// RTT of the lab WAN.
    #[arg(long, default_value = "44ms", value_parser = units::parse_time_us)]
    pub rtt: u64,
    /// Bottleneck rate of the lab WAN, and the plan's target.
    #[arg(long, default_value = "10gbit", value_parser = units::parse_rate)]
    pub rate: u64,
    /// Before/after rounds, alternating (default 3, 1 with --quick).
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Backend for the WAN conditions.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: crate::lab_cmd::BackendArg,
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

pub fn run(a: TuningArgs) -> anyhow::Result<()> {
    let c = &a.common;
    let started = SystemTime::now();
    let t = secs(c);
    let rounds = a.rounds.unwrap_or(if c.quick { 1 } else { 3 }).max(1);
    let rtt_s = a.rtt as f64 / 1e6;
    let host = facts::collect(&SysRoot::live(), None);
    let target = Target {
        rate_bps: a.rate as f64,
        rtt_s,
        loss: None,
        streams: Some(1),
        mss: None,
    };
    let the_plan = plan::make(&host, target);
    let bed = Bed::up(wan_spec(c, a.backend, a.rtt, a.rate))?;
    eprintln!(
        "linerate study tuning: lab {} on backend {} ({}); {} rounds of {t} s, 1 stream",
        bed.lab.spec.name,
        bed.lab.backend.as_str(),
        bed.lab.backend_reason,
        rounds
    );
    let state_dir = std::env::temp_dir().join(format!("linerate-tuning-{}", std::process::id()));
    let states: Vec<(String, PathBuf)> = bed
        .lab
        .hosts
        .iter()
        .map(|h| (h.netns.clone(), state_dir.join(format!("{}.json", h.name))))
        .collect();
    let result = (|| -> anyhow::Result<(Collector, apply::Report)> {
        // Start both namespaces from this machine's settings: a fresh
        // namespace has the kernel's defaults, not the host's.
        let mirror = host_settings();
        for (ns, _) in &states {
            crate::netns::run_in(Some(ns), || {
                Ok(apply::set(&mirror, Path::new("/proc/sys"))?)
            })
            .with_context(|| format!("copying this machine's sysctls into {ns}"))?;
        }
        let mut col = Collector { points: Vec::new() };
        let mut report = apply::Report::default();
        let spec = timed(t, 1);
        for round in 1..=rounds {
            let doc = bed.bench(spec.clone(), c, false)?;
            col.add("before", json!({"round": round, "settings": "host"}), doc);
            for (ns, state) in &states {
                report = crate::tune_cmd::apply_in(
                    Some(ns),
                    &the_plan.settings,
                    state,
                    &format!("netns {ns}"),
                    "study tuning",
                )?;
            }
            let after = bed.bench(spec.clone(), c, false);
            for (ns, state) in &states {
                crate::tune_cmd::revert_in(Some(ns), state)
                    .with_context(|| format!("reverting the plan in {ns}"))?;
            }
            col.add("after", json!({"round": round, "settings": "plan"}), after?);
        }
        Ok((col, report))
    })();
    let _ = std::fs::remove_dir_all(&state_dir);
    let (mut col, report) = result?;
    let median = |series: &str| {
        linerate_result::stats::median(
            col.points
                .iter()
                .filter(|p| p.series == series)
                .map(|p| p.result.summary.bits_per_second),
        )
    };
    let (before, after) = (median("before"), median("after"));
    let mut findings = BTreeMap::new();
    findings.insert("before_median_bps".into(), before);
    findings.insert("after_median_bps".into(), after);
    findings.insert(
        "gain".into(),
        if before > 0.0 { after / before } else { 0.0 },
    );
    findings.insert("planned_buffer_bytes".into(), the_plan.buffer_bytes as f64);
    let mut definitions = BTreeMap::new();
    definitions.insert(
        "gain".into(),
        "Median received throughput of one stream with the plan's sysctls applied in both lab hosts, divided by the median with this machine's own settings in them; runs alternate before/after and the plan is reverted after each after-run.".into(),
    );
    eprintln!(
        "  before {}  after {}  gain {:.1}x",
        fmt_rate(before),
        fmt_rate(after),
        findings["gain"]
    );
    let headline = col.points.len().saturating_sub(1);
    let params = json!({
        "rtt_ms": rtt_s * 1e3, "rate_bps": a.rate, "seconds": t, "rounds": rounds,
        "quick": c.quick, "cc": c.cc, "plan": the_plan,
        "applied": report.changed, "skipped": report.skipped,
    });
    let points = std::mem::take(&mut col.points);
    drop(bed);
    crate::study_doc::write(
        linerate_harness::document::ManyRuns {
            kind: "study",
            detail: "tuning".into(),
            started,
            parameters: params,
            points,
            headline,
            findings,
            definitions,
        },
        &c.json,
    )
}
