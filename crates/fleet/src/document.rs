//! The one result of a many-host run (kind `incast` or `mesh`): the
//! coordinator's outcome as a `linerate.result/1` document, its summary
//! and its verdict in words.

use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::session::coordinator::Outcome;
use linerate_probe::units::{fmt_bytes, fmt_rate};
use linerate_result::fleet::{CoordinatorCost, Fleet, FleetStep, FlowResult};
use linerate_result::{CpuPerGb, Hosts, Limit, ResultDoc, Summary, Verdict};

/// A step's factors in words, a pair of ranks by `name`d hosts.
pub fn describe(factors: &BTreeMap<String, u64>, name: &dyn Fn(u32) -> String) -> String {
    let get = |k: &str| factors.get(k).copied();
    match (
        get("senders_per_host"),
        get("source_hosts"),
        get("message_bytes"),
    ) {
        (Some(s), Some(h), Some(m)) => format!(
            "{s} sender(s) x {h} host(s), {} messages",
            fmt_bytes(m as f64)
        ),
        _ => match (get("from"), get("to")) {
            (Some(f), Some(t)) => format!(
                "{} -> {}",
                name(u32::try_from(f).unwrap_or(u32::MAX)),
                name(u32::try_from(t).unwrap_or(u32::MAX))
            ),
            _ => "all pairs".into(),
        },
    }
}

/// A mesh pair this far under the median pair's rate is an outlier.
pub const OUTLIER_SHARE: f64 = 0.9;

/// A mesh's outliers, each with why: failed pairs, then up to three pairs
/// under [`OUTLIER_SHARE`] of the median pair's rate, slowest first; none
/// when every pair is within 10 % of the median.
pub fn slowest_pairs(outcome: &Outcome) -> Vec<String> {
    let rates = outcome
        .steps
        .iter()
        .flat_map(|s| &s.flows)
        .filter(|f| f.error.is_none())
        .map(|f| f.bits_per_second);
    let median = linerate_result::stats::median(rates);
    slowest(outcome, 3)
        .into_iter()
        .filter(|f| f.error.is_some() || f.bits_per_second < OUTLIER_SHARE * median)
        .map(|f| {
            let why = f.error.as_deref().or(f.verdict.as_deref()).unwrap_or("");
            format!(
                "slow pair {} -> {}: {}, {:.0} % of the median pair's {} ({why})",
                name(outcome, f.from),
                name(outcome, f.to),
                fmt_rate(f.bits_per_second),
                100.0 * f.bits_per_second / median.max(1.0),
                fmt_rate(median),
            )
        })
        .collect()
}

/// Rank `rank`'s host, as it named itself when it joined.
pub fn name(outcome: &Outcome, rank: u32) -> String {
    outcome
        .hosts
        .get(rank as usize)
        .map_or_else(|| format!("rank {rank}"), |h| h.name.clone())
}

