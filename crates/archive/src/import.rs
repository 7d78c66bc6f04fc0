//! Results made before the archive, or by another tool, as entries: a
//! linerate result document, or iperf3's `-J` output (3.x), which keeps
//! its tool's name so that its series never mix with linerate's.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::entry::{Entry, SeriesKey, Unit};

/// What a JSON document is, for the archive.
#[derive(Debug)]
pub enum Imported {
    /// A result with its entries (one, or a many-host run's pairs).
    Result(Vec<Entry>),
    /// Not a result the archive knows (another tool's file, a study's
    /// plan): skipped, with why.
    Skipped(&'static str),
}

/// The entries of `doc`: a `linerate.result/1` document, or iperf3's
/// `-J` output.
pub fn entries_of(doc: &Value) -> Imported {
    if doc.get("schema").and_then(Value::as_str) == Some(linerate_result::SCHEMA) {
        return match serde_json::from_value::<linerate_result::ResultDoc>(doc.clone()) {
            Ok(d) => Imported::Result(Entry::all_of(&d)),
            Err(_) => Imported::Skipped("a linerate result this version cannot read"),
        };
    }
    if doc
        .pointer("/start/version")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("iperf 3"))
    {
        return match iperf3(doc) {
            Some(e) => Imported::Result(vec![e]),
            None => Imported::Skipped("an iperf3 result without a start time or a sum"),
        };
    }
    Imported::Skipped("neither a linerate result nor iperf3 -J output")
}

/// An iperf3 `-J` run as an entry: the client's host (the second word of
/// its `uname -a`) and the server's address, the streams, protocol and
/// direction, and what the receiver counted.
fn iperf3(doc: &Value) -> Option<Entry> {
    let start = doc.get("start")?;
    // 3.13 and later give the start to the millisecond: two runs in one
    // second stay two runs.
    let started_at = match start.pointer("/timestamp/timemillisecs") {
        Some(ms) => ms.as_f64()? / 1000.0,
        None => start.pointer("/timestamp/timesecs")?.as_f64()?,
    };
    let test = start.get("test_start")?;
    let reverse = test.get("reverse").and_then(Value::as_i64) == Some(1);
    let bidir = test.get("bidir").and_then(Value::as_i64) == Some(1);
    let protocol = test
        .get("protocol")
        .and_then(Value::as_str)
        .unwrap_or("TCP")
        .to_lowercase();
    let client = start
        .get("system_info")
        .and_then(Value::as_str)
        .and_then(|u| u.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string();
    let server = start
        .pointer("/connected/0/remote_host")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let port = start
        .pointer("/connected/0/remote_port")
        .and_then(Value::as_u64);
    let (source, destination) = if reverse {
        (server.clone(), client)
    } else {
        (client, server.clone())
    };
    let mut settings = BTreeMap::new();
    settings.insert("protocol".to_string(), Value::from(protocol.clone()));
    settings.insert(
        "direction".to_string(),
        Value::from(match (bidir, reverse) {
            (true, _) => "bidir",
            (false, true) => "reverse",
            (false, false) => "forward",
        }),
    );
    if let Some(n) = test.get("num_streams") {
        settings.insert("streams".to_string(), n.clone());
    }
    if let Some(len) = test.get("blksize") {
        settings.insert("write_len".to_string(), len.clone());
    }
    let bps = if protocol == "udp" {
        doc.pointer("/end/sum/bits_per_second")
    } else {
        doc.pointer("/end/sum_received/bits_per_second")
    }
    .and_then(Value::as_f64)?;
    let key = SeriesKey {
        tool: "iperf3".into(),
        kind: "bench".into(),
        source,
        destination,
        path: match port {
            Some(p) => format!("{server}:{p}"),
            None => server,
        },
        settings,
    };
    Some(Entry {
        series: key.id(),
        key,
        started_at,
        tool_version: start
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("iperf 3")
            .to_string(),
        value: Some(bps),
        unit: Unit::BitsPerSecond,
        limit: None,
        interrupted: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iperf3_doc(reverse: i64, bps: f64) -> Value {
        serde_json::json!({
            "start": {
                "version": "iperf 3.12",
                "system_info": "Linux dtn1 6.1.0 #1 SMP x86_64",
                "timestamp": {"timesecs": 1_764_000_000},
                "connected": [{"remote_host": "10.0.0.2", "remote_port": 5201}],
                "test_start": {"protocol": "TCP", "num_streams": 4, "blksize": 131072, "reverse": reverse}
            },
            "end": {"sum_received": {"bits_per_second": bps}}
        })
    }

    #[test]
    fn an_iperf3_run_keeps_its_tool_and_its_direction() {
        let Imported::Result(e) = entries_of(&iperf3_doc(0, 9.4e9)) else {
            panic!("not imported");
        };
        let [e] = e.as_slice() else {
            panic!("one run, one entry: {e:?}");
        };
        assert_eq!(e.key.tool, "iperf3");
        assert_eq!(
            (e.key.source.as_str(), e.key.destination.as_str()),
            ("dtn1", "10.0.0.2")
        );
        assert_eq!(e.value, Some(9.4e9));
        assert_eq!(e.key.settings["streams"], 4);
        let Imported::Result(r) = entries_of(&iperf3_doc(1, 9.4e9)) else {
            panic!("not imported");
        };
        let r = &r[0];
        assert_eq!(r.key.source, "10.0.0.2");
        assert_ne!(r.series, e.series);
    }

    #[test]
    fn other_json_is_skipped_with_why() {
        for doc in [
            serde_json::json!({}),
            serde_json::json!([1]),
            serde_json::json!({"start": {"version": "iperf 3.12"}}),
        ] {
            assert!(matches!(entries_of(&doc), Imported::Skipped(_)), "{doc}");
        }
    }
}
