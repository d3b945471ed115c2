//! The ground truth: deterministic, internally consistent, bounded on the trap, fast, and in
//! agreement with the bytes websim serves (checked by an extraction written here from scratch,
//! sharing nothing with the model's own link lists).

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::time::Instant;

use websim::model::{Hostile, PageKind, PageRef, Web, WebConfig};
use websim::robots::RobotsServe;
use websim::site::Site;
use websim::truth::{
    expected_links, sitemap_locs, truth, Fetched, Outcome, PageLinks, Policy, Reason, Scope, Truth,
};

fn web(seed: u64, hosts: u32, pages: u32) -> Web {
    Web::new(WebConfig {
        seed,
        hosts,
        pages,
        hostile_every: 5,
        ..WebConfig::default()
    })
}

fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn truth_is_deterministic() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let w1 = web(7, 60, 40);
    let w2 = web(7, 60, 40);
    truth(&w1, &Policy::new(&w1))
        .write_files(&w1, a.path())
        .unwrap();
    truth(&w2, &Policy::new(&w2))
        .write_files(&w2, b.path())
        .unwrap();
    let (fa, fb) = (files(a.path()), files(b.path()));
    let names: Vec<&str> = fa.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "delays.tsv",
            "fetch.tsv",
            "fetch.txt",
            "links.jsonl",
            "never.tsv",
            "never.txt",
            "summary.json"
        ]
    );
    assert!(fa == fb, "same seed and policy, different files");
    let w3 = web(8, 60, 40);
    assert_ne!(
        truth(&w3, &Policy::new(&w3)).fetched,
        truth(&w1, &Policy::new(&w1)).fetched
    );
    // fetch.txt is sorted and agrees with the struct.
    let fetch = String::from_utf8(fa[2].1.clone()).unwrap();
    let lines: Vec<&str> = fetch.lines().collect();
    assert!(lines.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(lines.len(), truth(&w1, &Policy::new(&w1)).fetched.len());
}

/// Host index of a websim URL.
pub(crate) fn host_index(web: &Web, url: &str) -> Option<u32> {
    let rest = url.strip_prefix("http://")?;
    let auth = rest.split('/').next()?;
    web.host_index(auth.split(':').next()?)
}

pub(crate) fn target(url: &str) -> &str {
    let rest = url.strip_prefix("http://").unwrap();
    &rest[rest.find('/').unwrap()..]
}

pub(crate) fn check_invariants(web: &Web, t: &Truth) {
    let p = &t.policy;
    let fetch = t.fetch_set();
    let never = t.never_set();
    assert_eq!(fetch.len(), t.fetched.len(), "fetched URLs are distinct");
    assert!(fetch.is_disjoint(&never), "a URL both fetched and never");
    let by_url: HashMap<&str, _> = t.fetched.iter().map(|f| (f.url.as_str(), f)).collect();
    let pages: HashMap<&str, _> = t.pages.iter().map(|p| (p.url.as_str(), p)).collect();
    let seeds = seeds_of(web, p);
    let mut robots_hosts = BTreeSet::new();
    for f in &t.fetched {
        assert!(f.depth <= p.max_depth, "{} deeper than max_depth", f.url);
        let h = host_index(web, &f.url).unwrap_or_else(|| panic!("{} not a web host", f.url));
        let name = &web.hosts[h as usize].name;
        if let Scope::Hosts(s) = &p.scope {
            assert!(s.contains(name), "{} out of scope", f.url);
        }
        if target(&f.url) == "/robots.txt" {
            assert_eq!(f.outcome, Outcome::Robots);
            robots_hosts.insert(h);
            continue;
        }
        check_reached(web, p, f, h, &by_url, &pages, &seeds);
    }
    check_hosts_and_never(web, t, &by_url, &robots_hosts);
}

/// The seed URLs of policy `p`.
fn seeds_of(web: &Web, p: &Policy) -> BTreeSet<String> {
    match &p.seeds {
        Some(s) => s.iter().cloned().collect(),
        None => (0..web.config.hosts)
            .filter(|&h| match &p.scope {
                Scope::Web => true,
                Scope::Hosts(s) => s.contains(&web.hosts[h as usize].name),
            })
            .map(|h| web.url(PageRef::Page { host: h, page: 0 }))
            .collect(),
    }
}

