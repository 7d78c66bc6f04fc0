//! The archive from the command line: every result recorded as the last
//! step of its run (`--archive`, `--no-archive`), and `linerate history`
//! to read it back (docs/guide.md#keeping-history).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use linerate_archive::spool::Spool;
use linerate_archive::{Entry, Judgement, Location, Outcome, Store, Unit};
use linerate_probe::units::{fmt_rate, fmt_us};
use linerate_result::ResultDoc;

use crate::usage::UsageError;

/// Where a command records its result (bench, latency, send, incast, mesh, job, study, compare).
#[derive(Args, Clone, Debug, Default)]
pub struct ArchiveFlags {
    /// Record the result in this archive: a path, sqlite:PATH, a site archive
    /// postgres://USER:PASSWORD@HOST/DB, or none. Default: $LINERATE_ARCHIVE,
    /// else archive.db in $XDG_DATA_HOME/linerate (~/.local/share/linerate).
    #[arg(long, value_name = "ARCHIVE", help_heading = "History", value_parser = LocationParser)]
    pub archive: Option<Location>,
    /// Record nothing (the same as --archive none).
    #[arg(long, conflicts_with = "archive", help_heading = "History")]
    pub no_archive: bool,
}

/// The archive and its spool the flags and the environment name.
struct Place {
    location: Location,
    spool: Option<Spool>,
}

impl ArchiveFlags {
    fn place(&self) -> anyhow::Result<Place> {
        let data = linerate_archive::data_dir();
        let spool = data.as_ref().map(|d| Spool::new(d.join("spool")));
        if self.no_archive {
            return Ok(Place {
                location: Location::Off,
                spool,
            });
        }
        let from_env = std::env::var("LINERATE_ARCHIVE")
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| Location::parse(&v).context("LINERATE_ARCHIVE"))
            .transpose()?;
        let location = match self.archive.clone().or(from_env) {
            Some(l) => l,
            None => match &data {
                Some(d) => Location::default_for(d),
                None => Location::Off,
            },
        };
        Ok(Place { location, spool })
    }

    /// The `LINERATE_ARCHIVE` a run this one starts should record with:
    /// these flags' archive, else `plan` (a schedule file's `archive`), else
    /// none to set (the run reads the environment as this one did).
    pub fn for_children(&self, plan: Option<&str>) -> anyhow::Result<Option<String>> {
        if self.no_archive {
            return Ok(Some("none".into()));
        }
        if let Some(l) = &self.archive {
            return Ok(Some(l.as_setting()));
        }
        plan.map(|given| {
            Location::parse(given)
                .map(|l| l.as_setting())
                .context("the schedule's archive")
        })
        .transpose()
    }

    /// Records a scheduled run that did not happen into the archive these
    /// flags name, else the schedule's (`plan`), else the environment's or
    /// the default.
    pub fn record_missed(
        &self,
        plan: Option<&str>,
        missed: &linerate_archive::MissedRun,
    ) -> anyhow::Result<()> {
        let mut flags = self.clone();
        if flags.archive.is_none() && !flags.no_archive {
            flags.archive = plan
                .map(|given| Location::parse(given).context("the schedule's archive"))
                .transpose()?;
        }
        let place = flags.place()?;
        if place.location == Location::Off {
            return Ok(());
        }
        let Some((mut archive, _)) = linerate_archive::open_to_write(&place.location)? else {
            return Ok(());
        };
        archive.record_missed(missed)?;
        Ok(())
    }

    /// Records `doc` as the last step of its run: never fails the run. A
    /// result the archive cannot take waits in the spool, said in one
    /// line; a run outside its series' normal range is said in one line.
    pub fn record(&self, doc: &ResultDoc) {
        let place = match self.place() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("linerate: not recorded: {e:#}");
                return;
            }
        };
        if place.location == Location::Off {
            return;
        }
        // A run a schedule started carries the schedule's name.
        let scheduled;
        let doc = match crate::scheduled::scheduled_as() {
            Some(name) if doc.schedule.is_none() => {
                scheduled = ResultDoc {
                    schedule: Some(name),
                    ..doc.clone()
                };
                &scheduled
            }
            _ => doc,
        };
        let Ok(document) = serde_json::to_vec(doc) else {
            return;
        };
        let keeping = linerate_archive::record_or_keep(
            &place.location,
            place.spool.as_ref(),
            Entry::all_of(doc),
            &document,
        );
        if let Some(aside) = &keeping.set_aside {
            eprintln!(
                "linerate: {} was not an SQLite archive; moved to {} and a new archive begun",
                place.location.shown(),
                aside.display()
            );
        }
        if let (n @ 1.., Some(spool)) = (keeping.delivered, &place.spool) {
            eprintln!(
                "linerate: {n} result(s) waiting in {} recorded",
                spool.dir().display()
            );
        }
        if let Some(e) = &keeping.spool_error {
            eprintln!("linerate: the spool still waits: {e}");
        }
        match &keeping.outcome {
            Outcome::Recorded(found) => {
                for line in found.iter().filter_map(judgement_line) {
                    eprintln!("{line}");
                }
            }
            Outcome::Kept { error, kept } => eprintln!(
                "linerate: the archive could not take this result ({error}); kept in {} for \
                 the next run (or linerate archive flush)",
                kept.display()
            ),
            Outcome::Lost { error, spool: None } => {
                eprintln!("linerate: the archive could not take this result: {error}")
            }
            Outcome::Lost {
                error,
                spool: Some(why),
            } => eprintln!(
                "linerate: the archive could not take this result ({error}), nor the spool: {why}"
            ),
        }
    }
}

