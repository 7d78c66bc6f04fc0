//! The two chart shapes every figure is made of, drawn with plotters into
//! SVG strings: lines (x-y series, optionally a marked x) and bars with
//! min-max whiskers.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use linerate_probe::units::fmt_size_label;

use crate::ReportError;

/// A chart's width in pixels, as the page lays it out.
pub const WIDTH: u32 = 760;
/// A chart's height in pixels.
pub const HEIGHT: u32 = 380;
/// The most x labels a chart's width holds without their text touching
/// ("128 KiB" is about 50 pixels at the axis's font).
const MAX_X_LABELS: usize = 10;
/// The most ticks an x axis of whole steps gets.
const MAX_TICKS: usize = 256;

/// One line of a chart: its name in the legend and its (x, y) points.
#[derive(Debug, Clone)]
pub struct Series {
    /// The name the legend gives it.
    pub name: String,
    /// Its points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    /// The title over the chart.
    pub title: String,
    /// The x axis's label.
    pub x_label: String,
    /// The y axis's label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// A vertical line at x with a label (time to stabilise).
    pub marker: Option<(f64, String)>,
    /// Logarithmic x axis (message sizes).
    pub log_x: bool,
    /// Draw points as well as lines (sweeps with few points).
    pub points: bool,
    /// The x axis counts things (streams): ticks fall on whole numbers only.
    pub integer_x: bool,
    /// Logarithmic y axis (round trips from microseconds to milliseconds):
    /// one label per decade.
    pub log_y: bool,
    /// The x axis is a percentile's nines, -log10(1 - q): labels p0, p90,
    /// p99, p99.9, ... (a latency distribution).
    pub x_nines: bool,
}

/// One bar: label, value, and the min and max behind it.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Its label under the axis.
    pub label: String,
    /// Its height (a median).
    pub value: f64,
    /// The least of the runs behind it, the whisker's foot.
    pub min: f64,
    /// The most of the runs behind it, the whisker's top.
    pub max: f64,
    /// Bars with the same group share a colour.
    pub group: usize,
}

/// A bar chart with min-max whiskers.
#[derive(Debug, Clone, Default)]
pub struct Bars {
    /// The title over the chart.
    pub title: String,
    /// The y axis's label.
    pub y_label: String,
    /// The bars, left to right.
    pub bars: Vec<Bar>,
    /// Names of the colour groups, drawn as a legend when not empty.
    pub legend: Vec<String>,
}

fn err(figure: &str) -> impl Fn(DrawError) -> ReportError + '_ {
    move |error| ReportError::Draw {
        figure: figure.to_string(),
        error,
    }
}

/// Why a figure cannot be drawn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DrawError {
    /// What the drawing library said (the SVG backend writes to a string,
    /// so its own errors are I/O errors).
    #[error(transparent)]
    Plot(#[from] DrawingAreaErrorKind<std::io::Error>),
    /// A line chart with no point to draw.
    #[error("no data points")]
    NoPoints,
    /// A bar chart with no bar.
    #[error("no bars")]
    NoBars,
    /// A heat map with no cell.
    #[error("no cells")]
    NoCells,
}

