//! Which figures the inputs support, and drawing them: throughput over time
//! (per stream and summed, with the time to stabilise), TCP_INFO panels,
//! throughput against streams, RTT and message size, before/after bars,
//! tool comparison bars with min-max whiskers, and the latency figures
//! planned by [`crate::latency_figures`], the many-host figures (incast
//! sweeps, mesh matrices) planned by [`crate::fleet_figures`], the proxy
//! jobs' planned by [`crate::job_figures`] and the striping study's by
//! [`crate::link_figures`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::chart::{self, Bar, Bars, Lines, Series};
use crate::data::{self, Run};
use crate::{Input, ReportError, time_to_stabilise};
use crate::{fleet_figures, job_figures, latency_figures, link_figures};
use linerate_result::stats::median;

/// In the order a report shows them: comparisons and sweeps first, then
/// the detail of single runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FigureKind {
    /// Tools side by side (a comparison): median bars with min-max whiskers.
    Tools,
    /// Before and after tuning.
    BeforeAfter,
    /// One link, the links bonded and the links striped (a striping study).
    Striping,
    /// Throughput against streams.
    VsStreams,
    /// Throughput against round-trip time, per buffer setting.
    VsRtt,
    /// Throughput against the write length.
    VsMessageSize,
    /// Round trips against the message size.
    LatencyVsSize,
    /// The bandwidth of a window of requests against the message size.
    BandwidthVsSize,
    /// Round trips by percentile.
    LatencyDistribution,
    /// An incast's aggregate against its senders.
    Incast,
    /// An incast's fairness (Jain's index) against its senders.
    IncastFairness,
    /// A mesh's pair rates as a matrix.
    Mesh,
    /// A proxy job's time per fabric configuration (an interference study).
    JobTimes,
    /// Each node's median iteration per fabric configuration.
    JobPerNode,
    /// A proxy job's iteration times, rank by rank.
    JobIterations,
    /// Throughput over time.
    OverTime,
    /// The senders' TCP_INFO over time (round trip, window, retransmits).
    TcpInfo,
    /// A UDP run's loss and jitter over time.
    UdpOverTime,
    /// A series from the archive, run by run, with its normal band and the
    /// runs outside it.
    History,
}

impl FigureKind {
    /// The kind's name in figure ids and CSV file names.
    pub fn slug(self) -> &'static str {
        match self {
            FigureKind::OverTime => "over-time",
            FigureKind::TcpInfo => "tcp-info",
            FigureKind::UdpOverTime => "udp-loss-jitter",
            FigureKind::VsStreams => "vs-streams",
            FigureKind::VsRtt => "vs-rtt",
            FigureKind::VsMessageSize => "vs-message-size",
            FigureKind::LatencyVsSize => "latency-vs-size",
            FigureKind::BandwidthVsSize => "bandwidth-vs-size",
            FigureKind::LatencyDistribution => "latency-distribution",
            FigureKind::BeforeAfter => "before-after",
            FigureKind::Striping => "striping",
            FigureKind::Tools => "tools",
            FigureKind::Incast => "incast",
            FigureKind::IncastFairness => "incast-fairness",
            FigureKind::Mesh => "mesh",
            FigureKind::JobTimes => "job-times",
            FigureKind::JobPerNode => "job-per-node",
            FigureKind::JobIterations => "job-iterations",
            FigureKind::History => "history",
        }
    }
}

/// One drawn figure with the data behind it.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Unique in the report; its anchor and CSV file name.
    pub id: String,
    /// What it shows.
    pub kind: FigureKind,
    /// Its title.
    pub title: String,
    /// What it shows in words: the runs behind it and how to read it.
    pub caption: String,
    /// The drawing, inline SVG.
    pub svg: String,
    /// Its data as CSV.
    pub csv: String,
}

/// Most over-time and TCP_INFO figures drawn, so a big study stays readable.
const MAX_PER_RUN_FIGURES: usize = 12;
/// Above this many streams only the sum is drawn over time.
const MAX_STREAM_LINES: usize = 16;