/// The `n` slowest flows of the run, failed ones first.
fn slowest(outcome: &Outcome, n: usize) -> Vec<&FlowResult> {
    let mut flows: Vec<&FlowResult> = outcome.steps.iter().flat_map(|s| &s.flows).collect();
    flows.sort_by(|x, y| {
        (x.error.is_none(), x.bits_per_second)
            .partial_cmp(&(y.error.is_none(), y.bits_per_second))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    flows.truncate(n);
    flows
}

/// The run's one document: its best step heads the summary, every step
/// and rank is kept, and the coordinator's own cost is counted;
/// `command_line` is recorded with any secret in it redacted.
pub fn document(
    kind: &'static str,
    launcher: &str,
    outcome: &Outcome,
    command_line: Vec<String>,
) -> ResultDoc {
    let best = outcome.steps.iter().max_by(|x, y| {
        x.aggregate_bits_per_second
            .total_cmp(&y.aggregate_bits_per_second)
    });
    let flows = || outcome.steps.iter().flat_map(|s| &s.flows);
    let totals = (
        best.map_or(0.0, |s| s.aggregate_bits_per_second),
        flows().map(|f| f.bytes).sum(),
        best.and_then(|s| s.flows.iter().map(|f| f.seconds).reduce(f64::max))
            .unwrap_or(0.0),
    );
    let retransmits = outcome.steps.iter().map(|s| s.retransmits).sum();
    let verdict = verdict(kind, best, outcome);
    let summary = Summary::new(totals, CpuPerGb::default(), retransmits, verdict);
    let fleet = Fleet {
        launcher: launcher.to_string(),
        hosts: outcome.hosts.clone(),
        steps: outcome.steps.clone(),
        coordinator: Some(CoordinatorCost {
            cpu_seconds: linerate_probe::cpu::process_seconds(),
            peak_rss_bytes: linerate_probe::cpu::process_peak_rss_bytes().unwrap_or(0),
            ranks: outcome.hosts.len() as u32,
        }),
    };
    let hosts = Hosts {
        client: linerate_probe::host::collect(),
        server: None,
    };
    let parameters = serde_json::json!({ "launcher": launcher, "ranks": outcome.hosts.len() });
    ResultDoc {
        fleet: Some(fleet),
        interrupted: outcome.stopped.is_some(),
        ..ResultDoc::new(
            kind,
            &command_line,
            SystemTime::now(),
            hosts,
            parameters,
            summary,
        )
    }
}

/// What the run found in words: an incast's best step and its fairness, a
/// mesh's spread of pair rates and its slowest pair with why; then every
/// rank that failed.
fn verdict(kind: &str, best: Option<&FleetStep>, outcome: &Outcome) -> Verdict {
    let mut evidence = BTreeMap::new();
    let mut limit = Limit::Unknown;
    let mut sentence = match (kind, best) {
        ("job", Some(s)) => job_sentence(s, &mut evidence),
        ("mesh", Some(_)) => {
            let (said, found) = mesh_sentence(outcome, &mut evidence);
            limit = found;
            said
        }
        (_, Some(s)) => {
            evidence.insert(
                "aggregate_bits_per_second".into(),
                s.aggregate_bits_per_second,
            );
            evidence.insert("jain_index".into(), s.jain_index);
            let ran = s.flows.iter().filter(|f| f.error.is_none()).count();
            let mut said = format!(
                "The {kind} peaked at {} ({}: {ran} flow(s)), Jain's fairness index {:.3}.",
                fmt_rate(s.aggregate_bits_per_second),
                describe(&s.factors, &|r| name(outcome, r)),
                s.jain_index
            );
            if let Some(shared) = shared_full_path(s) {
                limit = Limit::PathFull;
                said.push_str(&shared);
            }
            said
        }
        (_, None) => format!("The {kind} ran no step."),
    };
    let failed: Vec<String> = outcome
        .hosts
        .iter()
        .filter_map(|h| {
            Some(format!(
                "rank {} ({}): {}",
                h.rank,
                h.name,
                h.failed.as_ref()?
            ))
        })
        .collect();
    evidence.insert("failed_ranks".into(), failed.len() as f64);
    if !failed.is_empty() {
        sentence.push_str(&format!(" Failed: {}.", failed.join("; ")));
    }
    Verdict {
        limit,
        side: None,
        sentence,
        evidence,
    }
}

/// A proxy job in words: its run time, the ranks' median iteration and
/// the slowest rank's tail.
fn job_sentence(s: &FleetStep, evidence: &mut BTreeMap<String, f64>) -> String {
    let Some(j) = &s.job else {
        return "The job ran no rank.".into();
    };
    evidence.insert("total_seconds".into(), j.total_seconds);
    evidence.insert("median_iteration_us".into(), j.median_iteration_us);
    let ran: Vec<_> = j.ranks.iter().filter(|r| r.iterations > 0).collect();
    let Some(slowest) = ran.iter().max_by(|a, b| a.p99_us.total_cmp(&b.p99_us)) else {
        return format!("The {} job completed no iteration.", j.kind);
    };
    evidence.insert("slowest_rank_p99_us".into(), slowest.p99_us);
    let done = ran.iter().map(|r| r.iterations).min().unwrap_or(0);
    let ran_for = if done < j.iterations {
        format!(
            "{done} of {} iteration(s) (to its time limit)",
            j.iterations
        )
    } else {
        format!("{done} iteration(s)")
    };
    format!(
        "The {} job ran {ran_for} on {} rank(s) in {:.2} s: median iteration {:.0} us; \
         the slowest rank ({}) took {:.0} us at the 99th percentile, {:.0} us at most.",
        j.kind,
        j.ranks.len(),
        j.total_seconds,
        j.median_iteration_us,
        slowest.rank,
        slowest.p99_us,
        slowest.max_us
    )
}

/// One shared bottleneck, named once: when most of a step's flows found
/// the path full, they shared one full path, not each its own limit.
fn shared_full_path(s: &FleetStep) -> Option<String> {
    let ran: Vec<_> = s.flows.iter().filter(|f| f.error.is_none()).collect();
    let full = ran
        .iter()
        .filter(|f| f.limit == Some(Limit::PathFull))
        .count();
    if ran.len() < 2 || 2 * full < ran.len() {
        return None;
    }
    let rate = |f: &&linerate_result::fleet::FlowResult| f.bits_per_second;
    let lo = ran.iter().map(rate).fold(f64::INFINITY, f64::min);
    let hi = ran.iter().map(rate).fold(0.0, f64::max);
    Some(format!(
        " Path full: one bottleneck they share was full ({full} of {} flows found it full, \
         with the queue it built); each flow carried {} to {}.",
        ran.len(),
        fmt_rate(lo),
        fmt_rate(hi)
    ))
}

/// A mesh's spread of pair rates; then, when most pairs found their path
/// full, that once (the links set the rates), else the slowest pair and why.
fn mesh_sentence(outcome: &Outcome, evidence: &mut BTreeMap<String, f64>) -> (String, Limit) {
    let ran: Vec<_> = outcome
        .steps
        .iter()
        .flat_map(|s| &s.flows)
        .filter(|f| f.error.is_none())
        .collect();
    let mut rates: Vec<f64> = ran.iter().map(|f| f.bits_per_second).collect();
    rates.sort_by(f64::total_cmp);
    let (Some(&lo), Some(&hi)) = (rates.first(), rates.last()) else {
        return ("No pair of the mesh ran.".into(), Limit::Unknown);
    };
    let median = linerate_result::stats::median(rates.iter().copied());
    evidence.insert("slowest_pair_bits_per_second".into(), lo);
    evidence.insert("median_pair_bits_per_second".into(), median);
    evidence.insert("fastest_pair_bits_per_second".into(), hi);
    let mut s = format!(
        "{} pairs ran at {} to {} (median {}).",
        rates.len(),
        fmt_rate(lo),
        fmt_rate(hi),
        fmt_rate(median)
    );
    let full = ran
        .iter()
        .filter(|f| f.limit == Some(Limit::PathFull))
        .count();
    evidence.insert("pairs_path_full".into(), full as f64);
    if ran.len() >= 2 && 2 * full >= ran.len() {
        s.push_str(&format!(
            " Path full: {full} of {} pairs found their path full (at the link's known rate or \
             with the queue it built), no window, buffer or CPU holding them back: the \
             network's links set these rates, not the hosts.",
            ran.len()
        ));
        if let Some(f) = slowest(outcome, 1)
            .into_iter()
            .find(|f| f.error.is_none() && f.limit != Some(Limit::PathFull))
        {
            s.push_str(&format!(
                " The slowest pair held back otherwise: {} -> {}: {}",
                name(outcome, f.from),
                name(outcome, f.to),
                f.verdict.as_deref().unwrap_or("no verdict")
            ));
        }
        return (s, Limit::PathFull);
    }
    if let Some(f) = slowest(outcome, 1).into_iter().find(|f| f.error.is_none()) {
        let why = f.verdict.as_deref().unwrap_or("no verdict");
        s.push_str(&format!(
            " Slowest: {} -> {}: {why}",
            name(outcome, f.from),
            name(outcome, f.to)
        ));
    }
    (s, Limit::Unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::fleet::FleetHost;
    use serde_json::json;

    fn flow(from: u32, to: u32, gbps: f64, limit: Option<&str>, error: Option<&str>) -> FlowResult {
        serde_json::from_value(json!({
            "from": from, "to": to, "streams": 1, "message_bytes": 65536,
            "started_at_ns": 0, "bytes": 1, "seconds": 1.0,
            "bits_per_second": gbps * 1e9, "retransmits": 0,
            "limit": limit, "verdict": limit.map(|l| format!("{l} said")), "error": error,
        }))
        .unwrap()
    }

    fn mesh(flows: Vec<FlowResult>, failed: Option<&str>) -> Outcome {
        let host = |rank: u32| FleetHost {
            rank,
            name: format!("h{rank}"),
            address: None,
            clock_offset_ns: None,
            clock_error_ns: None,
            facts: None,
            failed: (rank == 2).then(|| failed.map(String::from)).flatten(),
        };
        let steps = flows
            .into_iter()
            .map(|f| FleetStep {
                job: None,
                factors: [
                    ("from".to_string(), f.from as u64),
                    ("to".into(), f.to as u64),
                ]
                .into(),
                aggregate_bits_per_second: f.bits_per_second,
                jain_index: 1.0,
                retransmits: 0,
                start_spread_ms: None,
                hosts: vec![],
                flows: vec![f],
            })
            .collect();
        Outcome {
            hosts: (0..3).map(host).collect(),
            steps,
            stopped: None,
        }
    }

    #[test]
    fn a_step_is_described_by_what_it_varies() {
        let incast = [
            ("senders_per_host", 2),
            ("source_hosts", 4),
            ("message_bytes", 1 << 20),
        ];
        let incast: BTreeMap<String, u64> = incast.map(|(k, v)| (k.to_string(), v)).into();
        assert_eq!(
            describe(&incast, &|r| format!("h{r}")),
            "2 sender(s) x 4 host(s), 1.0 MiB messages"
        );
        let pair: BTreeMap<String, u64> = [("from".to_string(), 0), ("to".into(), 2)].into();
        assert_eq!(describe(&pair, &|r| format!("h{r}")), "h0 -> h2");
        assert_eq!(
            describe(&BTreeMap::new(), &|r| format!("h{r}")),
            "all pairs"
        );
    }

    #[test]
    fn failed_pairs_come_first_among_the_slowest_then_by_rate() {
        let o = mesh(
            vec![
                flow(0, 1, 5.0, None, None),
                flow(1, 0, 9.0, None, Some("refused")),
                flow(0, 2, 2.0, Some("receiver_window"), None),
            ],
            None,
        );
        let said = slowest_pairs(&o);
        assert!(said[0].starts_with("slow pair h1 -> h0") && said[0].contains("refused"));
        assert!(said[1].starts_with("slow pair h0 -> h2"), "{said:?}");
        assert!(said[1].contains("57 % of the median pair's"), "{said:?}");
        assert_eq!(said.len(), 2, "5.0 is the median itself: {said:?}");
    }

    #[test]
    fn a_mesh_whose_pairs_are_all_within_ten_per_cent_names_no_slow_pair() {
        let o = mesh(
            vec![
                flow(0, 1, 9.0, None, None),
                flow(1, 0, 9.5, None, None),
                flow(0, 2, 8.7, None, None),
                flow(2, 0, 9.4, None, None),
            ],
            None,
        );
        assert!(slowest_pairs(&o).is_empty());
    }

    #[test]
    fn a_mesh_whose_pairs_found_the_path_full_says_so_once_and_names_a_failed_rank() {
        let o = mesh(
            vec![
                flow(0, 1, 9.0, Some("path_full"), None),
                flow(1, 0, 9.5, Some("path_full"), None),
                flow(0, 2, 3.0, Some("receiver_window"), None),
            ],
            Some("stopped answering"),
        );
        let d = document("mesh", "local", &o, vec!["linerate".into(), "mesh".into()]);
        let v = &d.summary.verdict;
        assert_eq!(v.limit, Limit::PathFull);
        assert_eq!(v.sentence.matches("Path full").count(), 1, "{}", v.sentence);
        assert!(
            v.sentence.contains("h0 -> h2: receiver_window said"),
            "{}",
            v.sentence
        );
        assert!(v.sentence.contains("rank 2 (h2): stopped answering"));
        assert_eq!(v.evidence["failed_ranks"], 1.0);
        assert_eq!(d.summary.bits_per_second, 9.5e9);
        assert_eq!(d.fleet.as_ref().unwrap().launcher, "local");
    }

    #[test]
    fn an_incast_names_its_best_step_and_its_fairness() {
        let mut o = mesh(vec![flow(1, 0, 4.0, None, None)], None);
        o.steps[0].factors = [
            ("senders_per_host".to_string(), 1),
            ("source_hosts".into(), 1),
            ("message_bytes".into(), 65536),
        ]
        .into();
        o.steps[0].jain_index = 0.5;
        let d = document("incast", "ssh", &o, vec![]);
        let s = &d.summary.verdict.sentence;
        assert!(s.starts_with("The incast peaked at"), "{s}");
        assert!(s.contains("Jain's fairness index 0.500"), "{s}");
        assert_eq!(d.summary.verdict.limit, Limit::Unknown);
    }
}