/// Series colours: colour-blind-safe Okabe-Ito, then Paul Tol's muted
/// scheme, 16 colours apart from one another before any repeats (plotters'
/// own palette put near-identical colours side by side after the seventh).
const PALETTE: [RGBColor; 16] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
    RGBColor(51, 34, 136),
    RGBColor(136, 204, 238),
    RGBColor(68, 170, 153),
    RGBColor(17, 119, 51),
    RGBColor(153, 153, 51),
    RGBColor(204, 102, 119),
    RGBColor(136, 34, 85),
    RGBColor(170, 68, 153),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn bounds(series: &[Series]) -> Option<(f64, f64, f64)> {
    let pts = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    let mut any = false;
    for &(x, y) in pts {
        any = true;
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    any.then_some((x0, x1, y1))
}

/// Draws `spec` into `area`.
pub fn draw_lines(area: &DrawingArea<SVGBackend, Shift>, spec: &Lines) -> Result<(), DrawError> {
    // A logarithmic x axis is drawn as log2(x) on a linear one, so labels
    // fall on powers of two (4 KiB, 8 KiB, ...) rather than on decades.
    let log_spec;
    let spec = if spec.log_x || spec.log_y {
        let mut l = spec.clone();
        for s in &mut l.series {
            s.points
                .retain(|p| (!spec.log_x || p.0 > 0.0) && (!spec.log_y || p.1 > 0.0));
            for p in &mut s.points {
                if spec.log_x {
                    p.0 = p.0.log2();
                }
                if spec.log_y {
                    p.1 = p.1.log10();
                }
            }
        }
        l.marker = None;
        log_spec = l;
        &log_spec
    } else {
        spec
    };
    let (mut x0, mut x1, y1) = bounds(&spec.series).ok_or(DrawError::NoPoints)?;
    let y0 = if spec.log_y {
        let low = spec
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|y| y.is_finite())
            .fold(f64::INFINITY, f64::min);
        low.floor()
    } else {
        0.0
    };
    if spec.log_x {
        x0 = x0.floor() - 0.5;
        x1 = x1.ceil() + 0.5;
    }
    if let Some((m, _)) = &spec.marker {
        x1 = x1.max(*m);
        x0 = x0.min(*m);
    }
    if spec.integer_x || spec.x_nines {
        // Half a step of room either side, so no point sits on the frame.
        x0 = x0.floor() - 0.5;
        x1 = x1.ceil() + 0.5;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if spec.log_y {
        y1.ceil().max(y0 + 1.0)
    } else if y1 > 0.0 {
        y1 * 1.1
    } else {
        1.0
    };
    let names: Vec<&str> = spec.series.iter().map(|s| s.name.as_str()).collect();
    let (area, key) = below_legend(area, &names);
    let area = &area;
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&spec.title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(38)
        .y_label_area_size(62);
    let style_series = |i: usize| ShapeStyle::from(&colour(i)).stroke_width(2);
    let mut chart = builder.build_cartesian_2d(x0..x1, y0..y1)?;
    // At most MAX_X_LABELS labels fit under the chart: with more whole
    // steps (21 doublings from 1 B to 1 MiB), every n-th is labelled.
    let steps = ((x1 - x0).ceil() as usize).max(1);
    let every = steps.div_ceil(MAX_X_LABELS).max(1) as i64;
    let shown = |v: &f64| (v - v.round()).abs() < 1e-6 && (v.round() as i64).rem_euclid(every) == 0;
    let log_label = |v: &f64| {
        if shown(v) {
            fmt_size_label(2f64.powf(v.round()))
        } else {
            String::new()
        }
    };
    let decade = |v: &f64| {
        if (v - v.round()).abs() < 1e-6 {
            human_decade(10f64.powf(v.round()))
        } else {
            String::new()
        }
    };
    let nines = |v: &f64| {
        if (v - v.round()).abs() < 1e-6 && *v >= 0.0 {
            nines_label(v.round() as u32)
        } else {
            String::new()
        }
    };
    let whole = |v: &f64| {
        if shown(v) {
            format!("{}", v.round())
        } else {
            String::new()
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(WHITE)
        .x_desc(&spec.x_label)
        .y_desc(&spec.y_label);
    // A tick on every whole step, a label on every `every`-th.
    let ticks = (steps + 1).min(MAX_TICKS);
    if spec.log_x {
        // Powers of two: a tick per doubling.
        mesh.x_labels(ticks).x_label_formatter(&log_label);
    } else if spec.x_nines {
        mesh.x_labels(ticks).x_label_formatter(&nines);
    } else if spec.integer_x {
        mesh.x_labels(ticks).x_label_formatter(&whole);
    }
    if spec.log_y {
        mesh.y_labels(((y1 - y0).ceil() as usize + 1).min(12))
            .y_label_formatter(&decade);
    }
    mesh.draw()?;
    for (i, s) in spec.series.iter().enumerate() {
        chart.draw_series(LineSeries::new(s.points.iter().copied(), style_series(i)))?;
        if spec.points || spec.log_x {
            chart.draw_series(
                s.points
                    .iter()
                    .map(|&p| Circle::new(p, 3, style_series(i).filled())),
            )?;
        }
    }
    if let Some((m, label)) = &spec.marker {
        let dashed = ShapeStyle::from(&BLACK).stroke_width(1);
        chart.draw_series(DashedLineSeries::new(
            vec![(*m, 0.0), (*m, y1)],
            6,
            4,
            dashed,
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            label.clone(),
            (*m, y1 * 0.97),
            ("sans-serif", 13)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Top)),
        )))?;
    }
    if let Some((key, layout)) = key {
        draw_legend(&key, &layout, &names, Swatch::Line)?;
    }
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A legend's strip and where each of its entries goes in it.
type Legend<'a> = (Area<'a>, Vec<(i32, i32)>);

