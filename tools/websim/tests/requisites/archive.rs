//! Requisites in the truth: archive mode fetches each reachable requisite once, at the depth of
//! the first page needing it (also at `max_depth = 0`), refuses the robots-disallowed and
//! out-of-web ones; without it only stylesheet links are fetched; TLS hosts' requisites are
//! `https`, and the export carries the assets.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use websim::model::{
    PageRef, Web, WebConfig, ASSET_BG, ASSET_FONT, ASSET_SITE_CSS, ASSET_THEME_CSS,
};
use websim::truth::{expected_links_with, truth, Outcome, Policy, Reason, Truth};

use super::{archive, req_web};
use crate::truth::{check_invariants, target};

/// For every URL the fetched pages and stylesheets need as a followed requisite, the smallest
/// depth of such a page.
fn needed(t: &Truth) -> BTreeMap<&str, u32> {
    let mut need: BTreeMap<&str, u32> = BTreeMap::new();
    for p in &t.pages {
        for l in p.links.iter().filter(|l| l.requisite && l.followed) {
            let d = need.entry(l.url.as_str()).or_insert(p.depth);
            *d = (*d).min(p.depth);
        }
    }
    need
}

#[test]
fn archive_truth_fetches_each_requisite_once_at_the_depth_of_the_first_page_needing_it() {
    let web = req_web(21, 40, 30);
    let t = truth(&web, &archive(&web));
    check_invariants(&web, &t);
    let by_url: HashMap<&str, _> = t.fetched.iter().map(|f| (f.url.as_str(), f)).collect();
    let never: HashMap<&str, Reason> = t.never.iter().map(|(u, r)| (u.as_str(), *r)).collect();
    let need = needed(&t);
    let mut refused: BTreeMap<Reason, BTreeSet<&str>> = BTreeMap::new();
    for (&url, &depth) in &need {
        match (by_url.get(url), never.get(url)) {
            (Some(f), None) => {
                assert_eq!(f.depth, depth, "{url}");
                assert!(f.requisite, "{url}");
                assert!(matches!(f.outcome, Outcome::Other | Outcome::Stylesheet));
            }
            (None, Some(&why)) => {
                refused.entry(why).or_default().insert(url);
            }
            other => panic!("{url}: {other:?}"),
        }
    }
    // What is refused: robots.txt (the pixel, the font or img-7) and scope (outside the web).
    let robots = &refused[&Reason::Robots];
    assert!(robots
        .iter()
        .any(|u| u.ends_with("/static/private/pixel.png")));
    assert!(robots.iter().any(|u| u.ends_with("/static/img-7.png")));
    assert!(robots.iter().any(|u| u.ends_with("/static/font.woff2")));
    assert!(refused[&Reason::Scope]
        .iter()
        .all(|u| u.contains(".outside.test/")));
    assert!(!refused[&Reason::Scope].is_empty());
    assert_eq!(refused.len(), 2, "{:?}", refused.keys());
    // Every fetched asset was needed; shared ones were fetched once.
    let assets: Vec<_> = t
        .fetched
        .iter()
        .filter(|f| f.url.contains("/static/"))
        .collect();
    assert!(assets.iter().all(|f| need.contains_key(f.url.as_str())));
    let sheet_users = |u: &str| {
        t.pages
            .iter()
            .filter(|p| p.links.iter().any(|l| l.url == u && l.requisite))
            .count()
    };
    let shared = assets
        .iter()
        .filter(|f| f.url.ends_with("/static/site.css"))
        .map(|f| sheet_users(&f.url))
        .max()
        .unwrap();
    assert!(shared > 3, "{shared}");
    // Stylesheets are read: site.css imports theme.css, which loads the font, same depth.
    let mut themes = 0;
    for f in &assets {
        if f.url.ends_with("/static/theme.css") {
            let via = f.via.as_deref().unwrap();
            assert!(via.ends_with("/static/site.css"), "{via}");
            assert_eq!(by_url[via].depth, f.depth);
            assert_eq!(f.outcome, Outcome::Stylesheet);
            let font = f.url.replace("theme.css", "font.woff2");
            let got = by_url.get(font.as_str());
            assert!(
                got.is_some_and(|g| g.depth == f.depth && g.via.as_deref() == Some(f.url.as_str()))
                    || never.get(font.as_str()) == Some(&Reason::Robots),
                "{font}"
            );
            themes += 1;
        }
    }
    assert!(themes >= 5, "{themes}");
    assert!(assets.iter().any(|f| f.depth > 0));
    assert!(assets.iter().any(|f| f.url.ends_with("/static/app.js")));
    // The files say which fetches are requisites.
    let dir = tempfile::tempdir().unwrap();
    t.write_files(&web, dir.path()).unwrap();
    let tsv = std::fs::read_to_string(dir.path().join("fetch.tsv")).unwrap();
    assert!(tsv.starts_with("url\tdepth\tstatus\toutcome\tvia\tlocation\trequisite\n"));
    let marked = tsv.lines().filter(|l| l.ends_with("\t1")).count();
    assert_eq!(marked, t.fetched.iter().filter(|f| f.requisite).count());
    assert!(marked >= assets.len());
    let summary = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    assert!(summary.contains("\"requisites\": true") && summary.contains("requisites_fetched"));
    let links = std::fs::read_to_string(dir.path().join("links.jsonl")).unwrap();
    assert!(links.contains("\"requisite\":true"));
}