/// The line a run outside its series' normal range prints.
fn judgement_line(found: &linerate_archive::Recorded) -> Option<String> {
    let (change, word) = match &found.judgement {
        Judgement::Regression(c) => (c, "Regression"),
        Judgement::Improvement(c) => (c, "Improvement"),
        _ => return None,
    };
    let key = &found.entry.key;
    let unit = found.entry.unit;
    let first = found.history.get(change.first);
    let since = found
        .history
        .get(
            found
                .history
                .len()
                .saturating_sub(change.band.runs + change.runs),
        )
        .map_or_else(String::new, |r| format!(" since {}", date(r.started_at)));
    let mut line = format!(
        "{word}: {} -> {} ({}) measured {} against its normal {}-{} (last {} runs{since}), \
         {:+.0} %, {} run(s) in a row",
        key.source,
        key.destination,
        key.kind,
        figure(unit, change.value),
        figure(unit, change.band.low),
        figure(unit, change.band.high),
        change.band.runs,
        change.relative * 100.0,
        change.runs,
    );
    // The verdict's change, where the band's runs mostly said otherwise
    // (one odd verdict before the change does not hide it).
    let band_runs = found
        .history
        .iter()
        .rev()
        .skip(change.runs)
        .take(change.band.runs);
    let before = most_common(band_runs.filter_map(|r| r.limit.clone()));
    if let (Some(was), Some(now)) = (before, found.entry.limit.as_ref())
        && &was != now
    {
        line.push_str(&format!("; the verdict changed from {was} to {now}"));
    }
    if let Some(r) = first {
        line.push_str(&format!(". First seen {}.", date(r.started_at)));
    }
    Some(line)
}

