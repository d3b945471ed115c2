//! Tests of HTML link extraction.

use super::*;

/// Extracts from a string with no Content-Type.
fn links(html: &str, url: &str) -> PageLinks {
    extract_links(html.as_bytes(), &Url::parse(url).unwrap(), None)
}

#[test]
fn charset_order() {
    assert_eq!(
        detect_charset(b"\xEF\xBB\xBFx", Some("text/html; charset=latin1")),
        encoding_rs::UTF_8
    );
    assert_eq!(
        detect_charset(
            b"<meta charset=utf-8>",
            Some("text/html; charset=\"ISO-8859-2\"")
        )
        .name(),
        "ISO-8859-2"
    );
    assert_eq!(
        detect_charset(
            b"<meta http-equiv=content-type content='text/html; charset=utf-8'>",
            None
        ),
        encoding_rs::UTF_8
    );
    assert_eq!(detect_charset(b"<p>hi", None), WINDOWS_1252);
}

#[test]
fn base_relative_fragments_entities_and_schemes() {
    let p = links(
        r#"<base href="/d/"><a href="x?a=1&amp;b=2#f">x</a><a href="javascript:void(0)">j</a>
           <a rel="nofollow" href="https://o.example/">o</a><link rel=canonical href="/c">"#,
        "http://h.example/p/q",
    );
    assert_eq!(p.base.as_deref(), Some("http://h.example/d/"));
    assert_eq!(p.links[0].url, "http://h.example/d/x?a=1&b=2");
    assert_eq!(p.skipped_schemes, 1);
    assert!(p.links[1].nofollow);
    assert_eq!(p.canonical.as_deref(), Some("http://h.example/c"));
}

#[test]
fn meta_robots_refresh_and_truncation() {
    let p = links(
        r#"<meta name="robots" content="noindex, nofollow"><meta http-equiv="refresh" content="0; url=/n"><a href="/t"#,
        "http://h.example/",
    );
    assert!(p.noindex(None) && p.nofollow(None));
    assert_eq!(p.links[0].url, "http://h.example/n");
    assert!(links("", "http://h.example/").nofollow(Some("none")));
    let p = links(
        "<link rel=alternate href=https://r.org/a/ ><a href=/b>b</a>",
        "http://h/",
    );
    assert_eq!(p.links.len(), 2, "{p:?}");
    // Never panics on odd input: multi-byte text after `&` or in a refresh.
    links(
        "<a href='&ééééééééé'><meta http-equiv=refresh content='0;é'>",
        "http://h/",
    );
}

#[test]
fn raw_text_comments_and_templates_hide_links() {
    let p = links(
        r#"<title>T &amp; <a href="/t1"></title><script>var s = '<a href="/s1">';
           document.write("<!--<script>x</script><a href='/s2'>-->")</script>
           <style>a:after{content:"<a href='/st'>"}</style><textarea><a href="/ta"></textarea>
           <!-- <a href="/c1"> --> <!--> <a href="/ok1"> <!-- --!> <a href="/ok2">
           <template><a href="/tp"><template></template><a href="/tp2"></template>
           <noscript><a href="/ns"></noscript><iframe src="/if"><a href="/in"></iframe>
           <xmp><a href="/x"></xmp><a href="/end">"#,
        "http://h/",
    );
    let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "http://h/ok1",
            "http://h/ok2",
            "http://h/ns",
            "http://h/if",
            "http://h/end"
        ]
    );
    assert_eq!(p.title.as_deref(), Some(r#"T & <a href="/t1">"#));
}

#[test]
fn foreign_content_select_and_frames() {
    let p = links(
        r##"<svg><title>icon</title><a href="/svg"/><foreignObject><a href="/fo"></a>
           </foreignObject></svg><div><svg><use href="#i"></div><a href="/after">
           <math><mi><a href="/mi"></a></mi><p><a href="/breakout"></math>
           <select><option><a href="/sel"></select><frame src="/fr">
           <frameset><frame src="/f"></frameset><title>Page</title>"##,
        "http://h/",
    );
    let urls: Vec<(&str, &str)> = p
        .links
        .iter()
        .map(|l| (l.tag.as_str(), l.url.as_str()))
        .collect();
    assert_eq!(
        urls,
        [
            ("a", "http://h/fo"),
            ("a", "http://h/after"),
            ("a", "http://h/mi"),
            ("a", "http://h/breakout"),
            ("frame", "http://h/f"),
        ]
    );
    assert_eq!(p.title.as_deref(), Some("Page"));
}

#[test]
fn attributes_follow_the_tokenizer() {
    let p = links(
        "<link\nrel=canonical\thref=/c><A HREF=/b?x=1&copy=2&amp;y&lt=3&#x2F;z>b</A>\
         <a href='/q' href='/dup'><a\nhref=\"/n\"\n/><a title=\"x>y\" href=/gt>\
         <base href=/d/><a href=rel>",
        "http://h/p",
    );
    let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "http://h/c",
            "http://h/b?x=1&copy=2&y&lt=3/z",
            "http://h/q",
            "http://h/n",
            "http://h/gt",
            "http://h/d/rel",
        ]
    );
    // The first base applies to every link, wherever it is; canonical too.
    assert_eq!(p.base.as_deref(), Some("http://h/d/"));
    assert_eq!(p.canonical.as_deref(), Some("http://h/c"));
    assert_eq!(
        decode_entities("&notit; &not;x &#0;&#x80;&#1114112"),
        "&notit; ¬x \u{fffd}€\u{fffd}"
    );
    assert_eq!(decode_refs("&notit; &lt&AElig;&hellip;", false), "¬it; <Æ…");
}