/// A fetch of host `h` but robots.txt: allowed, after its robots.txt, and a seed or reached from
/// the fetch it names (one level up, or a requisite at its depth) that really points at it.
fn check_reached(
    web: &Web,
    p: &Policy,
    f: &Fetched,
    h: u32,
    by_url: &HashMap<&str, &Fetched>,
    pages: &HashMap<&str, &PageLinks>,
    seeds: &BTreeSet<String>,
) {
    let name = &web.hosts[h as usize].name;
    let tgt = target(&f.url);
    assert!(!web.disallowed(name, &p.agent, tgt), "{} disallowed", f.url);
    let robots = format!("{}/robots.txt", web.origin(h));
    let r = by_url.get(robots.as_str()).expect("robots.txt fetched");
    assert!(r.depth <= f.depth, "robots.txt of {} fetched later", f.url);
    if seeds.contains(&f.url) && f.depth == 0 {
        assert!(f.via.is_none());
        return;
    }
    // Reachable: its parent was fetched one level up and really points at it.
    let via = f
        .via
        .as_deref()
        .unwrap_or_else(|| panic!("{} has no via", f.url));
    let parent = by_url[via];
    if f.requisite {
        // A requisite: at the depth of the page or stylesheet that needs it.
        assert!(p.requisites, "{}: a requisite without archive mode", f.url);
        assert_eq!(parent.depth, f.depth, "{} via {via}", f.url);
        assert!(
            matches!(parent.outcome, Outcome::Html | Outcome::Stylesheet),
            "{via} ({:?}) has no requisites",
            parent.outcome
        );
        assert!(
            pages[via]
                .links
                .iter()
                .any(|l| l.url == f.url && l.followed && l.requisite),
            "{via} does not need {}",
            f.url
        );
        return;
    }
    assert_eq!(parent.depth + 1, f.depth, "{} via {via}", f.url);
    let ph = host_index(web, via).unwrap();
    let links_to = match parent.outcome {
        Outcome::Html => pages[via]
            .links
            .iter()
            .any(|l| l.url == f.url && l.followed && !l.requisite),
        Outcome::Redirect => parent.location.as_deref() == Some(f.url.as_str()),
        Outcome::Robots => {
            let body = web.render_robots(ph).unwrap().body;
            String::from_utf8_lossy(&body).contains(&format!("Sitemap: {}\n", f.url))
        }
        Outcome::Sitemap => {
            sitemap_text(web, ph, target(via)).contains(&format!("<loc>{}</loc>", f.url))
        }
        o => panic!("{via} ({o:?}) cannot lead to {}", f.url),
    };
    assert!(links_to, "{via} does not link to {}", f.url);
    let hostile = web.hosts[h as usize].hostile;
    if hostile.is_some_and(|k| k != Hostile::Trap) && f.outcome != Outcome::Sitemap {
        assert_eq!((f.outcome, f.status), (Outcome::Hostile, 0), "{}", f.url);
        assert!(!pages.contains_key(f.url.as_str()));
    }
}

