//! URL conformance: canonicalization idempotence over the WHATWG corpus, SURT compatibility with
//! the Python `surt` library's own test cases, agreement with urlcanon's test files, and a
//! property test. `cargo test --test url_conformance -- --nocapture` prints the numbers that
//! `docs/keys.md` records.
//!
//! Test data: `tests/data` (provenance and licenses in its README), or the directory named by
//! `DRAGNET_TESTDATA`. urlcanon's JSON files store byte strings as Latin-1 code points
//! (each character U+0000..U+00FF is one byte), as urlcanon's own loader reads them; the SURT
//! tests decode them the same way.

use crate::common;

use std::path::PathBuf;

use dragnet::keys::surt::{self, HandyUrl};
use dragnet::keys::{CanonConfig, Canonicalizer};
use proptest::prelude::*;
use serde_json::Value;
use url::Url;

fn testdata_dir() -> PathBuf {
    common::testdata_dir("urls", "urls/urltestdata.json and urls/urlcanon/")
}

fn read_text(rel: &str) -> String {
    let path = testdata_dir().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn read_json(rel: &str) -> Value {
    let path = testdata_dir().join(rel);
    serde_json::from_str(&read_text(rel))
        .unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// A urlcanon byte string: one byte per character.
fn latin1(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or_else(|_| panic!("not a byte string: {s:?}")))
        .collect()
}

/// A urlcanon byte string as text for the url crate: its bytes as UTF-8 where they are UTF-8,
/// else the characters as given (the url crate takes only text; such inputs rarely agree).
fn text(s: &str) -> String {
    match s
        .chars()
        .map(|c| u8::try_from(u32::from(c)))
        .collect::<Result<Vec<u8>, _>>()
    {
        Ok(bytes) => String::from_utf8(bytes).unwrap_or_else(|_| s.to_owned()),
        Err(_) => s.to_owned(),
    }
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).escape_debug().to_string()
}

fn reparse_canon(c: &Canonicalizer, u: &Url) -> Result<Url, String> {
    Url::parse(u.as_str())
        .map(|re| c.canonicalize_url(re))
        .map_err(|e| format!("re-parse of {:?} failed: {e}", u.as_str()))
}

/// `None` if canon(parse(serialize(canon(u)))) == canon(u), else what went wrong.
fn idempotence_failure(c: &Canonicalizer, u: Url) -> Option<String> {
    let once = c.canonicalize_url(u);
    match reparse_canon(c, &once) {
        Ok(twice) if twice.as_str() == once.as_str() => None,
        Ok(twice) => Some(format!("{:?} -> {:?}", once.as_str(), twice.as_str())),
        Err(e) => Some(e),
    }
}

