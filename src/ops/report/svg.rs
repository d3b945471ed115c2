//! Small inline-SVG charts: a line chart, bars, stacked bars and a log-scale histogram.
//!
//! Each chart is one `<svg>` element with an `id`, a `data-points="N"` attribute (the points or
//! bars it draws: one per cycle for the per-cycle charts) and a `<title>` tooltip on every mark,
//! so the report reads in any browser without JavaScript and a test can count what was drawn.
//! Every string that reaches the SVG goes through [`esc`].

use std::fmt::Write as _;

/// Width and height of every chart, in SVG user units (the page scales them).
const W: f64 = 640.0;
const H: f64 = 230.0;
/// Plot margins: left (y labels), right, top (title), bottom (x labels).
const ML: f64 = 58.0;
const MR: f64 = 12.0;
const MT: f64 = 26.0;
const MB: f64 = 34.0;

/// Series colors (the Okabe–Ito palette, readable by color-blind readers).
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#f0e442", "#000000",
];

/// Escapes text for HTML and SVG (element content and quoted attribute values).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// A number for a label: `1234` → `1.2k`, `0.5` → `0.5`.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a == a.trunc() {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// One named series of values, one per x position.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Values, one per label.
    pub values: Vec<f64>,
}

impl Series {
    /// A series named `name`.
    pub fn new(name: impl Into<String>, values: Vec<f64>) -> Series {
        Series {
            name: name.into(),
            values,
        }
    }
}

/// The opening tag, the title and the frame of a chart with `points` marks.
fn open(id: &str, title: &str, points: usize) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{}\" class=\"chart\" data-points=\"{points}\" viewBox=\"0 0 {W} {H}\" \
         width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">\
         \n<title>{}</title>\n\
         <text x=\"{ML}\" y=\"16\" class=\"ct\">{}</text>\n",
        esc(id),
        esc(title),
        esc(title),
        esc(title)
    );
    s
}

/// The "no data" body of an empty chart.
fn empty(mut s: String) -> String {
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" class=\"na\">no data</text>\n</svg>\n",
        W / 2.0 - 30.0,
        H / 2.0
    );
    s
}

/// The y axis from 0 to `max` (linear), with three labels and grid lines.
fn y_axis(s: &mut String, max: f64) {
    for i in 0..=2 {
        let v = max * f64::from(i) / 2.0;
        let y = y_of(v, max);
        let _ = writeln!(
            s,
            "<line x1=\"{ML}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"yl\">{}</text>",
            W - MR,
            ML - 4.0,
            y + 4.0,
            esc(&short(v))
        );
    }
}

/// At most about 12 x labels, evenly spaced, each cut to the room it has (the marks' tooltips
/// carry the whole label).
fn x_labels(s: &mut String, labels: &[String], x: &dyn Fn(usize) -> f64) {
    let step = labels.len().div_ceil(12).max(1);
    let shown = labels.len().div_ceil(step).max(1);
    let room = (((W - ML - MR) / shown as f64) / 6.5).floor().max(3.0) as usize;
    for (i, l) in labels.iter().enumerate() {
        if i % step == 0 || i + 1 == labels.len() {
            let text: String = if l.chars().count() > room {
                l.chars()
                    .take(room - 1)
                    .chain(std::iter::once('\u{2026}'))
                    .collect()
            } else {
                l.clone()
            };
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"xl\">{}</text>",
                x(i),
                H - MB + 14.0,
                esc(&text)
            );
        }
    }
}

/// The legend, right-aligned in the title row.
fn legend(s: &mut String, names: &[&str]) {
    if names.len() < 2 {
        return;
    }
    let mut x = W - MR;
    for (i, n) in names.iter().enumerate().rev() {
        x -= 8.0 + 6.5 * n.chars().count() as f64 + 12.0;
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"7\" width=\"9\" height=\"9\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"16\" class=\"lg\">{}</text>",
            PALETTE[i % PALETTE.len()],
            x + 12.0,
            esc(n)
        );
    }
}

fn y_of(v: f64, max: f64) -> f64 {
    let ph = H - MT - MB;
    H - MB - if max > 0.0 { v / max * ph } else { 0.0 }
}

/// A rounded-up maximum for the y axis.
fn nice_max(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if v <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v.max(0.0)
    } else {
        0.0
    }
}