#[test]
fn archive_truth_at_depth_zero_still_fetches_the_seed_pages_requisites() {
    let web = req_web(21, 40, 30);
    let t = truth(
        &web,
        &Policy {
            max_depth: 0,
            ..archive(&web)
        },
    );
    check_invariants(&web, &t);
    assert!(t.fetched.iter().all(|f| f.depth == 0));
    let by_url: HashMap<&str, _> = t.fetched.iter().map(|f| (f.url.as_str(), f)).collect();
    let never: HashMap<&str, Reason> = t.never.iter().map(|(u, r)| (u.as_str(), *r)).collect();
    let mut homes = 0;
    for h in web.requisite_hosts() {
        let home = web.url(PageRef::Page { host: h, page: 0 });
        if by_url.get(home.as_str()).map(|f| f.outcome) != Some(Outcome::Html) {
            continue;
        }
        homes += 1;
        let spec = web.page(PageRef::Page { host: h, page: 0 });
        let reqs = expected_links_with(&web, &spec, false, true);
        for l in reqs.iter().filter(|l| l.link.requisite && l.link.followed) {
            let u = l.link.url.as_str();
            assert!(
                by_url.get(u).is_some_and(|f| f.depth == 0)
                    || matches!(never.get(u), Some(Reason::Robots | Reason::Scope)),
                "{u}"
            );
        }
        // The home always loads site.css; its import and url()s follow at depth 0 (unless the
        // home says nofollow).
        let asset = |n| web.url(PageRef::Asset { host: h, n });
        if spec.meta_nofollow || spec.x_robots_nofollow {
            assert!(!by_url.contains_key(asset(ASSET_SITE_CSS).as_str()));
            continue;
        }
        for n in [ASSET_SITE_CSS, ASSET_THEME_CSS, ASSET_BG] {
            assert_eq!(by_url[asset(n).as_str()].depth, 0, "{}", asset(n));
        }
        let font = asset(ASSET_FONT);
        assert!(
            by_url.contains_key(font.as_str()) || never.get(font.as_str()) == Some(&Reason::Robots),
            "{font}"
        );
    }
    assert!(homes >= 5, "{homes}");
    // Links of the seeds are one level too deep.
    assert!(t.never.iter().any(|(_, r)| *r == Reason::Depth));
}

#[test]
fn without_archive_mode_only_stylesheet_links_are_fetched() {
    let web = req_web(21, 40, 30);
    let t = truth(&web, &Policy::new(&web));
    check_invariants(&web, &t);
    let by_url: HashMap<&str, _> = t.fetched.iter().map(|f| (f.url.as_str(), f)).collect();
    let mut sheets = 0;
    for f in &t.fetched {
        assert!(!f.requisite);
        if !f.url.contains("/static/") {
            continue;
        }
        // A `<link rel=stylesheet href>` is a link: one level down, not read.
        assert!(f.url.ends_with("/static/site.css"), "{}", f.url);
        assert_eq!(f.outcome, Outcome::Other);
        let via = by_url[f.via.as_deref().unwrap()];
        assert_eq!(via.depth + 1, f.depth);
        sheets += 1;
    }
    assert!(sheets >= 5, "{sheets}");
    assert!(t
        .never
        .iter()
        .all(|(u, _)| !u.contains("/static/") || u.ends_with("/static/site.css")));
    assert!(t.pages.iter().flat_map(|p| &p.links).all(|l| !l.requisite));
    assert!(t.fetched.iter().all(|f| f.outcome != Outcome::Stylesheet));
    // Archive mode fetches a superset: every URL fetched without it, and the requisites.
    let a = truth(&web, &archive(&web));
    let archived = a.fetch_set();
    let plain = t.fetch_set();
    assert!(plain.is_subset(&archived));
    assert!(archived.len() > plain.len());
    assert!(archived
        .difference(&plain)
        .all(|u| target(u).starts_with("/static/") || target(u) == "/robots.txt"));
}

#[test]
fn requisites_of_tls_hosts_are_https_and_exports_carry_the_assets() {
    let web = Web::new(WebConfig {
        seed: 5,
        hosts: 24,
        pages: 12,
        hostile_every: 0,
        tls_every: 3,
        requisites_every: 2,
        ..WebConfig::default()
    });
    let t = truth(&web, &archive(&web));
    let tls_assets = t
        .fetched
        .iter()
        .filter(|f| f.url.starts_with("https://") && f.url.contains("/static/"))
        .count();
    let plain_assets = t
        .fetched
        .iter()
        .filter(|f| f.url.starts_with("http://") && f.url.contains("/static/"))
        .count();
    assert!(
        tls_assets > 0 && plain_assets > 0,
        "{tls_assets} {plain_assets}"
    );
    for h in web.requisite_hosts() {
        let css = web.url(PageRef::Asset {
            host: h,
            n: ASSET_SITE_CSS,
        });
        let tls = web.hosts[h as usize].tls;
        assert_eq!(css.starts_with("https://"), tls.is_some(), "{css}");
        if tls.is_some_and(|k| !k.trusted()) {
            assert!(t.fetched.iter().all(|f| f.url != css), "{css}");
        }
    }
    // The export writes every asset as websim serves it, and nginx knows the types.
    let web = Web::new(WebConfig {
        port: 8480,
        ..req_web(6, 12, 10).config
    });
    let dir = tempfile::tempdir().unwrap();
    websim::export::export(&web, dir.path()).unwrap();
    let conf = std::fs::read_to_string(dir.path().join("nginx.conf")).unwrap();
    assert!(conf.contains("text/css css; text/javascript js; font/woff2 woff2;"));
    let mut files = 0;
    for h in web.requisite_hosts() {
        let root = dir.path().join("sites").join(&web.hosts[h as usize].name);
        for at in web.assets(h) {
            let path = web.path(at);
            let file = std::fs::read(root.join(websim::export::file_of(&path))).unwrap();
            assert!(file == web.render(at).body, "{path}");
            files += 1;
        }
    }
    assert!(files >= 14 * 3, "{files}");
}
