//! The report's charts, drawn with plotters' SVG backend into strings.
//!
//! Every chart is one `<svg>` element with a `viewBox`, so it scales to the page's width.
//! Text is laid out with plotters' built-in estimate (no font file is read), and every
//! coordinate is an integer: the same figures give the same bytes on any machine.
//!
//! Colours are Okabe and Ito's colour-blind-safe palette (its yellow left out: too pale on
//! white); a design's series also has its own marker (shape, filled or hollow), so two
//! designs never differ by colour alone. Legends sit outside the plotting area, each axis
//! has one unit, a time axis spans what was measured, and series that coincide are drawn
//! once, under one legend entry naming every design they stand for.

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
    pub estimates: [Estimate; 5],
}

// Okabe and Ito's palette (colour-blind safe), for the charts and the sequence diagrams.
pub(crate) const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xb2);
pub(crate) const ORANGE: RGBColor = RGBColor(0xe6, 0x9f, 0x00);
pub(crate) const GREEN: RGBColor = RGBColor(0x00, 0x9e, 0x73);
pub(crate) const VERMILLION: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
pub(crate) const PURPLE: RGBColor = RGBColor(0xcc, 0x79, 0xa7);
pub(crate) const SKY: RGBColor = RGBColor(0x56, 0xb4, 0xe9);
pub(crate) const INK: RGBColor = RGBColor(0x21, 0x21, 0x21);

/// The shares of the rates chart (they add up to one per design), their labels and colours.
pub const RATE_SERIES: [(&str, RGBColor); 5] = [
    ("completed", GREEN),
    ("true failure", BLUE),
    ("false success", VERMILLION),
    ("false failure", ORANGE),
    ("unresolved", PURPLE),
];

/// Colours of the designs in the distribution charts, in the order of the model's designs.
const PALETTE: [RGBColor; 7] = [BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, INK];

const WIDTH: u32 = 760;
const FONT: &str = "sans-serif";

fn design_colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Draws design `i`'s marker centred on `at` (pixels): a circle, triangle, square or cross,
/// hollow from the palette's second round on, so that designs sharing a colour differ here.
fn marker(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    at: (i32, i32),
    i: usize,
) -> Result<(), String> {
    let colour = design_colour(i);
    let style = if i < PALETTE.len() {
        colour.filled()
    } else {
        colour.stroke_width(2)
    };
    let (x, y) = at;
    match i % 4 {
        0 => root.draw(&Circle::new(at, 5, style)),
        1 => root.draw(&TriangleMarker::new(at, 6, style)),
        2 => root.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], style)),
        _ => root.draw(&Cross::new(at, 5, colour.stroke_width(2))),
    }
    .map_err(err)
}

/// Draws with `draw` on a fresh SVG of `height` pixels and returns the SVG text.
fn svg(
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        draw(&root)?;
        root.present().map_err(err)?;
    }
    Ok(text)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The title, centred at the top.