#[test]
fn adversarial_input_stays_linear() {
    let n = 20_000;
    let cases = [
        format!(
            "<svg>{}<foreignObject>{}<a href=/ok>",
            "<g>".repeat(n),
            "</x>".repeat(n)
        ),
        format!("<!--{}<a href=/no>", "-".repeat(n * 5)),
        format!("<script><!--<script>{}", "</scrip<!--".repeat(n)),
        format!("<title>{}", "</titl".repeat(n)),
        format!("<a {}href=/ok>", "x=1 ".repeat(n)),
        format!("{}<a href=/ok>", "<math><mi>".repeat(n)),
        format!("<a href=\"{}", "&amp;&#x".repeat(n)),
    ];
    for html in &cases {
        let p = links(html, "http://h/");
        assert!(p.links.len() <= 1, "{:?}", p.links);
    }
}

/// Found by fuzzing (`fuzz/corpus/html/crash-5828b…`): in a document decoded as windows-1252 (its
/// text a skeleton of the bytes), an attribute without a value (`<a href>`, `<base href=>`) gave
/// the tokenizer an empty value that is not a slice of the document, and finding its bytes
/// underflowed (a panic in debug builds, an out-of-range slice in release ones).
#[test]
fn a_valueless_attribute_in_a_windows_1252_document_is_an_empty_value() {
    let base = Url::parse("http://h/dir/page.html").unwrap();
    for html in [
        &b"<meta charset=windows-1252><p>caf\xe9</p><a href>x</a><a href=/ok>y</a>"[..],
        &b"<p>\xe9t\xe9</p><base href=><a href=\"\">x</a><a href=ok>y</a>"[..],
    ] {
        let p = extract_links(html, &base, Some("text/html; charset=windows-1252"));
        assert!(
            p.links.iter().any(|l| l.url.ends_with("/ok")),
            "{:?}",
            p.links
        );
    }
}

/// The raw targets and tags `scan_into` finds with `requisites`.
fn requisites(html: &str) -> Vec<(String, String)> {
    let s = scan_into(html, None, Vec::new(), true);
    s.raw
        .iter()
        .map(|l| (l.tag.to_string(), l.target.to_string()))
        .collect()
}