/// The value seen most often (the latest of equals), if any.
fn most_common(values: impl Iterator<Item = String>) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for v in values {
        match counts.iter_mut().find(|(seen, _)| *seen == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v, 1)),
        }
    }
    // The first counted is the latest: it wins a tie.
    let most = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == most).map(|(v, _)| v)
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM` (UTC).
pub(crate) fn date(at: f64) -> String {
    let mut text = crate::output::utc(at);
    text.truncate(16);
    text
}

/// `linerate history`: what ran between which hosts, each series' latest
/// value against its normal range.
#[derive(Args, Clone, Debug)]
#[command(after_help = "Examples:\n  \
    linerate history                         every series of the last 30 days\n  \
    linerate history --since 7d --kind bench\n  \
    linerate history --series 3f2a9c0d11e4b7a2   one series, run by run\n  \
    linerate history --json -                every series as JSON")]
pub struct HistoryArgs {
    /// The archive to read (a path, sqlite:PATH or postgres://...). Default: as bench records.
    #[arg(long, value_name = "ARCHIVE", value_parser = LocationParser)]
    pub archive: Option<Location>,
    #[command(flatten)]
    pub filter: SeriesFilter,
    /// Write the answer as JSON to FILE (- for stdout) instead of a table.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
}

/// Which series of an archive (history, report --archive).
#[derive(Args, Clone, Debug)]
pub struct SeriesFilter {
    /// Only series with a run in this last span (30m, 12h, 7d).
    #[arg(long, value_name = "SPAN", default_value = "30d", value_parser = parse_span)]
    pub since: Duration,
    /// Only this kind of run (bench, latency, ...).
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// Only series whose data left this host (its name).
    #[arg(long, value_name = "HOST")]
    pub from: Option<String>,
    /// Only series whose data reached this host (its name).
    #[arg(long, value_name = "HOST")]
    pub to: Option<String>,
    /// One series (its id, or the start of it).
    #[arg(long, value_name = "ID")]
    pub series: Option<String>,
}

impl SeriesFilter {
    /// The series of `archive` this filter lets through.
    pub(crate) fn chosen(
        &self,
        archive: &mut dyn Store,
    ) -> anyhow::Result<Vec<linerate_archive::SeriesSummary>> {
        let since = crate::output::epoch_seconds() - self.since.as_secs_f64();
        let all = archive.series_since(since)?;
        Ok(all
            .into_iter()
            .filter(|s| self.kind.as_ref().is_none_or(|k| &s.key.kind == k))
            .filter(|s| self.from.as_ref().is_none_or(|h| &s.key.source == h))
            .filter(|s| self.to.as_ref().is_none_or(|h| &s.key.destination == h))
            .filter(|s| {
                self.series
                    .as_ref()
                    .is_none_or(|id| s.id.starts_with(id.as_str()))
            })
            .collect())
    }
}

/// `--archive`'s parser. A refused value is not repeated in the error, as
/// clap would: a PostgreSQL URL may hold a password.
#[derive(Clone)]
pub(crate) struct LocationParser;

impl clap::builder::TypedValueParser for LocationParser {
    type Value = Location;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Location, clap::Error> {
        let refused = |why: String| {
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{why}\n"))
                .with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| refused("--archive is not UTF-8".into()))?;
        Location::parse(text).map_err(|e| refused(e.to_string()))
    }
}

pub(crate) fn parse_span(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s).map_err(|e| format!("{s:?}: {e} (give 30m, 12h or 7d)"))
}

/// One series as history prints it.
#[derive(serde::Serialize)]
struct SeriesLine {
    id: String,
    tool: String,
    kind: String,
    source: String,
    destination: String,
    path: String,
    settings: serde_json::Value,
    unit: &'static str,
    runs: usize,
    latest_at: f64,
    latest: Option<f64>,
    normal: Option<[f64; 2]>,
    /// `normal`, `regression`, `improvement` or `too_few_runs`.
    state: &'static str,
    /// The state as the table marks it.
    #[serde(skip)]
    mark: &'static str,
}

pub fn run_history(a: HistoryArgs) -> anyhow::Result<()> {
    let (location, mut archive) = archive_to_read(a.archive.clone())?;
    let chosen = a.filter.chosen(archive.as_mut())?;
    if let Some(id) = &a.filter.series {
        return print_series(archive.as_mut(), &chosen, id, a.json.as_deref());
    }
    let mut lines = Vec::new();
    for s in &chosen {
        let (runs, judgement) = linerate_archive::judge_series(archive.as_mut(), &s.id, s.unit)?;
        let (state, mark, normal) = match &judgement {
            Judgement::TooFewRuns { .. } => ("too_few_runs", "(too few runs)", None),
            Judgement::Normal(b) => ("normal", "", Some([b.low, b.high])),
            Judgement::Regression(c) => ("regression", "worse", Some([c.band.low, c.band.high])),
            Judgement::Improvement(c) => ("improvement", "better", Some([c.band.low, c.band.high])),
        };
        lines.push(SeriesLine {
            id: s.id.clone(),
            tool: s.key.tool.clone(),
            kind: s.key.kind.clone(),
            source: s.key.source.clone(),
            destination: s.key.destination.clone(),
            path: s.key.path.clone(),
            settings: serde_json::to_value(&s.key.settings).unwrap_or_default(),
            unit: s.unit.as_str(),
            runs: s.runs,
            latest_at: s.latest_at,
            latest: runs.last().and_then(|r| r.value),
            normal,
            state,
            mark,
        });
    }
    let since = crate::output::epoch_seconds() - a.filter.since.as_secs_f64();
    let missed = archive.missed_since(since)?;
    if let Some(out) = &a.json {
        let missed: Vec<serde_json::Value> = missed
            .iter()
            .map(|m| {
                serde_json::json!({
                    "schedule": m.schedule, "test": m.test, "due_at": m.due_at, "why": m.why,
                })
            })
            .collect();
        return crate::output::write_json(
            &serde_json::json!({ "series": lines, "missed": missed }),
            out,
        );
    }
    if lines.is_empty() && missed.is_empty() {
        crate::output::emit(&format!(
            "No runs in the archive {} in the last {}.\n",
            location.shown(),
            humantime::format_duration(a.filter.since)
        ));
        return Ok(());
    }
    // Printed at once: a reader that stops reading (`| head`) ends it quietly.
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<16}  {:<8}  {:<30}  {:>5}  {:>22}  {:>29}  ",
        "series", "kind", "from -> to", "runs", "latest", "normal"
    );
    for l in &lines {
        let unit = Unit::from_stored(l.unit);
        let normal = l.normal.map_or_else(String::new, |[lo, hi]| {
            format!("{} - {}", figure(unit, lo), figure(unit, hi))
        });
        let _ = writeln!(
            table,
            "{:<16}  {:<8}  {:<30}  {:>5}  {:>22}  {:>29}  {}",
            l.id,
            l.kind,
            format!("{} -> {}", l.source, l.destination),
            l.runs,
            l.latest.map_or_else(|| "-".into(), |v| figure(unit, v)),
            normal,
            l.mark
        );
    }
    if !missed.is_empty() {
        let _ = writeln!(
            table,
            "\n{} scheduled run(s) missed in this period{}:",
            missed.len(),
            if missed.len() > MISSED_SHOWN {
                format!(", the last {MISSED_SHOWN}")
            } else {
                String::new()
            }
        );
        for m in missed.iter().rev().take(MISSED_SHOWN).rev() {
            let _ = writeln!(
                table,
                "  {}  {}/{}: {}",
                date(m.due_at),
                m.schedule,
                m.test,
                m.why
            );
        }
    }
    crate::output::emit(&table);
    Ok(())
}

/// Missed scheduled runs the history table lists at most (`--json` has all).
const MISSED_SHOWN: usize = 10;

/// A series' figure: a rate or a round trip.
fn figure(unit: Unit, value: f64) -> String {
    match unit {
        Unit::BitsPerSecond => fmt_rate(value),
        Unit::RoundTripMicroseconds => fmt_us(value),
        Unit::None => format!("{value}"),
    }
}

/// One series, run by run.
fn print_series(
    archive: &mut dyn Store,
    chosen: &[linerate_archive::SeriesSummary],
    id: &str,
    json: Option<&str>,
) -> anyhow::Result<()> {
    let s = match chosen {
        [one] => one,
        [] => anyhow::bail!("no series {id} in the period asked (see --since)"),
        many => {
            return Err(UsageError(format!(
                "--series {id} is the start of {} series' ids: give more of it",
                many.len()
            ))
            .into());
        }
    };
    let runs = archive.runs(&s.id, usize::MAX >> 1)?;
    if let Some(out) = json {
        let rows: Vec<_> = runs
            .iter()
            .map(|r| serde_json::json!({"started_at": r.started_at, "value": r.value, "verdict": r.limit}))
            .collect();
        return crate::output::write_json(
            &serde_json::json!({"series": s.id, "key": s.key, "unit": s.unit.as_str(), "runs": rows}),
            out,
        );
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{} {} -> {} ({}, {}), {} runs",
        s.key.kind,
        s.key.source,
        s.key.destination,
        s.key.path,
        s.key.tool,
        runs.len()
    );
    for r in &runs {
        let _ = writeln!(
            text,
            "{}  {:>16}  {}",
            date(r.started_at),
            r.value.map_or_else(|| "-".into(), |v| figure(s.unit, v)),
            r.limit.as_deref().unwrap_or("")
        );
    }
    crate::output::emit(&text);
    Ok(())
}

/// `linerate archive`: results in and out of the archive.
#[derive(clap::Subcommand, Clone, Debug)]
pub enum ArchiveCommand {
    /// Record result documents and iperf3 -J files, or the folders that hold them.
    #[command(after_help = "Examples:\n  \
        linerate archive import results/            every result under results/\n  \
        linerate archive import run.json iperf3.json")]
    Import(ImportArgs),
    /// Write recorded documents back out, one JSON document a line, oldest first.
    #[command(after_help = "Examples:\n  \
        linerate archive export -o all.jsonl\n  \
        linerate archive export --series 3f2a9c0d | jq .summary.bits_per_second")]
    Export(ExportArgs),
    /// Record the results waiting in the spool (those a run could not record).
    #[command(after_help = "Examples:\n  \
        linerate archive flush\n  \
        linerate archive flush --archive postgres://perf@db.example/linerate")]
    Flush(FlushArgs),
    /// Accept a series' change as its new normal now (before five runs make it so).
    #[command(after_help = "Examples:\n  \
        linerate archive acknowledge 3f2a9c0d   the path was re-routed: its new rate is normal")]
    Acknowledge(AcknowledgeArgs),
}

#[derive(Args, Clone, Debug)]
pub struct AcknowledgeArgs {
    /// The series (its id, or the start of it), as history lists it.
    #[arg(value_name = "SERIES")]
    pub series: String,
    /// The archive (a path, sqlite:PATH or postgres://...). Default: as bench records.
    #[arg(long, value_name = "ARCHIVE", value_parser = LocationParser)]
    pub archive: Option<Location>,
}

#[derive(Args, Clone, Debug)]
pub struct FlushArgs {
    /// The archive to record into (a path, sqlite:PATH or postgres://...). Default: as bench records.
    #[arg(long, value_name = "ARCHIVE", value_parser = LocationParser)]
    pub archive: Option<Location>,
}

#[derive(Args, Clone, Debug)]
pub struct ImportArgs {
    /// Files, or folders searched for *.json files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The archive to record into (a path, sqlite:PATH or postgres://...). Default: as bench records.
    #[arg(long, value_name = "ARCHIVE", value_parser = LocationParser)]
    pub archive: Option<Location>,
}

#[derive(Args, Clone, Debug)]
pub struct ExportArgs {
    /// Only this series (its id).
    #[arg(long, value_name = "ID")]
    pub series: Option<String>,
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The archive to read (a path, sqlite:PATH or postgres://...). Default: as bench records.
    #[arg(long, value_name = "ARCHIVE", value_parser = LocationParser)]
    pub archive: Option<Location>,
}

/// The archive `archive` (or the environment, or the default) names.
pub(crate) fn location(archive: Option<Location>) -> anyhow::Result<Location> {
    let flags = ArchiveFlags {
        archive,
        no_archive: false,
    };
    match flags.place()?.location {
        Location::Off => {
            Err(UsageError("give --archive ARCHIVE: no archive is named".into()).into())
        }
        named => Ok(named),
    }
}

/// The archive to read: it must be there, and is only read (a file that
/// is not an archive is named, and left where it is).
pub(crate) fn archive_to_read(
    archive: Option<Location>,
) -> anyhow::Result<(Location, Box<dyn Store>)> {
    let location = location(archive)?;
    if let Location::Sqlite(path) = &location
        && !path.exists()
    {
        anyhow::bail!(
            "no archive at {} yet: runs record there as they end (see --archive)",
            path.display()
        );
    }
    match linerate_archive::open(&location)? {
        Some(archive) => Ok((location, archive)),
        None => Err(UsageError("give --archive ARCHIVE: no archive is named".into()).into()),
    }
}

/// The archive to write into (a file that is not an archive moved aside,
/// said so).
fn archive_to_write(archive: Option<Location>) -> anyhow::Result<Box<dyn Store>> {
    let location = location(archive)?;
    let Some((archive, aside)) = linerate_archive::open_to_write(&location)? else {
        return Err(UsageError("give --archive ARCHIVE: no archive is named".into()).into());
    };
    if let Some(aside) = aside {
        eprintln!(
            "linerate: {} was not an SQLite archive; moved to {} and a new archive begun",
            location.shown(),
            aside.display()
        );
    }
    Ok(archive)
}

pub fn run(c: ArchiveCommand) -> anyhow::Result<()> {
    match c {
        ArchiveCommand::Import(a) => import(a),
        ArchiveCommand::Export(a) => export(a),
        ArchiveCommand::Flush(a) => flush(a),
        ArchiveCommand::Acknowledge(a) => acknowledge(a),
    }
}

/// The JSON files `paths` name: files as given, folders searched.
fn json_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut todo: Vec<PathBuf> = paths.to_vec();
    while let Some(p) = todo.pop() {
        let meta = std::fs::metadata(&p).with_context(|| format!("reading {}", p.display()))?;
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).with_context(|| format!("reading {}", p.display()))? {
                let path = e?.path();
                if path.is_dir() || path.extension().is_some_and(|x| x == "json") {
                    todo.push(path);
                }
            }
        } else {
            found.push(p);
        }
    }
    found.sort();
    Ok(found)
}

fn import(a: ImportArgs) -> anyhow::Result<()> {
    let files = json_files(&a.paths)?;
    let mut archive = archive_to_write(a.archive)?;
    let (mut recorded, mut skipped) = (0usize, 0usize);
    for file in &files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let why = match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Err(_) => "not JSON",
            Ok(doc) => match linerate_archive::import::entries_of(&doc) {
                linerate_archive::import::Imported::Result(entries) => {
                    archive.record_all(&entries, &bytes)?;
                    recorded += 1;
                    continue;
                }
                linerate_archive::import::Imported::Skipped(why) => why,
            },
        };
        eprintln!("skipped {}: {why}", file.display());
        skipped += 1;
    }
    println!(
        "Recorded {recorded} result(s) in {}; skipped {skipped}.",
        archive.place()
    );
    Ok(())
}

fn export(a: ExportArgs) -> anyhow::Result<()> {
    use std::io::Write;
    let (_, mut archive) = archive_to_read(a.archive)?;
    let mut out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let io = |error| linerate_archive::ArchiveError::Io {
        path: a.output.clone().unwrap_or_else(|| "stdout".into()),
        error,
    };
    let n = archive.each_document(a.series.as_deref(), &mut |doc| {
        // One line a document, whatever its own layout.
        let line = serde_json::from_slice::<serde_json::Value>(doc)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| String::from_utf8_lossy(doc).replace('\n', " "));
        writeln!(out, "{line}").map_err(io)
    })?;
    out.flush().context("writing the export")?;
    if a.output.is_some() {
        eprintln!("Wrote {n} result(s).");
    }
    Ok(())
}

fn flush(a: FlushArgs) -> anyhow::Result<()> {
    let flags = ArchiveFlags {
        archive: a.archive.clone(),
        no_archive: false,
    };
    let Some(spool) = flags.place()?.spool else {
        anyhow::bail!("no spool: neither XDG_DATA_HOME nor HOME is set");
    };
    let mut archive = archive_to_write(a.archive)?;
    let delivered = linerate_archive::flush(archive.as_mut(), &spool)?;
    let left = spool.waiting().len();
    println!(
        "Recorded {delivered} waiting result(s) in {}; {left} left in {}.",
        archive.place(),
        spool.dir().display()
    );
    Ok(())
}

fn acknowledge(a: AcknowledgeArgs) -> anyhow::Result<()> {
    let (_, mut archive) = archive_to_read(a.archive)?;
    let all = archive.series_since(0.0)?;
    let chosen: Vec<_> = all.iter().filter(|s| s.id.starts_with(&a.series)).collect();
    let series = match chosen.as_slice() {
        [one] => *one,
        [] => anyhow::bail!("no series {} in {}", a.series, archive.place()),
        many => {
            return Err(UsageError(format!(
                "SERIES {} is the start of {} series' ids: give more of it",
                a.series,
                many.len()
            ))
            .into());
        }
    };
    let Some(from) = linerate_archive::acknowledge(archive.as_mut(), series)? else {
        anyhow::bail!(
            "series {} is within its normal range: there is no change to acknowledge",
            series.id
        );
    };
    println!(
        "{} -> {} ({}): its runs since {} are its normal now.",
        series.key.source,
        series.key.destination,
        series.key.kind,
        date(from)
    );
    Ok(())
}
