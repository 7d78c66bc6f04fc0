//! The sender's result document, and the verdict that names a transfer's
//! limit: a disk, or what the bench verdict finds.

use linerate_result::{Limit, ResultDoc, Side, Verdict};

use super::TransferRun;
use crate::document;

/// Merges both ends into one `linerate.result/1` document of kind `transfer`.
pub fn to_result(run: &TransferRun, command_line: Vec<String>) -> ResultDoc {
    let ends = document::merge(&run.client, &run.server);
    let verdict = judge(run, &ends.streams, ends.bits_per_second, ends.seconds);
    let mut parameters = serde_json::to_value(&run.request).unwrap_or_default();
    if let Some(map) = parameters.as_object_mut() {
        map.remove("token");
        map.insert("session".into(), run.session.to_hex().into());
        map.insert("files".into(), run.files.into());
        map.insert("bytes_total".into(), run.bytes_total.into());
        map.insert("bytes_needed".into(), run.bytes_needed.into());
        map.insert("rounds".into(), run.rounds.into());
        map.insert("files_written".into(), run.totals.files_written.into());
        map.insert("files_skipped".into(), run.totals.files_skipped.into());
        map.insert("blocks_rejected".into(), run.totals.blocks_rejected.into());
        map.insert("bytes_read_direct".into(), run.bytes_read_direct.into());
        map.insert(
            "bytes_written_direct".into(),
            run.totals.bytes_written_direct.into(),
        );
        map.insert("verified_files".into(), run.verified.into());
        map.insert("mismatched_files".into(), run.mismatched.clone().into());
    }
    let provenance = document::Provenance {
        kind: "transfer",
        command_line,
        started_at: run.started_at,
        client_host: &run.client_host,
        server_host: &run.server_host,
        parameters,
    };
    document::document(provenance, ends, verdict)
}

/// Below this much payload a transfer is all setup: no limit is named.
pub const MIN_JUDGED_BYTES: u64 = 16 << 20;

/// Share of the stream threads' time spent on a disk above which that disk
/// is named the limit.
const DISK_SHARE: f64 = 0.5;

/// Names the limit of a transfer: a disk when the stream threads spent most
/// of their time reading the source or writing the destination, otherwise
/// what the bench verdict finds in TCP_INFO and the CPU figures.
fn judge(
    run: &TransferRun,
    streams: &[linerate_result::StreamEnd],
    bps: f64,
    seconds: f64,
) -> Verdict {
    let moved: u64 = streams
        .iter()
        .filter(|s| s.side == Side::Receiver)
        .map(|s| s.bytes)
        .sum();
    if moved < MIN_JUDGED_BYTES {
        return Verdict {
            limit: Limit::Unknown,
            side: None,
            sentence: format!(
                "Too little data moved ({moved} bytes) to name a bottleneck: setup dominated."
            ),
            evidence: Default::default(),
        };
    }
    let thread_time = seconds * f64::from(run.request.streams);
    let share = |busy: f64| {
        if thread_time > 0.0 {
            busy / thread_time
        } else {
            0.0
        }
    };
    let v = linerate_probe::verdict::judge(&linerate_probe::verdict::Evidence {
        streams,
        client_cpu: run.client.host_cpu,
        server_cpu: Some(run.server.host_cpu),
        bits_per_second: bps,
        pacing_rate: None,
    });
    with_disks(v, share(run.read_seconds), share(run.totals.write_seconds))
}

