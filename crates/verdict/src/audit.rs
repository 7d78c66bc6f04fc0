//! Checks a verdict against its own run, as recorded: the rates its
//! sentence gives for the run are the summary's (or the evidence's), and
//! a fault is named only with its evidence at or above its thresholds.
//! The recorded results in bench/results and every document the verdict
//! tests produce go through it.

use linerate_result::{Limit, Summary, Verdict};

use super::faults::{
    FORWARDER_BUSY, POLICED_LOSS, POLICED_VARIATION, QUOTA_THROTTLED, STUCK_CWND, losses_in_bursts,
    return_queue,
};
use super::finding::ALWAYS_SENDING;
use linerate_probe::units::fmt_rate;

/// Words that say the rate after them is what a window would carry, a
/// bound derived from the run's figures, not a figure of the run.
const DERIVED: [&str; 2] = ["carries at most", "would carry"];

/// A rate in a sentence this close to the run's (a factor either way) is
/// a figure of the run; one further off is a bound or what a window
/// would carry, derived and not checked here.
const RUN_RATE_FACTOR: f64 = 4.0;

/// What is wrong with `summary`'s verdict for a run of `streams` streams,
/// one line each; empty when nothing is.
pub fn audit(summary: &Summary, streams: u32) -> Vec<String> {
    let v = &summary.verdict;
    let mut wrong = unknown_rates(summary, streams);
    wrong.extend(below_threshold(v));
    wrong
}

/// The rates the sentence gives near the run's rate that are none of the
/// run's figures.
fn unknown_rates(summary: &Summary, streams: u32) -> Vec<String> {
    let run = summary.bits_per_second;
    if run <= 0.0 {
        return Vec::new();
    }
    let mut known: Vec<f64> = vec![run];
    known.extend(
        summary
            .verdict
            .evidence
            .iter()
            .filter(|(k, _)| k.contains("bits_per_second"))
            .map(|(_, &v)| v),
    );
    let whole = known.clone();
    let per_stream = f64::from(streams.max(1));
    for r in whole {
        known.extend([r / per_stream, 0.95 * r, 0.95 * r / per_stream]);
    }
    let shown: Vec<String> = known.iter().map(|&r| fmt_rate(r)).collect();
    let sentence = &summary.verdict.sentence;
    let spread = stream_spread(sentence);
    let means = [run, steady(summary)].map(|r| r / per_stream);
    let brackets_a_mean =
        |lo: f64, hi: f64| means.iter().any(|&m| lo <= 1.01 * m && hi >= 0.99 * m);
    rates_in(sentence)
        .into_iter()
        .filter(|(_, bps)| *bps >= run / RUN_RATE_FACTOR && *bps <= run * RUN_RATE_FACTOR)
        .filter(|(text, _)| !shown.contains(text))
        .filter(|(text, _)| {
            !DERIVED
                .iter()
                .any(|words| sentence.contains(&format!("{words} {text}")))
        })
        .filter(|(text, _)| {
            !spread
                .as_ref()
                .is_some_and(|(lo, hi, a, b)| (text == a || text == b) && brackets_a_mean(*lo, *hi))
        })
        .map(|(text, _)| {
            format!(
                "the sentence gives {text}, which is none of the run's figures ({} in the summary)",
                fmt_rate(run)
            )
        })
        .collect()
}

/// The run's steady rate where the evidence has it, else 0.
fn steady(summary: &Summary) -> f64 {
    summary
        .verdict
        .evidence
        .get("steady_bits_per_second")
        .copied()
        .unwrap_or(0.0)
}

/// The slowest and fastest streams' rates where the sentence gives them
/// ("... at A to B each"): bit/s and as written. Single streams' figures;
/// they hold the run's per-stream mean between them.
fn stream_spread(sentence: &str) -> Option<(f64, f64, String, String)> {
    let rates = rates_in(sentence);
    rates.windows(2).find_map(|w| {
        let (a, lo) = &w[0];
        let (b, hi) = &w[1];
        sentence
            .contains(&format!("{a} to {b} each"))
            .then(|| (*lo, *hi, a.clone(), b.clone()))
    })
}

/// Every "N Gbit/s" (Mbit/s, kbit/s) in `sentence`: as written and in bit/s.
fn rates_in(sentence: &str) -> Vec<(String, f64)> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    words
        .windows(2)
        .filter_map(|w| {
            let unit = w[1].trim_end_matches(|c: char| !c.is_ascii_alphabetic() && c != '/');
            let scale = match unit {
                "Gbit/s" => 1e9,
                "Mbit/s" => 1e6,
                "kbit/s" => 1e3,
                _ => return None,
            };
            let number = w[0].trim_start_matches(|c: char| !c.is_ascii_digit());
            let value: f64 = number.parse().ok()?;
            Some((format!("{number} {unit}"), value * scale))
        })
        .collect()
}