#[test]
fn requisites_are_found_in_every_place_a_page_loads_them_from() {
    let html = r#"<html><head>
        <link rel="stylesheet" href="/s.css"><link rel=alternate href="/feed">
        <style>body { background: url(bg.png) } @import "more.css";</style>
        <script src="/app.js"></script>
        </head><body background="paper.gif">
        <img src="a.png" srcset="b.png 2x, c.png 3x">
        <picture><source srcset="d.webp 1x,e.webp 2x" type="image/webp"></picture>
        <video src="v.mp4" poster="p.jpg"><track src="t.vtt"></video><audio src="s.ogg"></audio>
        <embed src="e.swf"><object data="o.svg"></object>
        <input type=image src="go.png"><input type=text src="not.png">
        <div style="background-image: url('/div.png')">x</div>
        <template><img src="hidden.png"></template>
        <a href="/page">p</a>
        </body></html>"#;
    let got = requisites(html);
    let want = [
        ("link", "/s.css"),
        ("link", "/feed"),
        ("style", "bg.png"),
        ("style", "more.css"),
        ("script", "/app.js"),
        ("body", "paper.gif"),
        ("img", "a.png"),
        ("img", "b.png"),
        ("img", "c.png"),
        ("source", "d.webp"),
        ("source", "e.webp"),
        ("video", "v.mp4"),
        ("video", "p.jpg"),
        ("track", "t.vtt"),
        ("audio", "s.ogg"),
        ("embed", "e.swf"),
        ("object", "o.svg"),
        ("input", "go.png"),
        ("style", "/div.png"),
        ("a", "/page"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(t, u)| (t.to_string(), u.to_string()))
        .collect();
    assert_eq!(got, want);
    // Without requisites only the links (and the stylesheet <link>, a link as ever).
    let plain: Vec<String> = scan_into(html, None, Vec::new(), false)
        .raw
        .iter()
        .map(|l| l.target.to_string())
        .collect();
    assert_eq!(plain, ["/s.css", "/feed", "/page"]);
    assert!(is_requisite_rel("Stylesheet") && is_requisite_rel("shortcut icon"));
    assert!(!is_requisite_rel("alternate") && !is_requisite_rel("next"));
}

#[test]
fn srcset_candidates_as_the_standard_splits_them() {
    assert_eq!(srcset_urls("a.png"), ["a.png"]);
    assert_eq!(srcset_urls(" a.png 1x , b.png 2x"), ["a.png", "b.png"]);
    assert_eq!(srcset_urls("a.png, b.png 2x"), ["a.png", "b.png"]);
    // No space after the comma: one URL (the standard splits candidates at whitespace).
    assert_eq!(srcset_urls("a.png,b.png 2x"), ["a.png,b.png"]);
    assert_eq!(srcset_urls("a,b.png 100w"), ["a,b.png"]);
    assert_eq!(
        srcset_urls("data:image/png;base64,AAA 1x, c.png (max-width: 10px, x) 2x, d.png"),
        ["data:image/png;base64,AAA", "c.png", "d.png"]
    );
    assert!(srcset_urls(" , ,").is_empty());
}

#[test]
fn anchor_texts_go_with_their_links() {
    let base = Url::parse("http://h/dir/").unwrap();
    let html = br#"<p><a href="/one">One <b>bold</b>
        &amp; more</a> <a href=two rel="nofollow next"><img src=x.png alt=pic></a>
        <link rel=stylesheet href=s.css><a href=three>cut by <a href=four>four</a>
        <template><a href=/hidden>no</a></template><a href=/last>to the end"#;
    let got: Vec<(String, String, String, Option<String>)> = links_with_text(html, &base, None)
        .into_iter()
        .map(|l| (l.link.url, l.link.tag, l.text, l.link.rel))
        .collect();
    let want = [
        ("http://h/one", "a", "One bold & more", None),
        ("http://h/dir/two", "a", "", Some("nofollow next")),
        ("http://h/dir/s.css", "link", "", Some("stylesheet")),
        ("http://h/dir/three", "a", "cut by", None),
        ("http://h/dir/four", "a", "four", None),
        ("http://h/last", "a", "to the end", None),
    ];
    let want: Vec<(String, String, String, Option<String>)> = want
        .iter()
        .map(|(u, t, x, r)| {
            (
                u.to_string(),
                t.to_string(),
                x.to_string(),
                r.map(str::to_string),
            )
        })
        .collect();
    assert_eq!(got, want);
    // The same links, in the same order, as the link extractor finds.
    let plain: Vec<String> = extract_links(html, &base, None)
        .links
        .into_iter()
        .map(|l| l.url)
        .collect();
    assert_eq!(plain, want.iter().map(|w| w.0.clone()).collect::<Vec<_>>());
}

/// Credentials in a link (`user:pw@`) are dropped when it is resolved: neither the links a
/// page's parse emits nor the exported links table (`links_with_text`) carry them.
#[test]
fn user_information_is_dropped_from_links() {
    let base = Url::parse("http://h/dir/").unwrap();
    let html = br#"<a href="http://u:secret@o.example/a">a</a><a href="//:pw@o.example/b">b</a>
        <link rel=canonical href="https://me@h/c"><a href="http://@h/d#f">d</a>"#;
    let p = extract_links(html, &base, None);
    let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "http://o.example/a",
            "http://o.example/b",
            "https://h/c",
            "http://h/d"
        ]
    );
    assert_eq!(p.canonical.as_deref(), Some("https://h/c"));
    let anchored: Vec<String> = links_with_text(html, &base, None)
        .into_iter()
        .map(|l| l.link.url)
        .collect();
    assert_eq!(anchored, urls);
}

