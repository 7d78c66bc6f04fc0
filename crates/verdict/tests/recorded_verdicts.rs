//! Every verdict recorded in bench/results (result documents written by
//! the benchmark scripts over weeks of runs, on loopback and in labs) goes
//! through the audit: its sentence's rates are its run's, and no fault is
//! named below its own threshold.

use linerate_result::Summary;
use linerate_verdict::audit::audit;

/// Every run in `doc` (an object with a `summary` holding a verdict and
/// the run's parameters), with its stream count.
fn runs(doc: &serde_json::Value, found: &mut Vec<(Summary, u32)>) {
    match doc {
        serde_json::Value::Object(map) => {
            if let Some(summary) = map.get("summary")
                && summary
                    .get("verdict")
                    .is_some_and(|v| v.get("limit").is_some())
                && let Ok(s) = serde_json::from_value::<Summary>(summary.clone())
            {
                // A study's own summary repeats one of its runs without
                // the run's parameters: that run is checked on its own.
                if let Some(streams) = map
                    .get("parameters")
                    .and_then(|p| p["streams"].as_u64())
                    .and_then(|n| u32::try_from(n).ok())
                {
                    found.push((s, streams));
                }
            }
            map.values().for_each(|v| runs(v, found));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| runs(v, found)),
        _ => {}
    }
}

#[test]
fn recorded_verdicts_agree_with_their_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/results");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("bench/results is in the repository") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut found = Vec::new();
        runs(&doc, &mut found);
        for (summary, streams) in found {
            checked += 1;
            for w in audit(&summary, streams) {
                wrong.push(format!(
                    "{}: {w}\n  {}",
                    path.file_name().unwrap().to_string_lossy(),
                    summary.verdict.sentence
                ));
            }
        }
    }
    assert!(checked >= 60, "only {checked} recorded verdicts found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