/// The fault the verdict names, where its own evidence is recorded and
/// below that fault's threshold.
fn below_threshold(v: &Verdict) -> Vec<String> {
    let at = |key: &str| v.evidence.get(key).copied();
    let mut wrong = Vec::new();
    let mut need = |ok: Option<bool>, what: &str| {
        if ok == Some(false) {
            wrong.push(format!("{:?} named with {what} not met", v.limit));
        }
    };
    match v.limit {
        Limit::Policer => {
            need(
                at("retransmitted_share").map(|s| s >= POLICED_LOSS),
                "the loss",
            );
            need(
                at("rate_variation").map(|s| s <= POLICED_VARIATION),
                "a flat rate",
            );
            need(
                at("peak_cwnd_segments")
                    .zip(at("retransmitted_share"))
                    .map(|(w, p)| losses_in_bursts(w, p)),
                "a window random loss would not let grow",
            );
            need(
                at("sender_busy_share").map(|s| s >= ALWAYS_SENDING),
                "senders always sending",
            );
        }
        Limit::CpuQuota => {
            need(
                at("quota_throttled_share").map(|s| s >= QUOTA_THROTTLED),
                "the throttling",
            );
        }
        Limit::PathMtu => {
            let lowered = at("snd_mss_bytes")
                .zip(at("full_mss_bytes"))
                .map(|(s, f)| s < f);
            let stuck = at("received_bytes")
                .zip(at("cwnd_segments"))
                .map(|(r, c)| r == 0.0 && c <= STUCK_CWND);
            need(
                lowered
                    .zip(stuck)
                    .map(|(l, s)| l || s)
                    .or(lowered)
                    .or(stuck),
                "a lowered segment or a stuck window",
            );
        }
        Limit::ReturnPath => {
            need(
                at("ack_way_queue_us")
                    .zip(at("data_way_queue_us"))
                    .zip(at("min_rtt_us").filter(|&r| r > 0.0).or(at("rtt_us")))
                    .zip(at("queue_us"))
                    .map(|(((ack, data), rtt), queue)| return_queue(ack, data, rtt, queue)),
                "a queue on the ACKs' way",
            );
            need(
                at("sender_busy_share").map(|s| s >= ALWAYS_SENDING),
                "senders always sending",
            );
        }
        Limit::ForwardingHop => {
            need(
                at("forwarder_cores").map(|c| c >= FORWARDER_BUSY),
                "a busy forwarder",
            );
        }
        Limit::Network => {
            need(at("retransmits").map(|r| r > 0.0), "a retransmit");
        }
        Limit::SendBuffer => {
            let full = at("sndbuf_limited_share").map(|s| s > 0.0);
            let below_cwnd = at("sender_sndbuf_bytes")
                .zip(at("cwnd_bytes"))
                .map(|(b, c)| b < c);
            need(
                full.zip(below_cwnd)
                    .map(|(a, b)| a || b)
                    .or(full)
                    .or(below_cwnd),
                "a full send buffer or one below the congestion window",
            );
        }
        _ => {}
    }
    wrong
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn summary(bps: f64, limit: Limit, sentence: &str, evidence: &[(&str, f64)]) -> Summary {
        serde_json::from_value(serde_json::json!({
            "bits_per_second": bps,
            "bytes": 0,
            "seconds": 4.0,
            "cpu_seconds_per_gb": {"sender": 0.0, "receiver": 0.0},
            "retransmits": 0,
            "verdict": {
                "limit": limit,
                "side": null,
                "sentence": sentence,
                "evidence": evidence.iter().copied().collect::<BTreeMap<_, _>>(),
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_rate_that_is_not_the_runs_is_caught() {
        // The return path's old sentence: 20.6 Mbit/s where the summary
        // said 40.4.
        let s = summary(
            40.4e6,
            Limit::Unknown,
            "Something on the path carried 20.6 Mbit/s.",
            &[],
        );
        assert_eq!(audit(&s, 1).len(), 1);
        let s = summary(
            40.4e6,
            Limit::Unknown,
            "The streams carried 40.4 Mbit/s.",
            &[],
        );
        assert!(audit(&s, 1).is_empty());
        // A stream's share, the steady rate, and a window's bound pass.
        let s = summary(
            80.8e6,
            Limit::ReceiverWindow,
            "Each carried 40.4 Mbit/s, 70.2 Mbit/s after the ramp; 64 KiB carries at most \
             100.0 Mbit/s a stream.",
            &[("steady_bits_per_second", 70.2e6)],
        );
        assert!(audit(&s, 2).is_empty(), "{:?}", audit(&s, 2));
        // A target nobody gave does not.
        let s = summary(
            8.21e9,
            Limit::ReceiverWindow,
            "64.1 MiB for 10 Gbit/s.",
            &[],
        );
        assert_eq!(audit(&s, 1).len(), 1);
    }

    #[test]
    fn a_fault_below_its_threshold_is_caught() {
        let policed = [
            ("retransmitted_share", 0.05),
            ("rate_variation", 0.1),
            ("sender_busy_share", 0.99),
            ("peak_cwnd_segments", 40.0),
        ];
        let s = summary(500e6, Limit::Policer, "", &policed);
        assert!(audit(&s, 1).is_empty());
        let swinging = [policed[0], ("rate_variation", 0.4), policed[2], policed[3]];
        let s = summary(500e6, Limit::Policer, "", &swinging);
        assert_eq!(audit(&s, 1).len(), 1);
        let random = [
            policed[0],
            policed[1],
            policed[2],
            ("peak_cwnd_segments", 2.0),
        ];
        let s = summary(500e6, Limit::Policer, "", &random);
        assert_eq!(audit(&s, 1).len(), 1);
        let s = summary(
            500e6,
            Limit::CpuQuota,
            "",
            &[("quota_throttled_share", 0.1)],
        );
        assert_eq!(audit(&s, 1).len(), 1);
        let s = summary(500e6, Limit::Network, "", &[("retransmits", 0.0)]);
        assert_eq!(audit(&s, 1).len(), 1);
    }

    #[test]
    fn rates_are_read_as_written() {
        let r = rates_in("carried 9.30 Gbit/s, at about 459.2 Mbit/s (-b) and 200 kbit/s.");
        assert_eq!(
            r,
            vec![
                ("9.30 Gbit/s".to_string(), 9.30e9),
                ("459.2 Mbit/s".to_string(), 459.2e6),
                ("200 kbit/s".to_string(), 200e3),
            ]
        );
    }
}
