//! Miss-rate plots: an RGB canvas, a 5x7 bitmap font, and a line chart (log2 x-axis of cache
//! sizes, linear miss-rate y-axis, one coloured polyline per policy, a legend of swatches).
//! [`line_chart`] is the general form (any range, linear or log10 axes), used by `pqbench`.

use crate::png;

/// An RGB colour.
pub type Rgb = [u8; 3];

/// An RGB raster.
pub struct Canvas {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    px: Vec<u8>,
}

impl Canvas {
    /// A canvas filled with `bg`.
    pub fn new(width: u32, height: u32, bg: Rgb) -> Canvas {
        let mut px = Vec::with_capacity(width as usize * height as usize * 3);
        for _ in 0..width as usize * height as usize {
            px.extend_from_slice(&bg);
        }
        Canvas { width, height, px }
    }

    /// Sets one pixel (ignored outside the canvas).
    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return;
        }
        let i = (y as usize * self.width as usize + x as usize) * 3;
        self.px[i..i + 3].copy_from_slice(&c);
    }

    /// The colour of one pixel.
    pub fn get(&self, x: u32, y: u32) -> Rgb {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        [self.px[i], self.px[i + 1], self.px[i + 2]]
    }

    /// Fills a rectangle.
    pub fn rect(&mut self, x0: i64, y0: i64, w: i64, h: i64, c: Rgb) {
        for y in y0..y0 + h {
            for x in x0..x0 + w {
                self.set(x, y, c);
            }
        }
    }

    /// A line `thick` pixels wide (Bresenham, square pen).
    pub fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), thick: i64, c: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        let off = (thick - 1) / 2;
        loop {
            self.rect(x - off, y - off, thick, thick, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Draws `text` with its top-left corner at (x, y), each font pixel `scale` pixels wide.
    /// Lower-case letters are drawn as capitals; unknown characters as blanks.
    pub fn text(&mut self, x: i64, y: i64, text: &str, scale: i64, c: Rgb) {
        for (n, ch) in text.chars().enumerate() {
            let g = glyph(ch);
            let gx = x + n as i64 * 6 * scale;
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits >> (4 - col) & 1 == 1 {
                        self.rect(gx + col * scale, y + row as i64 * scale, scale, scale, c);
                    }
                }
            }
        }
    }

    /// The PNG file of the canvas.
    pub fn to_png(&self) -> std::io::Result<Vec<u8>> {
        png::encode_rgb(self.width, self.height, &self.px)
    }
}

/// Width in pixels of `text` drawn at `scale`.
pub fn text_width(text: &str, scale: i64) -> i64 {
    (text.chars().count() as i64 * 6 - 1).max(0) * scale
}

/// 5x7 glyph rows (bit 4 = leftmost column).
fn glyph(ch: char) -> [u8; 7] {
    match ch.to_ascii_uppercase() {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'A' => [0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        '^' => [0x04, 0x0A, 0x11, 0x00, 0x00, 0x00, 0x00],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08],
        '-' => [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F],
        ':' => [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00],
        '=' => [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '+' => [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00],
        _ => [0; 7],
    }
}

/// One line of a chart.
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Colour.
    pub color: Rgb,
    /// (log2 of the cache size, miss rate in [0, 1]) for [`chart`]; (x, y) values for
    /// [`line_chart`].
    pub points: Vec<(f64, f64)>,
}

