//! The two chart shapes every figure is made of, drawn with plotters into
//! SVG strings: lines (x-y series, optionally a marked x) and bars with
//! min-max whiskers.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::ReportError;

pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 380;

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A line chart.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// A vertical line at x with a label (time to stabilise).
    pub marker: Option<(f64, String)>,
    /// Logarithmic x axis (message sizes).
    pub log_x: bool,
    /// Draw points as well as lines (sweeps with few points).
    pub points: bool,
    /// The x axis counts things (streams): ticks fall on whole numbers only.
    pub integer_x: bool,
}

/// One bar: label, value, and the min and max behind it.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub min: f64,
    pub max: f64,
    /// Bars with the same group share a colour.
    pub group: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Bars {
    pub title: String,
    pub y_label: String,
    pub bars: Vec<Bar>,
    /// Names of the colour groups, drawn as a legend when not empty.
    pub legend: Vec<String>,
}

fn err(figure: &str) -> impl Fn(String) -> ReportError + '_ {
    move |reason| ReportError::Draw {
        figure: figure.to_string(),
        reason,
    }
}

fn colour(i: usize) -> RGBColor {
    // Colour-blind-safe (Okabe-Ito), then plotters' palette.
    const OKABE_ITO: [RGBColor; 7] = [
        RGBColor(0, 114, 178),
        RGBColor(230, 159, 0),
        RGBColor(0, 158, 115),
        RGBColor(213, 94, 0),
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(120, 120, 120),
    ];
    if i < OKABE_ITO.len() {
        OKABE_ITO[i]
    } else {
        let c = Palette99::pick(i).to_rgba();
        RGBColor(c.0, c.1, c.2)
    }
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
pub fn draw_lines(area: &DrawingArea<SVGBackend, Shift>, spec: &Lines) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    // A logarithmic x axis is drawn as log2(x) on a linear one, so labels
    // fall on powers of two (4 KiB, 8 KiB, ...) rather than on decades.
    let log_spec;
    let spec = if spec.log_x {
        let mut l = spec.clone();
        for s in &mut l.series {
            s.points.retain(|p| p.0 > 0.0);
            for p in &mut s.points {
                p.0 = p.0.log2();
            }
        }
        l.marker = None;
        log_spec = l;
        &log_spec
    } else {
        spec
    };
    let (mut x0, mut x1, y1) = bounds(&spec.series).ok_or("no data points")?;
    if spec.log_x {
        x0 = x0.floor() - 0.5;
        x1 = x1.ceil() + 0.5;
    }
    if let Some((m, _)) = &spec.marker {
        x1 = x1.max(*m);
        x0 = x0.min(*m);
    }
    if spec.integer_x {
        // Half a step of room either side, so no point sits on the frame.
        x0 = x0.floor() - 0.5;
        x1 = x1.ceil() + 0.5;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let names: Vec<&str> = spec.series.iter().map(|s| s.name.as_str()).collect();
    let (area, key) = beside_legend(area, &names);
    let area = &area;
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&spec.title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(38)
        .y_label_area_size(62);
    let style_series = |i: usize| ShapeStyle::from(&colour(i)).stroke_width(2);
    let mut chart = builder
        .build_cartesian_2d(x0..x1, 0f64..y1)
        .map_err(|x| e(&x))?;
    let log_label = |v: &f64| human_size(2f64.powf(*v));
    let whole = |v: &f64| {
        if (v - v.round()).abs() < 1e-6 {
            format!("{}", v.round())
        } else {
            String::new()
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(WHITE)
        .x_desc(&spec.x_label)
        .y_desc(&spec.y_label);
    if spec.log_x {
        // Powers of two: one label per doubling.
        mesh.x_labels(((x1 - x0).ceil() as usize + 1).min(24))
            .x_label_formatter(&log_label);
    } else if spec.integer_x {
        mesh.x_labels(((x1 - x0).ceil() as usize + 1).min(24))
            .x_label_formatter(&whole);
    }
    mesh.draw().map_err(|x| e(&x))?;
    for (i, s) in spec.series.iter().enumerate() {
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), style_series(i)))
            .map_err(|x| e(&x))?;
        if spec.points || spec.log_x {
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| Circle::new(p, 3, style_series(i).filled())),
                )
                .map_err(|x| e(&x))?;
        }
    }
    if let Some((m, label)) = &spec.marker {
        let dashed = ShapeStyle::from(&BLACK).stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(*m, 0.0), (*m, y1)],
                6,
                4,
                dashed,
            ))
            .map_err(|x| e(&x))?;
        chart
            .draw_series(std::iter::once(Text::new(
                label.clone(),
                (*m, y1 * 0.97),
                ("sans-serif", 13)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Top)),
            )))
            .map_err(|x| e(&x))?;
    }
    if let Some(key) = key {
        draw_legend(&key, &names, Swatch::Line).map_err(|x| e(&x))?;
    }
    Ok(())
}

