//! The report's charts, drawn with plotters' SVG backend into strings.
//!
//! Every chart is one `<svg>` element with a `viewBox`, so it scales to the page's width.
//! Text is laid out with plotters' built-in estimate (no font file is read), and every
//! coordinate is an integer: the same figures give the same bytes on any machine.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::sim::Millis;

/// A value with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// One design's row of the rates chart.
pub struct RateRow<'a> {
    pub design: &'a str,
    /// In the order of [`RATE_SERIES`].
    pub estimates: [Estimate; 6],
}

/// The quantities of the rates chart, their labels and colours.
pub const RATE_SERIES: [(&str, RGBColor); 6] = [
    ("completed", RGBColor(0x1b, 0x7f, 0x3b)),
    ("true failure", RGBColor(0x1f, 0x77, 0xb4)),
    ("false success", RGBColor(0xc6, 0x28, 0x28)),
    ("false failure", RGBColor(0xe6, 0x7e, 0x00)),
    ("unresolved", RGBColor(0x6a, 0x1b, 0x9a)),
    ("duplicates / intent", RGBColor(0x21, 0x21, 0x21)),
];

/// Colours of the designs in the distribution charts, in the order of the model's designs.
const PALETTE: [RGBColor; 11] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x00, 0x00, 0x00),
];

const WIDTH: u32 = 760;
const FONT: &str = "sans-serif";

