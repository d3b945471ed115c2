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