fn all_rules_config() -> CanonConfig {
    CanonConfig {
        sort_query: true,
        drop_empty_query: false,
        ..CanonConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Idempotence over the WHATWG URL test corpus.

/// `keys::origin`, which borrows the origin from the URL's text where it can, is the url
/// crate's `Origin::ascii_serialization` for every URL of the corpus that parses.
#[test]
fn origin_is_the_url_crates_on_whatwg_urltestdata() {
    let data = read_json("urls/urltestdata.json");
    let entries = data.as_array().expect("urltestdata.json is an array");
    let mut compared = 0;
    for entry in entries.iter().filter(|e| e.is_object()) {
        let input = entry["input"].as_str().expect("input");
        let url = match entry["base"].as_str() {
            Some(base) => Url::parse(base).and_then(|b| b.join(input)),
            None => Url::parse(input),
        };
        let Ok(url) = url else { continue };
        compared += 1;
        assert_eq!(
            dragnet::keys::origin(&url),
            url.origin().ascii_serialization(),
            "{input:?} -> {url}"
        );
    }
    assert!(compared > 600, "only {compared} URLs of the corpus parsed");
}

#[test]
fn idempotent_on_whatwg_urltestdata() {
    let data = read_json("urls/urltestdata.json");
    let entries = data.as_array().expect("urltestdata.json is an array");
    let configs = [
        ("default", CanonConfig::default()),
        ("all rules", all_rules_config()),
    ];
    for (name, config) in configs {
        let c = Canonicalizer::new(&config);
        let (mut tests, mut parsed, mut idempotent, mut as_expected) = (0, 0, 0, 0);
        let mut failures = Vec::new();
        for entry in entries.iter().filter(|e| e.is_object()) {
            tests += 1;
            let input = entry["input"].as_str().expect("input");
            let url = match entry["base"].as_str() {
                Some(base) => Url::parse(base).and_then(|b| b.join(input)),
                None => Url::parse(input),
            };
            // How far the url crate itself agrees with the corpus (href, or failure).
            match (&url, entry["href"].as_str()) {
                (Ok(u), Some(href)) if u.as_str() == href => as_expected += 1,
                (Err(_), None) => as_expected += 1,
                _ => {}
            }
            let Ok(url) = url else { continue };
            parsed += 1;
            match idempotence_failure(&c, url) {
                None => idempotent += 1,
                Some(f) => failures.push(format!("{input:?}: {f}")),
            }
        }
        println!(
            "urltestdata.json ({name} config): {tests} tests, url crate as expected on \
             {as_expected}, {parsed} parse, {idempotent}/{parsed} idempotent"
        );
        assert!(
            failures.is_empty(),
            "not idempotent:\n{}",
            failures.join("\n")
        );
        assert_eq!(tests, 891, "urltestdata.json changed");
        assert!(
            as_expected >= 826,
            "the url crate regressed on the WHATWG tests"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 2. surt.json: the Python surt library's test cases, one test per section.

fn check_surt_section(section: &str, f: impl Fn(&[u8]) -> Vec<u8>) {
    let data = read_json("urls/urlcanon/surt.json");
    let cases = data[section]
        .as_object()
        .unwrap_or_else(|| panic!("no section {section}"));
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for (input, expected) in cases {
        let expected = latin1(expected.as_str().expect("string"));
        let got = f(&latin1(input));
        if got != expected {
            failures.push(format!(
                "{:?}: expected {:?}, got {:?}",
                show(&latin1(input)),
                show(&expected),
                show(&got)
            ));
        }
    }
    println!(
        "surt.json {section}: {}/{}",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "surt.json {section}:\n{}",
        failures.join("\n")
    );
}

fn via_handyurl(canon: fn(&mut HandyUrl)) -> impl Fn(&[u8]) -> Vec<u8> {
    move |input| {
        let mut h = HandyUrl::parse(input);
        canon(&mut h);
        h.to_url_bytes()
    }
}

#[test]
fn surt_default_ia_canonicalizer() {
    check_surt_section(
        "Canonicalizer.DefaultIA",
        via_handyurl(surt::default_ia_canonicalize),
    );
}

#[test]
fn surt_google_canonicalizer() {
    check_surt_section("google", via_handyurl(surt::google_canonicalize));
}

#[test]
fn surt_google_supplemental() {
    check_surt_section(
        "googleSupplementalFromSurt",
        via_handyurl(surt::google_canonicalize),
    );
}

#[test]
fn surt_unescape_repeatedly() {
    check_surt_section("unescapeRepeatedly", surt::unescape_repeatedly);
}

#[test]
fn surt_ia_canonicalizer() {
    check_surt_section("Canonicalizer.IA", via_handyurl(surt::ia_canonicalize));
}

#[test]
fn surt_alpha_reorder_query() {
    check_surt_section("alphaRorderQuery", surt::alpha_reorder_query);
}

#[test]
fn surt_massage_host() {
    check_surt_section("massageHost", |h| surt::massage_host(h).to_vec());
}

#[test]
fn surt_strip_path_session_id() {
    check_surt_section("stripPathSessionId", surt::strip_path_session_id);
}

#[test]
fn surt_default_ia_surt() {
    check_surt_section("defaultIASurt", surt::surt_bytes);
    // The &str entry point agrees wherever the input is text.
    check_surt_section("defaultIASurt", |b| match std::str::from_utf8(b) {
        Ok(s) => surt::surt(s).into_bytes(),
        Err(_) => surt::surt_bytes(b),
    });
}

// ---------------------------------------------------------------------------------------------
// 3. Agreement with urlcanon's other test files. These test urlcanon's own canonicalizers,
//    which are not ours; the table shows how close the nearest dragnet function comes, and the
//    floors below (measured) make any regression fail. docs/keys.md explains the differences.

#[derive(Default)]
struct Row {
    cases: usize,
    agree: usize,
    /// Cases no dragnet function corresponds to.
    not_compared: usize,
    disagreements: Vec<String>,
}

impl Row {
    fn record(&mut self, input: &str, expected: &str, got: &str) {
        self.cases += 1;
        if expected == got {
            self.agree += 1;
        } else {
            self.disagreements.push(format!(
                "{:?}: urlcanon {:?}, dragnet {:?}",
                input.escape_debug().to_string(),
                expected.escape_debug().to_string(),
                got.escape_debug().to_string()
            ));
        }
    }

    fn skip(&mut self, n: usize) {
        self.cases += n;
        self.not_compared += n;
    }
}

fn opt_str(v: &Value) -> String {
    v.as_str()
        .map_or_else(|| "<none>".to_owned(), str::to_owned)
}

fn aggressive(c: &mut Row) {
    // urlcanon's "aggressive" canonicalizer vs surt's DefaultIA canonicalization.
    for (input, expected) in read_json("urls/urlcanon/aggressive.json")
        .as_object()
        .unwrap()
    {
        let mut h = HandyUrl::parse(&latin1(input));
        surt::default_ia_canonicalize(&mut h);
        c.record(input, expected.as_str().unwrap(), &show(&h.to_url_bytes()));
    }
}

fn funky_ipv4(c: &mut Row) {
    // urlcanon's IPv4 reading of a host vs the url crate's (WHATWG) host parser.
    for (input, expected) in read_json("urls/urlcanon/funky_ipv4.json")
        .as_object()
        .unwrap()
    {
        let got = match Url::parse(&format!("http://{input}/"))
            .ok()
            .and_then(|u| u.host().map(|h| h.to_owned()))
        {
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            _ => "<none>".to_owned(),
        };
        c.record(input, &opt_str(expected), &got);
    }
}

fn idempotence(c: &mut Row) {
    // urlcanon checks its parser round-trips these; we check canonicalization is idempotent on
    // those the url crate parses.
    let canon = Canonicalizer::default();
    for input in read_json("urls/urlcanon/idempotence.json")
        .as_array()
        .unwrap()
    {
        let input = input.as_str().unwrap();
        match Url::parse(input) {
            Ok(u) => {
                let got = idempotence_failure(&canon, u).unwrap_or_else(|| "idempotent".into());
                c.record(input, "idempotent", &got);
            }
            Err(_) => c.skip(1),
        }
    }
}

fn parsing(c: &mut Row) {
    // urlcanon's raw split vs the url crate's (normalized) components.
    for (input, fields) in read_json("urls/urlcanon/parsing.json").as_object().unwrap() {
        let f = |k: &str| fields[k].as_str().unwrap_or_default().to_owned();
        let expected = [
            f("scheme"),
            f("username"),
            f("password"),
            f("host"),
            f("port"),
            f("path"),
            f("query"),
            f("fragment"),
        ]
        .map(|f| text(&f))
        .join(" | ");
        let got = match Url::parse(&text(input)) {
            Ok(u) => [
                u.scheme().to_owned(),
                u.username().to_owned(),
                u.password().unwrap_or_default().to_owned(),
                u.host_str().unwrap_or_default().to_owned(),
                u.port().map(|p| p.to_string()).unwrap_or_default(),
                u.path().to_owned(),
                u.query().unwrap_or_default().to_owned(),
                u.fragment().unwrap_or_default().to_owned(),
            ]
            .join(" | "),
            Err(e) => format!("<{e}>"),
        };
        c.record(input, &expected, &got);
    }
}

fn path_dots(c: &mut Row) {
    // urlcanon's dot-segment resolution (from browsers) vs the path after our canonicalization.
    let canon = Canonicalizer::default();
    let data = read_json("urls/urlcanon/path_dots.json");
    for (kind, base) in [
        ("special", "http://example.com/"),
        ("nonspecial", "foo://example.com/"),
    ] {
        for (path, expected) in data[kind].as_object().unwrap() {
            let mut url = Url::parse(base).unwrap();
            url.set_path(path);
            let got = canon.canonicalize_url(url).path().to_owned();
            c.record(&format!("{kind} {path}"), expected.as_str().unwrap(), &got);
        }
    }
}

fn semantic_precise(c: &mut Row) {
    // urlcanon's semantic-precise canonicalizer vs ours (no base; no scheme guessing).
    let canon = Canonicalizer::default();
    for (input, expected) in read_json("urls/urlcanon/semantic_precise.json")
        .as_object()
        .unwrap()
    {
        let got = match Url::parse(input) {
            Ok(u) => canon.canonicalize_url(u).as_str().to_owned(),
            Err(e) => format!("<{e}>"),
        };
        c.record(input, &text(expected.as_str().unwrap()), &got);
    }
}

fn supplemental_whatwg(c: &mut Row) {
    // urlcanon's WHATWG canonicalizer vs the url crate's href.
    for (input, expected) in read_json("urls/urlcanon/supplemental_whatwg.json")
        .as_object()
        .unwrap()
    {
        let got = match Url::parse(input) {
            Ok(u) => u.as_str().to_owned(),
            Err(e) => format!("<{e}>"),
        };
        c.record(input, expected.as_str().unwrap(), &got);
    }
}

fn urlcanon_urltestdata(c: &mut Row) {
    // An older copy of the WHATWG tests: the url crate's href, or its failure.
    for entry in read_json("urls/urlcanon/urltestdata.json")
        .as_array()
        .unwrap()
    {
        if !entry.is_object() {
            continue;
        }
        let input = entry["input"].as_str().unwrap();
        let parsed = match entry["base"].as_str() {
            Some(base) => Url::parse(base).and_then(|b| b.join(input)),
            None => Url::parse(input),
        };
        let expected = entry["href"].as_str().unwrap_or("<failure>");
        let got = parsed.map_or_else(|_| "<failure>".to_owned(), |u| u.as_str().to_owned());
        c.record(input, expected, &got);
    }
}

fn ssurt(c: &mut Row) {
    // Only host reversal is shared with our SURT; the SSURT format and urlcanon's option-laden
    // SURT variants have no dragnet counterpart.
    let data = read_json("urls/urlcanon/ssurt.json");
    for (section, cases) in data.as_object().unwrap() {
        let cases = cases.as_object().unwrap();
        if section == "reverseHost" {
            for (host, expected) in cases {
                let mut got = surt::host_to_surt(&latin1(host));
                got.push(b',');
                c.record(host, expected.as_str().unwrap(), &show(&got));
            }
        } else {
            c.skip(cases.len());
        }
    }
}

fn notes(c: &mut Row) {
    // URLs urlcanon accepts but WHATWG rejects: does the url crate reject them too?
    let notes = read_text("urls/urlcanon/notes.txt");
    for line in notes.lines().filter(|l| l.starts_with("http")) {
        // The file writes control bytes as Python escapes (`\\x01`).
        let bytes = unescape_python_hex(line);
        let as_text = String::from_utf8(bytes.clone())
            .unwrap_or_else(|_| bytes.iter().map(|&b| char::from(b)).collect());
        let got = if Url::parse(&as_text).is_ok() {
            "accepted"
        } else {
            "rejected"
        };
        c.record(line, "rejected", got);
        // Our SURT takes anything.
        assert!(!surt::surt_bytes(&bytes).is_empty());
    }
}

fn unescape_python_hex(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            if let Some(v) = s
                .get(i + 2..i + 4)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// The file, the function comparing it, and the measured floor of agreeing cases.
type Check = (&'static str, fn(&mut Row), usize);

const AGREEMENT: &[Check] = &[
    ("aggressive.json", aggressive, 33),
    ("funky_ipv4.json", funky_ipv4, 47),
    ("idempotence.json", idempotence, 31),
    ("parsing.json", parsing, 78),
    ("path_dots.json", path_dots, 722),
    ("semantic_precise.json", semantic_precise, 166),
    ("ssurt.json", ssurt, 4),
    ("supplemental_whatwg.json", supplemental_whatwg, 91),
    ("urltestdata.json", urlcanon_urltestdata, 428),
    ("notes.txt", notes, 14),
];

#[test]
fn urlcanon_agreement_report() {
    let verbose = std::env::var_os("DRAGNET_SHOW_DISAGREEMENTS").is_some();
    println!(
        "{:<26} {:>6} {:>6} {:>9} {:>12}",
        "urlcanon file", "cases", "agree", "disagree", "not compared"
    );
    let mut regressions = Vec::new();
    for &(file, check, floor) in AGREEMENT {
        let mut row = Row::default();
        check(&mut row);
        println!(
            "{:<26} {:>6} {:>6} {:>9} {:>12}",
            file,
            row.cases,
            row.agree,
            row.disagreements.len(),
            row.not_compared
        );
        if verbose {
            for d in &row.disagreements {
                println!("    {d}");
            }
        }
        if row.agree < floor {
            regressions.push(format!(
                "{file}: {} agree, below the measured {floor}; disagreements:\n  {}",
                row.agree,
                row.disagreements.join("\n  ")
            ));
        }
    }
    assert!(regressions.is_empty(), "{}", regressions.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// 4. Property: canonicalization is idempotent on generated http URLs.

/// A piece of a path segment or query: plain text, dot-segment spellings, valid, invalid and
/// lone escapes, session-id parameters, and characters the parser percent-encodes.
fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9._~-]{0,4}",
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just("%2e".to_owned()),
        Just("%2E%2e".to_owned()),
        "%[0-9a-fA-F]{2}",
        "%[0-9a-fA-F]?",
        Just("%%34".to_owned()),
        Just("%25".to_owned()),
        ";[jJ][sS]ESSIONID=[A-Z0-9]{0,4}",
        Just(";x=1".to_owned()),
        "[ é\\\\|<>\"`{}^'#?]",
    ]
}

fn segment() -> impl Strategy<Value = String> {
    prop::collection::vec(atom(), 0..4).prop_map(|a| a.concat())
}

fn query_arg() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        "[a-zA-Z]{1,3}",
        Just("utm_source".to_owned()),
        Just("UTM_Medium".to_owned()),
        Just("jsessionid".to_owned()),
        Just("ASPSESSIONIDQQ".to_owned()),
        "%[0-9a-fA-F]{2}",
    ];
    let value = prop::option::of(prop::collection::vec(atom(), 0..3).prop_map(|a| a.concat()));
    (name, value).prop_map(|(n, v)| match v {
        Some(v) => format!("{n}={v}"),
        None => n,
    })
}

fn http_url() -> impl Strategy<Value = String> {
    let scheme = prop_oneof![Just("http"), Just("https"), Just("HTTP"), Just("hTTpS")];
    let host = prop_oneof![
        (
            "[a-zA-Z0-9]{1,6}(\\.[a-zA-Z0-9-]{1,6}){0,2}",
            prop_oneof![Just(""), Just("."), Just("..")]
        )
            .prop_map(|(h, dots)| format!("{h}{dots}")),
        (0u32..=255, 0u32..=255).prop_map(|(a, b)| format!("{a}.0.{b}.1")),
        Just("B\u{fc}cher.CH".to_owned()),
        Just("[::1]".to_owned()),
        Just("0x7f.1".to_owned()),
    ];
    let port = prop_oneof![
        Just(""),
        Just(":80"),
        Just(":443"),
        Just(":8080"),
        Just(":")
    ];
    let path = prop::collection::vec(segment(), 0..6).prop_map(|s| {
        if s.is_empty() {
            String::new()
        } else {
            format!("/{}", s.join("/"))
        }
    });
    let query =
        prop::option::of(prop::collection::vec(query_arg(), 0..5).prop_map(|a| a.join("&")));
    let fragment = prop::option::of("[a-z%0-9]{0,4}");
    (scheme, host, port, path, query, fragment).prop_map(|(s, h, p, path, q, f)| {
        let mut url = format!("{s}://{h}{p}{path}");
        if let Some(q) = q {
            url.push('?');
            url.push_str(&q);
        }
        if let Some(f) = f {
            url.push('#');
            url.push_str(&f);
        }
        url
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn canonicalize_is_idempotent(
        input in http_url(),
        sort in any::<bool>(),
        keep_empty in any::<bool>(),
    ) {
        let config = CanonConfig {
            sort_query: sort,
            drop_empty_query: !keep_empty,
            ..CanonConfig::default()
        };
        let c = Canonicalizer::new(&config);
        if let Ok(key) = c.canonicalize(&input, None) {
            let again = c.canonicalize(&key.url, None).expect("a canonical URL is accepted");
            prop_assert_eq!(&again, &key, "input {:?}", input);
            let reparsed = Url::parse(&key.url).unwrap();
            let recanonicalized = c.canonicalize_url(reparsed);
            prop_assert_eq!(recanonicalized.as_str(), key.url.as_str());
        }
    }

    #[test]
    fn relative_references_canonicalize_idempotently(
        base in http_url(),
        rel in prop::collection::vec(segment(), 1..4).prop_map(|s| s.join("/")),
    ) {
        let c = Canonicalizer::default();
        let Ok(base) = Url::parse(&base) else { return Ok(()) };
        if let Ok(key) = c.canonicalize(&rel, Some(&base)) {
            let again = c.canonicalize(&key.url, None).expect("a canonical URL is accepted");
            prop_assert_eq!(again.url, key.url);
        }
    }

    #[test]
    fn surt_never_panics_and_is_ascii(input in prop_oneof![http_url(), "\\PC{0,40}"]) {
        let key = surt::surt(&input);
        prop_assert!(key.is_ascii() || input.starts_with("filedesc"), "{:?} -> {:?}", input, key);
    }
}