/// One robots.txt fetch per visited host and a delay for each, the fetches with links, the
/// reasons of the never-fetched URLs, and the budget.
fn check_hosts_and_never(
    web: &Web,
    t: &Truth,
    by_url: &HashMap<&str, &Fetched>,
    robots_hosts: &BTreeSet<u32>,
) {
    let p = &t.policy;
    // One robots.txt fetch per visited host, and a delay for each.
    let delay_hosts: BTreeSet<u32> = t
        .delays
        .iter()
        .map(|(n, _)| web.host_index(n).unwrap())
        .collect();
    assert_eq!(*robots_hosts, delay_hosts);
    for (n, d) in &t.delays {
        assert_eq!(*d, web.delay(web.host_index(n).unwrap(), &p.agent));
    }
    for pl in &t.pages {
        let o = by_url[pl.url.as_str()].outcome;
        assert!(
            o == Outcome::Html || (p.requisites && o == Outcome::Stylesheet),
            "{} {o:?}",
            pl.url
        );
    }
    for (u, why) in &t.never {
        let h = host_index(web, u);
        match why {
            Reason::Scope => assert!(
                h.is_none()
                    || matches!(&p.scope, Scope::Hosts(s) if !s.contains(&web.hosts[h.unwrap() as usize].name)),
                "{u}"
            ),
            Reason::Robots => {
                let h = h.unwrap();
                assert!(
                    web.disallowed(&web.hosts[h as usize].name, &p.agent, target(u)),
                    "{u}"
                )
            }
            _ => assert!(h.is_some(), "{u}"),
        }
    }
    // Budget.
    let mut per_host: HashMap<u32, u32> = HashMap::new();
    for f in &t.fetched {
        if target(&f.url) != "/robots.txt" {
            *per_host
                .entry(host_index(web, &f.url).unwrap())
                .or_default() += 1;
        }
    }
    assert!(per_host.values().all(|&n| n <= p.max_pages_per_host));
}

fn sitemap_text(web: &Web, h: u32, path: &str) -> String {
    let body = web.sitemap(h, path).unwrap().body;
    if path.ends_with(".gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&body[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(body).unwrap()
    }
}

/// The first trap host whose robots.txt lets the crawl in.
fn trap_host(web: &Web) -> u32 {
    web.hosts
        .iter()
        .find(|h| h.hostile == Some(Hostile::Trap) && h.robots.allowed("dragnet", "/"))
        .unwrap()
        .index
}

#[test]
fn truth_invariants_default_policy() {
    let w = web(3, 80, 40);
    let t = truth(&w, &Policy::new(&w));
    check_invariants(&w, &t);
    // Every kind of outcome and reason occurs on a web this size.
    let outcomes: BTreeSet<Outcome> = t.fetched.iter().map(|f| f.outcome).collect();
    assert_eq!(outcomes.len(), 7, "{outcomes:?}");
    let reasons: BTreeSet<Reason> = t.never.iter().map(|(_, r)| *r).collect();
    for r in [
        Reason::Scope,
        Reason::Robots,
        Reason::Budget,
        Reason::Nofollow,
    ] {
        assert!(reasons.contains(&r), "{r:?} missing from {reasons:?}");
    }
    // Outside hosts are never fetched but are come across.
    assert!(t
        .never
        .iter()
        .any(|(u, r)| u.contains(".outside.test") && *r == Reason::Scope));
    // Only trap hosts hit the budget, and each that does is bounded by it.
    let budget = Policy::new(&w).max_pages_per_host;
    assert!(!t.hosts_at_budget.is_empty());
    for name in &t.hosts_at_budget {
        let h = w.host_index(name).unwrap();
        assert_eq!(w.hosts[h as usize].hostile, Some(Hostile::Trap), "{name}");
        let on_host = t
            .fetched
            .iter()
            .filter(|f| host_index(&w, &f.url) == Some(h))
            .count();
        assert_eq!(on_host as u32, budget + 1, "{name}: budget + robots.txt");
    }
    // Hosts whose robots.txt fails get only that one request.
    for (i, h) in w.hosts.iter().enumerate() {
        if matches!(
            h.robots_serve,
            RobotsServe::ServerError | RobotsServe::Timeout
        ) {
            let n = t
                .fetched
                .iter()
                .filter(|f| host_index(&w, &f.url) == Some(i as u32))
                .count();
            assert_eq!(n, 1, "{}", h.name);
        }
    }
}