const GBIT: f64 = 1e9;

fn lines_csv(series: &[Series]) -> String {
    let mut s = String::from("series,x,y\n");
    for ser in series {
        for (x, y) in &ser.points {
            let _ = writeln!(s, "{},{x},{y}", csv_field(&ser.name));
        }
    }
    s
}

fn bars_csv(bars: &[Bar]) -> String {
    let mut s = String::from("label,median,min,max\n");
    for b in bars {
        let _ = writeln!(s, "{},{},{},{}", csv_field(&b.label), b.value, b.min, b.max);
    }
    s
}

fn matrix_csv(m: &chart::Matrix) -> String {
    let mut s = String::from("sender,receiver,value\n");
    let name = |i: usize| m.labels.get(i).map_or(String::new(), |l| csv_field(l));
    for &(row, col, v) in &m.cells {
        let _ = writeln!(s, "{},{},{v}", name(row), name(col));
    }
    s
}

fn csv_field(v: &str) -> String {
    if v.contains([',', '"', '\n']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

struct Builder {
    figures: Vec<Figure>,
    errors: Vec<String>,
}

impl Builder {
    fn add_lines(&mut self, kind: FigureKind, caption: String, spec: &Lines) {
        let drawn = chart::lines(kind.slug(), spec);
        self.add(
            kind,
            spec.title.clone(),
            caption,
            drawn,
            lines_csv(&spec.series),
        );
    }

    fn add_bars(&mut self, kind: FigureKind, caption: String, spec: &Bars) {
        let drawn = chart::bars(kind.slug(), spec);
        self.add(
            kind,
            spec.title.clone(),
            caption,
            drawn,
            bars_csv(&spec.bars),
        );
    }

    fn add(
        &mut self,
        kind: FigureKind,
        title: String,
        caption: String,
        drawn: Result<String, ReportError>,
        csv: String,
    ) {
        match drawn {
            Ok(svg) => {
                let id = format!(
                    "fig-{}-{}",
                    kind.slug(),
                    self.figures.iter().filter(|f| f.kind == kind).count() + 1
                );
                self.figures.push(Figure {
                    id,
                    kind,
                    title,
                    caption,
                    svg,
                    csv,
                });
            }
            Err(e) => self.errors.push(e.to_string()),
        }
    }
}

/// Every figure the inputs support, in a fixed order of kinds, and the
/// reasons any could not be drawn.
pub fn choose(inputs: &[Input]) -> (Vec<Figure>, Vec<String>) {
    let runs = data::runs(inputs);
    let mut b = Builder {
        figures: Vec::new(),
        errors: Vec::new(),
    };
    over_time(&mut b, &runs);
    tcp_info(&mut b, &runs);
    udp_over_time(&mut b, &runs);
    vs_streams(&mut b, &runs);
    vs_rtt(&mut b, &runs);
    vs_message_size(&mut b, &runs);
    for planned in latency_figures::plan(inputs) {
        let kind = match planned.kind {
            latency_figures::Kind::VsSize => FigureKind::LatencyVsSize,
            latency_figures::Kind::Bandwidth => FigureKind::BandwidthVsSize,
            latency_figures::Kind::Distribution => FigureKind::LatencyDistribution,
        };
        b.add_lines(kind, planned.caption, &planned.spec);
    }
    for planned in fleet_figures::plan(inputs) {
        match planned {
            fleet_figures::Planned::Incast { caption, spec } => {
                b.add_lines(FigureKind::Incast, caption, &spec)
            }
            fleet_figures::Planned::Fairness { caption, spec } => {
                b.add_lines(FigureKind::IncastFairness, caption, &spec)
            }
            fleet_figures::Planned::Mesh { caption, spec } => {
                let drawn = chart::matrix(FigureKind::Mesh.slug(), &spec);
                let csv = matrix_csv(&spec);
                b.add(FigureKind::Mesh, spec.title.clone(), caption, drawn, csv);
            }
        }
    }
    for planned in job_figures::plan(inputs) {
        match planned {
            job_figures::Planned::Iterations { caption, spec } => {
                b.add_lines(FigureKind::JobIterations, caption, &spec)
            }
            job_figures::Planned::PerNode { caption, spec } => {
                b.add_lines(FigureKind::JobPerNode, caption, &spec)
            }
            job_figures::Planned::Times { caption, spec } => {
                b.add_bars(FigureKind::JobTimes, caption, &spec)
            }
        }
    }
    before_after(&mut b, inputs);
    for (caption, spec) in link_figures::plan(inputs) {
        b.add_bars(FigureKind::Striping, caption, &spec);
    }
    tools(&mut b, inputs);
    b.figures.sort_by_key(|f| f.kind);
    (b.figures, b.errors)
}

fn over_time(b: &mut Builder, runs: &[Run]) {
    let chosen = runs
        .iter()
        .filter(|r| r.parent.is_none() || r.series == "over-time")
        .filter(|r| data::measures_throughput(r.doc))
        .filter(|r| !data::summed_spans(r.doc).is_empty());
    for r in each_kind_first(b, "throughput over time", chosen) {
        let sum = data::summed_spans(r.doc);
        let streams = data::per_stream_spans(r.doc);
        let mut series = Vec::new();
        if streams.len() > 1 && streams.len() <= MAX_STREAM_LINES {
            for (n, spans) in &streams {
                series.push(Series {
                    // As the console and the JSON number them.
                    name: format!("stream {n}"),
                    points: data::stepped(spans, GBIT),
                });
            }
        }
        series.push(Series {
            name: "sum".into(),
            points: data::stepped(&sum, GBIT),
        });
        let values: Vec<f64> = sum.iter().map(|p| p.2).collect();
        let marker = (values.len() >= 4)
            .then(|| time_to_stabilise(&values))
            .flatten()
            .map(|i| {
                let start = sum[i as usize].0;
                (start, format!(" stable from {start:.0} s"))
            });
        let title = format!("Throughput over time: {}", short(&r.label));
        let caption = format!(
            "{} ({}). Received payload per interval, per stream and summed, each interval's rate held over it{}. Verdict: {}",
            r.doc.command_line.join(" "),
            r.doc.kind,
            marker.as_ref().map_or(String::new(), |m| format!("; dashed: time to stabilise ({} s, every later interval within 10 % of the median of the last half)", m.0)),
            r.doc.summary.verdict.sentence
        );
        let spec = Lines {
            title: title.clone(),
            x_label: "time (s)".into(),
            y_label: "Gbit/s".into(),
            series,
            marker,
            ..Lines::default()
        };
        b.add_lines(FigureKind::OverTime, caption, &spec);
    }
}

fn tcp_info(b: &mut Builder, runs: &[Run]) {
    let chosen = runs
        .iter()
        .filter(|r| r.parent.is_none() || r.series == "over-time")
        .filter(|r| {
            data::tcp_series(r.doc, |_| 0.0)
                .values()
                .any(|v| v.len() >= 2)
        });
    for r in each_kind_first(b, "TCP_INFO over time", chosen) {
        let cwnd = stream_series(data::tcp_series(r.doc, |t| {
            f64::from(t.snd_cwnd) * f64::from(t.snd_mss) / 1_048_576.0
        }));
        let rtt = stream_series(data::tcp_series(r.doc, |t| f64::from(t.rtt_us) / 1000.0));
        let retrans = stream_series(data::tcp_series(r.doc, |t| f64::from(t.total_retrans)));
        let run = short(&r.label);
        let specs = vec![
            time_panel(&format!("Congestion window: {run}"), "MiB", cwnd),
            time_panel(&format!("Smoothed RTT: {run}"), "ms", rtt),
            time_panel(
                &format!("Retransmitted segments (cumulative): {run}"),
                "segments",
                retrans,
            ),
        ];
        let csv = panels_csv(&specs);
        let title = format!("TCP_INFO of the senders: {}", short(&r.label));
        let caption = format!(
            "{}. Sampled by the sending threads each interval.",
            r.doc.command_line.join(" ")
        );
        b.add(
            FigureKind::TcpInfo,
            title,
            caption,
            chart::panels("tcp-info", &specs),
            csv,
        );
    }
}

/// One line per stream (the first few), named from 1.
fn stream_series(m: BTreeMap<u16, Vec<(f64, f64)>>) -> Vec<Series> {
    m.into_iter()
        .take(MAX_STREAM_LINES)
        .map(|(n, points)| Series {
            name: format!("stream {n}"),
            points,
        })
        .collect()
}

/// A panel of lines over a run's time.
fn time_panel(title: &str, y: &str, series: Vec<Series>) -> Lines {
    Lines {
        title: title.into(),
        x_label: "time (s)".into(),
        y_label: y.into(),
        series,
        ..Lines::default()
    }
}

/// Every panel's lines as one CSV, each row led by its panel's title.
fn panels_csv(specs: &[Lines]) -> String {
    let mut csv = String::from("panel,series,x,y\n");
    for s in specs {
        for line in lines_csv(&s.series).lines().skip(1) {
            let _ = writeln!(csv, "{},{line}", csv_field(&s.title));
        }
    }
    csv
}

/// A UDP run's loss and jitter per interval, as its receivers counted them.
fn udp_over_time(b: &mut Builder, runs: &[Run]) {
    let chosen = runs
        .iter()
        .filter(|r| r.parent.is_none() || r.series == "over-time")
        .filter(|r| {
            data::udp_series(r.doc, |_| 0.0)
                .values()
                .any(|v| v.len() >= 2)
        });
    for r in each_kind_first(b, "UDP loss and jitter over time", chosen) {
        let run = short(&r.label);
        let loss = stream_series(data::udp_series(r.doc, |u| u.loss * 100.0));
        let mut specs = vec![time_panel(
            &format!("Datagrams lost per interval: {run}"),
            "% of those sent",
            loss,
        )];
        // Under GRO a receive hands over many datagrams at one arrival time:
        // their spacing, and so the jitter, is not measured.
        let gro = r
            .doc
            .parameters
            .pointer("/udp/gro")
            .and_then(|v| v.as_bool())
            == Some(true);
        if !gro {
            let jitter = stream_series(data::udp_series(r.doc, |u| u.jitter_us));
            specs.push(time_panel(
                &format!("Jitter (RFC 3550): {run}"),
                "us",
                jitter,
            ));
        }
        let csv = panels_csv(&specs);
        let title = if gro {
            format!("UDP loss over time: {run}")
        } else {
            format!("UDP loss and jitter over time: {run}")
        };
        let caption = format!(
            "{}. Counted by the receivers each interval: datagrams missing by their sequence \
             numbers{}. Verdict: {}",
            r.doc.command_line.join(" "),
            if gro {
                "; jitter not drawn: the receivers took coalesced datagrams (GRO), whose \
                 arrival times are one per read, not one per datagram (--no-gro measures it)"
            } else {
                ", and the interarrival jitter at the interval's end"
            },
            r.doc.summary.verdict.sentence
        );
        b.add(
            FigureKind::UdpOverTime,
            title,
            caption,
            chart::panels("udp-loss-jitter", &specs),
            csv,
        );
    }
}

/// Groups runs into series of (x, median y) by `x_of`, one figure per source.
fn sweep(
    runs: &[&Run],
    x_of: impl Fn(&Run) -> Option<f64>,
    y_of: impl Fn(&Run) -> f64,
    series_of: impl Fn(&Run) -> String,
) -> Vec<Series> {
    let mut by: BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>> = BTreeMap::new();
    for r in runs {
        if let Some(x) = x_of(r) {
            let e = by
                .entry(series_of(r))
                .or_default()
                .entry((x * 1000.0).round() as u64)
                .or_insert((x, Vec::new()));
            e.1.push(y_of(r));
        }
    }
    by.into_iter()
        .filter(|(_, xs)| xs.len() >= 2)
        .map(|(name, xs)| Series {
            name,
            points: xs
                .into_values()
                .map(|(x, ys)| (x, median(ys) / GBIT))
                .collect(),
        })
        .collect()
}

/// At most [`MAX_PER_RUN_FIGURES`] of `runs`, in their order, chosen so
/// that every kind of run (a transfer, a UDP run, ...) has one before any
/// kind has a second.
fn each_kind_first<'r, 'a>(
    b: &mut Builder,
    what: &str,
    runs: impl Iterator<Item = &'r Run<'a>>,
) -> Vec<&'r Run<'a>>
where
    'a: 'r,
{
    let runs: Vec<&Run> = runs.collect();
    let mut kinds = std::collections::HashSet::new();
    let first: Vec<usize> = (0..runs.len())
        .filter(|&i| kinds.insert(data::kind_of(runs[i].doc)))
        .take(MAX_PER_RUN_FIGURES)
        .collect();
    let mut keep: std::collections::BTreeSet<usize> = first.into_iter().collect();
    for i in 0..runs.len() {
        if keep.len() >= MAX_PER_RUN_FIGURES {
            break;
        }
        keep.insert(i);
    }
    // The page says what it left out, not only what it drew.
    if keep.len() < runs.len() {
        b.errors.push(format!(
            "{what} for {} of {} runs (a page draws at most {MAX_PER_RUN_FIGURES} of these \
             figures, a run of each kind first; every run is in the verdicts below)",
            runs.len() - keep.len(),
            runs.len()
        ));
    }
    keep.into_iter().map(|i| runs[i]).collect()
}

/// Runs by where they came from: each study or comparison on its own,
/// top-level documents together.
fn by_source<'a, 'b>(runs: &'b [Run<'a>]) -> Vec<(String, Vec<&'b Run<'a>>)> {
    let mut groups: Vec<(String, Vec<&Run>)> = Vec::new();
    for r in runs {
        let key = match r.parent {
            Some(p) => p.command_line.join(" "),
            None => "separate runs".to_string(),
        };
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
}

fn wall_or_summary(r: &Run) -> f64 {
    r.factor("wall_bps")
        .unwrap_or(r.doc.summary.bits_per_second)
}

fn vs_streams(b: &mut Builder, runs: &[Run]) {
    for (source, group) in by_source(runs) {
        // Runs that chose their write size belong to the message-size
        // figure; round trips, incasts, meshes and jobs have no throughput
        // to draw against streams.
        let eligible: Vec<&Run> = group
            .into_iter()
            .filter(|r| {
                !r.factors.contains_key("rtt_ms")
                    && r.doc.kind != "transfer"
                    && data::measures_throughput(r.doc)
                    && !sets_write_size(r)
            })
            .collect();
        // A line joins runs of one kind (protocol, direction, cap, cut
        // short or not); separate runs also only over the same path under
        // the same conditions: loopback and a lab are two lines.
        let series = sweep(
            &eligible,
            |r| r.factor("streams"),
            wall_or_summary,
            |r| match r.parent {
                Some(_) if data::kind_of(r.doc) == r.doc.kind => r.series.clone(),
                Some(_) => format!("{}, {}", r.series, data::kind_of(r.doc)),
                None if r.series == r.doc.kind => {
                    format!("{}, {}", data::kind_of(r.doc), data::path_of(r.doc))
                }
                None => format!(
                    "{}, {}, {}",
                    r.series,
                    data::kind_of(r.doc),
                    data::path_of(r.doc)
                ),
            },
        );
        if series.is_empty() {
            continue;
        }
        let title = "Throughput vs streams".to_string();
        let caption = format!("{source}. Median over repeated runs at each stream count.");
        let spec = Lines {
            title: title.clone(),
            x_label: "streams".into(),
            y_label: "Gbit/s".into(),
            series,
            points: true,
            integer_x: true,
            ..Lines::default()
        };
        b.add_lines(FigureKind::VsStreams, caption, &spec);
    }
}

fn vs_rtt(b: &mut Builder, runs: &[Run]) {
    for (source, group) in by_source(runs) {
        let series = sweep(
            &group,
            |r| r.factors.get("rtt_ms").and_then(|v| v.as_f64()),
            wall_or_summary,
            |r| r.series.clone(),
        );
        if series.is_empty() {
            continue;
        }
        let title = "Throughput vs RTT".to_string();
        let caption =
            format!("{source}. Each point one run; buffers and streams as in the series name.");
        let spec = Lines {
            title: title.clone(),
            x_label: "RTT (ms)".into(),
            y_label: "Gbit/s".into(),
            series,
            points: true,
            ..Lines::default()
        };
        b.add_lines(FigureKind::VsRtt, caption, &spec);
    }
}

/// The run's write size was asked for, not planned: by its parameters, or
/// in documents older than `write_len_source`, by its command line.
fn sets_write_size(r: &Run) -> bool {
    match r
        .doc
        .parameters
        .get("write_len_source")
        .and_then(|v| v.as_str())
    {
        Some(source) => source == "asked",
        None => r.doc.command_line.iter().any(|w| {
            w == "-l"
                || w == "--len"
                || w.starts_with("--len=")
                || (w.starts_with("-l") && w.len() > 2)
        }),
    }
}

fn vs_message_size(b: &mut Builder, runs: &[Run]) {
    let benches: Vec<&Run> = runs
        .iter()
        .filter(|r| r.doc.kind == "bench" && r.parent.is_none() && sets_write_size(r))
        .collect();
    let series = sweep(
        &benches,
        |r| r.doc.parameters.get("write_len").and_then(|v| v.as_f64()),
        |r| r.doc.summary.bits_per_second,
        |r| format!("P{}", r.factor("streams").unwrap_or(1.0)),
    );
    if series.is_empty() {
        return;
    }
    let title = "Throughput vs message (write) size".to_string();
    let caption = "linerate bench runs that differ in -l/--len. Median at each size.".to_string();
    let spec = Lines {
        title: title.clone(),
        x_label: "write size".into(),
        y_label: "Gbit/s".into(),
        series,
        log_x: true,
        points: true,
        ..Lines::default()
    };
    b.add_lines(FigureKind::VsMessageSize, caption, &spec);
}

/// A bar of the median of `values` in units of `unit`, whiskers min to max.
fn bar_of(label: String, values: &[f64], group: usize, unit: f64) -> Bar {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(0.0, f64::max);
    Bar {
        label,
        value: median(values.iter().copied()) / unit,
        min: min / unit,
        max: max / unit,
        group,
    }
}

fn before_after(b: &mut Builder, inputs: &[Input]) {
    for input in inputs {
        let Some(study) = &input.doc.study else {
            continue;
        };
        let values = |s: &str| -> Vec<f64> {
            study
                .points
                .iter()
                .filter(|p| p.series == s)
                .map(|p| p.result.summary.bits_per_second)
                .collect()
        };
        let (before, after) = (values("before"), values("after"));
        if before.is_empty() || after.is_empty() {
            continue;
        }
        let bars = vec![
            bar_of("before".into(), &before, 0, GBIT),
            bar_of("after".into(), &after, 1, GBIT),
        ];
        let gain = study
            .findings
            .get("gain")
            .copied()
            .unwrap_or(median(after.iter().copied()) / median(before.iter().copied()).max(1.0));
        let title = format!("Before and after tuning: {gain:.1}x");
        let caption = format!(
            "{}. Bars: median of {} runs each, whiskers: min to max. {}",
            input.doc.command_line.join(" "),
            before.len(),
            study.definitions.get("gain").cloned().unwrap_or_default()
        );
        let spec = Bars {
            title: title.clone(),
            y_label: "Gbit/s".into(),
            bars,
            legend: Vec::new(),
        };
        b.add_bars(FigureKind::BeforeAfter, caption, &spec);
    }
}

fn tools(b: &mut Builder, inputs: &[Input]) {
    for input in inputs.iter().filter(|i| i.doc.kind == "compare") {
        let Some(study) = &input.doc.study else {
            continue;
        };
        let mode = input.doc.parameters.get("mode").and_then(|m| m.as_str());
        let files = mode == Some("files");
        // Latency mode compares round trips (each tool's central figure),
        // the others throughput.
        let latency = mode == Some("latency");
        let (unit, y_label) = if latency {
            (1.0, "round trip (us)")
        } else {
            (GBIT, "Gbit/s")
        };
        let mut tools: Vec<String> = Vec::new();
        let mut by: BTreeMap<(u64, usize), Vec<f64>> = BTreeMap::new();
        for p in &study.points {
            let idx = match tools.iter().position(|t| *t == p.series) {
                Some(i) => i,
                None => {
                    tools.push(p.series.clone());
                    tools.len() - 1
                }
            };
            let n = p
                .factors
                .get("streams")
                .and_then(|v| v.as_u64())
                .unwrap_or(1);
            let v = if latency {
                p.factors.get("rtt_us").and_then(|v| v.as_f64())
            } else {
                Some(data::point_bps(p))
            };
            by.entry((n, idx)).or_default().extend(v);
        }
        let bars: Vec<Bar> = by
            .iter()
            .map(|(&(n, idx), v)| {
                // Several stream counts: bars named by streams, tools by colour.
                let label = if files || by.keys().all(|k| k.0 == n) {
                    tools[idx].clone()
                } else {
                    format!("P{n}")
                };
                bar_of(label, v, idx, unit)
            })
            .collect();
        if bars.is_empty() {
            continue;
        }
        let title = match mode {
            Some("files") => "Transfer tools side by side",
            Some("latency") => "Round trips side by side (p50, or the tool's mean)",
            Some("udp") => "UDP tools side by side: received at one rate",
            _ => "Memory-to-memory tools side by side",
        }
        .to_string();
        let caption = format!(
            "{}. {}; bars: median over {} rounds in alternating order, whiskers: min to max.{} Skipped: {}.",
            input.doc.command_line.join(" "),
            input
                .doc
                .parameters
                .get("placement")
                .and_then(|v| v.as_str())
                .unwrap_or("loopback"),
            input
                .doc
                .parameters
                .get("rounds")
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            footing(study),
            input
                .doc
                .parameters
                .get("skipped")
                .and_then(|v| v.as_array())
                .map(|a| a
                    .iter()
                    .filter_map(|s| s.get("tool").and_then(|t| t.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "none".into())
        );
        let several = by
            .keys()
            .any(|k| k.0 != by.keys().next().map_or(0, |f| f.0));
        let spec = Bars {
            title: title.clone(),
            y_label: y_label.into(),
            bars,
            legend: if several { tools.clone() } else { Vec::new() },
        };
        b.add_bars(FigureKind::Tools, caption, &spec);
    }
}

/// How linerate ran beside the peers, where that is not how its own
/// bench runs by default: a page may hold both, and their figures differ
/// by the settings, not the tool.
fn footing(study: &linerate_result::Study) -> String {
    let Some(ours) = study.points.iter().find(|p| p.series == "linerate") else {
        return String::new();
    };
    let flag = |k: &str| ours.result.parameters.get(k).and_then(|v| v.as_bool());
    let mut differs = Vec::new();
    if flag("pin_cores") == Some(false) && flag("pin_pairs") != Some(true) {
        differs.push("threads not pinned (--affinity off)");
    }
    if flag("rx_poll") == Some(false) {
        differs.push("receivers blocking (--rx-poll off)");
    }
    if differs.is_empty() {
        return String::new();
    }
    format!(
        " linerate ran here on the peers' footing: {}; a bench run with its defaults \
         (--affinity auto, --rx-poll auto) pins and polls where that measured faster, so a \
         bench figure elsewhere on this page may not share these settings.",
        differs.join(", ")
    )
}

fn short(label: &str) -> String {
    let base = label.rsplit('/').next().unwrap_or(label);
    let n = base.chars().count();
    if n > 60 {
        format!("...{}", base.chars().skip(n - 57).collect::<String>())
    } else {
        base.to_string()
    }
}
