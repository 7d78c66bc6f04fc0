//! The verdict of a latency run: what the round trips show, in plain
//! words. Under load, the rise of the median over the idle median is the
//! queue the bulk streams keep standing at the bottleneck.

use std::collections::BTreeMap;

use linerate_result::latency::{Load, Pattern, Step};
use linerate_result::{Limit, Verdict};

use linerate_probe::units::{fmt_bytes, fmt_rate, fmt_us};

/// A loaded median above the idle one by this share of it or more, and by
/// at least [`QUEUE_MIN_US`], is a standing queue: 44.2 -> 87.9 ms is one,
/// though short of doubling; 10 -> 30 us on loopback is scheduling.
pub const QUEUE_SHARE: f64 = 0.1;
/// A queue of at least this many µs (beside [`QUEUE_SHARE`]) is worth naming.
pub const QUEUE_MIN_US: f64 = 50.0;
/// A p99 this many times the median is a tail worth naming.
pub const TAIL_RATIO: f64 = 5.0;
/// A p99.9 this many times the median is a rare tail worth naming: one
/// round in a thousand waiting a scheduler's time slice.
pub const RARE_TAIL_RATIO: f64 = 20.0;

/// The verdict of a latency run: what set its round trips, over its steps.
pub fn judge_latency(steps: &[Step], load: Option<&Load>) -> Verdict {
    let mut v = judge_rounds(steps, load);
    if let Some(at) = steps.iter().position(|s| s.spinning == Some(false)) {
        v.sentence.push_str(&format!(
            " The receivers stopped spinning in step {} of {}: a spinning thread found itself \
             waiting for its core (other work wanted the host's cores) and blocked from then \
             on; --busy-poll off measures the blocking path from the start.",
            at + 1,
            steps.len()
        ));
        v.evidence
            .insert("spinning_stopped_step".into(), (at + 1) as f64);
    }
    let counted: Vec<(u64, u64)> = steps
        .iter()
        .filter_map(|s| Some((s.lost_rounds?, s.rounds)))
        .collect();
    if counted.is_empty() {
        return v;
    }
    let lost: u64 = counted.iter().map(|c| c.0).sum();
    let tried = lost + counted.iter().map(|c| c.1).sum::<u64>();
    v.evidence.insert("lost_rounds".into(), lost as f64);
    v.evidence
        .insert("round_loss".into(), lost as f64 / tried.max(1) as f64);
    if lost > 0 {
        v.sentence.push_str(&format!(
            " {lost} of {tried} UDP rounds got no reply (a request or reply datagram was lost, \
             or came after 4x the slowest round trip): counted, not timed."
        ));
    }
    v
}

fn judge_rounds(steps: &[Step], load: Option<&Load>) -> Verdict {
    let mut evidence = BTreeMap::new();
    let idle = |s: &&Step| s.phase.as_deref() != Some("loaded");
    let loaded = steps.iter().find(|s| s.phase.as_deref() == Some("loaded"));
    let first_idle = steps.iter().find(idle);
    if let (Some(l), Some(load)) = (loaded, load)
        && let Some(i) = steps
            .iter()
            .filter(idle)
            .find(|i| i.request_bytes == l.request_bytes)
    {
        return under_load(i, l, load, evidence);
    }
    let Some(first) = first_idle else {
        return Verdict {
            limit: Limit::Unknown,
            side: None,
            sentence: "No round trip was measured.".into(),
            evidence,
        };
    };
    let idle_steps: Vec<&Step> = steps.iter().filter(idle).collect();
    let sentence = match first.pattern {
        Pattern::Window => bandwidth_sentence(&idle_steps),
        Pattern::PingPong => latency_sentence(&idle_steps),
    };
    let p = first.round_trip_us;
    evidence.insert("p50_us".into(), p.p50);
    evidence.insert("p99_us".into(), p.p99);
    evidence.insert("p99_9_us".into(), p.p99_9);
    evidence.insert(
        "transactions_per_second".into(),
        first.transactions_per_second,
    );
    Verdict {
        limit: Limit::Unknown,
        side: None,
        sentence,
        evidence,
    }
}

