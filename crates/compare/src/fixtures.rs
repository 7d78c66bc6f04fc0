//! Result documents for the tests of comparisons and studies (one place,
//! so a new field of a tool's run is one edit).

use linerate_result::ResultDoc;
use serde_json::Value;

/// A result document with only a throughput, for a study's or a
/// comparison's points.
pub fn throughput_doc(bits_per_second: f64) -> ResultDoc {
    let run = crate::tools::ToolRun {
        bits_per_second,
        bytes: 0,
        seconds: 1.0,
        streams: 1,
        intervals: Vec::new(),
        retransmits: None,
        cpu_percent: None,
        counted: "received",
    };
    let (when, cpu) = (std::time::SystemTime::UNIX_EPOCH, Default::default());
    crate::tools::convert::to_result("test", &run, vec![], when, cpu, Value::Null)
}
