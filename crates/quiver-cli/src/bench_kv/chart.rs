//! The chart of `quiver bench kv --plot`: throughput (Mops/s) over operations done, one
//! panel per workload, one line per engine run, popularity shifts as grey verticals.
//!
//! Drawn with `plotters`' bitmap backend; text uses the DejaVu Sans font built into the
//! binary (no system font libraries), and the PNG is encoded by [`crate::plot::encode_png`].

use std::path::Path;

use anyhow::{Context, Result};
use plotters::prelude::*;

use crate::plot::{drawing, labelled_line, legend, register_font, COLORS, FONT};

const PANEL_WIDTH: u32 = 720;
const PANEL_HEIGHT: u32 = 380;

/// One workload's panel.
pub struct Panel {
    pub title: String,
    /// Millions of operations after which popularity shifted.
    pub shifts: Vec<f64>,
    /// (label, points (millions of operations done, Mops/s)).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// Draws `panels` (two per row) into a PNG at `path`.
pub fn draw(path: &Path, panels: &[Panel]) -> Result<()> {
    register_font()?;
    let columns = if panels.len() > 1 { 2 } else { 1 };
    let rows = panels.len().div_ceil(columns).max(1);
    let (width, height) = (PANEL_WIDTH * columns as u32, PANEL_HEIGHT * rows as u32);
    let mut rgb = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let areas = root.split_evenly((rows, columns));
        // Colours follow the label, so an engine has the same colour in every panel.
        let mut labels: Vec<&str> = Vec::new();
        for panel in panels {
            for (label, _) in &panel.series {
                if !labels.contains(&label.as_str()) {
                    labels.push(label);
                }
            }
        }
        for (panel, area) in panels.iter().zip(&areas) {
            draw_panel(area, panel, &labels)?;
        }
        root.present().map_err(drawing)?;
    }
    let png = crate::plot::encode_png(width, height, &rgb)?;
    std::fs::write(path, png).with_context(|| format!("cannot write {}", path.display()))
}

fn draw_panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    panel: &Panel,
    labels: &[&str],
) -> Result<()> {
    let points = || panel.series.iter().flat_map(|(_, p)| p.iter());
    let max_x = points().map(|p| p.0).fold(1e-3, f64::max);
    let max_y = points()
        .map(|p| p.1)
        .filter(|y| y.is_finite())
        .fold(1e-3, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..max_x, 0f64..max_y * 1.15)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("operations (millions)")
        .y_desc("Mops/s")
        .light_line_style(RGBColor(238, 238, 238))
        .label_style((FONT, 12))
        .draw()
        .map_err(drawing)?;
    let grey = RGBColor(100, 100, 100);
    for &x in &panel.shifts {
        chart
            .draw_series(LineSeries::new([(x, 0.0), (x, max_y * 1.15)], grey))
            .map_err(drawing)?;
    }
    for (label, points) in &panel.series {
        let index = labels.iter().position(|l| l == label).unwrap_or(0);
        let color = COLORS[index % COLORS.len()];
        labelled_line(&mut chart, points.iter().copied(), color, label, 18)?;
    }
    legend(&mut chart, 12, SeriesLabelPosition::LowerRight)
}