#[test]
fn html4_names_are_sorted_for_their_binary_search() {
    assert!(entities::HTML4_REFS.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(
        entities::decode_text_refs("&alpha;&Omega;&zwj;&zeta;&rang;&nope;&thetasym;"),
        "\u{3b1}\u{3a9}\u{200d}\u{3b6}\u{27e9}&nope;\u{3d1}"
    );
}

/// The meta prescan as it was written first: the head made text (`from_utf8_lossy`) and
/// lower-cased into a copy, the parameter lower-cased again. The prescan compares case-
/// insensitively in place; both must name the same encoding.
fn prescan_lowercasing(head: &[u8]) -> Option<&'static Encoding> {
    fn param(s: &str) -> Option<&'static Encoding> {
        let lower = s.to_ascii_lowercase();
        let i = lower.find("charset")?;
        let rest = lower[i + 7..].trim_start().strip_prefix('=')?.trim_start();
        let rest = rest.trim_start_matches(['"', '\'']);
        let end = rest
            .find(|c: char| c == '"' || c == '\'' || c == ';' || c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        Encoding::for_label(&rest.as_bytes()[..end])
    }
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = text[from..].find("<meta") {
        let start = from + i;
        let end = text[start..].find('>').map_or(text.len(), |e| start + e);
        if let Some(enc) = param(&text[start..end]) {
            return Some(
                if enc.output_encoding() == encoding_rs::UTF_8 && enc != encoding_rs::UTF_8 {
                    encoding_rs::UTF_8
                } else {
                    enc
                },
            );
        }
        from = end;
    }
    None
}

#[test]
fn prescan_matches_case_and_spacing_as_the_lowercasing_one_did() {
    let cases: &[&[u8]] = &[
        b"<META CHARSET=UTF-8>",
        b"<Meta Http-Equiv=Content-Type Content='text/html; CharSet=\"Shift_JIS\"'>",
        b"<meta name=x><meta charset = \"  koi8-r\">",
        b"<meta charset=\xc2\xa0utf-8><meta charset=latin2>",
        b"<meta charset\xc2\xa0=utf-16le>",
        b"<meta charset=\xff\xfeutf-8>",
        b"<metacharset=gbk",
        b"<me",
        b"",
        b"<p>no meta charset=utf-8</p>",
        b"<meta content=x><meta charset='windows-1251'",
    ];
    for c in cases {
        assert_eq!(
            prescan(c),
            prescan_lowercasing(c),
            "{}",
            String::from_utf8_lossy(c)
        );
        assert_eq!(
            charset_param(&String::from_utf8_lossy(c)),
            charset_param(&String::from_utf8_lossy(c).to_ascii_lowercase()),
        );
    }
}

proptest::proptest! {
    /// Heads made of the pieces a prescan looks for, in any case, with invalid and non-ASCII
    /// bytes between them.
    #[test]
    fn prescan_is_the_lowercasing_one(pieces in proptest::collection::vec(
        proptest::prop_oneof![
            proptest::strategy::Just(b"<meta".to_vec()),
            proptest::strategy::Just(b"<MeTa".to_vec()),
            proptest::strategy::Just(b"charset".to_vec()),
            proptest::strategy::Just(b"CHARSET".to_vec()),
            proptest::strategy::Just(b"=".to_vec()),
            proptest::strategy::Just(b">".to_vec()),
            proptest::strategy::Just(b" ".to_vec()),
            proptest::strategy::Just(b"\"".to_vec()),
            proptest::strategy::Just(b"'".to_vec()),
            proptest::strategy::Just(b";".to_vec()),
            proptest::strategy::Just(b"\xc2\xa0".to_vec()),
            proptest::strategy::Just(b"\xff".to_vec()),
            proptest::strategy::Just(b"\xc3".to_vec()),
            proptest::strategy::Just(b"UTF-8".to_vec()),
            proptest::strategy::Just(b"latin1".to_vec()),
            proptest::strategy::Just(b"Utf-16".to_vec()),
            proptest::strategy::Just(b"x".to_vec()),
        ],
        0..24,
    )) {
        let head = pieces.concat();
        proptest::prop_assert_eq!(prescan(&head), prescan_lowercasing(&head));
    }
}
