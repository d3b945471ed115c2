//! Tests of the sitemap and feed parser.

use super::*;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn urlset(n: usize) -> String {
    let mut doc = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
    );
    for i in 0..n {
        doc.push_str(&format!(
            "<url><loc>https://example.com/{i}</loc><lastmod>2024-01-0{}</lastmod></url>\n",
            i % 9 + 1
        ));
    }
    doc.push_str("</urlset>");
    doc
}

fn locs(s: &Sitemap) -> Vec<&str> {
    s.urls.iter().map(|u| u.loc.as_str()).collect()
}

#[test]
fn defaults_are_sitemaps_org() {
    let l = Limits::default();
    assert_eq!(l.max_urls, 50_000);
    assert_eq!(l.max_bytes, 52_428_800);
}

#[test]
fn plain_urlset_with_all_fields() {
    let doc = br#"<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
<loc> https://example.com/a </loc>
<lastmod>2024-05-01</lastmod>
<changefreq>daily</changefreq>
<priority>0.7</priority>
<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/>
<xhtml:link rel="alternate" hreflang="fr" href="https://example.com/fr/a"></xhtml:link>
<xhtml:link rel="canonical" href="https://example.com/x"/>
  </url>
  <url><loc>https://example.com/b</loc><priority>high</priority></url>
  <url><lastmod>2024-01-01</lastmod></url>
  <url><loc/></url>
</urlset>"#;
    let s = parse(doc, &Limits::default());
    assert_eq!(s.error, None);
    assert_eq!(s.kind, Kind::Urlset);
    assert!(!s.truncated);
    assert_eq!(
        s.urls,
        vec![
            UrlEntry {
                loc: "https://example.com/a".into(),
                lastmod: Some("2024-05-01".into()),
                changefreq: Some("daily".into()),
                priority: Some(0.7),
                alternates: vec![
                    Alternate {
                        hreflang: "de".into(),
                        href: "https://example.com/de/a".into()
                    },
                    Alternate {
                        hreflang: "fr".into(),
                        href: "https://example.com/fr/a".into()
                    },
                ],
            },
            UrlEntry {
                loc: "https://example.com/b".into(),
                lastmod: None,
                changefreq: None,
                priority: None,
                alternates: vec![],
            },
        ]
    );
}

#[test]
fn sitemap_index_and_context() {
    let doc = br#"<sitemapindex>
  <sitemap><loc>https://example.com/s1.xml.gz</loc><lastmod>2024-01-01</lastmod></sitemap>
  <url><loc>https://example.com/not-a-page</loc></url>
</sitemapindex>
<urlset><sitemap><loc>https://example.com/not-a-sitemap</loc></sitemap></urlset>"#;
    let s = parse(doc, &Limits::default());
    assert_eq!(s.kind, Kind::SitemapIndex);
    assert!(s.error.unwrap().contains("second root"));
    assert!(s.urls.is_empty());
    assert_eq!(
        s.sitemaps,
        vec![SitemapRef {
            loc: "https://example.com/s1.xml.gz".into(),
            lastmod: Some("2024-01-01".into())
        }]
    );
}

#[test]
fn several_roots_are_all_read() {
    let doc = format!(
        "{}<sitemapindex><sitemap><loc>https://example.com/s.xml</loc></sitemap></sitemapindex>",
        urlset(2)
    );
    let s = parse(doc.as_bytes(), &Limits::default());
    assert_eq!(s.kind, Kind::Urlset);
    let error = s.error.expect("second root noted");
    assert!(
        error.contains("second root element <sitemapindex>"),
        "{error}"
    );
    assert_eq!(s.urls.len(), 2);
    assert_eq!(s.sitemaps.len(), 1);
}

#[test]
fn gzip_is_decompressed() {
    let doc = urlset(3);
    let s = parse(&gzip(doc.as_bytes()), &Limits::default());
    assert_eq!(s.error, None);
    assert!(!s.truncated);
    assert_eq!(s, parse(doc.as_bytes(), &Limits::default()));
}

#[test]
fn gzip_bomb_is_bounded_by_max_bytes() {
    // 64 MiB of whitespace inside an element compresses to ~64 KiB.
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    enc.write_all(urlset(5).replace("</urlset>", "").as_bytes())
        .unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&chunk).unwrap();
    }
    enc.write_all(b"</urlset>").unwrap();
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 1 << 20);

    let limits = Limits {
        max_urls: 50_000,
        max_bytes: 1 << 20,
    };
    let s = parse(&bomb, &limits);
    assert!(s.truncated);
    let error = s.error.expect("cap recorded");
    assert!(error.contains("max_bytes"), "{error}");
    // The entries before the cap are kept.
    assert_eq!(s.urls.len(), 5);
}

#[test]
fn uncompressed_input_is_bounded_by_max_bytes() {
    let doc = urlset(100);
    let limits = Limits {
        max_urls: 50_000,
        max_bytes: 1000,
    };
    let s = parse(doc.as_bytes(), &limits);
    assert!(s.truncated);
    assert!(s.error.unwrap().contains("max_bytes"));
    assert!(!s.urls.is_empty() && s.urls.len() < 100);
}

