//! The regression rule on real noisy series: every benchmark series this
//! project recorded on its 2-core VM (bench/noisy_series.py), as recorded,
//! with a step added at its end, and with one run far off and then its
//! level again.
// A failed expectation is the test's failure, in helpers too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use linerate_archive::normal::{Better, CONFIRM, Judgement, judge};

fn series() -> Vec<(String, Vec<f64>)> {
    let text = include_str!("fixtures/noisy_series.json");
    let doc: serde_json::Value = serde_json::from_str(text).expect("the fixture is JSON");
    doc["series"]
        .as_object()
        .expect("series")
        .iter()
        .map(|(name, values)| {
            let v = values
                .as_array()
                .expect("a list")
                .iter()
                .map(|x| x.as_f64().expect("a rate"))
                .collect();
            (name.clone(), v)
        })
        .collect()
}

/// The judgement after each value of `values` in turn.
fn replay(values: &[f64]) -> Vec<Judgement> {
    (1..=values.len())
        .map(|n| judge(&values[..n], Better::Higher))
        .collect()
}

fn median_of_last(values: &[f64], n: usize) -> f64 {
    linerate_result::stats::median(values[values.len().saturating_sub(n)..].iter().copied())
}

/// A step below a real series' normal range is named by its second run,
/// whatever the series; a step that stays inside it never is. How wide the
/// range is, is the series' own noise: printed for the record
/// (docs/archive.md#the-rule-on-recorded-series).
#[test]
fn a_step_out_of_the_normal_range_is_named_by_its_second_run_and_one_inside_never() {
    let all = series();
    let mut wide = Vec::new();
    for (name, recorded) in all.clone() {
        // Five runs at the series' latest level first, so that the step
        // does not land in a change the recording was already in.
        let level = median_of_last(&recorded, 10);
        let mut values = recorded.clone();
        values.extend([level; 5]);
        if !matches!(judge(&values, Better::Higher), Judgement::Normal(_)) {
            wide.push(name);
            continue;
        }
        let band = linerate_archive::normal::band(&values).expect("a band");
        eprintln!(
            "{name}: normal {:.2}-{:.2} Gbit/s, +-{:.0} % of {:.2}",
            band.low,
            band.high,
            (band.high - band.median) / band.median * 100.0,
            band.median
        );
        // A series as wide as its own median (weeks of a VM drifting 2x
        // and of linerate growing several times faster, in one series)
        // has no step below its range to take.
        if band.low <= 0.0 {
            wide.push(name);
            continue;
        }
        for (to, named) in [
            (band.low * 0.9, Some(CONFIRM - 1)),
            (band.median * 0.97, None),
        ] {
            let mut v = values.clone();
            v.extend([to; 3]);
            let after = replay(&v);
            let found = after[values.len()..]
                .iter()
                .position(|j| matches!(j, Judgement::Regression(_)));
            assert_eq!(
                found,
                named,
                "{name}: a step to {to:.2} from {band:?}: {:?}",
                &after[values.len()..]
            );
        }
    }
    eprintln!("no step below the range, or not settled: {wide:?}");
    assert!(
        all.len() - wide.len() >= 5,
        "only {} of {} series have a step below their range",
        all.len() - wide.len(),
        all.len()
    );
}

#[test]
fn one_run_far_outside_the_normal_range_is_never_named_on_any_real_series() {
    let mut unsettled = Vec::new();
    for (name, values) in series() {
        let level = median_of_last(&values, 10);
        // Five runs at the series' latest level first, so that the lone
        // run does not land in a change the recording was already in.
        let mut settled = values.clone();
        settled.extend([level; 5]);
        if !matches!(judge(&settled, Better::Higher), Judgement::Normal(_)) {
            unsettled.push(name);
            continue;
        }
        let band = linerate_archive::normal::band(&settled).expect("a band");
        for lone in [band.low * 0.7, band.high * 1.3] {
            let mut v = settled.clone();
            for next in [lone, level] {
                v.push(next);
                let j = judge(&v, Better::Higher);
                assert!(
                    matches!(j, Judgement::Normal(_)),
                    "{name}: one run at {lone:.2} beside {band:?}, then {next:.2}: {j:?}"
                );
            }
        }
    }
    assert!(
        unsettled.len() <= 2,
        "not settled by five runs: {unsettled:?}"
    );
}

/// How often the rule speaks on the series as they were recorded, weeks
/// of a drifting VM and of linerate getting faster: printed for the
/// record (docs/archive.md#the-rule-on-recorded-series), and bounded so
/// that the rule cannot become a constant alarm unnoticed.
#[test]
fn on_the_series_as_recorded_the_rule_speaks_at_changes_of_level_only() {
    let mut judged = 0;
    let mut named = 0;
    for (name, values) in series() {
        let after = replay(&values);
        let n = after
            .iter()
            .filter(|j| matches!(j, Judgement::Regression(_) | Judgement::Improvement(_)))
            .count();
        let j = after
            .iter()
            .filter(|j| !matches!(j, Judgement::TooFewRuns { .. }))
            .count();
        eprintln!("{name}: {n} of {j} judged runs outside their normal range");
        judged += j;
        named += n;
    }
    eprintln!("all: {named} of {judged}");
    assert!(judged >= 100, "{judged} judged runs");
    assert!(
        (named as f64) < 0.15 * judged as f64,
        "{named} of {judged} judged runs named a change"
    );
}