#[test]
fn truth_invariants_other_policies() {
    let w = web(5, 50, 30);
    let scope: BTreeSet<String> = w.hosts.iter().take(25).map(|h| h.name.clone()).collect();
    let trap = trap_host(&w);
    let policies = [
        Policy {
            max_depth: 2,
            ..Policy::new(&w)
        },
        Policy {
            follow_nofollow: true,
            agent: "otherbot/2.0".into(),
            ..Policy::new(&w)
        },
        Policy {
            scope: Scope::Hosts(scope),
            seeds: Some(vec![
                w.url(PageRef::Page { host: 0, page: 0 }),
                w.url(PageRef::Page {
                    host: trap,
                    page: 0,
                }),
                "http://x001.outside.test/ext/page-1.html".into(),
                format!("{}/robots.txt", w.origin(1)),
            ]),
            max_pages_per_host: 5,
            ..Policy::new(&w)
        },
    ];
    for p in &policies {
        let t = truth(&w, p);
        check_invariants(&w, &t);
        assert!(t.fetched.len() > 20, "{p:?}");
    }
    // Depth bound on the trap: at depth <= 2 at most 1 + 2 + 2*4... pages, far below the budget.
    let t = truth(&w, &policies[0]);
    assert!(t.never.iter().any(|(_, r)| *r == Reason::Depth));
    assert!(t.hosts_at_budget.is_empty());
}

#[test]
fn more_links_or_depth_fetch_more() {
    let w = web(11, 60, 30);
    let base = truth(
        &w,
        &Policy {
            max_depth: 3,
            ..Policy::new(&w)
        },
    );
    let deeper = truth(
        &w,
        &Policy {
            max_depth: 4,
            ..Policy::new(&w)
        },
    );
    let follow = truth(
        &w,
        &Policy {
            max_depth: 3,
            follow_nofollow: true,
            ..Policy::new(&w)
        },
    );
    let budget_hosts: BTreeSet<&String> = [&base, &deeper, &follow]
        .iter()
        .flat_map(|t| &t.hosts_at_budget)
        .collect();
    let off_budget = |t: &Truth| -> BTreeSet<String> {
        t.fetched
            .iter()
            .filter(|f| {
                let h = host_index(&w, &f.url).unwrap();
                !budget_hosts.contains(&w.hosts[h as usize].name)
            })
            .map(|f| f.url.clone())
            .collect()
    };
    let b = off_budget(&base);
    assert!(b.is_subset(&off_budget(&deeper)));
    assert!(b.is_subset(&off_budget(&follow)));
    assert!(
        b.len() < off_budget(&follow).len(),
        "nofollow links must matter"
    );
}

#[test]
fn truth_is_fast() {
    let w = Web::new(WebConfig {
        hosts: 300,
        pages: 30,
        ..WebConfig::default()
    });
    let start = Instant::now();
    let t = truth(&w, &Policy::new(&w));
    let took = start.elapsed();
    eprintln!(
        "truth of 300 x 30: {} fetched, {} never, {} pages in {took:?}",
        t.fetched.len(),
        t.never.len(),
        t.pages.len()
    );
    // Well under a second in release; this bound leaves room for a debug build on a busy box.
    assert!(took.as_secs_f64() < 20.0, "{took:?}");
}

// ---- An independent link extractor (tags, attributes, RFC 3986 resolution). ----

pub(crate) fn attrs(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = tag.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'>' {
            i += 1;
        }
        let name = tag[start..i].to_ascii_lowercase();
        let mut value = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let end = tag[i + 1..].find(q as char).map_or(b.len(), |e| i + 1 + e);
                value = tag[i + 1..end].to_string();
                i = end + 1;
            } else {
                let s = i;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = tag[s..i].to_string();
            }
        }
        if !name.is_empty() {
            out.push((name, value.replace("&amp;", "&")));
        }
        if start == i {
            i += 1;
        }
    }
    out
}

fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segs: Vec<&str> = path.split('/').skip(1).collect();
    for (i, s) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        match *s {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

pub(crate) fn resolve(base: &str, r: &str) -> String {
    let r = r.split('#').next().unwrap().trim();
    let (scheme, rest) = base.split_once("://").unwrap();
    let slash = rest.find('/').unwrap_or(rest.len());
    let (authority, bpath) = rest.split_at(slash);
    let split_q = |s: &str| -> (String, String) {
        match s.split_once('?') {
            Some((p, q)) => (p.to_string(), format!("?{q}")),
            None => (s.to_string(), String::new()),
        }
    };
    if r.starts_with("http://") || r.starts_with("https://") {
        let (s2, rest2) = r.split_once("://").unwrap();
        let slash = rest2.find('/').unwrap_or(rest2.len());
        let (a, p) = rest2.split_at(slash);
        let (p, q) = split_q(if p.is_empty() { "/" } else { p });
        return format!("{s2}://{a}{}{q}", remove_dots(&p));
    }
    if let Some(rest2) = r.strip_prefix("//") {
        return resolve(base, &format!("{scheme}://{rest2}"));
    }
    let (p, q) = split_q(r);
    let path = if p.starts_with('/') {
        p
    } else {
        let dir = &bpath[..bpath.split('?').next().unwrap().rfind('/').unwrap() + 1];
        format!("{dir}{p}")
    };
    format!("{scheme}://{authority}{}{q}", remove_dots(&path))
}

/// `(url, tag, nofollow)` of every link, and whether meta robots says nofollow.
pub(crate) fn extract(html: &str, doc: &str) -> (Vec<(String, String, bool)>, bool) {
    let mut base = doc.to_string();
    let mut based = false;
    let mut meta_nofollow = false;
    let mut links = Vec::new();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        let name_end = tag
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(tag.len());
        let name = tag[..name_end].to_ascii_lowercase();
        let a: HashMap<String, String> = attrs(&tag[name_end..]).into_iter().collect();
        let rel_nofollow = a.get("rel").is_some_and(|r| {
            r.split_ascii_whitespace()
                .any(|t| t.eq_ignore_ascii_case("nofollow"))
        });
        match name.as_str() {
            "base" if !based => {
                if let Some(h) = a.get("href") {
                    base = resolve(doc, h);
                    based = true;
                }
            }
            "a" | "area" | "link" => {
                if let Some(h) = a.get("href") {
                    links.push((resolve(&base, h), name.clone(), rel_nofollow));
                }
            }
            "iframe" => {
                if let Some(s) = a.get("src") {
                    links.push((resolve(&base, s), name.clone(), false));
                }
            }
            "meta" => {
                let equiv = a.get("http-equiv").map(|s| s.to_ascii_lowercase());
                let content = a.get("content").cloned().unwrap_or_default();
                if equiv.as_deref() == Some("refresh") {
                    let lower = content.to_ascii_lowercase();
                    if let Some(i) = lower.find("url=") {
                        links.push((resolve(&base, &content[i + 4..]), name.clone(), false));
                    }
                } else if a
                    .get("name")
                    .is_some_and(|n| n.eq_ignore_ascii_case("robots"))
                {
                    meta_nofollow = content
                        .split(',')
                        .any(|t| t.trim().eq_ignore_ascii_case("nofollow"));
                }
            }
            _ => {}
        }
        rest = &rest[end.min(rest.len())..];
    }
    (links, meta_nofollow)
}

#[test]
fn model_links_equal_links_in_rendered_html() {
    let w = web(13, 40, 200);
    let (mut pages, mut links, mut based, mut binaries) = (0, 0, 0, 0);
    for h in 0..w.config.hosts {
        let trap = w.hosts[h as usize].hostile == Some(Hostile::Trap);
        let mut refs: Vec<PageRef> = (0..w.config.pages)
            .step_by(3)
            .map(|page| PageRef::Page { host: h, page })
            .collect();
        if trap {
            refs.push(PageRef::Calendar { host: h, month: 10 });
            refs.push(PageRef::Session {
                host: h,
                item: 1,
                sid: 0xdead_beef,
            });
        }
        for at in refs {
            let spec = w.page(at);
            let rendered = w.render(at);
            let html = String::from_utf8_lossy(&rendered.body);
            let (found, meta_nofollow) = extract(&html, &w.url(at));
            let expected: Vec<(String, String, bool)> = expected_links(&w, &spec, false)
                .into_iter()
                .map(|m| (m.link.url, m.link.tag.to_string(), m.link.nofollow))
                .collect();
            match spec.kind {
                PageKind::Html => {
                    assert_eq!(found, expected, "{}", w.url(at));
                    assert_eq!(meta_nofollow, spec.meta_nofollow);
                    let header = rendered
                        .headers
                        .iter()
                        .any(|(n, v)| n == "X-Robots-Tag" && v.contains("nofollow"));
                    assert_eq!(header, spec.x_robots_nofollow);
                    pages += 1;
                    links += found.len();
                    based += usize::from(spec.base.is_some());
                }
                PageKind::BinaryMislabeled => {
                    assert!(found.is_empty() && expected.is_empty(), "{}", w.url(at));
                    binaries += 1;
                }
                _ => assert!(expected.is_empty()),
            }
        }
    }
    eprintln!("{pages} pages ({based} with <base>), {links} links, {binaries} binaries checked");
    assert!(pages > 1500 && based > 20 && binaries > 20);
}