fn design_colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Draws with `draw` on a fresh SVG of `height` pixels and returns the SVG text.
fn svg(
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

type RowChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart with one row per design (row `i` centred on `rows - 1 - i`, names drawn by
/// [`label_rows`]) over `0..x_max`, its x axis described by `x_desc`.
fn row_chart<'a, 'b>(
    mut builder: ChartBuilder<'a, 'b, SVGBackend<'b>>,
    rows: usize,
    x_max: f64,
    x_desc: &str,
) -> Result<RowChart<'a, 'b>, String> {
    let mut chart = builder
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(170)
        .build_cartesian_2d(0f64..x_max, -0.5f64..(rows as f64 - 0.5))
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(x_desc)
        .label_style((FONT, 12))
        .max_light_lines(0)
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// Writes each row's name left of the plot, right-aligned, row 0 at the top: the y axis
/// runs from `-0.5` to `rows - 0.5`, row `i` centred on `rows - 1 - i`.
fn label_rows<'a, 'b>(
    root: &DrawingArea<SVGBackend<'b>, Shift>,
    chart: &RowChart<'_, 'b>,
    names: impl ExactSizeIterator<Item = &'a str>,
) -> Result<(), String> {
    let n = names.len();
    let style = TextStyle::from((FONT, 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    let left = chart.plotting_area().get_pixel_range().0.start;
    for (i, name) in names.enumerate() {
        let (_, y) = chart.backend_coord(&(0.0, (n - 1 - i) as f64));
        root.draw(&Text::new(name.to_string(), (left - 6, y), style.clone()))
            .map_err(err)?;
    }
    Ok(())
}

/// Per design, the outcome rates and duplicate effects per intent, each a dot with its 95 %
/// interval as a bar (a forest plot: one row per design, one colour per quantity).
pub fn rates(title: &str, rows: &[RateRow<'_>]) -> Result<String, String> {
    let n = rows.len();
    let x_max = rows
        .iter()
        .flat_map(|r| r.estimates.iter().map(|e| e.high))
        .filter(|x| x.is_finite())
        .fold(1.0f64, f64::max)
        * 1.02;
    let height = 140 + 40 * n as u32;
    svg(height, |root| {
        // Caption and legend above the plot, so that no mark is hidden behind them.
        let (head, body) = root.split_vertically(52);
        head.draw(&Text::new(
            title.to_string(),
            (WIDTH as i32 / 2, 6),
            TextStyle::from((FONT, 16).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(err)?;
        let item = WIDTH as i32 / RATE_SERIES.len() as i32;
        for (k, (name, colour)) in RATE_SERIES.iter().enumerate() {
            let x = 12 + k as i32 * item;
            head.draw(&Circle::new((x, 38), 4, colour.filled()))
                .map_err(err)?;
            head.draw(&Text::new(
                name.to_string(),
                (x + 8, 38),
                TextStyle::from((FONT, 12).into_font())
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(err)?;
        }
        let mut chart = row_chart(
            ChartBuilder::on(&body),
            n,
            x_max,
            "share of intents (duplicates: per intent)",
        )?;
        // Backend coordinates are the whole SVG's: the labels go on the root area.
        label_rows(root, &chart, rows.iter().map(|r| r.design))?;
        for (k, (_, colour)) in RATE_SERIES.iter().enumerate() {
            let offset = (2.5 - k as f64) * 0.13;
            let colour = *colour;
            chart
                .draw_series(rows.iter().enumerate().map(|(i, r)| {
                    let e = r.estimates[k];
                    let y = (n - 1 - i) as f64 + offset;
                    let (low, high) = (
                        if e.low.is_finite() { e.low } else { e.value },
                        if e.high.is_finite() { e.high } else { e.value },
                    );
                    ErrorBar::new_horizontal(y, low, e.value, high, colour.filled(), 6)
                }))
                .map_err(err)?;
        }
        Ok(())
    })
}

/// One design's distribution: its cumulative counts (as [`crate::check::Histogram::cdf`]).
pub struct Cdf<'a> {
    pub design: &'a str,
    /// The design's place in the model, for its colour.
    pub index: usize,
    pub points: Vec<(Millis, u64)>,
}

/// Steps of a cumulative distribution closer than a fiftieth of a decade apart merged into
/// the last of them (about 2 px on the chart's logarithmic axis): what is drawn does not
/// change, the SVG stays small whatever the number of histogram buckets.
fn thin(points: &[(Millis, u64)]) -> Vec<(Millis, u64)> {
    let bucket = |v: Millis| ((v.max(1) as f64).log10() * 50.0).floor() as i64;
    let mut out: Vec<(Millis, u64)> = Vec::new();
    for &p in points {
        match out.last_mut() {
            Some(last) if bucket(last.0) == bucket(p.0) => *last = p,
            _ => out.push(p),
        }
    }
    out
}

/// The cumulative distribution of a duration per design, on a logarithmic time axis (a
/// zero duration is drawn at 1 ms). Designs without a value are left out.
pub fn cdf(title: &str, x_desc: &str, series: &[Cdf<'_>]) -> Result<String, String> {
    let max = series
        .iter()
        .filter_map(|s| s.points.last().map(|p| p.0))
        .max()
        .unwrap_or(1)
        .max(10) as f64
        * 1.5;
    svg(340, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(48)
            .build_cartesian_2d((1f64..max).log_scale(), 0f64..1.02f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("share at or below")
            .label_style((FONT, 12))
            .x_label_formatter(&|x| crate::report::stats::human_ms(x.round() as Millis))
            .y_label_formatter(&|y| format!("{:.0} %", y * 100.0))
            .max_light_lines(0)
            .draw()
            .map_err(err)?;
        for s in series {
            let Some(&(_, total)) = s.points.last() else {
                continue;
            };
            let colour = design_colour(s.index);
            let total = total as f64;
            // A step function: flat until each value, then up to its cumulative share.
            let points = thin(&s.points);
            let mut line = Vec::with_capacity(2 * points.len() + 1);
            let mut before = 0.0;
            for &(v, count) in &points {
                let x = (v as f64).max(1.0);
                line.push((x, before));
                before = count as f64 / total;
                line.push((x, before));
            }
            line.push((max, before));
            chart
                .draw_series(LineSeries::new(line, colour.stroke_width(2)))
                .map_err(err)?
                .label(s.design)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font((FONT, 11))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(err)
    })
}

/// Remote calls per intent per design (retry amplification): a bar per design with its 95 %
/// interval.
pub fn calls(title: &str, rows: &[(&str, Estimate)]) -> Result<String, String> {
    let n = rows.len();
    let x_max = rows.iter().map(|r| r.1.high).fold(1.0f64, f64::max) * 1.1;
    let height = 90 + 26 * n as u32;
    svg(height, |root| {
        let mut builder = ChartBuilder::on(root);
        builder.caption(title, (FONT, 16));
        let mut chart = row_chart(builder, n, x_max, "remote calls per intent")?;
        label_rows(root, &chart, rows.iter().map(|r| r.0))?;
        let bar = RGBColor(0x1f, 0x77, 0xb4);
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, e))| {
                let y = (n - 1 - i) as f64;
                Rectangle::new([(0.0, y - 0.3), (e.value, y + 0.3)], bar.mix(0.7).filled())
            }))
            .map_err(err)?;
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, e))| {
                let y = (n - 1 - i) as f64;
                ErrorBar::new_horizontal(y, e.low, e.value, e.high, BLACK.filled(), 8)
            }))
            .map_err(err)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(v: f64) -> Estimate {
        Estimate {
            value: v,
            low: v * 0.9,
            high: v * 1.1,
        }
    }

    #[test]
    fn close_steps_merge_into_the_last_and_the_total_stays() {
        let points: Vec<(Millis, u64)> = (1..=10_000).map(|v| (v, v)).collect();
        let thinned = thin(&points);
        // Four decades at 50 steps each, at most.
        assert!(thinned.len() <= 201, "{}", thinned.len());
        assert_eq!(thinned.last(), Some(&(10_000, 10_000)));
        assert_eq!(thin(&[(0, 3), (1, 5), (1000, 6)]), vec![(1, 5), (1000, 6)]);
    }

    #[test]
    fn each_chart_is_one_svg_with_a_view_box_and_the_design_names() {
        let rows = [
            RateRow {
                design: "no_dedup",
                estimates: [e(0.9), e(0.0), e(0.0), e(0.05), e(0.05), e(0.3)],
            },
            RateRow {
                design: "same_key",
                estimates: [e(0.95), e(0.0), e(0.0), e(0.0), e(0.05), e(0.0)],
            },
        ];
        let a = rates("rates", &rows).unwrap();
        let b = calls("calls", &[("no_dedup", e(1.5)), ("same_key", e(1.6))]).unwrap();
        let c = cdf(
            "reconciliation",
            "time",
            &[Cdf {
                design: "same_key",
                index: 1,
                points: vec![(0, 2), (5000, 3)],
            }],
        )
        .unwrap();
        for s in [&a, &b, &c] {
            assert_eq!(s.matches("<svg").count(), 1, "{s}");
            assert!(s.contains("viewBox=\"0 0 760 "));
        }
        assert!(a.contains("\nno_dedup\n") && a.contains("\nsame_key\n"));
        assert!(b.contains("\nsame_key\n"));
        assert!(c.contains("\nsame_key\n"));
        // Same figures, same bytes.
        assert_eq!(a, rates("rates", &rows).unwrap());
    }
}