/// Draws a miss-rate chart: x from `x_min` to `x_max` (log2 of the cache size), y from 0 to the
/// largest miss rate rounded up to 10 %.
pub fn chart(title: &str, x_min: u32, x_max: u32, series: &[Series]) -> Canvas {
    const W: i64 = 960;
    const H: i64 = 600;
    let (left, right, top, bottom) = (90i64, 200i64, 50i64, 70i64);
    let white = [255, 255, 255];
    let black = [0, 0, 0];
    let grid = [225, 225, 225];
    let mut c = Canvas::new(W as u32, H as u32, white);
    let y_top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let y_max = ((y_top * 10.0).ceil() / 10.0).clamp(0.1, 1.0);
    let (pw, ph) = (W - left - right, H - top - bottom);
    let span = f64::from((x_max - x_min).max(1));
    let px = |x: f64| left + ((x - f64::from(x_min)) / span * pw as f64).round() as i64;
    let py = |y: f64| top + ph - ((y / y_max) * ph as f64).round() as i64;
    // Grid and y labels (every 10 %, or 5 % when the axis is short).
    let step = if y_max <= 0.3 { 0.05 } else { 0.1 };
    let ticks = (y_max / step).round() as i64;
    for t in 0..=ticks {
        let v = t as f64 * step;
        let y = py(v);
        c.line((left, y), (left + pw, y), 1, grid);
        let label = format!("{}%", (v * 100.0).round() as i64);
        c.text(left - 10 - text_width(&label, 2), y - 7, &label, 2, black);
    }
    for x in x_min..=x_max {
        let xp = px(f64::from(x));
        c.line((xp, top), (xp, top + ph), 1, grid);
        c.line((xp, top + ph), (xp, top + ph + 5), 1, black);
        let label = format!("{x}");
        let w = text_width(&label, 2) + text_width("2", 2) + 2;
        c.text(xp - w / 2, top + ph + 16, "2", 2, black);
        c.text(
            xp - w / 2 + text_width("2", 2) + 2,
            top + ph + 10,
            &label,
            1,
            black,
        );
    }
    // Axes.
    c.line((left, top), (left, top + ph), 2, black);
    c.line((left, top + ph), (left + pw, top + ph), 2, black);
    c.text(left, 8, title, 2, black);
    let xl = "CACHE SIZE (ENTRIES)";
    c.text(left + pw / 2 - text_width(xl, 2) / 2, H - 25, xl, 2, black);
    c.text(10, top - 18, "MISS RATE", 1, black);
    // Lines.
    for s in series {
        for w in s.points.windows(2) {
            c.line(
                (px(w[0].0), py(w[0].1)),
                (px(w[1].0), py(w[1].1)),
                3,
                s.color,
            );
        }
        for &(x, y) in &s.points {
            c.rect(px(x) - 3, py(y) - 3, 7, 7, s.color);
        }
    }
    // Legend.
    let lx = left + pw + 20;
    for (i, s) in series.iter().enumerate() {
        let ly = top + 10 + i as i64 * 28;
        c.rect(lx, ly, 24, 14, s.color);
        c.text(lx + 32, ly, &s.label, 2, black);
    }
    c
}

/// Colour of each policy in the plots (see the README).
pub fn policy_color(p: crate::policies::Policy) -> Rgb {
    use crate::policies::Policy::*;
    match p {
        Random => [230, 120, 0],      // orange
        Static => [150, 60, 190],     // purple
        StaticCold => [230, 80, 170], // pink
        Lru => [30, 90, 220],         // blue
        Clock => [0, 160, 70],        // green
        Min => [0, 0, 0],             // black
        Infinite => [150, 150, 150],
    }
}

/// How an axis of [`line_chart`] maps values to pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values; ticks at 1, 2 or 5 times a power of ten.
    Linear,
    /// Evenly spaced powers of ten; ticks at each power (values <= 0 are not drawn).
    Log10,
}

/// One axis of [`line_chart`]: its title and value range.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Axis title.
    pub label: String,
    /// Smallest value shown.
    pub min: f64,
    /// Largest value shown.
    pub max: f64,
    /// Value-to-pixel mapping.
    pub scale: Scale,
}

impl Axis {
    /// An axis whose range covers `values` with round ends: whole powers of ten for
    /// [`Scale::Log10`], 0 up to a multiple of the tick step for [`Scale::Linear`].
    pub fn fit(label: &str, scale: Scale, values: impl IntoIterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            if v.is_finite() && (scale == Scale::Linear || v > 0.0) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        let (min, max) = match scale {
            Scale::Log10 if lo.is_finite() => {
                let a = lo.log10().floor();
                let b = hi.log10().ceil().max(a + 1.0);
                (10f64.powf(a), 10f64.powf(b))
            }
            Scale::Log10 => (1.0, 10.0),
            Scale::Linear => {
                let top = if hi.is_finite() && hi > 0.0 { hi } else { 1.0 };
                let bottom = if lo.is_finite() && lo < 0.0 { lo } else { 0.0 };
                let step = nice_step((top - bottom) / 5.0);
                (
                    (bottom / step).floor() * step,
                    ((top / step).ceil() * step).max(step),
                )
            }
        };
        Axis {
            label: label.to_string(),
            min,
            max,
            scale,
        }
    }

    fn t(&self, v: f64) -> Option<f64> {
        match self.scale {
            Scale::Linear => Some(v),
            Scale::Log10 if v > 0.0 => Some(v.log10()),
            Scale::Log10 => None,
        }
    }

