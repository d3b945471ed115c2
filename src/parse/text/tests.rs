//! Tests of the visible-text extractor (`super`).

use super::*;

/// The visible text of `html` (no Content-Type), unbounded.
fn vt(html: &str) -> String {
    visible_text(html.as_bytes(), None, usize::MAX)
}

#[test]
fn script_style_template_noscript_textarea_select_dropped() {
    let t = vt(
        "<p>a<script>var x = '<p>no</p>';</script>b<style>p{color:red}</style>c\
                <template><p>tpl</p></template>d<noscript><p>ns</p></noscript>e\
                <textarea>ta</textarea>f<select><option>o1<option>o2</select>g\
                <!-- comment --><!doctype html>h<iframe>if</iframe>i",
    );
    assert_eq!(t, "abcdefghi");
    // Nested templates, and a script that hides a `</script>` in an escaped comment.
    assert_eq!(
        vt(
            "x<template><template>a</template>b</template>y<script><!--<script>\
            </script>--></script>z"
        ),
        "xyz"
    );
}

#[test]
fn title_is_the_first_line_and_head_has_no_other_text() {
    let t = vt(
        "<html><head><title> My &amp;\n Title </title><meta name=x content=y>\
                <link rel=stylesheet href=a.css><style>b{}</style></head>\
                <body><h1>Head</h1><p>Body</p></body></html>",
    );
    assert_eq!(t, "My & Title\nHead\nBody");
    // Only the first title; one in a template or in SVG does not count.
    assert_eq!(
        vt(
            "<template><title>T0</title></template><svg><title>T1</title></svg>\
            <title>T2</title><title>T3</title>x"
        ),
        "T2\nx"
    );
    // A title after the body text still comes first.
    assert_eq!(vt("<p>x</p><title>T</title>"), "T\nx");
}

#[test]
fn hidden_elements_and_descendants_dropped() {
    let t = vt("<div>a<div hidden>b<p>c</p><div>d</div>e</div>f</div>\
                <span aria-hidden=\"true\">g<b>h</b></span>i\
                <span aria-hidden=\"false\">j</span>\
                <div style=\"color: red; display : none !important\">k<div>l</div></div>\
                <p style='VISIBILITY:hidden'>m</p><p style='display:block'>n</p>");
    // (A hidden block makes no line break: `a` and `f` share a line, as in a browser.)
    assert_eq!(t, "af\nij\nn");
    // A hidden `<p>` ends where a block start closes it; a hidden `<li>` at the next `<li>`.
    assert_eq!(vt("<p hidden>a<div>b</div>"), "b");
    assert_eq!(vt("<ul><li hidden>a<li>b</ul>"), "b");
    // An end tag of an ordinary element does not close a special one.
    assert_eq!(vt("<span hidden><div>a</span>b</div>c</span>d"), "d");
    // A hidden SVG and a closed dialog.
    assert_eq!(
        vt("x<math aria-hidden=true><mi>y</mi></math><dialog>d</dialog>z"),
        "xz"
    );
    assert_eq!(vt("<dialog open>d</dialog>"), "d");
}

#[test]
fn blocks_br_cells_and_whitespace() {
    let t = vt("<div>one  two\n\t three</div><p>para<b> bold</b>  end</p>\
                inline<span>span</span><br>next<br><br><br>after\
                <ul><li>i1</li><li> i2 </li></ul>\
                <table><tr><td>c1</td><td> c2</td><td></td><td>c4</td></tr>\
                <tr><th>h1<th>h2</table><h2>Sub</h2>tail");
    assert_eq!(
        t,
        "one two three\npara bold end\ninlinespan\nnext\nafter\ni1\ni2\n\
         c1\tc2\tc4\nh1\th2\nSub\ntail"
    );
    // Lines are trimmed, no-break spaces too; no empty lines.
    assert_eq!(
        vt("<p>&nbsp; a &nbsp;</p><p> </p><p>&nbsp;</p><p>b</p>"),
        "a\nb"
    );
}

