//! The sender's result document, and the verdict that names a transfer's
//! limit: a disk, or what the bench verdict finds.

use linerate_result::{Limit, ResultDoc, Side, Verdict};
use linerate_verdict as verdict;

use super::TransferRun;
use linerate_engine::document;
use linerate_wire::TransferTotals;

/// Merges both ends into one `linerate.result/1` document of kind `transfer`.
pub fn to_result(run: &TransferRun, command_line: Vec<String>) -> ResultDoc {
    let ends = document::merge(&run.client, &run.server);
    let verdict = judge(run, &ends, ends.bits_per_second, ends.seconds);
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
        map.insert("owners_kept".into(), run.totals.owners_kept.into());
        map.insert("created".into(), run.totals.created.into());
        map.insert("replaced".into(), run.totals.replaced.into());
        map.insert("deleted".into(), run.totals.deleted.into());
        if !run.totals.changes.is_empty() {
            map.insert(
                "changes".into(),
                serde_json::to_value(&run.totals.changes).unwrap_or_default(),
            );
        }
        map.insert("verified_files".into(), run.verified.into());
        map.insert("mismatched_files".into(), run.mismatched.clone().into());
        map.insert(
            "encryption".into(),
            document::encryption(run.encryption.as_ref()),
        );
    }
    let provenance = document::Provenance {
        kind: "transfer",
        command_line,
        started_at: run.started_at,
        client_host: &run.client_host,
        server_host: &run.server_host,
        parameters,
    };
    let mut doc = document::document(provenance, ends, verdict);
    let flows = u32::from(run.request.streams);
    linerate_engine::link_shares::judge_links(&mut doc, &run.stripes, run.members.as_ref(), flows);
    doc
}

/// Below this much payload a transfer is all setup: no limit is named.
pub const MIN_JUDGED_BYTES: u64 = 16 << 20;

/// Names the limit of a transfer: a disk when the stream threads spent most
/// of their time reading the source or writing the destination, otherwise
/// what the bench verdict finds in TCP_INFO and the CPU figures.
fn judge(run: &TransferRun, ends: &document::Ends, bps: f64, seconds: f64) -> Verdict {
    let streams = &ends.streams;
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
    // The receiver's last writes and syncs end after the sender's clock
    // stops: its time can exceed the sender's by that much.
    let share = |busy: f64| {
        if thread_time > 0.0 {
            (busy / thread_time).min(1.0)
        } else {
            0.0
        }
    };
    let evidence = verdict::Evidence {
        streams,
        client_cpu: run.client.host_cpu,
        server_cpu: Some(run.server.host_cpu),
        bits_per_second: bps,
        pacing_rate: run.pacing_rate,
        window_asked: run.window_asked,
        congestion: None,
        cipher: run.encryption.as_ref().map(|n| n.cipher.as_str()),
        intervals: &ends.intervals,
        capacity: None,
        path_min_rtt_us: None,
        forwarder: None,
        one_way: None,
    };
    let disks = verdict::DiskTime {
        read_share: share(run.read_seconds),
        write_share: share(run.totals.write_seconds),
        dest_in_memory: run.totals.dest_in_memory,
        buffered: buffered(&run.totals, seconds),
    };
    verdict::judge_transfer(&evidence, disks)
}

/// What the page cache did to the receiver's writes, when most of them
/// went through it to a disk.
fn buffered(t: &TransferTotals, seconds: f64) -> Option<verdict::Buffered> {
    let mostly_buffered = t.bytes_written_direct.saturating_mul(2) < t.bytes_written;
    (mostly_buffered && !t.dest_in_memory).then(|| verdict::Buffered {
        io_stalled_share: t
            .io_stalled_seconds
            .filter(|_| seconds > 0.0)
            .map(|s| (s / seconds).min(1.0)),
        dirty_peak_bytes: t.dirty_peak_bytes,
        blocked_writes: t.blocked_writes,
    })
}
