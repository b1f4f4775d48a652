//! PNG charts for the benchmarks: a latency CDF (`bench emulate --cdf`) and a speedup curve
//! (`bench scale --plot`).
//!
//! Drawing uses `plotters` with only its bitmap backend and line series; text goes through
//! `ab_glyph` with the DejaVu Sans font built into the binary (the `dejavu` crate), so no
//! system font libraries (fontconfig, freetype) are needed. The RGB buffer is encoded as
//! PNG here (zlib via `flate2`, chunk checksums via `crc32fast`) rather than through the
//! `image` crate, to keep the build small.

use std::io::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One line of a chart: a name for the legend and its points.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;
pub(crate) const FONT: &str = "sans-serif";

/// Line colours, in order of the series.
pub(crate) const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Registers the bundled font with plotters once (ab_glyph finds fonts only this way).
pub(crate) fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(anyhow!("the bundled font could not be read"))
    }
}

pub(crate) fn drawing<E: std::error::Error + Send + Sync>(
    error: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    anyhow!("drawing the chart: {error}")
}

/// Draws `points` as a 2-pixel line in `color`, with a legend entry `label`.
pub(crate) fn labelled_line<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    points: impl IntoIterator<Item = (f64, f64)>,
    color: RGBColor,
    label: &str,
    legend_width: i32,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate<From = (f64, f64)>,
{
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(2)))
        .map_err(drawing)?
        .label(label)
        .legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + legend_width, y)], color.stroke_width(2))
        });
    Ok(())
}

/// Draws the legend box at `position`.
pub(crate) fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    font_size: u32,
    position: SeriesLabelPosition,
) -> Result<()> {
    chart
        .configure_series_labels()
        .label_font((FONT, font_size))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(drawing)
}

/// Draws with `draw` on a white canvas and writes it to `path` as PNG.
fn render(
    path: &Path,
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Result<()>,
) -> Result<()> {
    register_font()?;
    let mut rgb = vec![255u8; WIDTH as usize * HEIGHT as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    let png = encode_png(WIDTH, HEIGHT, &rgb)?;
    std::fs::write(path, png).with_context(|| format!("cannot write {}", path.display()))
}

/// Cumulative distribution of latencies: `sorted` (ascending, µs) as at most `max_points`
/// points (latency, fraction of queries at or below it).
pub fn cdf_points(sorted: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(max_points.max(2)).max(1);
    let mut points: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (sorted[i], (i + 1) as f64 / n as f64))
        .collect();
    if points.last().is_some_and(|&(_, f)| f < 1.0) {
        points.push((sorted[n - 1], 1.0));
    }
    points
}

/// Latency CDFs (x: µs on a log scale, y: fraction of queries) as a PNG.
pub fn latency_cdf_png(path: &Path, title: &str, series: &[Series]) -> Result<()> {
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let lo = xs().fold(f64::INFINITY, f64::min);
    let hi = xs().fold(0f64, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > 0.0 {
        ((lo * 0.8).max(0.01), hi * 1.25)
    } else {
        (1.0, 10.0)
    };
    render(path, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(60)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..1.0)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc("latency (µs, log scale)")
            .y_desc("fraction of queries")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style((FONT, 14))
            .draw()
            .map_err(drawing)?;
        for (i, s) in series.iter().enumerate() {
            // The overall distribution stands out in black.
            let color = if s.name == "all" {
                BLACK
            } else {
                COLORS[i % COLORS.len()]
            };
            labelled_line(&mut chart, s.points.iter().copied(), color, &s.name, 20)?;
        }
        legend(&mut chart, 14, SeriesLabelPosition::LowerRight)
    })
}