/// Pixels a character of a 12 px legend name takes, about.
const LEGEND_CHAR_PX: i32 = 7;
/// Height of one row of legend entries.
const LEGEND_ROW_PX: i32 = 18;
/// Characters a legend name keeps at most (a full row, less its swatch).
const LEGEND_MAX_CHARS: usize = 100;

/// Where each legend entry goes: (row, x) in the strip below the plot.
fn legend_layout(names: &[&str], width: i32) -> Vec<(i32, i32)> {
    let mut at = Vec::with_capacity(names.len());
    let (mut row, mut x) = (0, 8);
    for name in names {
        let chars = name.chars().count().min(LEGEND_MAX_CHARS) as i32;
        let w = 28 + chars * LEGEND_CHAR_PX + 16;
        if x > 8 && x + w > width {
            row += 1;
            x = 8;
        }
        at.push((row, x));
        x += w;
    }
    at
}

/// Splits off a strip below the plot for the legend of `names`, wide
/// enough for whole names and as many rows as they need, so that no
/// legend covers data; none when there is nothing to name.
fn below_legend<'a>(area: &Area<'a>, names: &[&str]) -> (Area<'a>, Option<Legend<'a>>) {
    if names.iter().all(|n| n.is_empty()) {
        return (area.clone(), None);
    }
    let (w, h) = area.dim_in_pixel();
    let layout = legend_layout(names, w as i32);
    let rows = layout.last().map_or(0, |l| l.0) + 1;
    let strip = (rows * LEGEND_ROW_PX + 10) as u32;
    let (chart, key) = area.split_vertically(h.saturating_sub(strip));
    (chart, Some((key, layout)))
}

/// How a legend entry shows its colour.
#[derive(Clone, Copy)]
enum Swatch {
    Line,
    Box,
}

fn draw_legend(
    key: &DrawingArea<SVGBackend, Shift>,
    layout: &[(i32, i32)],
    names: &[&str],
    swatch: Swatch,
) -> Result<(), DrawError> {
    for (i, (name, &(row, x))) in names.iter().zip(layout).enumerate() {
        let y = 2 + row * LEGEND_ROW_PX;
        match swatch {
            Swatch::Line => key.draw(&PathElement::new(
                vec![(x, y + 6), (x + 18, y + 6)],
                ShapeStyle::from(&colour(i)).stroke_width(2),
            ))?,
            Swatch::Box => key.draw(&Rectangle::new(
                [(x, y), (x + 12, y + 12)],
                colour(i).filled(),
            ))?,
        }
        let shown: String = if name.chars().count() > LEGEND_MAX_CHARS {
            name.chars()
                .take(LEGEND_MAX_CHARS - 1)
                .chain(std::iter::once('…'))
                .collect()
        } else {
            name.to_string()
        };
        key.draw(&Text::new(
            shown,
            (x + 24, y),
            ("sans-serif", 12).into_font(),
        ))?;
    }
    Ok(())
}

/// A whole line chart as an SVG document.
pub fn lines(id: &str, spec: &Lines) -> Result<String, ReportError> {
    svg(id, HEIGHT, |area| draw_lines(area, spec))
}

/// Several line charts stacked in one SVG (TCP_INFO panels).
pub fn panels(id: &str, specs: &[Lines]) -> Result<String, ReportError> {
    let h = (HEIGHT * 3 / 4) * specs.len().max(1) as u32;
    svg(id, h, |area| {
        for (a, s) in area.split_evenly((specs.len().max(1), 1)).iter().zip(specs) {
            draw_lines(a, s)?;
        }
        Ok(())
    })
}

/// Bars with min-max whiskers.
pub fn bars(id: &str, spec: &Bars) -> Result<String, ReportError> {
    svg(id, HEIGHT, |area| {
        if spec.bars.is_empty() {
            return Err(DrawError::NoBars);
        }
        let names: Vec<&str> = spec.legend.iter().map(String::as_str).collect();
        let (plot, key) = below_legend(area, &names);
        let n = spec.bars.len() as f64;
        let top = spec
            .bars
            .iter()
            .map(|b| b.max.max(b.value))
            .fold(0.0, f64::max);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let mut chart = ChartBuilder::on(&plot)
            .caption(&spec.title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(62)
            .build_cartesian_2d(0f64..n, 0f64..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .x_labels(0)
            .y_desc(&spec.y_label)
            .draw()?;
        for (i, b) in spec.bars.iter().enumerate() {
            let x = i as f64;
            let fill = colour(b.group).filled();
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.18, 0.0), (x + 0.82, b.value)],
                fill,
            )))?;
            let w = ShapeStyle::from(&BLACK).stroke_width(1);
            let whisker = vec![
                PathElement::new(vec![(x + 0.5, b.min), (x + 0.5, b.max)], w),
                PathElement::new(vec![(x + 0.4, b.min), (x + 0.6, b.min)], w),
                PathElement::new(vec![(x + 0.4, b.max), (x + 0.6, b.max)], w),
            ];
            chart.draw_series(whisker)?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{:.2}", b.value),
                (x + 0.5, b.max.max(b.value) + top * 0.01),
                TextStyle::from(("sans-serif", 12).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            )))?;
            let (px, py) = chart.backend_coord(&(x + 0.5, 0.0));
            plot.draw(&Text::new(
                b.label.clone(),
                (px, py + 8),
                TextStyle::from(("sans-serif", 12).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
        }
        if let Some((key, layout)) = key {
            draw_legend(&key, &layout, &names, Swatch::Box)?;
        }
        Ok(())
    })
}

