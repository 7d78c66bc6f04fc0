//! The figures of `latency` documents: the round trip against message
//! size, bandwidth against message size, and the distribution of round
//! trips idle against loaded.

use linerate_result::latency::{Pattern, Step};

use crate::Input;
use crate::chart::{Lines, Series};

/// Which of the three figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    VsSize,
    Bandwidth,
    Distribution,
}

/// A figure to draw: its kind, caption and chart.
pub struct Planned {
    pub kind: Kind,
    pub caption: String,
    pub spec: Lines,
}

/// Every latency figure the inputs support.
pub fn plan(inputs: &[Input]) -> Vec<Planned> {
    let mut b = Vec::new();
    add(&mut b, inputs);
    b
}

fn add(b: &mut Vec<Planned>, inputs: &[Input]) {
    for input in inputs {
        let Some(latency) = &input.doc.latency else {
            continue;
        };
        let name = input.path.rsplit('/').next().unwrap_or(&input.path);
        let steps = &latency.steps;
        vs_size(b, name, steps);
        bandwidth(b, name, steps);
        distribution(b, name, steps);
    }
}

fn phase(s: &Step) -> &str {
    s.phase.as_deref().unwrap_or("idle")
}

/// One series per phase of the steps of `pattern`, with `y` of each.
fn by_phase(
    steps: &[Step],
    pattern: Pattern,
    label: &str,
    y: impl Fn(&Step) -> f64,
) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for s in steps.iter().filter(|s| s.pattern == pattern) {
        let name = match &s.phase {
            Some(p) => format!("{label} {p}"),
            None => label.to_string(),
        };
        let point = (f64::from(s.request_bytes), y(s));
        match series.iter_mut().find(|x| x.name == name) {
            Some(x) => x.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    series
}

fn sizes(steps: &[Step], pattern: Pattern) -> usize {
    let mut v: Vec<u32> = steps
        .iter()
        .filter(|s| s.pattern == pattern)
        .map(|s| s.request_bytes)
        .collect();
    v.sort_unstable();
    v.dedup();
    v.len()
}

fn vs_size(b: &mut Vec<Planned>, name: &str, steps: &[Step]) {
    if sizes(steps, Pattern::PingPong) < 2 {
        return;
    }
    let mut series = by_phase(steps, Pattern::PingPong, "p50", |s| s.round_trip_us.p50);
    series.extend(by_phase(steps, Pattern::PingPong, "p99", |s| {
        s.round_trip_us.p99
    }));
    let spec = Lines {
        title: format!("Round trip vs message size ({name})"),
        x_label: "request size".into(),
        y_label: "round trip (us)".into(),
        series,
        log_x: true,
        log_y: true,
        points: true,
        ..Lines::default()
    };
    let caption = "linerate latency ping-pong: median and p99 round trip at each request \
                   size (reply of the same size unless --reply-size), osu_latency style."
        .to_string();
    b.push(Planned {
        kind: Kind::VsSize,
        caption,
        spec,
    });
}

fn bandwidth(b: &mut Vec<Planned>, name: &str, steps: &[Step]) {
    if sizes(steps, Pattern::Window) < 2 {
        return;
    }
    let series = by_phase(steps, Pattern::Window, "Gbit/s", |s| {
        s.bits_per_second / 1e9
    });
    let spec = Lines {
        title: format!("Bandwidth vs message size ({name})"),
        x_label: "message size".into(),
        y_label: "Gbit/s".into(),
        series,
        log_x: true,
        points: true,
        ..Lines::default()
    };
    let caption = "linerate latency --bandwidth: windows of messages back to back, one reply \
                   per window (osu_bw style); request payload per second."
        .to_string();
    b.push(Planned {
        kind: Kind::Bandwidth,
        caption,
        spec,
    });
}

fn distribution(b: &mut Vec<Planned>, name: &str, steps: &[Step]) {
    let shown: Vec<&Step> = steps
        .iter()
        .filter(|s| s.pattern == Pattern::PingPong && !s.distribution_us.is_empty())
        .collect();
    // One size, or the idle and loaded halves of a run under load.
    if shown.is_empty() || shown.len() > 4 {
        return;
    }
    let series = shown
        .iter()
        .map(|s| Series {
            name: format!("{} {} B", phase(s), s.request_bytes),
            points: s
                .distribution_us
                .iter()
                // The maximum (q = 1) has no finite number of nines.
                .filter(|[q, _]| *q < 1.0)
                .map(|[q, us]| (-(1.0 - q).log10(), *us))
                .collect(),
        })
        .collect();
    let spec = Lines {
        title: format!("Round-trip distribution ({name})"),
        x_label: "percentile".into(),
        y_label: "round trip (us)".into(),
        series,
        log_y: true,
        x_nines: true,
        points: true,
        ..Lines::default()
    };
    let caption = "linerate latency: the round trip at each percentile (the maximum is in \
                   the result); under --load, idle against loaded."
        .to_string();
    b.push(Planned {
        kind: Kind::Distribution,
        caption,
        spec,
    });
}