/// Widest a legend strip gets; longer names are cut with an ellipsis.
const LEGEND_MAX_WIDTH: u32 = 230;
/// Characters of a legend name that fit the widest strip.
const LEGEND_MAX_CHARS: usize = 30;

/// Splits off a strip on the right for the legend of `names`, so that no
/// legend covers data; none when there is nothing to name.
fn beside_legend<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    names: &[&str],
) -> (
    DrawingArea<SVGBackend<'a>, Shift>,
    Option<DrawingArea<SVGBackend<'a>, Shift>>,
) {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    if longest == 0 {
        return (area.clone(), None);
    }
    // About 7 pixels a character at 12 px, plus the swatch and margins.
    let width = (longest.min(LEGEND_MAX_CHARS) as u32 * 7 + 40).min(LEGEND_MAX_WIDTH);
    let (w, _) = area.dim_in_pixel();
    let (chart, key) = area.split_horizontally(w.saturating_sub(width));
    (chart, Some(key))
}

/// How a legend entry shows its colour.
#[derive(Clone, Copy)]
enum Swatch {
    Line,
    Box,
}

fn draw_legend(
    key: &DrawingArea<SVGBackend, Shift>,
    names: &[&str],
    swatch: Swatch,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    for (i, name) in names.iter().enumerate() {
        let y = 44 + 18 * i as i32;
        match swatch {
            Swatch::Line => key.draw(&PathElement::new(
                vec![(4, y + 6), (22, y + 6)],
                ShapeStyle::from(&colour(i)).stroke_width(2),
            ))?,
            Swatch::Box => key.draw(&Rectangle::new([(4, y), (16, y + 12)], colour(i).filled()))?,
        }
        let shown: String = if name.chars().count() > LEGEND_MAX_CHARS {
            name.chars()
                .take(LEGEND_MAX_CHARS - 1)
                .chain(std::iter::once('…'))
                .collect()
        } else {
            name.to_string()
        };
        key.draw(&Text::new(shown, (28, y), ("sans-serif", 12).into_font()))?;
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
        let e = |x: &dyn std::fmt::Display| x.to_string();
        if spec.bars.is_empty() {
            return Err("no bars".into());
        }
        let names: Vec<&str> = spec.legend.iter().map(String::as_str).collect();
        let (plot, key) = beside_legend(area, &names);
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
            .build_cartesian_2d(0f64..n, 0f64..top)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .x_labels(0)
            .y_desc(&spec.y_label)
            .draw()
            .map_err(|x| e(&x))?;
        for (i, b) in spec.bars.iter().enumerate() {
            let x = i as f64;
            let fill = colour(b.group).filled();
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x + 0.18, 0.0), (x + 0.82, b.value)],
                    fill,
                )))
                .map_err(|x| e(&x))?;
            let w = ShapeStyle::from(&BLACK).stroke_width(1);
            let whisker = vec![
                PathElement::new(vec![(x + 0.5, b.min), (x + 0.5, b.max)], w),
                PathElement::new(vec![(x + 0.4, b.min), (x + 0.6, b.min)], w),
                PathElement::new(vec![(x + 0.4, b.max), (x + 0.6, b.max)], w),
            ];
            chart.draw_series(whisker).map_err(|x| e(&x))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{:.2}", b.value),
                    (x + 0.5, b.max.max(b.value) + top * 0.01),
                    TextStyle::from(("sans-serif", 12).into_font())
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )))
                .map_err(|x| e(&x))?;
            let (px, py) = chart.backend_coord(&(x + 0.5, 0.0));
            plot.draw(&Text::new(
                b.label.clone(),
                (px, py + 8),
                TextStyle::from(("sans-serif", 12).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(|x| e(&x))?;
        }
        if let Some(key) = key {
            draw_legend(&key, &names, Swatch::Box).map_err(|x| e(&x))?;
        }
        Ok(())
    })
}