fn under_load(
    idle: &Step,
    loaded: &Step,
    load: &Load,
    mut evidence: BTreeMap<String, f64>,
) -> Verdict {
    let (a, b) = (idle.round_trip_us.p50, loaded.round_trip_us.p50);
    let added = b - a;
    evidence.insert("idle_p50_us".into(), a);
    evidence.insert("loaded_p50_us".into(), b);
    evidence.insert("queue_delay_us".into(), added);
    evidence.insert("load_bits_per_second".into(), load.bits_per_second);
    if let Some(rtt) = load.rtt_us {
        evidence.insert("load_rtt_us".into(), rtt);
    }
    let size = fmt_bytes(f64::from(idle.request_bytes));
    let streams = load.streams;
    let kernel = load
        .rtt_us
        .map(|r| {
            format!(
                " (the bulk streams' own RTT, in the kernel's view: {})",
                fmt_us(r)
            )
        })
        .unwrap_or_default();
    if added >= QUEUE_MIN_US.max(QUEUE_SHARE * a) {
        // What a queue of `added` holds at the rate the bulk streams reach.
        let queued = load.bits_per_second / 8.0 * added / 1e6;
        // bbr already paces to what it measured; it still queues when many
        // flows overestimate the path together.
        let remedy = match load.congestion.as_deref() {
            Some("bbr") => "pacing the bulk flows below the bottleneck (--fq-rate)",
            _ => "a delay-based congestion control on the bulk flows (--cc bbr)",
        };
        Verdict {
            limit: Limit::Network,
            side: None,
            sentence: format!(
                "Beside {streams} bulk stream(s) at {}, the median round trip of a {size} \
                 request rose from {} to {}: {} of queueing, about {} standing in the \
                 bottleneck's queue{kernel}. A latency-sensitive flow waits behind the bulk \
                 data: a shorter queue at the bottleneck (an AQM such as fq_codel, or a smaller \
                 limit) or {remedy} keeps it short.",
                fmt_rate(load.bits_per_second),
                fmt_us(a),
                fmt_us(b),
                fmt_us(added),
                fmt_bytes(queued),
            ),
            evidence,
        }
    } else {
        Verdict {
            limit: Limit::Unknown,
            side: None,
            sentence: format!(
                "Beside {streams} bulk stream(s) at {}, the median round trip of a {size} \
                 request went from {} to {}: no queue stood on this path (under a tenth of the \
                 idle round trip and 50 us){kernel}.",
                fmt_rate(load.bits_per_second),
                fmt_us(a),
                fmt_us(b),
            ),
            evidence,
        }
    }
}

fn latency_sentence(steps: &[&Step]) -> String {
    let first = steps[0];
    let p = first.round_trip_us;
    let mut s = format!(
        "A {} request's round trip: median {}, p99 {}, p99.9 {}, p99.99 {} ({:.0} \
         transactions/s).",
        fmt_bytes(f64::from(first.request_bytes)),
        fmt_us(p.p50),
        fmt_us(p.p99),
        fmt_us(p.p99_9),
        fmt_us(p.p99_99),
        first.transactions_per_second,
    );
    let tail = [
        ("p99", p.p99, TAIL_RATIO),
        ("p99.9", p.p99_9, RARE_TAIL_RATIO),
    ]
    .into_iter()
    .find(|&(_, at, ratio)| p.p50 > 0.0 && at >= ratio * p.p50);
    if let Some((name, at, _)) = tail {
        s.push_str(&format!(
            " The {name} is {:.0} times the median: at times the ends waited for a core \
             (another process, an interrupt) or the path queued.",
            at / p.p50
        ));
    }
    if let Some(last) = steps
        .last()
        .filter(|l| l.request_bytes > first.request_bytes)
    {
        let grow = last.round_trip_us.p50 - p.p50;
        let bytes = f64::from(last.request_bytes + last.reply_bytes)
            - f64::from(first.request_bytes + first.reply_bytes);
        if grow > 0.0 {
            s.push_str(&format!(
                " With {} messages the round trip grows to {}: the added bytes, there and \
                 back, took as long as they would at {}, the rate one message at a time \
                 gets on this path.",
                fmt_bytes(f64::from(last.request_bytes)),
                fmt_us(last.round_trip_us.p50),
                fmt_rate(bytes * 8.0 / (grow / 1e6)),
            ));
        }
    }
    s
}