#[test]
fn pre_keeps_whitespace() {
    let t = vt("<p>x</p><pre>\n  a   b\n\n    c</pre>y <xmp>\n <b>&amp;</xmp>");
    assert_eq!(t, "x\n  a   b\n\n    c\ny\n <b>&amp;");
    assert_eq!(vt("<pre>a <b>b\n</b>  c</pre>d"), "a b\n  c\nd");
}

#[test]
fn character_references() {
    assert_eq!(
        vt("<p>a &amp; b &lt;c&gt; &#65;&#x42;&#x1F600; &copy &nbsp;x &unknown; &#0;</p>"),
        "a & b <c> AB\u{1F600} \u{a9} \u{a0}x &unknown; \u{fffd}"
    );
    // The HTML 4 names that the link extractor's table leaves out, in text and the title.
    assert_eq!(
        vt("<title>&alpha;</title>a&sdot;b &rArr; &lang;x&rang;"),
        "\u{3b1}\na\u{22c5}b \u{21d2} \u{27e8}x\u{27e9}"
    );
    // A `<` that starts no tag is text.
    assert_eq!(vt("1 < 2 <3 </"), "1 < 2 <3 </");
}

#[test]
fn charsets() {
    // windows-1252 by default (no BOM, header or meta).
    assert_eq!(
        visible_text(b"<p>caf\xe9 \x80</p>", None, 100),
        "caf\u{e9} \u{20ac}"
    );
    // UTF-8 from a meta charset.
    assert_eq!(
        visible_text("<meta charset=utf-8><p>Grüße</p>".as_bytes(), None, 100),
        "Grüße"
    );
    // Shift_JIS from the Content-Type header, which wins over the meta.
    let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("<meta charset=utf-8><p>日本語</p>");
    assert_eq!(
        visible_text(&sjis, Some("text/html; charset=Shift_JIS"), 100),
        "日本語"
    );
    // A windows-1252 title with non-ASCII bytes, and in an attribute that hides.
    assert_eq!(
        visible_text(
            b"<title>\xe0 la</title><p style='x:\xe9;display:none'>h</p>v",
            None,
            100
        ),
        "\u{e0} la\nv"
    );
}

#[test]
fn max_chars_bound() {
    let html = "<title>Title</title><p>alpha beta</p><p>gamma</p>";
    assert_eq!(vt(html), "Title\nalpha beta\ngamma");
    for n in 0..30 {
        let t = visible_text(html.as_bytes(), None, n);
        assert!(t.chars().count() <= n, "{n}: {t:?}");
        assert!(vt(html).starts_with(&t), "{n}: {t:?}");
    }
    assert_eq!(visible_text(html.as_bytes(), None, 9), "Title\nalp");
    let t = visible_text("é".repeat(1000).as_bytes(), Some("charset=utf-8"), 7);
    assert_eq!(t, "ééééééé");
}

#[test]
fn svg_and_math() {
    let t = vt(
        "a<svg><title>icon</title><style>.c{}</style><text>chart</text>\
                <foreignObject><p>fo</p></foreignObject></svg>b\
                <math><mi>x</mi><annotation>ann</annotation></math>c\
                <svg><g>in svg<p>breakout</p>",
    );
    assert_eq!(t, "achart\nfo\nbxc\nbreakout");
    // CDATA sections are text in SVG and MathML (references not decoded), comments in HTML.
    assert_eq!(
        vt("<svg><text><![CDATA[a&amp;b]]></text></svg><![CDATA[c]]>d"),
        "a&amp;bd"
    );
}

