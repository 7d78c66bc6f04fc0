//! `linerate report`: result documents to one self-contained HTML page.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use linerate_report::{Input, choose, html};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate report bench-*.json -o report.html\n  linerate report linerate-demo/ -o report.html --csv figures/   every *.json in a folder\n  linerate report --archive --since 7d -o week.html   the archive's series over time\n\nFigures are chosen by what the results hold: throughput over time per stream\n(with the time to stabilise), TCP_INFO panels, throughput vs streams, RTT and\nwrite size, before/after tuning, and tool comparisons with min-max whiskers."
)]
pub struct ReportArgs {
    /// Result documents (linerate.result/1), or folders of them.
    #[arg(required_unless_present = "archive")]
    pub results: Vec<PathBuf>,
    /// Draw the archive's series over time instead: each with its normal band
    /// and the regressions named (the default archive, or this one: a path,
    /// sqlite:PATH or postgres://...).
    #[arg(long, value_name = "ARCHIVE", num_args = 0..=1, default_missing_value = "",
          conflicts_with = "results", help_heading = "History")]
    pub archive: Option<String>,
    #[command(flatten, next_help_heading = "History")]
    pub filter: crate::archive_cmd::SeriesFilter,
    /// The HTML page to write.
    #[arg(short = 'o', long, default_value = "report.html")]
    pub out: PathBuf,
    /// Also write each figure's data as CSV into this folder.
    #[arg(long)]
    pub csv: Option<PathBuf>,
}

/// The documents named, folders expanded to their *.json files in name order.
pub fn load(paths: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    // (path, named explicitly): a folder's other JSON files are skipped, a
    // named file that is not a result is an error.
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut in_dir: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            in_dir.sort();
            files.extend(in_dir.into_iter().map(|f| (f, false)));
        } else {
            files.push((p.clone(), true));
        }
    }
    let mut inputs = Vec::new();
    for (f, named) in files {
        match read(&f) {
            Ok(doc) => inputs.push(Input {
                path: f.display().to_string(),
                doc,
            }),
            Err(e) if !named => eprintln!("linerate report: skipping {e:#}"),
            Err(e) => return Err(e),
        }
    }
    if inputs.is_empty() {
        bail!(
            "no result documents found in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(inputs)
}

fn read(f: &Path) -> anyhow::Result<linerate_result::ResultDoc> {
    let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", f.display()))?;
    if v.get("schema").and_then(|s| s.as_str()) != Some(linerate_result::SCHEMA) {
        bail!(
            "{} is not a {} document",
            f.display(),
            linerate_result::SCHEMA
        );
    }
    let mut doc: linerate_result::ResultDoc = serde_json::from_value(v)
        .with_context(|| format!("{} does not match {}", f.display(), linerate_result::SCHEMA))?;
    // Results written before secrets were kept out of them: none reaches the page.
    redact(&mut doc);
    Ok(doc)
}

fn redact(doc: &mut linerate_result::ResultDoc) {
    for arg in &mut doc.command_line {
        *arg = linerate_result::redact(arg);
    }
    for p in doc.study.iter_mut().flat_map(|s| s.points.iter_mut()) {
        redact(&mut p.result);
    }
}

/// Writes the page (and CSV), returning how many figures it holds.
pub fn write(inputs: &[Input], out: &Path, csv: Option<&Path>) -> anyhow::Result<usize> {
    let (figures, errors) = choose(inputs);
    let page = html::page(inputs, &figures, &errors, &crate::output::timestamp());
    crate::output::write_file(out, page.as_bytes())?;
    if let Some(dir) = csv {
        write_csv(&figures, dir)?;
    }
    for e in &errors {
        eprintln!("linerate report: not drawn: {e}");
    }
    Ok(figures.len())
}

/// Each figure's data as `ID.csv` in `dir`.
pub fn write_csv(figures: &[linerate_report::Figure], dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for f in figures {
        let p = dir.join(format!("{}.csv", f.id));
        std::fs::write(&p, &f.csv).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

pub fn run(a: ReportArgs) -> anyhow::Result<()> {
    if let Some(archive) = &a.archive {
        let location = match archive.as_str() {
            "" => None,
            given => Some(
                linerate_archive::Location::parse(given)
                    .map_err(|e| crate::usage::UsageError(e.to_string()))?,
            ),
        };
        return report_archive(location, &a.filter, &a.out, a.csv.as_deref());
    }
    let inputs = load(&a.results)?;
    let n = write(&inputs, &a.out, a.csv.as_deref())?;
    println!(
        "{} figures from {} results: {}",
        n,
        inputs.len(),
        a.out.display()
    );
    Ok(())
}

/// `report --archive`: each chosen series over time, with its band and the
/// runs the rule named, as one HTML page (and CSV).
fn report_archive(
    archive: Option<linerate_archive::Location>,
    filter: &crate::archive_cmd::SeriesFilter,
    out: &std::path::Path,
    csv: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use linerate_report::history_figures::{SeriesHistory, figure, page};
    let (location, mut archive) = crate::archive_cmd::archive_to_read(archive)?;
    let chosen = filter.chosen(archive.as_mut())?;
    if chosen.is_empty() {
        anyhow::bail!(
            "no series in {} in the last {} (see --since)",
            location.shown(),
            humantime::format_duration(filter.since)
        );
    }
    let mut figures = Vec::new();
    for s in &chosen {
        let judged = linerate_archive::judged_history(archive.as_mut(), &s.id, s.unit)?;
        let Some(history) = SeriesHistory::of(s, &judged) else {
            continue;
        };
        let first = crate::archive_cmd::date(history.runs[0].at);
        figures.push(figure(&history, &first)?);
    }
    let html = page(&location.shown(), &figures, &crate::output::timestamp());
    crate::output::write_file(out, html.as_bytes())?;
    if let Some(dir) = csv {
        write_csv(&figures, dir)?;
    }
    println!(
        "{} series from {}: {}",
        figures.len(),
        location.shown(),
        out.display()
    );
    Ok(())
}