fn bandwidth_sentence(steps: &[&Step]) -> String {
    let Some(peak) = steps
        .iter()
        .max_by(|a, b| a.bits_per_second.total_cmp(&b.bits_per_second))
    else {
        return String::new();
    };
    let smallest = steps[0];
    format!(
        "Windows of requests reached {} at {} messages; {} messages went at {:.0} \
         messages/s ({}).",
        fmt_rate(peak.bits_per_second),
        fmt_bytes(f64::from(peak.request_bytes)),
        fmt_bytes(f64::from(smallest.request_bytes)),
        smallest.messages_per_second,
        fmt_rate(smallest.bits_per_second),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::latency::Percentiles;

    fn step(phase: &str, p50: f64) -> Step {
        Step {
            pattern: Pattern::PingPong,
            phase: Some(phase.into()),
            request_bytes: 1,
            reply_bytes: 1,
            window: 1,
            rounds: 1000,
            warmup_rounds: 10,
            seconds: 1.0,
            round_trip_us: Percentiles {
                p50,
                p99: p50 * 1.5,
                ..Percentiles::default()
            },
            distribution_us: Vec::new(),
            transactions_per_second: 1e6 / p50,
            messages_per_second: 1e6 / p50,
            bits_per_second: 8e6 / p50,
            tcp: None,
            lost_rounds: None,
            spinning: None,
        }
    }

    #[test]
    fn lost_udp_rounds_are_counted_apart_from_the_timed_ones() {
        let udp = Step {
            lost_rounds: Some(10),
            rounds: 990,
            ..step("idle", 20.0)
        };
        let v = judge_latency(std::slice::from_ref(&udp), None);
        assert_eq!(v.evidence["lost_rounds"], 10.0);
        assert_eq!(v.evidence["round_loss"], 0.01);
        assert!(
            v.sentence.contains("10 of 1000 UDP rounds got no reply"),
            "{}",
            v.sentence
        );
        let none = judge_latency(
            &[Step {
                lost_rounds: Some(0),
                ..udp
            }],
            None,
        );
        assert!(!none.sentence.contains("no reply"), "{}", none.sentence);
        assert!(
            !judge_latency(&[step("idle", 20.0)], None)
                .evidence
                .contains_key("lost_rounds")
        );
    }

    /// Figures of a lab run: 1 Gbit/s, a 1.25 MB queue, 4 cubic streams.
    #[test]
    fn a_queue_standing_under_load_is_named_with_its_delay() {
        let load = Load {
            streams: 4,
            bits_per_second: 0.95e9,
            retransmits: 120,
            rtt_us: Some(9800.0),
            congestion: Some("cubic".into()),
        };
        let v = judge_latency(&[step("idle", 60.0), step("loaded", 9500.0)], Some(&load));
        assert_eq!(v.limit, Limit::Network);
        assert_eq!(v.evidence["queue_delay_us"], 9440.0);
        assert!(v.sentence.contains("queueing"), "{}", v.sentence);
        assert!(v.sentence.contains("1.1 MiB"), "{}", v.sentence);
        let calm = judge_latency(&[step("idle", 60.0), step("loaded", 70.0)], Some(&load));
        assert_eq!(calm.limit, Limit::Unknown);
        assert!(
            calm.sentence.contains("no queue stood"),
            "{}",
            calm.sentence
        );
        // At 44 ms a queue short of doubling the round trip is still one.
        let wan = judge_latency(
            &[step("idle", 44_200.0), step("loaded", 87_900.0)],
            Some(&load),
        );
        assert_eq!(wan.limit, Limit::Network);
        assert!(
            wan.sentence.contains("43.70 ms of queueing"),
            "{}",
            wan.sentence
        );
    }

    #[test]
    fn an_idle_run_states_its_percentiles_and_a_long_tail() {
        let mut s = step("idle", 20.0);
        s.phase = None;
        let v = judge_latency(std::slice::from_ref(&s), None);
        assert!(v.sentence.contains("median 20"), "{}", v.sentence);
        assert!(!v.sentence.contains("times the median"));
        s.round_trip_us.p99_9 = 12_000.0;
        let v = judge_latency(std::slice::from_ref(&s), None);
        assert!(v.sentence.contains("p99.9 12.00 ms"), "{}", v.sentence);
        assert!(
            v.sentence.contains("p99.9 is 600 times the median"),
            "{}",
            v.sentence
        );
        assert_eq!(v.evidence["p99_9_us"], 12_000.0);
        s.round_trip_us.p99 = 200.0;
        let v = judge_latency(&[s], None);
        assert!(
            v.sentence.contains("p99 is 10 times the median"),
            "{}",
            v.sentence
        );
    }

    #[test]
    fn a_size_sweep_says_in_words_what_the_added_bytes_cost() {
        let large = Step {
            request_bytes: 65536,
            reply_bytes: 65536,
            ..step("idle", 40.0)
        };
        let v = judge_latency(&[step("idle", 20.0), large], None);
        assert!(
            v.sentence
                .contains(" KiB messages the round trip grows to 40"),
            "{}",
            v.sentence
        );
        // 131,070 bytes more, there and back, in 20 us more.
        assert!(
            v.sentence
                .contains("there and back, took as long as they would at 52.43 Gbit/s"),
            "{}",
            v.sentence
        );
        assert!(!v.sentence.contains("per byte"), "{}", v.sentence);
    }

    #[test]
    fn receivers_that_stopped_spinning_are_named_with_the_step() {
        let spun = Step {
            spinning: Some(true),
            ..step("idle", 7.0)
        };
        let gave_up = Step {
            spinning: Some(false),
            ..step("idle", 12.0)
        };
        let v = judge_latency(&[spun.clone(), gave_up], None);
        assert!(
            v.sentence.contains("stopped spinning in step 2 of 2"),
            "{}",
            v.sentence
        );
        assert_eq!(v.evidence["spinning_stopped_step"], 2.0);
        let v = judge_latency(&[spun], None);
        assert!(!v.sentence.contains("stopped spinning"), "{}", v.sentence);
    }
}