/// A square matrix of values (a mesh: rows send, columns receive), each
/// cell shaded by its value against the largest and labelled with it.
#[derive(Debug, Clone, Default)]
pub struct Matrix {
    /// The title over the matrix.
    pub title: String,
    /// Row and column names, in order.
    pub labels: Vec<String>,
    /// (row, column, value); a missing cell is left blank.
    pub cells: Vec<(usize, usize, f64)>,
    /// What the values are, under the matrix.
    pub unit: String,
}

/// `spec` drawn as an SVG whose element ids start with `id`.
pub fn matrix(id: &str, spec: &Matrix) -> Result<String, ReportError> {
    let n = spec.labels.len();
    let side = (HEIGHT + 40 * n.saturating_sub(6) as u32).min(900);
    svg(id, side, |area| {
        if n == 0 || spec.cells.is_empty() {
            return Err(DrawError::NoCells);
        }
        let top = spec.cells.iter().map(|c| c.2).fold(0.0, f64::max);
        let top = if top > 0.0 { top } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .caption(&spec.title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(90)
            .build_cartesian_2d(0f64..n as f64, 0f64..n as f64)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(format!("receiver ({})", spec.unit))
            .y_desc("sender")
            .draw()?;
        let font = || TextStyle::from(("sans-serif", 12).into_font());
        for &(row, col, v) in spec.cells.iter().filter(|c| c.0 < n && c.1 < n) {
            // Rows from the top: sender 0 first.
            let y = (n - 1 - row) as f64;
            let x = col as f64;
            let shade = (v / top).clamp(0.0, 1.0);
            let fill = RGBColor(
                (230.0 - 230.0 * shade) as u8,
                (240.0 - 126.0 * shade) as u8,
                (250.0 - 72.0 * shade) as u8,
            );
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.02, y + 0.02), (x + 0.98, y + 0.98)],
                fill.filled(),
            )))?;
            let ink = if shade > 0.55 { WHITE } else { BLACK };
            chart.draw_series(std::iter::once(Text::new(
                format!("{v:.2}"),
                (x + 0.5, y + 0.5),
                font().color(&ink).pos(Pos::new(HPos::Center, VPos::Center)),
            )))?;
        }
        for (i, label) in spec.labels.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            area.draw(&Text::new(
                label.clone(),
                (px, py + 6),
                font().pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
            let (px, py) = chart.backend_coord(&(0.0, (n - 1 - i) as f64 + 0.5));
            area.draw(&Text::new(
                label.clone(),
                (px - 6, py),
                font().pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }
        Ok(())
    })
}

fn svg(
    id: &str,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), DrawError>,
) -> Result<String, ReportError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| err(id)(x.into()))?;
        draw(&root).map_err(err(id))?;
        root.present().map_err(|x| err(id)(x.into()))?;
    }
    Ok(out)
}

/// A power of ten as a count: 1, 10, 100, 1k, 10k, ...
fn human_decade(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.0}M", v / 1e6),
        v if v >= 1e3 => format!("{:.0}k", v / 1e3),
        v if v >= 1.0 => format!("{v:.0}"),
        v => format!("{v}"),
    }
}