/// A line chart: one polyline per series, a point (with its tooltip) per label.
/// `data-points` is the number of labels.
pub fn line_chart(id: &str, title: &str, labels: &[String], series: &[Series]) -> String {
    let n = labels.len();
    let s = open(id, title, n);
    if n == 0 || series.is_empty() {
        return empty(s);
    }
    let mut s = s;
    let max = nice_max(
        series
            .iter()
            .flat_map(|se| se.values.iter().copied().map(finite))
            .fold(0.0, f64::max),
    );
    y_axis(&mut s, max);
    let pw = W - ML - MR;
    let x = |i: usize| {
        if n == 1 {
            ML + pw / 2.0
        } else {
            ML + pw * i as f64 / (n - 1) as f64
        }
    };
    x_labels(&mut s, labels, &x);
    legend(
        &mut s,
        &series.iter().map(|se| se.name.as_str()).collect::<Vec<_>>(),
    );
    for (k, se) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let mut d = String::new();
        for i in 0..n {
            let v = finite(se.values.get(i).copied().unwrap_or(0.0));
            let _ = write!(
                d,
                "{}{:.1} {:.1}",
                if i == 0 { "M" } else { " L" },
                x(i),
                y_of(v, max)
            );
        }
        let _ = writeln!(
            s,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" class=\"mark\"/>"
        );
        for (i, label) in labels.iter().enumerate() {
            let v = finite(se.values.get(i).copied().unwrap_or(0.0));
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\" class=\"mark\">\
                 <title>{}: {}: {}</title></circle>",
                x(i),
                y_of(v, max),
                esc(label),
                esc(&se.name),
                esc(&short(v))
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// Bars: one per label, `values[i]` high. `data-points` is the number of labels.
pub fn bar_chart(id: &str, title: &str, labels: &[String], values: &[f64]) -> String {
    stacked_bars(id, title, labels, &[Series::new(title, values.to_vec())])
}

/// Stacked bars: one bar per label, a segment per series (in order, bottom up).
/// `data-points` is the number of labels.
pub fn stacked_bars(id: &str, title: &str, labels: &[String], series: &[Series]) -> String {
    let n = labels.len();
    let s = open(id, title, n);
    if n == 0 || series.is_empty() {
        return empty(s);
    }
    let mut s = s;
    let total = |i: usize| -> f64 {
        series
            .iter()
            .map(|se| finite(se.values.get(i).copied().unwrap_or(0.0)))
            .sum()
    };
    let max = nice_max((0..n).map(total).fold(0.0, f64::max));
    y_axis(&mut s, max);
    let pw = W - ML - MR;
    let slot = pw / n as f64;
    let bw = (slot * 0.75).max(1.0);
    let x = |i: usize| ML + slot * (i as f64 + 0.5);
    x_labels(&mut s, labels, &x);
    legend(
        &mut s,
        &series.iter().map(|se| se.name.as_str()).collect::<Vec<_>>(),
    );
    for (i, label) in labels.iter().enumerate() {
        let _ = write!(s, "<g class=\"bar\"><title>{}", esc(label));
        for se in series {
            let v = finite(se.values.get(i).copied().unwrap_or(0.0));
            let _ = write!(s, "\n{}: {}", esc(&se.name), esc(&short(v)));
        }
        s.push_str("</title>");
        let mut base = 0.0;
        for (k, se) in series.iter().enumerate() {
            let v = finite(se.values.get(i).copied().unwrap_or(0.0));
            let (y0, y1) = (y_of(base, max), y_of(base + v, max));
            // A zero keeps a hairline mark, so every bar is drawn and hoverable.
            let h = (y0 - y1).max(if k == 0 { 0.5 } else { 0.0 });
            if h > 0.0 {
                let _ = write!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{h:.1}\" \
                     fill=\"{}\" class=\"mark\"/>",
                    x(i) - bw / 2.0,
                    y0 - h,
                    PALETTE[k % PALETTE.len()]
                );
            }
            base += v;
        }
        s.push_str("</g>\n");
    }
    s.push_str("</svg>\n");
    s
}

/// A histogram with a log-scale y axis (log10 of count + 1): one bar per bucket, labeled by
/// `buckets[i].0`. `data-points` is the number of buckets.
pub fn log_histogram(id: &str, title: &str, buckets: &[(String, u64)]) -> String {
    let n = buckets.len();
    let s = open(id, title, n);
    if n == 0 {
        return empty(s);
    }
    let mut s = s;
    let top = buckets.iter().map(|b| b.1).max().unwrap_or(0);
    let decades = (((top as f64) + 1.0).log10().ceil()).max(1.0);
    let ly = |c: u64| ((c as f64) + 1.0).log10();
    for d in 0..=decades as u32 {
        let y = y_of(f64::from(d), decades);
        let _ = writeln!(
            s,
            "<line x1=\"{ML}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"yl\">{}</text>",
            W - MR,
            ML - 4.0,
            y + 4.0,
            esc(&short(
                10f64.powi(d as i32) - if d == 0 { 1.0 } else { 0.0 }
            ))
        );
    }
    let pw = W - ML - MR;
    let slot = pw / n as f64;
    let bw = (slot * 0.8).max(1.0);
    let x = |i: usize| ML + slot * (i as f64 + 0.5);
    let labels: Vec<String> = buckets.iter().map(|b| b.0.clone()).collect();
    x_labels(&mut s, &labels, &x);
    for (i, (label, c)) in buckets.iter().enumerate() {
        let y = y_of(ly(*c), decades);
        let h = (H - MB - y).max(0.5);
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{h:.1}\" fill=\"{}\" \
             class=\"mark\"><title>{}: {c}</title></rect>",
            x(i) - bw / 2.0,
            H - MB - h,
            PALETTE[0],
            esc(label)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Power-of-two buckets of `values` (`1`, `2-3`, `4-7`, ...; 0 in its own): for the log-scale
/// histograms of pages per host and page sizes. `counts[k]` is how many values have `k`
/// significant bits (0 for the value 0).
pub fn pow2_buckets(counts: &[u64], unit: &str) -> Vec<(String, u64)> {
    let last = match counts.iter().rposition(|&c| c > 0) {
        Some(i) => i,
        None => return Vec::new(),
    };
    let first = counts.iter().position(|&c| c > 0).unwrap_or(0);
    (first..=last)
        .map(|k| {
            let label = match k {
                0 => format!("0{unit}"),
                1 => format!("1{unit}"),
                _ => {
                    let lo = 1u64 << (k - 1);
                    format!("{}{unit}", short(lo as f64))
                }
            };
            (label, counts[k])
        })
        .collect()
}

/// The bucket of `v` for [`pow2_buckets`]: its number of significant bits.
pub fn pow2_bucket(v: u64) -> usize {
    (64 - v.leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(svg: &str) -> usize {
        svg.matches("class=\"mark\"").count()
    }

    fn points(svg: &str) -> usize {
        let i = svg.find("data-points=\"").unwrap() + 13;
        svg[i..].split('"').next().unwrap().parse().unwrap()
    }

    #[test]
    fn escape_hostile_text() {
        let e = esc("<script>alert('x')</script>&\"");
        assert_eq!(
            e,
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
        assert!(!esc("a\u{0}b").contains('\u{0}'));
    }

    #[test]
    fn labels_and_titles_are_escaped() {
        let labels = vec!["<script>evil.test</script>".to_string()];
        for svg in [
            bar_chart("c<1>", "t\"x", &labels, &[3.0]),
            line_chart("c", "t", &labels, &[Series::new("<b>", vec![1.0])]),
            log_histogram("c", "t", &[("<i>".into(), 4)]),
        ] {
            assert!(!svg.contains("<script>"), "{svg}");
            assert!(!svg.contains("<b>") && !svg.contains("<i>"), "{svg}");
            assert!(!svg.contains("c<1>"), "{svg}");
        }
    }

    #[test]
    fn one_mark_per_point() {
        let labels: Vec<String> = (0..7).map(|c| c.to_string()).collect();
        let v: Vec<f64> = (0..7).map(f64::from).collect();
        let bars = bar_chart("b", "bars", &labels, &v);
        assert_eq!(points(&bars), 7);
        assert_eq!(marks(&bars), 7, "zeros keep a hairline");
        assert_eq!(bars.matches("<g class=\"bar\"><title>").count(), 7);

        let two = [Series::new("a", v.clone()), Series::new("b", vec![1.0; 7])];
        let line = line_chart("l", "line", &labels, &two);
        assert_eq!(points(&line), 7);
        assert_eq!(marks(&line), 2 + 2 * 7, "a path and a point each");
        assert_eq!(line.matches("<path d=\"M").count(), 2);

        let stacked = stacked_bars("s", "stacked", &labels, &two);
        assert_eq!(points(&stacked), 7);
        assert_eq!(
            marks(&stacked),
            7 + 7,
            "the zero of the first series is a hairline"
        );

        let one = line_chart("o", "one", &labels[..1], &two[..1]);
        assert_eq!((points(&one), marks(&one)), (1, 2));
    }

    #[test]
    fn empty_charts_say_so() {
        let e = bar_chart("e", "empty", &[], &[]);
        assert_eq!(points(&e), 0);
        assert!(e.contains("no data") && e.ends_with("</svg>\n"));
        assert_eq!(points(&log_histogram("h", "h", &[])), 0);
    }

    #[test]
    fn log_histogram_buckets() {
        let mut counts = vec![0u64; 65];
        for v in [1u64, 2, 3, 4, 1000, 1000] {
            counts[pow2_bucket(v)] += 1;
        }
        let b = pow2_buckets(&counts, "");
        assert_eq!(b.first().unwrap(), &("1".to_string(), 1));
        assert_eq!(b[1], ("2".to_string(), 2));
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 6);
        let svg = log_histogram("h", "h", &b);
        assert_eq!(points(&svg), b.len());
        assert_eq!(marks(&svg), b.len());
        assert_eq!(nice_max(7.0), 10.0);
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(short(12_345.0), "12.3k");
    }
}