/// The bench verdict `v`, or a disk where the stream threads spent
/// `read`/`write` of their time on one: most of it, or half or more of
/// what kept the threads that limited the run busy. Threads that never block
/// are the limit whatever they do; when it was mostly file I/O, the file
/// system is what would have to be faster.
fn with_disks(mut v: Verdict, read: f64, write: f64) -> Verdict {
    let occupied = |side: &str| {
        let at = |k: &str| {
            v.evidence
                .get(&format!("{side}_{k}"))
                .copied()
                .unwrap_or(0.0)
        };
        at("thread_cpu") + at("runq_wait_share")
    };
    // The floor keeps a side the verdict found hardly busy from handing the
    // limit to a disk it hardly used.
    let mostly = |share: f64, side: &str| share >= DISK_SHARE * occupied(side).max(0.5);
    let cpu_on = |side| v.limit == Limit::Cpu && v.side == Some(side);
    let to = (
        Limit::DestinationDisk,
        Side::Receiver,
        "writing the destination",
        write,
    );
    let from = (Limit::SourceDisk, Side::Sender, "reading the source", read);
    let disk = if write >= DISK_SHARE && write >= read {
        Some((to, None))
    } else if read >= DISK_SHARE {
        Some((from, None))
    } else if cpu_on(Side::Receiver) && mostly(write, "receiver") {
        Some((to, Some(occupied("receiver"))))
    } else if cpu_on(Side::Sender) && mostly(read, "sender") {
        Some((from, Some(occupied("sender"))))
    } else {
        None
    };
    v.evidence.insert("source_read_share".to_string(), read);
    v.evidence
        .insert("destination_write_share".to_string(), write);
    let Some(((limit, side, doing, share), busy)) = disk else {
        return v;
    };
    let busy = busy.map_or(String::new(), |b| {
        let who = if side == Side::Receiver { "receiving" } else { "sending" };
        format!(
            ", half or more of what kept the {who} threads busy ({:.0}% of the run, running or waiting for a core)",
            b.min(1.0) * 100.0
        )
    });
    Verdict {
        limit,
        side: Some(side),
        sentence: format!(
            "Limited by the disk: the streams spent {:.0}% of their time {doing}{busy}.",
            share * 100.0
        ),
        evidence: v.evidence,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_verdict(limit: Limit, side: Option<Side>, evidence: &[(&str, f64)]) -> Verdict {
        Verdict {
            limit,
            side,
            sentence: "from TCP_INFO".into(),
            evidence: evidence.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
        }
    }

    #[test]
    fn most_of_the_time_on_a_disk_names_it() {
        let v = with_disks(
            bench_verdict(Limit::ReceiverWindow, Some(Side::Receiver), &[]),
            0.0,
            0.7,
        );
        assert_eq!(
            (v.limit, v.side),
            (Limit::DestinationDisk, Some(Side::Receiver))
        );
        assert!(
            v.sentence.contains("70% of their time writing"),
            "{}",
            v.sentence
        );
        let v = with_disks(bench_verdict(Limit::Network, None, &[]), 0.6, 0.1);
        assert_eq!(v.limit, Limit::SourceDisk);
        assert_eq!(v.evidence["source_read_share"], 0.6);
    }

    #[test]
    fn a_saturated_receiver_mostly_writing_is_the_destination() {
        // Seen on loopback into fresh tmpfs pages: half the run writing,
        // the receiving threads 85 % on a core and 10 % waiting for one.
        let busy = [
            ("receiver_thread_cpu", 0.85),
            ("receiver_runq_wait_share", 0.1),
        ];
        let v = with_disks(
            bench_verdict(Limit::Cpu, Some(Side::Receiver), &busy),
            0.0,
            0.49,
        );
        assert_eq!(v.limit, Limit::DestinationDisk);
        assert!(
            v.sentence.contains("receiving threads busy (95%"),
            "{}",
            v.sentence
        );
        // Writing a third of the time, the rest receiving and hashing: the CPU.
        let v = with_disks(
            bench_verdict(Limit::Cpu, Some(Side::Receiver), &busy),
            0.0,
            0.3,
        );
        assert_eq!(
            (v.limit, v.sentence.as_str()),
            (Limit::Cpu, "from TCP_INFO")
        );
        // A saturated sender says nothing about the destination.
        let v = with_disks(
            bench_verdict(Limit::Cpu, Some(Side::Sender), &busy),
            0.0,
            0.49,
        );
        assert_eq!(v.limit, Limit::Cpu);
    }
}