#[test]
fn adversarial_inputs_are_linear() {
    // Each is about 1 MB; a search of the stack per tag without the bound, or a walk of
    // the SVG stack per text run, would take minutes.
    let cases = [
        // Deep nesting of everything, unclosed, hidden levels, end tags that match nothing.
        format!(
            "{}{}{}<!--",
            "<div hidden><span><p><li><td><svg><g>".repeat(5000),
            "</x></div></td>".repeat(5000),
            "<a>".repeat(5000)
        ),
        // Hundreds of open ordinary elements, then end tags and implied ends that look
        // down the stack.
        format!(
            "<p>{}{}",
            "<y>".repeat(600),
            "</x><td><li><dd><div>".repeat(40000)
        ),
        // Deep SVG with text between the tags.
        format!("<svg>{}", "<g>x".repeat(250000)),
        format!("<math>{}", "<mrow>x".repeat(150000)),
    ];
    for html in &cases {
        let t = std::time::Instant::now();
        let _ = vt(html);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}: {:?}",
            &html[..40],
            t.elapsed()
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// Any bytes: no panic, the bound holds, and no empty line outside `<pre>`.
    #[test]
    fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
                    max in 0usize..60) {
        let t = visible_text(&bytes, None, max);
        proptest::prop_assert!(t.chars().count() <= max);
        let u = visible_text(&bytes, Some("text/html; charset=utf-8"), usize::MAX);
        proptest::prop_assert_eq!(u.trim_end(), u.as_str());
    }

    /// Markup-like soup built from the tags the walker treats specially.
    #[test]
    fn tag_soup_never_panics(parts in proptest::collection::vec(proptest::sample::select(vec![
        "<p>", "</p>", "<div hidden>", "</div>", "<pre>", "</pre>", "<table>", "<td>",
        "<tr>", "</table>", "<svg>", "</svg>", "<math>", "<mi>", "<foreignObject>",
        "<template>", "</template>", "<select>", "</select>", "<option>", "<li>", "<br>",
        "</br>", "<xmp>", "<plaintext>", "<title>", "</title>", "<script>", "</script>",
        "<!--", "-->", "<![CDATA[", "]]>", "&amp;", "&#x", "\n", " ", "x", "é", "<",
        "<span style='display:none'>", "</span>", "<h1>", "<dialog>", "<b>", "</b>",
    ]), 0..60), max in 1usize..80) {
        let html: String = parts.concat();
        let t = visible_text(html.as_bytes(), Some("charset=utf-8"), max);
        proptest::prop_assert!(t.chars().count() <= max);
    }
}

/// The 150 conformance pages, with the charset the reference settled on.
fn pages() -> Vec<(String, Vec<u8>, String)> {
    use std::io::Read;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/html");
    let expected = std::fs::read_to_string(dir.join("expected_links.jsonl")).unwrap();
    let mut pages = Vec::new();
    for line in expected.lines().filter(|l| !l.trim().is_empty()) {
        let rec: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = rec["file"].as_str().unwrap();
        let mut gz = flate2::read::GzDecoder::new(std::fs::File::open(dir.join(file)).unwrap());
        let mut bytes = Vec::new();
        gz.read_to_end(&mut bytes).unwrap();
        let ct = format!(
            "text/html; charset={}",
            rec["encoding"].as_str().unwrap_or("utf-8")
        );
        let name = file
            .trim_start_matches("pages/")
            .trim_end_matches(".html.gz");
        pages.push((name.to_string(), bytes, ct));
    }
    pages
}

/// Writes the visible text of each conformance page to `$DRAGNET_TEXT_OUT/NAME.txt`, for
/// `tools/bench/text_agreement.py`:
/// `DRAGNET_TEXT_OUT=/tmp/ours cargo test --lib parse::text::tests::dump_pages -- --ignored`.
/// With `DRAGNET_TEXT_IN` set, the pages are that directory's `NAME.html` files instead
/// (no Content-Type).
#[test]
#[ignore]
fn dump_pages() {
    let out = std::env::var("DRAGNET_TEXT_OUT").expect("DRAGNET_TEXT_OUT names a directory");
    let out = std::path::Path::new(&out);
    std::fs::create_dir_all(out).unwrap();
    let pages = match std::env::var("DRAGNET_TEXT_IN") {
        Err(_) => pages(),
        Ok(dir) => std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "html"))
            .map(|p| {
                let name = p.file_stem().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap(), String::new())
            })
            .collect(),
    };
    for (name, bytes, ct) in pages {
        let ct = Some(ct.as_str()).filter(|c| !c.is_empty());
        let t = visible_text(&bytes, ct, usize::MAX);
        std::fs::write(out.join(format!("{name}.txt")), t).unwrap();
    }
}