/// p0, p90, p99, p99.9, ... for 0, 1, 2, 3 nines.
fn nines_label(n: u32) -> String {
    match n {
        0 => "p0".into(),
        1 => "p90".into(),
        2 => "p99".into(),
        n => format!("p99.{}", "9".repeat(n as usize - 2)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_shades_and_labels_every_cell_it_has() {
        let spec = Matrix {
            title: "M".into(),
            labels: vec!["h1".into(), "h2".into(), "h3".into()],
            cells: vec![(0, 1, 9.5), (1, 0, 4.25), (2, 0, 0.5), (7, 7, 1.0)],
            unit: "Gbit/s".into(),
        };
        let svg = matrix("m", &spec).unwrap();
        for value in ["9.50", "4.25", "0.50"] {
            assert!(svg.contains(value), "{value} missing");
        }
        // Three cells drawn (the one out of range is not), and the background.
        assert_eq!(svg.matches("<rect").count(), 3 + 1);
        assert!(matrix("e", &Matrix::default()).is_err());
    }

    #[test]
    fn draws_lines_and_bars_and_refuses_nothing() {
        let s = Series {
            name: "a".into(),
            points: vec![(1.0, 2.0), (2.0, 3.0)],
        };
        let svg = lines(
            "t",
            &Lines {
                title: "T".into(),
                series: vec![s.clone()],
                marker: Some((1.5, "m".into())),
                ..Lines::default()
            },
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<polyline"));
        let log = lines(
            "l",
            &Lines {
                series: vec![s],
                log_x: true,
                ..Lines::default()
            },
        )
        .unwrap();
        assert!(log.contains("<circle"));
        assert!(lines("e", &Lines::default()).is_err());
        let b = bars(
            "b",
            &Bars {
                title: "B".into(),
                y_label: "y".into(),
                bars: vec![Bar {
                    label: "x".into(),
                    value: 2.0,
                    min: 1.0,
                    max: 3.0,
                    group: 0,
                }],
                legend: vec!["tool".into()],
            },
        )
        .unwrap();
        assert!(b.contains("<rect") && b.contains(">\nx\n<") || b.contains(">x<"));
        assert!(b.contains("tool"));
        assert_eq!(fmt_size_label(4096.0), "4 KiB");
    }

    /// The y of every `<text>` whose content is `label`, and the largest y
    /// of any polyline of more than two points (data, not a legend swatch).
    fn label_and_data_y(svg: &str, label: &str) -> (Vec<f64>, f64) {
        let attr = |tag: &str, name: &str| -> Option<String> {
            let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            Some(tag[at..].split('"').next()?.to_string())
        };
        let mut labels = Vec::new();
        let mut data_y = 0.0f64;
        for piece in svg.split('<').skip(1) {
            let (tag, content) = piece.split_once('>').unwrap_or((piece, ""));
            if tag.starts_with("text") && content.trim() == label {
                labels.extend(attr(tag, "y").and_then(|y| y.parse::<f64>().ok()));
            }
            if tag.starts_with("polyline") {
                let points = attr(tag, "points").unwrap_or_default();
                let ys: Vec<f64> = points
                    .split_whitespace()
                    .filter_map(|p| p.split(',').nth(1)?.parse().ok())
                    .collect();
                if ys.len() > 2 {
                    data_y = ys.iter().copied().fold(data_y, f64::max);
                }
            }
        }
        (labels, data_y)
    }

    #[test]
    fn legends_sit_below_the_data_not_over_it_with_whole_names() {
        let series = |name: &str, y: f64| Series {
            name: name.into(),
            points: (0..20).map(|i| (f64::from(i), y + f64::from(i))).collect(),
        };
        let long = "bench, lab w44 (emulator, 44 ms, 1 Gbit/s, 0.5 % loss)";
        let svg = lines(
            "legend",
            &Lines {
                series: vec![series("loopback", 1.0), series(long, 2.0)],
                ..Lines::default()
            },
        )
        .unwrap();
        for name in ["loopback", long] {
            let (labels, data_y) = label_and_data_y(&svg, name);
            assert_eq!(labels.len(), 1, "{name} named once, whole: {svg}");
            assert!(
                labels[0] > data_y,
                "{name} at y {} over data reaching {data_y}",
                labels[0]
            );
        }
        let b = bars(
            "bars",
            &Bars {
                bars: (0..6)
                    .map(|i| Bar {
                        label: format!("b{i}"),
                        value: 10.0,
                        min: 9.0,
                        max: 11.0,
                        group: i % 2,
                    })
                    .collect(),
                legend: vec!["linerate".into(), "iperf2".into()],
                ..Bars::default()
            },
        )
        .unwrap();
        // Below the bars' own labels, which sit under the bars.
        let (bar_label, _) = label_and_data_y(&b, "b5");
        let (key, _) = label_and_data_y(&b, "iperf2");
        assert!(
            key[0] > bar_label[0],
            "legend {key:?}, bar label {bar_label:?}"
        );
    }
}