fn svg(
    id: &str,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<String, ReportError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| err(id)(x.to_string()))?;
        draw(&root).map_err(err(id))?;
        root.present().map_err(|x| err(id)(x.to_string()))?;
    }
    Ok(out)
}

/// 4096 -> "4 KiB", for axes of message sizes.
pub fn human_size(v: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 0.05 {
        format!("{:.0} {}", v, UNITS[u])
    } else {
        format!("{:.1} {}", v, UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(human_size(4096.0), "4 KiB");
    }

    /// The x of every `<text>` whose content is `label`, and the largest x
    /// of any polyline of more than two points (data, not a legend swatch).
    fn label_and_data_x(svg: &str, label: &str) -> (Vec<f64>, f64) {
        let attr = |tag: &str, name: &str| -> Option<String> {
            let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            Some(tag[at..].split('"').next()?.to_string())
        };
        let mut labels = Vec::new();
        let mut data_x = 0.0f64;
        for piece in svg.split('<').skip(1) {
            let (tag, content) = piece.split_once('>').unwrap_or((piece, ""));
            if tag.starts_with("text") && content.trim() == label {
                labels.extend(attr(tag, "x").and_then(|x| x.parse::<f64>().ok()));
            }
            if tag.starts_with("polyline") {
                let points = attr(tag, "points").unwrap_or_default();
                let xs: Vec<f64> = points
                    .split_whitespace()
                    .filter_map(|p| p.split(',').next()?.parse().ok())
                    .collect();
                if xs.len() > 2 {
                    data_x = xs.iter().copied().fold(data_x, f64::max);
                }
            }
        }
        (labels, data_x)
    }

    #[test]
    fn legends_sit_beside_the_data_not_over_it() {
        let series = |name: &str, y: f64| Series {
            name: name.into(),
            points: (0..20).map(|i| (f64::from(i), y + f64::from(i))).collect(),
        };
        let svg = lines(
            "legend",
            &Lines {
                series: vec![series("loopback", 1.0), series("lab lr-wan h1-h2", 2.0)],
                ..Lines::default()
            },
        )
        .unwrap();
        for name in ["loopback", "lab lr-wan h1-h2"] {
            let (labels, data_x) = label_and_data_x(&svg, name);
            assert_eq!(labels.len(), 1, "{name} named once: {svg}");
            assert!(
                labels[0] > data_x,
                "{name} at x {} over data reaching {data_x}",
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
        // The last bar's label sits under it; the legend right of it.
        let (last_bar, _) = label_and_data_x(&b, "b5");
        let (key, _) = label_and_data_x(&b, "iperf2");
        assert!(
            key[0] > last_bar[0] + 40.0,
            "legend {key:?}, last bar {last_bar:?}"
        );
        assert_eq!(human_size(1536.0), "1.5 KiB");
    }
}