#[test]
fn damaged_gzip_keeps_what_was_decoded() {
    let doc = urlset(200);
    let gz = gzip(doc.as_bytes());
    let s = parse(&gz[..gz.len() / 2], &Limits::default());
    assert!(s.error.unwrap().contains("gzip"));
    assert!(!s.urls.is_empty() && s.urls.len() < 200);
    assert_eq!(s.urls[0].loc, "https://example.com/0");

    let s = parse(&[0x1f, 0x8b, 0, 0], &Limits::default());
    assert!(s.error.is_some());
    assert!(s.urls.is_empty());
}

#[test]
fn max_urls_truncates() {
    let doc = urlset(10);
    let limits = Limits {
        max_urls: 4,
        max_bytes: u64::MAX,
    };
    let s = parse(doc.as_bytes(), &limits);
    assert!(s.truncated);
    assert_eq!(s.error, None);
    assert_eq!(
        locs(&s),
        [0, 1, 2, 3].map(|i| format!("https://example.com/{i}"))
    );

    // Exactly at the limit: nothing dropped.
    let s = parse(urlset(4).as_bytes(), &limits);
    assert!(!s.truncated);
    assert_eq!(s.urls.len(), 4);
}

#[test]
fn default_max_urls_is_enforced() {
    let s = parse(urlset(50_001).as_bytes(), &Limits::default());
    assert_eq!(s.error, None);
    assert!(s.truncated);
    assert_eq!(s.urls.len(), 50_000);
    assert_eq!(s.urls[49_999].loc, "https://example.com/49999");
}

#[test]
fn truncated_xml_keeps_earlier_entries() {
    let doc = urlset(3);
    // Cut inside the third <loc>.
    let cut = doc.find("https://example.com/2").unwrap() + 5;
    let s = parse(&doc.as_bytes()[..cut], &Limits::default());
    assert_eq!(locs(&s), ["https://example.com/0", "https://example.com/1"]);
    let error = s.error.expect("error set");
    assert!(error.contains("byte"), "{error}");

    // Cut after </loc> but before </url>: the incomplete entry is dropped too.
    let cut = doc.find("</loc><lastmod>2024-01-03").unwrap() + 6;
    let s = parse(&doc.as_bytes()[..cut], &Limits::default());
    assert_eq!(s.urls.len(), 2);
    assert!(s.error.is_some());
}

#[test]
fn malformed_xml_keeps_earlier_entries() {
    let doc = b"<urlset><url><loc>https://example.com/a</loc></url>\
                <url><loc>https://example.com/b</lco></url>\
                <url><loc>https://example.com/c</loc></url></urlset>";
    let s = parse(doc, &Limits::default());
    assert_eq!(locs(&s), ["https://example.com/a"]);
    let error = s.error.expect("error set");
    assert!(error.contains("at byte"), "{error}");
}