fn title_text(root: &DrawingArea<SVGBackend<'_>, Shift>, title: &str) -> Result<(), String> {
    root.draw(&Text::new(
        title.to_string(),
        (WIDTH as i32 / 2, 6),
        TextStyle::from((FONT, 16).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(err)
}

/// A legend entry: what `draw_key` draws at `(x, y)`, then `label` to its right.
fn legend_label(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    (x, y): (i32, i32),
    label: &str,
) -> Result<(), String> {
    root.draw(&Text::new(
        label.to_string(),
        (x + 22, y),
        TextStyle::from((FONT, 12).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center)),
    ))
    .map_err(err)
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
    x_format: &dyn Fn(&f64) -> String,
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
        .x_label_formatter(x_format)
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

/// Per design, the shares of its intents by outcome, each a dot with its 95 % interval as a
/// bar (a forest plot: one row per design, one colour per outcome), on one axis of shares
/// fitted to the largest upper bound.
pub fn rates(title: &str, rows: &[RateRow<'_>]) -> Result<String, String> {
    let n = rows.len();
    let x_max = rows
        .iter()
        .flat_map(|r| r.estimates.iter().map(|e| e.high))
        .filter(|x| x.is_finite())
        .fold(0.05f64, f64::max)
        .min(1.0)
        * 1.02;
    let height = 140 + 40 * n as u32;
    svg(height, |root| {
        // Caption and legend above the plot, so that no mark is hidden behind them.
        let (head, body) = root.split_vertically(52);
        title_text(&head, title)?;
        let item = WIDTH as i32 / RATE_SERIES.len() as i32;
        for (k, (name, colour)) in RATE_SERIES.iter().enumerate() {
            let x = 12 + k as i32 * item;
            head.draw(&Circle::new((x + 8, 38), 4, colour.filled()))
                .map_err(err)?;
            legend_label(&head, (x, 38), name)?;
        }
        let mut chart = row_chart(
            ChartBuilder::on(&body),
            n,
            x_max,
            "share of the design's intents",
            &|x| format!("{:.0} %", x * 100.0),
        )?;
        // Backend coordinates are the whole SVG's: the labels go on the root area.
        label_rows(root, &chart, rows.iter().map(|r| r.design))?;
        for (k, (_, colour)) in RATE_SERIES.iter().enumerate() {
            let offset = (2.0 - k as f64) * 0.15;
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

/// The median of a cumulative distribution: the first value at or past half its count.
pub fn median(points: &[(Millis, u64)]) -> Option<Millis> {
    let total = points.last()?.1;
    points.iter().find(|p| 2 * p.1 >= total).map(|p| p.0)
}

/// One curve of a distribution chart: the designs it stands for (in order), the index of the
/// first (its colour and marker), its points.
type Curve<'a> = (Vec<&'a str>, usize, &'a [(Millis, u64)]);

/// Series that coincide (the same cumulative counts), once each.
fn distinct<'a>(series: &'a [Cdf<'a>]) -> Vec<Curve<'a>> {
    let mut out: Vec<Curve<'a>> = Vec::new();
    for s in series.iter().filter(|s| !s.points.is_empty()) {
        match out.iter_mut().find(|(_, _, p)| *p == s.points.as_slice()) {
            Some(same) => same.0.push(s.design),
            None => out.push((vec![s.design], s.index, &s.points)),
        }
    }
    out
}

/// The cumulative distribution of a duration per design, on a logarithmic time axis that
/// spans the values measured. Each design's median is marked with its marker; designs with
/// the same distribution are one curve, named together in the legend below the plot.
/// Designs without a value are left out.
pub fn cdf(title: &str, x_desc: &str, series: &[Cdf<'_>]) -> Result<String, String> {
    let curves = distinct(series);
    let (x_lo, x_hi) = log_axis(series);
    // Two entries a row, or one when a label would run into the next column.
    let per_row = if curves.iter().all(|c| curve_label(&c.0).len() <= 44) {
        2
    } else {
        1
    };
    let legend_rows = curves.len().div_ceil(per_row) as u32;
    let plot_height = 330;
    svg(plot_height + 14 + 22 * legend_rows, |root| {
        let (top, bottom) = root.split_vertically(plot_height);
        let mut chart = ChartBuilder::on(&top)
            .caption(title, (FONT, 16))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(48)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), 0f64..1.02f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("share at or below")
            .label_style((FONT, 12))
            .x_labels(6)
            .x_label_formatter(&|x| crate::report::stats::human_ms(x.round() as Millis))
            .y_label_formatter(&|y| format!("{:.0} %", y * 100.0))
            .max_light_lines(0)
            .draw()
            .map_err(err)?;
        for (_, index, points) in &curves {
            let Some(line) = step_line(points, (x_lo, x_hi)) else {
                continue;
            };
            chart
                .draw_series(LineSeries::new(line, design_colour(*index).stroke_width(2)))
                .map_err(err)?;
            if let Some(m) = median(points) {
                let at = chart.backend_coord(&((m as f64).max(x_lo), 0.5));
                marker(root, at, *index)?;
            }
        }
        cdf_legend(root, &bottom, &curves, per_row)
    })
}

/// The time axis (low, high) of a CDF: the values measured, with a little room either
/// side, at least a factor of 4 wide so that one value still shows, and never below half
/// a millisecond (the axis is logarithmic).
fn log_axis(series: &[Cdf<'_>]) -> (f64, f64) {
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let lo = values.clone().min().unwrap_or(1).max(1) as f64;
    let hi = values.max().unwrap_or(1).max(1) as f64;
    let (mut x_lo, mut x_hi) = (lo / 1.25, hi * 1.25);
    if x_hi < 4.0 * x_lo {
        let mid = (x_lo * x_hi).sqrt();
        (x_lo, x_hi) = (mid / 2.0, mid * 2.0);
    }
    (x_lo.max(0.5), x_hi)
}

/// A curve's legend label: its design, or the designs whose curves are the same.
fn curve_label(names: &[&str]) -> String {
    match names.len() {
        1 => names[0].to_string(),
        _ => format!("{} (same curve)", names.join(" = ")),
    }
}

/// A curve as a step function on the axis (`x_lo`, `x_hi`): flat until each value, then up
/// to its cumulative share, flat again to the axis's end. `None` for a curve without points.
fn step_line(points: &[(Millis, u64)], (x_lo, x_hi): (f64, f64)) -> Option<Vec<(f64, f64)>> {
    let &(_, total) = points.last()?;
    let total = total as f64;
    let thinned = thin(points);
    let mut line = Vec::with_capacity(2 * thinned.len() + 1);
    let mut before = 0.0;
    for &(v, count) in &thinned {
        let x = (v as f64).max(x_lo);
        line.push((x, before));
        before = count as f64 / total;
        line.push((x, before));
    }
    line.push((x_hi, before));
    Some(line)
}

/// The legend, under the plot (`bottom`), `per_row` entries a row: the line, the marker,
/// the designs it stands for.
fn cdf_legend(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    bottom: &DrawingArea<SVGBackend<'_>, Shift>,
    curves: &[Curve<'_>],
    per_row: usize,
) -> Result<(), String> {
    let column = WIDTH as i32 / per_row as i32;
    for (k, (names, index, _)) in curves.iter().enumerate() {
        let x = 12 + (k % per_row) as i32 * column;
        let y = 10 + 22 * (k / per_row) as i32;
        let colour = design_colour(*index);
        bottom
            .draw(&PathElement::new(
                vec![(x, y), (x + 18, y)],
                colour.stroke_width(2),
            ))
            .map_err(err)?;
        let (_, dy) = bottom.get_base_pixel();
        marker(root, (x + 9, dy + y), *index)?;
        legend_label(bottom, (x, y), &curve_label(names))?;
    }
    Ok(())
}

/// Per design, two quantities in one unit, per intent: remote calls (retry amplification, a
/// bar) and duplicate effects (a dot), each with its 95 % interval. The legend sits above.
pub fn per_intent(title: &str, rows: &[(&str, Estimate, Estimate)]) -> Result<String, String> {
    let n = rows.len();
    let x_max = rows
        .iter()
        .flat_map(|r| [r.1.high, r.2.high])
        .filter(|x| x.is_finite())
        .fold(1.0f64, f64::max)
        * 1.1;
    let height = 130 + 30 * n as u32;
    svg(height, |root| {
        let (head, body) = root.split_vertically(52);
        title_text(&head, title)?;
        head.draw(&Rectangle::new(
            [(12, 33), (30, 43)],
            BLUE.mix(0.7).filled(),
        ))
        .map_err(err)?;
        legend_label(&head, (12, 38), "remote calls")?;
        head.draw(&Circle::new(
            (WIDTH as i32 / 2 + 21, 38),
            4,
            VERMILLION.filled(),
        ))
        .map_err(err)?;
        legend_label(&head, (WIDTH as i32 / 2 + 12, 38), "duplicate effects")?;
        // Two decimals at most, without trailing zeros: 0.5, 1, 2.25.
        let mut chart = row_chart(ChartBuilder::on(&body), n, x_max, "per intent", &|x| {
            let s = format!("{x:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        })?;
        label_rows(root, &chart, rows.iter().map(|r| r.0))?;
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, e, _))| {
                let y = (n - 1 - i) as f64 + 0.12;
                Rectangle::new([(0.0, y - 0.2), (e.value, y + 0.2)], BLUE.mix(0.7).filled())
            }))
            .map_err(err)?;
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, e, _))| {
                let y = (n - 1 - i) as f64 + 0.12;
                ErrorBar::new_horizontal(y, e.low, e.value, e.high, BLACK.filled(), 8)
            }))
            .map_err(err)?;
        chart
            .draw_series(rows.iter().enumerate().map(|(i, (_, _, d))| {
                let y = (n - 1 - i) as f64 - 0.25;
                let (low, high) = (
                    if d.low.is_finite() { d.low } else { d.value },
                    if d.high.is_finite() { d.high } else { d.value },
                );
                ErrorBar::new_horizontal(y, low, d.value, high, VERMILLION.filled(), 6)
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
    fn the_median_is_the_first_value_at_or_past_half_the_count() {
        assert_eq!(median(&[(10, 1), (20, 2), (30, 4)]), Some(20));
        assert_eq!(median(&[(10, 3), (20, 4)]), Some(10));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn designs_sharing_a_colour_have_other_markers() {
        for i in 0..PALETTE.len() {
            let j = i + PALETTE.len();
            assert_eq!(design_colour(i), design_colour(j));
            assert_ne!(i % 4, j % 4, "{i} and {j}");
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
                estimates: [e(0.9), e(0.0), e(0.0), e(0.05), e(0.05)],
            },
            RateRow {
                design: "same_key",
                estimates: [e(0.95), e(0.0), e(0.0), e(0.0), e(0.05)],
            },
        ];
        let a = rates("rates", &rows).unwrap();
        let b = per_intent(
            "calls",
            &[("no_dedup", e(1.5), e(0.5)), ("same_key", e(1.6), e(0.0))],
        )
        .unwrap();
        let c = cdf(
            "reconciliation",
            "time",
            &[
                Cdf {
                    design: "same_key",
                    index: 1,
                    points: vec![(0, 2), (5000, 3)],
                },
                Cdf {
                    design: "journal",
                    index: 2,
                    points: vec![(0, 2), (5000, 3)],
                },
                Cdf {
                    design: "no_dedup",
                    index: 0,
                    points: vec![(900, 2), (7000, 4)],
                },
            ],
        )
        .unwrap();
        for s in [&a, &b, &c] {
            assert_eq!(s.matches("<svg").count(), 1, "{s}");
            assert!(s.contains("viewBox=\"0 0 760 "));
        }
        assert!(a.contains("\nno_dedup\n") && a.contains("\nsame_key\n"));
        assert!(b.contains("\nsame_key\n"));
        // Coinciding curves are one, named together; the others alone.
        assert!(c.contains("\nsame_key = journal (same curve)\n"), "{c}");
        assert!(c.contains("\nno_dedup\n"));
        // same_key's orange: its curve and its legend line; journal's green: nothing.
        let lines = |colour: &str| {
            c.lines()
                .filter(|l| l.starts_with("<polyline") && l.contains(colour))
                .count()
        };
        assert_eq!(
            (lines("#E69F00"), lines("#009E73"), lines("#0072B2")),
            (2, 0, 2)
        );
        // Same figures, same bytes.
        assert_eq!(a, rates("rates", &rows).unwrap());
    }
}