/// MB/s of `visible_text` and of `extract_links` over the conformance pages, and of the
/// decoding and tokenizing both start with (best of 15 rounds, the three interleaved):
/// `cargo test --release --lib parse::text::tests::speed -- --ignored --nocapture`
/// (`DRAGNET_SPEED_PASS=text`, `tokens` or `links` runs just one, for a profiler).
#[test]
#[ignore]
fn speed() {
    let pages = pages();
    let total: usize = pages.iter().map(|p| p.1.len()).sum();
    let url = url::Url::parse("https://example.com/").unwrap();
    let text = |b: &[u8], ct: &str| visible_text(b, Some(ct), usize::MAX).len();
    let tokens = |b: &[u8], ct: &str| {
        let mut buf = String::new();
        let (text, orig) = decode_text(b, detect_charset(b, Some(ct)), &mut buf);
        let mut tk = Tokenizer::new(text, orig);
        let mut n = 0;
        while let Some(t) = tk.next_token() {
            n += 1;
            if let Token::Tag(t) = t {
                if !t.end && t.name.eq_ignore_ascii_case("script") {
                    tk.skip_script();
                }
            }
        }
        n
    };
    let links = |b: &[u8], ct: &str| {
        crate::parse::html::extract_links(b, &url, Some(ct))
            .links
            .len()
    };
    type Pass<'f> = (&'static str, &'f dyn Fn(&[u8], &str) -> usize);
    let passes: [Pass; 3] = [("text", &text), ("tokens", &tokens), ("links", &links)];
    let only = std::env::var("DRAGNET_SPEED_PASS").ok();
    let mut best = [f64::MAX; 3];
    let mut sink = 0;
    for _ in 0..15 {
        for (k, (name, f)) in passes.iter().enumerate() {
            if only.as_deref().is_some_and(|o| o != *name) {
                continue;
            }
            let t = std::time::Instant::now();
            for (_, bytes, ct) in &pages {
                sink += f(bytes, ct);
            }
            best[k] = best[k].min(t.elapsed().as_secs_f64());
        }
    }
    let mbs = |k: usize| total as f64 / 1e6 / best[k];
    if let Some(k) = passes.iter().position(|p| only.as_deref() == Some(p.0)) {
        println!(
            "{}: {:.0} MB/s ({:.4} s) [{sink}]",
            passes[k].0,
            mbs(k),
            best[k]
        );
        return;
    }
    println!(
        "{} pages, {:.1} MB: visible_text {:.0} MB/s ({:.4} s), extract_links {:.0} MB/s \
         ({:.4} s), text/links time {:.2}; decoding and tokenizing alone {:.0} MB/s \
         ({:.4} s) [{sink}]",
        pages.len(),
        total as f64 / 1e6,
        mbs(0),
        best[0],
        mbs(2),
        best[2],
        best[0] / best[2],
        mbs(1),
        best[1],
    );
}

#[test]
fn every_known_element_is_found_by_its_name_in_any_case() {
    use super::kind::{kind, KINDS, T};
    for e in &KINDS {
        let upper = e.name.to_ascii_uppercase();
        for name in [e.name, upper.as_str()] {
            let k = kind(name);
            assert!(k.t != T::Other && k.id == e.name, "{name}");
        }
    }
    for other in [
        "",
        "span",
        "a\0",
        "divx",
        "custom-element",
        "blockquotes",
        "x".repeat(40).as_str(),
    ] {
        assert!(kind(other).t == T::Other, "{other:?}");
    }
}