#[test]
fn entities_and_cdata() {
    let doc = br#"<urlset>
  <url><loc>https://example.com/?a=1&amp;b=2&#38;c=&#x33;</loc></url>
  <url><loc><![CDATA[https://example.com/?a=1&b=2]]></loc></url>
  <url><loc>
  <![CDATA[https://example.com/x]]>&amp;y
  </loc></url>
  <url><loc>https://example.com/&nbsp;&lt;</loc></url>
</urlset>"#;
    let s = parse(doc, &Limits::default());
    assert_eq!(s.error, None);
    assert_eq!(
        locs(&s),
        [
            "https://example.com/?a=1&b=2&c=3",
            "https://example.com/?a=1&b=2",
            "https://example.com/x&y",
            "https://example.com/&nbsp;<",
        ]
    );
}

#[test]
fn rss_feed() {
    let doc = br#"<?xml version="1.0"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
  <title>News</title>
  <link>https://example.com/</link>
  <atom:link href="https://example.com/feed" rel="self"/>
  <item>
<title>One</title>
<link>https://example.com/one?x=1&amp;y=2</link>
<pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>
  </item>
  <item><link><![CDATA[ https://example.com/two ]]></link></item>
  <item><guid isPermaLink="false">https://example.com/not-a-permalink</guid></item>
  <item><guid>tag:example.com,2024:123</guid></item>
  <item><guid>https://example.com/three</guid></item>
  <item><atom:link href="https://example.com/four"/></item>
</channel>
</rss>"#;
    let s = parse(doc, &Limits::default());
    assert_eq!(s.error, None);
    assert_eq!(s.kind, Kind::Rss);
    assert_eq!(
        locs(&s),
        [
            "https://example.com/one?x=1&y=2",
            "https://example.com/two",
            "https://example.com/three",
            "https://example.com/four",
        ]
    );
    assert_eq!(
        s.urls[0].lastmod.as_deref(),
        Some("Mon, 01 Jan 2024 00:00:00 GMT")
    );
    assert_eq!(s.urls[1].lastmod, None);

    // RSS 1.0: items beside the channel, dates in dc:date.
    let doc = br#"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://example.com/"><link>https://example.com/</link></channel>
  <item rdf:about="https://example.com/a"><link>https://example.com/a</link>
<dc:date>2024-02-02</dc:date></item>
</rdf:RDF>"#;
    let s = parse(doc, &Limits::default());
    assert_eq!(s.kind, Kind::Rss);
    assert_eq!(locs(&s), ["https://example.com/a"]);
    assert_eq!(s.urls[0].lastmod.as_deref(), Some("2024-02-02"));
}

#[test]
fn atom_feed() {
    let doc = br#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example</title>
  <link href="https://example.com/"/>
  <updated>2024-03-03T00:00:00Z</updated>
  <entry>
<title>A</title>
<link rel="edit" href="https://example.com/edit/a"/>
<link href="https://example.com/a?x=1&amp;y=2"/>
<link rel="alternate" href="https://example.com/a-second"/>
<updated>2024-03-01T00:00:00Z</updated>
  </entry>
  <entry>
<link rel="alternate" type="text/html" href="https://example.com/b"></link>
<published>2024-02-01T00:00:00Z</published>
  </entry>
  <entry><link rel="enclosure" href="https://example.com/c.mp3"/></entry>
</feed>"#;
    let s = parse(doc, &Limits::default());
    assert_eq!(s.error, None);
    assert_eq!(s.kind, Kind::Atom);
    assert_eq!(
        locs(&s),
        ["https://example.com/a?x=1&y=2", "https://example.com/b"]
    );
    assert_eq!(s.urls[0].lastmod.as_deref(), Some("2024-03-01T00:00:00Z"));
    assert_eq!(s.urls[1].lastmod.as_deref(), Some("2024-02-01T00:00:00Z"));
}

#[test]
fn namespace_prefixes_and_case_are_ignored() {
    let doc = br#"<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sm:URL><sm:Loc>https://example.com/a</sm:Loc><sm:lastMod>2024-01-01</sm:lastMod></sm:URL>
</sm:urlset>"#;
    let s = parse(doc, &Limits::default());
    assert_eq!(s.error, None);
    assert_eq!(locs(&s), ["https://example.com/a"]);
    assert_eq!(s.urls[0].lastmod.as_deref(), Some("2024-01-01"));
}

#[test]
fn other_encodings_and_boms() {
    // ISO-8859-1 declared: é is one byte 0xE9.
    let mut doc =
        b"<?xml version='1.0' encoding='ISO-8859-1'?><urlset><url><loc>https://example.com/caf"
            .to_vec();
    doc.push(0xE9);
    doc.extend_from_slice(b"</loc></url></urlset>");
    let s = parse(&doc, &Limits::default());
    assert_eq!(locs(&s), ["https://example.com/café"]);

    // UTF-8 with BOM.
    let doc = [&[0xEF, 0xBB, 0xBF][..], urlset(1).as_bytes()].concat();
    assert_eq!(parse(&doc, &Limits::default()).urls.len(), 1);

    // UTF-16LE with BOM.
    let mut doc = vec![0xFF, 0xFE];
    for unit in urlset(2).encode_utf16() {
        doc.extend_from_slice(&unit.to_le_bytes());
    }
    let s = parse(&doc, &Limits::default());
    assert_eq!(s.error, None);
    assert_eq!(s.urls.len(), 2);
}

#[test]
fn junk_never_panics() {
    for doc in [
        &b""[..],
        b"not xml at all",
        b"<html><body><a href='x'>x</a><br></body></html>",
        b"</urlset>",
        b"<urlset><url><loc>&#xFFFFFFFF;&#0;&bogus</loc></url></urlset>",
        b"<?xml encoding=",
        b"\x1f",
        b"\x1f\x8b",
        b"<urlset\x00\xff\xfe><url>",
    ] {
        let s = parse(doc, &Limits::default());
        assert!(s.urls.len() <= 1);
    }
    let s = parse(b"", &Limits::default());
    assert_eq!(s.kind, Kind::Unknown);
    assert_eq!(s.error.as_deref(), Some("xml: no root element"));
    let s = parse(b"<?xml version='1.0'?><!-- empty -->", &Limits::default());
    assert_eq!(s.error.as_deref(), Some("xml: no root element"));
}

#[test]
fn every_prefix_parses_without_panic() {
    let doc = br#"<?xml version="1.0"?><urlset xmlns:xhtml="x"><url><loc>https://a/</loc><lastmod>1</lastmod><changefreq>d</changefreq><priority>0.5</priority><xhtml:link rel="alternate" hreflang="de" href="https://a/de"/></url><url><loc><![CDATA[https://b/]]></loc></url></urlset>"#;
    let full = parse(doc, &Limits::default());
    assert_eq!(full.urls.len(), 2);
    for cut in 0..doc.len() {
        let s = parse(&doc[..cut], &Limits::default());
        assert!(s.urls.len() <= 2);
        assert!(s.error.is_some(), "cut {cut}");
        // What is kept is a prefix of the full result.
        assert_eq!(s.urls[..], full.urls[..s.urls.len()]);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let limits = Limits { max_urls: 3, max_bytes: 256 };
        let s = parse(&bytes, &limits);
        proptest::prop_assert!(s.urls.len() <= 3 && s.sitemaps.len() <= 3);
    }
}