    /// Tick values and their labels (base, superscript).
    fn ticks(&self) -> Vec<(f64, String, String)> {
        match self.scale {
            Scale::Log10 => {
                let (a, b) = (
                    self.min.log10().ceil() as i32,
                    self.max.log10().floor() as i32,
                );
                (a..=b)
                    .map(|k| (10f64.powi(k), "10".to_string(), k.to_string()))
                    .collect()
            }
            Scale::Linear => {
                let step = nice_step((self.max - self.min) / 5.0);
                let first = (self.min / step).ceil() as i64;
                let last = (self.max / step + 1e-9).floor() as i64;
                (first..=last)
                    .map(|i| {
                        let v = i as f64 * step;
                        (v, compact_number(v, step), String::new())
                    })
                    .collect()
            }
        }
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * p)
}

/// `v` with a K or M suffix when large, and as many decimals as `step` needs.
fn compact_number(v: f64, step: f64) -> String {
    let (div, suffix) = if v.abs() >= 1e6 && step >= 1e5 {
        (1e6, "M")
    } else if v.abs() >= 1e3 && step >= 100.0 {
        (1e3, "K")
    } else {
        (1.0, "")
    };
    let s = step / div;
    let decimals = if s >= 1.0 {
        0
    } else {
        (-s.log10().floor()) as usize
    };
    format!("{:.*}{suffix}", decimals, v / div)
}

/// A general line chart: `x` and `y` axes with their own ranges and scales, one coloured
/// polyline with square markers per series (points are (x, y) values; points outside a
/// logarithmic axis' domain are skipped), and a legend. Same canvas size and style as [`chart`].
pub fn line_chart(title: &str, x: &Axis, y: &Axis, series: &[Series]) -> Canvas {
    const W: i64 = 960;
    const H: i64 = 600;
    let (left, right, top, bottom) = (100i64, 230i64, 50i64, 70i64);
    let white = [255, 255, 255];
    let black = [0, 0, 0];
    let grid = [225, 225, 225];
    let mut c = Canvas::new(W as u32, H as u32, white);
    let (pw, ph) = (W - left - right, H - top - bottom);
    let (x0, x1) = (x.t(x.min).unwrap_or(0.0), x.t(x.max).unwrap_or(1.0));
    let (y0, y1) = (y.t(y.min).unwrap_or(0.0), y.t(y.max).unwrap_or(1.0));
    let xspan = if x1 > x0 { x1 - x0 } else { 1.0 };
    let yspan = if y1 > y0 { y1 - y0 } else { 1.0 };
    let px = |v: f64| left + ((v - x0) / xspan * pw as f64).round() as i64;
    let py = |v: f64| top + ph - ((v - y0) / yspan * ph as f64).round() as i64;
    for (v, base, sup) in y.ticks() {
        let yp = py(y.t(v).unwrap_or(y0));
        c.line((left, yp), (left + pw, yp), 1, grid);
        let w = text_width(&base, 2)
            + if sup.is_empty() {
                0
            } else {
                text_width(&sup, 1) + 2
            };
        c.text(left - 10 - w, yp - 7, &base, 2, black);
        if !sup.is_empty() {
            c.text(
                left - 10 - w + text_width(&base, 2) + 2,
                yp - 12,
                &sup,
                1,
                black,
            );
        }
    }
    for (v, base, sup) in x.ticks() {
        let xp = px(x.t(v).unwrap_or(x0));
        c.line((xp, top), (xp, top + ph), 1, grid);
        c.line((xp, top + ph), (xp, top + ph + 5), 1, black);
        let w = text_width(&base, 2)
            + if sup.is_empty() {
                0
            } else {
                text_width(&sup, 1) + 2
            };
        c.text(xp - w / 2, top + ph + 16, &base, 2, black);
        if !sup.is_empty() {
            c.text(
                xp - w / 2 + text_width(&base, 2) + 2,
                top + ph + 10,
                &sup,
                1,
                black,
            );
        }
    }
    c.line((left, top), (left, top + ph), 2, black);
    c.line((left, top + ph), (left + pw, top + ph), 2, black);
    c.text(left, 8, title, 2, black);
    c.text(
        left + pw / 2 - text_width(&x.label, 2) / 2,
        H - 25,
        &x.label,
        2,
        black,
    );
    c.text(10, top - 18, &y.label, 1, black);
    for s in series {
        let pts: Vec<(i64, i64)> = s
            .points
            .iter()
            .filter_map(|&(a, b)| Some((px(x.t(a)?), py(y.t(b)?))))
            .collect();
        for w in pts.windows(2) {
            c.line(w[0], w[1], 3, s.color);
        }
        for &(a, b) in &pts {
            c.rect(a - 3, b - 3, 7, 7, s.color);
        }
    }
    let lx = left + pw + 20;
    for (i, s) in series.iter().enumerate() {
        let ly = top + 10 + i as i64 * 28;
        c.rect(lx, ly, 24, 14, s.color);
        c.text(lx + 32, ly, &s.label, 2, black);
    }
    c
}