#[test]
fn sitemap_locs_equal_rendered_sitemaps() {
    let w = web(17, 60, 50);
    let mut docs = 0;
    for h in 0..w.config.hosts {
        for p in w.sitemap_paths(h) {
            let text = sitemap_text(&w, h, p);
            let locs: Vec<String> = text
                .split("<loc>")
                .skip(1)
                .map(|s| s.split("</loc>").next().unwrap().replace("&amp;", "&"))
                .collect();
            assert_eq!(
                Some(locs),
                sitemap_locs(&w, h, p),
                "{} {p}",
                w.hosts[h as usize].name
            );
            docs += 1;
        }
    }
    assert!(docs > 10, "{docs}");
}

#[test]
fn tls_hosts_are_fetched_over_https_and_broken_certificates_over_nothing() {
    use websim::model::Tls;
    let web = Web::new(WebConfig {
        seed: 9,
        hosts: 24,
        pages: 10,
        hostile_every: 0,
        tls_every: 2,
        ..WebConfig::default()
    });
    let t = truth(&web, &Policy::new(&web));
    let by_url: HashMap<&str, _> = t.fetched.iter().map(|f| (f.url.as_str(), f)).collect();
    let never: HashMap<&str, Reason> = t.never.iter().map(|(u, r)| (u.as_str(), *r)).collect();
    for h in &web.hosts {
        let home = web.url(PageRef::Page {
            host: h.index,
            page: 0,
        });
        let robots = format!("{}/robots.txt", web.origin(h.index));
        match h.tls {
            None => assert!(home.starts_with("http://"), "{home}"),
            Some(kind) => {
                assert!(home.starts_with("https://"), "{home}");
                if kind.trusted() {
                    assert!(
                        by_url.contains_key(home.as_str()) || never.contains_key(home.as_str())
                    );
                } else {
                    // The handshake fails: robots.txt unreachable (status 0), nothing else.
                    assert_eq!(by_url[robots.as_str()].status, 0, "{robots}");
                    assert_eq!(never.get(home.as_str()), Some(&Reason::Robots), "{home}");
                    let prefix = web.origin(h.index);
                    assert!(
                        t.fetched
                            .iter()
                            .all(|f| !f.url.starts_with(&prefix) || f.url == robots),
                        "{prefix}"
                    );
                }
                if kind == Tls::Upgrade {
                    // Seeded as http://: its own robots.txt, then a 301 to the https:// home.
                    let seed = web.seed_url(h.index);
                    assert!(seed.starts_with("http://"), "{seed}");
                    let f = by_url[seed.as_str()];
                    assert_eq!(
                        (f.status, f.location.as_deref()),
                        (301, Some(home.as_str()))
                    );
                    let http_robots = format!("{}/robots.txt", web.http_origin(h.index));
                    assert!(by_url.contains_key(http_robots.as_str()), "{http_robots}");
                    assert!(by_url.contains_key(robots.as_str()), "{robots}");
                }
            }
        }
    }
    // A web without TLS hosts is the web it was before TLS existed: no https:// anywhere.
    let plain = Web::new(WebConfig {
        seed: 9,
        hosts: 24,
        pages: 10,
        hostile_every: 0,
        ..WebConfig::default()
    });
    let t = truth(&plain, &Policy::new(&plain));
    assert!(t.fetched.iter().all(|f| f.url.starts_with("http://")));
}
