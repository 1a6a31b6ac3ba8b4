//! The geometry of the memories-per-day chart: days on the x axis, stacked sources, a nice top.

use super::*;
use cairn_protocol::calendar::day_name;

pub(super) const CHART_W: f64 = 640.0;
pub(super) const CHART_H: f64 = 190.0;
pub(super) const PLOT_LEFT: f64 = 34.0;
pub(super) const PLOT_RIGHT: f64 = 6.0;
pub(super) const PLOT_TOP: f64 = 10.0;
pub(super) const PLOT_BOTTOM: f64 = 24.0;
/// The chart shows at least this many days, so one busy day is not one huge bar.
pub(super) const MIN_DAYS: i64 = 14;

/// A stacked bar chart of memories per day and source, laid out in the SVG's coordinates.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Chart {
    /// Sources, most memories first (their colour is their index).
    pub(super) sources: Vec<String>,
    pub(super) segments: Vec<Segment>,
    pub(super) peak: i64,
    pub(super) first_day: String,
    pub(super) last_day: String,
    /// (y, value) of the horizontal grid lines.
    pub(super) y_ticks: Vec<(f64, i64)>,
    /// (x, label) under the bars.
    pub(super) x_ticks: Vec<(f64, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Segment {
    pub(super) day: String,
    pub(super) source: usize,
    pub(super) count: i64,
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) w: f64,
    pub(super) h: f64,
}

/// The smallest of 1, 2, 5 × 10ⁿ at or above `n` (at least 1).
pub(super) fn nice_top(n: i64) -> i64 {
    let mut step = 1;
    loop {
        for m in [1, 2, 5] {
            if m * step >= n.max(1) {
                return m * step;
            }
        }
        step *= 10;
    }
}

pub(super) fn chart(per_day: &[(String, String, i64)]) -> Option<Chart> {
    let rows: Vec<(i64, &str, i64)> = per_day
        .iter()
        .filter(|(_, _, n)| *n > 0)
        .filter_map(|(day, source, n)| Some((parse_day(day)?, source.as_str(), *n)))
        .collect();
    let last = rows.iter().map(|r| r.0).max()?;
    let first = rows.iter().map(|r| r.0).min()?.min(last - (MIN_DAYS - 1));
    let days = (last - first + 1) as usize;

    let mut totals: Vec<(String, i64)> = Vec::new();
    for (_, source, n) in &rows {
        match totals.iter_mut().find(|(s, _)| s == source) {
            Some(entry) => entry.1 += n,
            None => totals.push(((*source).to_owned(), *n)),
        }
    }
    totals.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let sources: Vec<String> = totals.into_iter().map(|(s, _)| s).collect();

    let mut per: Vec<Vec<i64>> = vec![vec![0; sources.len()]; days];
    for (day, source, n) in &rows {
        if let Some(s) = sources.iter().position(|x| x == source) {
            per[(day - first) as usize][s] += n;
        }
    }
    let peak = per.iter().map(|d| d.iter().sum::<i64>()).max().unwrap_or(0);
    let top = nice_top(peak);

    let plot_w = CHART_W - PLOT_LEFT - PLOT_RIGHT;
    let plot_h = CHART_H - PLOT_TOP - PLOT_BOTTOM;
    let slot = plot_w / days as f64;
    let bar = (slot * 0.72).max(1.0);
    let unit = plot_h / top as f64;
    let base = PLOT_TOP + plot_h;

    let mut segments = Vec::new();
    for (i, counts) in per.iter().enumerate() {
        let x = PLOT_LEFT + slot * i as f64 + (slot - bar) / 2.0;
        let mut y = base;
        for (s, &count) in counts.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let h = count as f64 * unit;
            y -= h;
            segments.push(Segment {
                day: day_name(first + i as i64),
                source: s,
                count,
                x,
                y,
                w: bar,
                h,
            });
        }
    }

    let mut y_ticks = vec![(base, 0), (PLOT_TOP, top)];
    if top >= 2 && top % 2 == 0 {
        y_ticks.insert(1, (PLOT_TOP + plot_h / 2.0, top / 2));
    }
    let center = |i: i64| PLOT_LEFT + slot * (i as f64 + 0.5);
    let mut x_ticks = vec![(center(0), day_label(first))];
    if days >= 5 {
        let mid = (days as i64 - 1) / 2;
        x_ticks.push((center(mid), day_label(first + mid)));
    }
    x_ticks.push((center(days as i64 - 1), day_label(last)));

    Some(Chart {
        sources,
        segments,
        peak,
        first_day: day_name(first),
        last_day: day_name(last),
        y_ticks,
        x_ticks,
    })
}