/// Throughput over batch sizes (both axes log scale), one line per engine, as a PNG.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub fn throughput_png(path: &Path, title: &str, series: &[Series]) -> Result<()> {
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = || series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x_lo, x_hi) = (
        xs().fold(f64::INFINITY, f64::min).max(1.0) * 0.8,
        xs().fold(1f64, f64::max) * 1.25,
    );
    let (y_lo, y_hi) = (
        ys().fold(f64::INFINITY, f64::min).max(0.001) * 0.5,
        ys().fold(1f64, f64::max) * 2.0,
    );
    render(path, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc("keys per batch (log scale)")
            .y_desc("million lookups per second (log scale)")
            // The axis puts its labels at powers of ten.
            .x_label_formatter(&|x| {
                if *x >= 1e6 {
                    format!("{:.0}M", x / 1e6)
                } else if *x >= 1e3 {
                    format!("{:.0}K", x / 1e3)
                } else {
                    format!("{x:.0}")
                }
            })
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style((FONT, 14))
            .draw()
            .map_err(drawing)?;
        for (i, s) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            labelled_line(&mut chart, s.points.iter().copied(), color, &s.name, 20)?;
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(drawing)?;
        }
        legend(&mut chart, 14, SeriesLabelPosition::UpperLeft)
    })
}

/// Speedup over thread counts, one line per query plus the ideal (linear) line and a mark
/// at the number of physical cores, as a PNG.
pub fn speedup_png(
    path: &Path,
    title: &str,
    series: &[Series],
    physical_cores: Option<usize>,
) -> Result<()> {
    let max_x = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1f64, f64::max);
    let max_y = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(max_x, f64::max);
    render(path, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(60)
            .build_cartesian_2d(0.5f64..max_x + 0.5, 0f64..max_y * 1.1)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc("threads")
            .y_desc("speedup over the first thread count")
            .x_label_formatter(&|x| {
                // Thread counts are whole numbers: label only those.
                if (x - x.round()).abs() < 1e-6 {
                    format!("{x:.0}")
                } else {
                    String::new()
                }
            })
            .label_style((FONT, 14))
            .draw()
            .map_err(drawing)?;
        let grey = RGBColor(150, 150, 150);
        chart
            .draw_series(LineSeries::new(
                [(1.0, 1.0), (max_x, max_x)],
                grey.stroke_width(1),
            ))
            .map_err(drawing)?
            .label("ideal")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
        if let Some(cores) = physical_cores.filter(|&c| (c as f64) < max_x) {
            let x = cores as f64 + 0.5;
            let black = BLACK.mix(0.6);
            chart
                .draw_series(LineSeries::new([(x, 0.0), (x, max_y * 1.1)], black))
                .map_err(drawing)?
                .label(format!("{cores} physical core(s)"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], black));
        }
        for (i, s) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|p| p.1.is_finite())
                .collect();
            labelled_line(&mut chart, points.iter().copied(), color, &s.name, 20)?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(drawing)?;
        }
        legend(&mut chart, 14, SeriesLabelPosition::UpperLeft)
    })
}

/// Encodes an 8-bit RGB image as PNG (no filtering, zlib-compressed).
pub fn encode_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>> {
    let stride = width as usize * 3;
    anyhow::ensure!(
        stride > 0 && rgb.len() == stride * height as usize,
        "image buffer of {} bytes for {width}x{height}",
        rgb.len()
    );
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, no filter method extras, no interlace.
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    for row in rgb.chunks_exact(stride) {
        zlib.write_all(&[0])?; // filter type 0: none
        zlib.write_all(row)?;
    }
    chunk(&mut out, b"IDAT", &zlib.finish()?);
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.finalize().to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_points_end_at_one_and_rise() {
        let sorted: Vec<f64> = (1..=1000).map(f64::from).collect();
        let points = cdf_points(&sorted, 100);
        assert!(points.len() <= 102, "{}", points.len());
        assert_eq!(points.last(), Some(&(1000.0, 1.0)));
        assert!(points
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        assert!(cdf_points(&[], 10).is_empty());
    }

    #[test]
    fn png_has_signature_header_and_end() {
        let png = encode_png(2, 1, &[255, 0, 0, 0, 0, 255]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(&png[16..24], &[0, 0, 0, 2, 0, 0, 0, 1]);
        assert_eq!(&png[png.len() - 8..png.len() - 4], b"IEND");
        assert!(encode_png(2, 2, &[0; 3]).is_err());
    }
}
