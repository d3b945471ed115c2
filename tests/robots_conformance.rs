//! robots.txt conformance: Google's test cases (all must pass), 8,000 verdicts of Google's
//! `robots_main` on 400 real files (>= 99.9% must agree), Google's tests of its internal
//! functions, protego's reading of crawl-delays and sitemaps (reported), and properties checked
//! against a straight port of Google's streaming matcher. `cargo test --test robots_conformance
//! -- --nocapture` prints the numbers that `docs/robots.md` records.
//!
//! Test data: `tests/data` (provenance and licenses in its README), or the directory named by
//! `DRAGNET_TESTDATA` (see its README, section robots/). Robots files are read raw.

use crate::common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use dragnet::robots::{self, Robots};
use proptest::prelude::*;
use serde_json::Value;

fn testdata_dir() -> PathBuf {
    common::testdata_dir("robots", "robots/google_cases.jsonl and robots/real/")
}

fn read_jsonl(rel: &str) -> Vec<Value> {
    let path = testdata_dir().join(rel);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

fn clip(s: &str) -> String {
    if s.len() <= 120 {
        return s.escape_debug().to_string();
    }
    let mut end = 120;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", s[..end].escape_debug(), s.len())
}

// ---------------------------------------------------------------------------------------------
// 1. Google's robots_test.cc: 145 allow/disallow checks, all must pass.

#[test]
fn google_cases_all_pass() {
    let cases = read_jsonl("robots/google_cases.jsonl");
    assert_eq!(cases.len(), 145, "google_cases.jsonl should hold 145 cases");
    let mut failures = Vec::new();
    for c in &cases {
        let robots = Robots::parse(s(&c["robots"]).as_bytes());
        let (agent, url) = (s(&c["agent"]), s(&c["url"]));
        let want = c["allowed"].as_bool().expect("allowed");
        let got = robots.allowed(agent, url);
        let got_sorted = robots.for_agent(agent).allowed(url);
        if got != want || got_sorted != want {
            failures.push(format!(
                "{} (robots_test.cc:{}): agent {agent:?} url {} expected {want}, got {got} \
                 (for_agent: {got_sorted})\n    robots: {}",
                c["test"],
                c["line"],
                clip(url),
                clip(s(&c["robots"]))
            ));
        }
    }
    println!(
        "google_cases: {}/{} agree",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// 2. Google's tests of its internal functions that have a counterpart here.

#[test]
fn google_internal_cases() {
    use base64_free::decode;
    let cases = read_jsonl("robots/google_internal_cases.jsonl");
    let (mut checked, mut failures) = (0, Vec::new());
    for c in &cases {
        let input: Vec<u8> = match (&c["input"], &c["input_base64"]) {
            (Value::String(s), _) => s.as_bytes().to_vec(),
            (Value::Null, Value::String(b)) => decode(b),
            (Value::Null, _) => Vec::new(), // a null string_view: empty
            (v, _) => panic!("unexpected input {v}"),
        };
        let text = String::from_utf8_lossy(&input);
        let got: Value = match s(&c["function"]) {
            "RobotsMatcher::IsValidUserAgentToObey" => robots::is_valid_agent_token(&text).into(),
            "googlebot::GetPathParamsQuery" => robots::path_params_query(&text).into(),
            "googlebot::MaybeEscapePattern" => robots::escape_pattern(&input).into(),
            "googlebot::ParseRobotsTxt+RobotsStatsReporter" => {
                let r = Robots::parse(&input);
                let st = r.stats();
                match s(&c["metric"]) {
                    "valid_directives" => (st.user_agents + st.rules + st.sitemaps).into(),
                    "unknown_directives" => st.unknown.into(),
                    "last_line_seen" => st.lines.into(),
                    "sitemap" => r.sitemaps().first().cloned().into(),
                    m => panic!("unknown metric {m}"),
                }
            }
            f => panic!("unknown function {f}"),
        };
        checked += 1;
        if got != c["expected"] {
            failures.push(format!(
                "{} (robots_test.cc:{}) {} {:?}: expected {}, got {got}",
                c["test"], c["line"], c["function"], text, c["expected"]
            ));
        }
    }
    println!(
        "google_internal_cases: {}/{checked} agree",
        checked - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Standard base64 without a dependency (three inputs use it).
mod base64_free {
    pub fn decode(s: &str) -> Vec<u8> {
        let val = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64 {c}"),
        };
        let digits: Vec<u8> = s.bytes().filter(|&c| c != b'=').map(val).collect();
        let mut out = Vec::new();
        for chunk in digits.chunks(4) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
            out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Real files: 8,000 verdicts of Google's robots_main, >= 99.9% must agree.

fn real_robots(cache: &mut HashMap<String, Robots>, file: &str) -> Robots {
    cache
        .entry(file.to_owned())
        .or_insert_with(|| {
            let path = testdata_dir().join("robots/real").join(file);
            let body =
                std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            Robots::parse(&body)
        })
        .clone()
}

#[test]
fn real_files_agree_with_google() {
    let cases = read_jsonl("robots/real_cases.jsonl");
    assert_eq!(cases.len(), 8000);
    let mut cache = HashMap::new();
    let mut per_agent: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut disagreements = Vec::new();
    let t = Instant::now();
    for c in &cases {
        let (file, agent, url) = (s(&c["file"]), s(&c["agent"]), s(&c["url"]));
        let want = c["allowed"].as_bool().expect("allowed");
        let r = real_robots(&mut cache, file);
        let got = r.allowed(agent, url);
        assert_eq!(
            got,
            r.for_agent(agent).allowed(url),
            "for_agent disagrees with allowed: {file} {agent} {url}"
        );
        let e = per_agent.entry(agent).or_default();
        e.1 += 1;
        if got == want {
            e.0 += 1;
        } else {
            disagreements.push(format!(
                "{file}: {agent} {} google {want}, dragnet {got}",
                clip(url)
            ));
        }
    }
    let agree = cases.len() - disagreements.len();
    let mut agents: Vec<_> = per_agent.into_iter().collect();
    agents.sort();
    println!(
        "real_cases: {agree}/{} agree ({:.3}%) in {:?}; by agent: {}",
        cases.len(),
        100.0 * agree as f64 / cases.len() as f64,
        t.elapsed(),
        agents
            .iter()
            .map(|(a, (ok, n))| format!("{a} {ok}/{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for d in &disagreements {
        println!("  disagreement: {d}");
    }
    assert!(
        agree * 1000 >= cases.len() * 999,
        "{} disagreements (at most 8 allowed):\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Crawl-delay and sitemaps against protego's reading (another implementation, not a
//    reference): reported, with floors at today's numbers so a change is noticed.

fn secs(d: Option<Duration>) -> Value {
    d.map(|d| d.as_secs_f64()).into()
}

fn same_delay(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() < 1e-9,
        _ => a.is_null() && b.is_null(),
    }
}

#[test]
fn crawl_delay_and_sitemaps_against_protego() {
    let metas = read_jsonl("robots/real_meta.jsonl");
    let mut cache = HashMap::new();
    let (mut delay_ok, mut delay_n, mut maps_ok) = (0, 0, 0);
    let (mut delays_given, mut maps_given) = (0, 0);
    let mut delay_diffs = Vec::new();
    let mut map_diffs = Vec::new();
    for m in &metas {
        let file = s(&m["file"]);
        let r = real_robots(&mut cache, file);
        for agent in ["dragnet", "Googlebot", "*"] {
            delay_n += 1;
            let ours = secs(r.crawl_delay(agent));
            let theirs = &m["crawl_delay"][agent];
            if same_delay(&ours, theirs) {
                delay_ok += 1;
                delays_given += usize::from(!theirs.is_null());
            } else {
                delay_diffs.push(format!(
                    "{file} ({}): {agent}: protego {theirs}, dragnet {ours}; raw values {}",
                    m["decoded_as"], m["raw_crawl_delay_values"]
                ));
            }
        }
        let theirs: Vec<&str> = m["sitemaps"]
            .as_array()
            .expect("sitemaps")
            .iter()
            .map(s)
            .collect();
        if r.sitemaps() == theirs.as_slice() {
            maps_ok += 1;
            maps_given += usize::from(!theirs.is_empty());
        } else {
            map_diffs.push(format!(
                "{file} ({}): protego {theirs:?}\n      dragnet {:?}",
                m["decoded_as"],
                r.sitemaps()
            ));
        }
    }
    println!(
        "real_meta crawl-delay: {delay_ok}/{delay_n} (file, agent) pairs agree with protego \
         ({delays_given} of them with a delay)"
    );
    for d in &delay_diffs {
        println!("  crawl-delay differs: {d}");
    }
    println!(
        "real_meta sitemaps: {maps_ok}/{} files agree with protego ({maps_given} of them list \
         sitemaps)",
        metas.len()
    );
    for d in &map_diffs {
        println!("  sitemaps differ: {d}");
    }
    // Floors at today's numbers (docs/robots.md explains each difference).
    assert!(delay_ok >= 1200, "crawl-delay agreement fell to {delay_ok}");
    assert!(maps_ok >= 400, "sitemap agreement fell to {maps_ok}");
}

// ---------------------------------------------------------------------------------------------
// 5. Worst cases of the matcher.

#[test]
fn star_heavy_patterns_are_fast() {
    let path = format!("/{}", "a".repeat(16 * 1024));
    let long_star = format!("/*{}*b", "a*".repeat(2000));
    let body = format!(
        "User-agent: *\nDisallow: /*a*a*a*a*a*b\nDisallow: {long_star}\nDisallow: /*{}b$\nAllow: /z\n",
        "a".repeat(8000)
    );
    let r = Robots::parse(body.as_bytes());
    let rules = r.for_agent("dragnet");
    let t = Instant::now();
    for _ in 0..100 {
        assert!(r.allowed("dragnet", &path));
        assert!(rules.allowed(&path));
    }
    let took = t.elapsed();
    println!("200 checks of a 16 KiB path against star-heavy patterns: {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

// ---------------------------------------------------------------------------------------------
// 6. Properties, against a straight port of Google's RobotsMatcher (robots.cc).

/// Google's `RobotsMatchStrategy::Matches`: the set of path positions a pattern prefix can
/// reach, O(path × pattern).
fn google_matches(path: &[u8], pattern: &[u8]) -> bool {
    let n = path.len();
    let mut pos = vec![0usize];
    for (i, &c) in pattern.iter().enumerate() {
        if c == b'$' && i + 1 == pattern.len() {
            return pos.last() == Some(&n);
        }
        if c == b'*' {
            pos = (pos[0]..=n).collect();
        } else {
            pos.retain(|&p| p < n && path[p] == c);
            pos.iter_mut().for_each(|p| *p += 1);
            if pos.is_empty() {
                return false;
            }
        }
    }
    true
}

#[derive(Clone, Debug)]
enum Line {
    Agent(String),
    Allow(String),
    Disallow(String),
    Other(String),
}

impl Line {
    fn text(&self) -> String {
        match self {
            Line::Agent(v) => format!("User-agent: {v}"),
            Line::Allow(v) => format!("Allow: {v}"),
            Line::Disallow(v) => format!("disallow: {v}"),
            Line::Other(v) => v.clone(),
        }
    }
}

/// Google's streaming `RobotsMatcher` (HandleUserAgent/HandleAllow/HandleDisallow/disallow())
/// over lines that are already split, for one agent.
fn google_allowed(lines: &[Line], agent: &str, path: &str) -> bool {
    let (mut global, mut specific, mut ever_specific, mut separator) = (false, false, false, false);
    // Priorities: allow/disallow x specific/global; -1 = no match.
    let (mut a_s, mut d_s, mut a_g, mut d_g) = (-1i64, -1i64, -1i64, -1i64);
    for l in lines {
        match l {
            Line::Agent(v) => {
                if separator {
                    (global, specific, separator) = (false, false, false);
                }
                if v == "*" {
                    global = true;
                } else if v.eq_ignore_ascii_case(agent) {
                    (specific, ever_specific) = (true, true);
                }
            }
            Line::Allow(p) | Line::Disallow(p) => {
                if !(global || specific) {
                    continue;
                }
                separator = true;
                let allow = matches!(l, Line::Allow(_));
                let mut prio = if google_matches(path.as_bytes(), p.as_bytes()) {
                    p.len() as i64
                } else {
                    -1
                };
                if allow && prio < 0 {
                    if let Some(slash) = p.rfind('/') {
                        if p[slash..].starts_with("/index.htm") {
                            let dir = format!("{}$", &p[..=slash]);
                            if google_matches(path.as_bytes(), dir.as_bytes()) {
                                prio = dir.len() as i64;
                            }
                        }
                    }
                }
                let slot = match (allow, specific) {
                    (true, true) => &mut a_s,
                    (false, true) => &mut d_s,
                    (true, false) => &mut a_g,
                    (false, false) => &mut d_g,
                };
                *slot = (*slot).max(prio);
            }
            Line::Other(_) => {}
        }
    }
    let disallow = if a_s > 0 || d_s > 0 {
        d_s > a_s
    } else if ever_specific {
        false
    } else if a_g > 0 || d_g > 0 {
        d_g > a_g
    } else {
        false
    };
    !disallow
}

fn pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        "/[ab/*$]{0,6}",
        "[ab*]{0,3}",
        "/[ab]{0,2}/index.html?",
        Just(String::new()),
    ]
}

fn line() -> impl Strategy<Value = Line> {
    prop_oneof![
        3 => prop_oneof![Just("*"), Just("foo"), Just("FOO"), Just("bar"), Just("baz")]
            .prop_map(|a| Line::Agent(a.to_owned())),
        3 => pattern().prop_map(Line::Allow),
        3 => pattern().prop_map(Line::Disallow),
        1 => prop_oneof![
            Just("Sitemap: http://x/s.xml"),
            Just("Crawl-delay: 3"),
            Just("junk: 1"),
            Just("# comment"),
            Just(""),
        ]
        .prop_map(|o| Line::Other(o.to_owned())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Our pattern matcher decides exactly as Google's.
    #[test]
    fn pattern_matching_equals_google(p in "/[ab/*$]{0,8}", path in "/[ab/$*]{0,10}") {
        // As a URL: a bare path starting with `//` would be a scheme-relative URL.
        let url = format!("http://h{path}");
        let r = Robots::parse(format!("User-agent: *\nDisallow: {p}\n").as_bytes());
        prop_assert_eq!(r.allowed("x", &url), !google_matches(path.as_bytes(), p.as_bytes()));
    }

    /// Whole files: groups, merging, `*` fallback, longest match and ties as Google's streaming
    /// matcher, for agents that are named, named in another case, or not named at all.
    #[test]
    fn files_decide_as_google(
        lines in prop::collection::vec(line(), 0..14),
        agent in prop_oneof![Just("foo"), Just("bar"), Just("qux")],
        path in "/[ab/]{0,6}",
        ending in prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
    ) {
        let body: String = lines.iter().map(|l| l.text() + ending).collect();
        let r = Robots::parse(body.as_bytes());
        let want = google_allowed(&lines, agent, &path);
        let url = format!("http://h{path}");
        prop_assert_eq!(r.allowed(agent, &url), want, "body {:?}", body);
        prop_assert_eq!(r.for_agent(agent).allowed(&url), want);
    }

    /// A path no rule matches is allowed.
    #[test]
    fn unmatched_paths_are_allowed(
        rules in prop::collection::vec(("[AaDd]", "/x[a-z*/]{0,8}\\$?"), 0..10),
        path in "/y[a-z/]{0,10}",
    ) {
        let mut body = String::from("User-agent: *\n");
        for (kind, p) in &rules {
            let key = if kind.eq_ignore_ascii_case("a") { "Allow" } else { "Disallow" };
            body.push_str(&format!("{key}: {p}\n"));
        }
        let r = Robots::parse(body.as_bytes());
        prop_assert!(r.allowed("dragnet", &path));
    }

    /// Arbitrary bytes never panic, and neither do arbitrary agents and URLs against them.
    #[test]
    fn arbitrary_input_never_panics(
        body in prop::collection::vec(any::<u8>(), 0..400),
        agent in ".{0,12}",
        url in ".{0,40}",
    ) {
        let r = Robots::parse(&body);
        let a = r.allowed(&agent, &url);
        prop_assert_eq!(a, r.for_agent(&agent).allowed(&url));
        let _ = r.crawl_delay(&agent);
    }

    /// Robots-like text built from real directive words, with mixed line ends and junk.
    #[test]
    fn robots_like_input_never_panics(
        parts in prop::collection::vec(prop_oneof![
            Just("User-agent:"), Just("Disallow:"), Just("Allow"), Just("*"), Just("$"),
            Just("/"), Just("%"), Just("%e9"), Just("\r"), Just("\n"), Just(" "), Just("#"),
            Just("\u{feff}"), Just("crawl-delay: 1e309"), Just("Sitemap:"), Just("\0"),
            Just("é"),
        ], 0..60),
        url in "[/a-z%*$?#;:]{0,20}",
    ) {
        let body = parts.concat();
        let r = Robots::parse(body.as_bytes());
        prop_assert_eq!(r.allowed("dragnet", &url), r.for_agent("dragnet").allowed(&url));
    }
}
