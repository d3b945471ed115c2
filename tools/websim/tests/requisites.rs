//! Page requisites (`WebConfig::requisites_every`, `Policy::requisites`): the assets are served
//! with their types, the model's requisites are what the rendered HTML and CSS load (found by a
//! scan written here from scratch), the truth fetches each reachable one once at the depth of the
//! first page needing it, and a web without requisites is the web it was before they existed.
//!
//! This file holds the tests of the web itself; `scan` is the independent scan, `archive` the
//! tests of the truth with and without archive mode.

use std::collections::{BTreeMap, BTreeSet};

use websim::model::{
    asset_type, requisite_offset, HostSpec, PageKind, PageRef, Web, WebConfig, ASSETS,
    ASSET_SITE_CSS,
};
use websim::truth::{expected_links, expected_links_with, truth, Policy};

use crate::common;
use crate::truth::{extract, resolve};

mod archive;
mod scan;
use scan::{css_refs, scan_requisites};

fn req_web(seed: u64, hosts: u32, pages: u32) -> Web {
    Web::new(WebConfig {
        seed,
        hosts,
        pages,
        hostile_every: 5,
        requisites_every: 2,
        ..WebConfig::default()
    })
}

fn archive(web: &Web) -> Policy {
    Policy {
        requisites: true,
        ..Policy::new(web)
    }
}

/// The HTML pages of the requisite hosts.
fn requisite_pages(web: &Web) -> Vec<PageRef> {
    web.requisite_hosts()
        .into_iter()
        .flat_map(|host| (0..web.config.pages).map(move |page| PageRef::Page { host, page }))
        .filter(|&at| web.page(at).kind == PageKind::Html)
        .collect()
}

#[test]
fn requisite_hosts_come_from_the_seed_and_leave_everything_else_alone() {
    let plain = Web::new(WebConfig {
        hosts: 60,
        pages: 30,
        hostile_every: 5,
        ..WebConfig::default()
    });
    let web = Web::new(WebConfig {
        requisites_every: 3,
        ..plain.config.clone()
    });
    assert!(plain.requisite_hosts().is_empty());
    let hosts = web.requisite_hosts();
    let offset = requisite_offset(&web.config);
    assert!(hosts.len() >= 12, "{hosts:?}");
    for h in &web.hosts {
        let want = h.index % 3 == offset && h.hostile.is_none();
        assert_eq!(h.requisites, want, "{}", h.name);
        let p = &plain.hosts[h.index as usize];
        // The same personality; only a requisite host's robots.txt gains its `/static/` rules.
        assert_eq!(
            (&h.name, h.addr, h.hostile, h.tls, h.charset, h.sitemap),
            (&p.name, p.addr, p.hostile, p.tls, p.charset, p.sitemap)
        );
        if !h.requisites {
            assert_eq!(h.robots, p.robots, "{}", h.name);
        }
    }
    // The seed picks the residue.
    let offsets: BTreeSet<u32> = (1..20)
        .map(|seed| {
            requisite_offset(&WebConfig {
                seed,
                requisites_every: 3,
                ..WebConfig::default()
            })
        })
        .collect();
    assert!(offsets.len() > 1, "{offsets:?}");
    // Links, kinds and paths do not change; pages of requisite hosts gain requisites only.
    for h in 0..web.config.hosts {
        for p in 0..web.config.pages {
            let at = PageRef::Page { host: h, page: p };
            let (a, b) = (web.page(at), plain.page(at));
            assert_eq!((&a.links, &a.kind, a.bytes), (&b.links, &b.kind, b.bytes));
            assert_eq!(web.path(at), plain.path(at));
            assert!(b.requisites.is_empty());
            let html = a.kind == PageKind::Html;
            assert_eq!(
                !a.requisites.is_empty(),
                html && web.hosts[h as usize].requisites
            );
            if a.requisites.is_empty() {
                assert!(web.render(at) == plain.render(at), "{}", web.url(at));
            }
        }
    }
    // robots.txt: every requisite host with rules refuses the pixel, and either the font or
    // img-7.
    let (mut fonts, mut imgs) = (0, 0);
    for &h in &hosts {
        let r = &web.hosts[h as usize].robots;
        let plain_r = &plain.hosts[h as usize].robots;
        if r.groups.is_empty() {
            continue;
        }
        let every_group_refuses = |target: &str| {
            r.groups.iter().all(|g| {
                g.rules
                    .iter()
                    .any(|rule| !rule.allow && websim::robots::matches(&rule.pattern, target))
            })
        };
        assert!(every_group_refuses("/static/private/pixel.png"));
        fonts += usize::from(every_group_refuses("/static/font.woff2"));
        imgs += usize::from(every_group_refuses("/static/img-7.png"));
        assert!(!r.allowed("dragnet", "/static/private/pixel.png"));
        // Nothing but /static/ changes.
        for p in 0..web.config.pages {
            let t = web.path(PageRef::Page { host: h, page: p });
            assert_eq!(r.allowed("dragnet", &t), plain_r.allowed("dragnet", &t));
        }
    }
    assert!(fonts > 0 && imgs > 0, "fonts {fonts}, imgs {imgs}");
}

#[test]
fn every_requisite_resolves_and_is_served_with_its_type() {
    let web = req_web(4, 30, 40);
    pages_share_their_assets(&web);
    // Every asset of a requisite host: resolved, rendered with its type, served over HTTP with
    // the same bytes; HEAD and conditional GET as for pages.
    let (served_web, server) = common::start(WebConfig {
        requisites_every: 2,
        ..common::config()
    });
    let mut checked = 0;
    for h in served_web.requisite_hosts() {
        let spec = &served_web.hosts[h as usize];
        for at in served_web.assets(h) {
            check_asset(&served_web, spec, at, checked < 60);
            checked += 1;
        }
    }
    assert!(checked >= 14 * 20, "{checked}");
    not_assets_are_not_served(&served_web);
    server.stop();
}

/// The requisites of every requisite page are assets of its host (or outside the web), shared
/// by several pages, and not every page has every kind.
fn pages_share_their_assets(web: &Web) {
    let pages = requisite_pages(web);
    assert!(pages.len() > 200, "{}", pages.len());
    // How many pages load each asset.
    let mut users: BTreeMap<PageRef, usize> = BTreeMap::new();
    let mut outside = 0;
    let (mut no_sheet, mut no_script) = (0, 0);
    for &at in &pages {
        let spec = web.page(at);
        let mut kinds = BTreeSet::new();
        for q in &spec.requisites {
            for (to, tag) in q.targets() {
                kinds.insert(tag);
                match to {
                    PageRef::Asset { host, n } => {
                        assert_eq!(Some(host), at_host(at));
                        assert!(n < ASSETS);
                        assert_eq!(web.resolve(host, &web.path(to)), Some(to));
                        *users.entry(to).or_default() += 1;
                    }
                    PageRef::Outside { .. } => outside += 1,
                    other => panic!("{other:?} is no requisite"),
                }
            }
        }
        assert!(kinds.contains("img"), "{}", web.url(at));
        no_sheet += usize::from(!kinds.contains("link"));
        no_script += usize::from(!kinds.contains("script"));
    }
    assert!(no_sheet > 10 && no_script > 10, "{no_sheet} {no_script}");
    assert!(outside > 0, "an out-of-web requisite");
    // Shared by several pages, but not every page has every asset.
    let site_css = users
        .iter()
        .filter(|(r, _)| {
            matches!(
                r,
                PageRef::Asset {
                    n: ASSET_SITE_CSS,
                    ..
                }
            )
        })
        .map(|(_, &k)| k)
        .max()
        .unwrap();
    assert!(site_css >= 5, "{site_css}");
    assert!(users.values().any(|&k| k >= 3));
}

/// Asset `at` of host `spec`: resolved, rendered with its type and plausible bytes; with `fetch`
/// also served over HTTP with the same bytes, HEAD and conditional GET as for pages.
fn check_asset(web: &Web, spec: &HostSpec, at: PageRef, fetch: bool) {
    let PageRef::Asset { n, .. } = at else {
        unreachable!()
    };
    let path = web.path(at);
    assert!(path.starts_with("/static/"), "{path}");
    assert_eq!(web.resolve(spec.index, &path), Some(at));
    let r = web.render(at);
    let ty = asset_type(n);
    assert_eq!((r.status, r.content_type.as_str()), (200, ty), "{path}");
    let ext = path.rsplit('.').next().unwrap();
    assert_eq!(
        ty,
        match ext {
            "css" => "text/css",
            "js" => "text/javascript",
            "woff2" => "font/woff2",
            _ => "image/png",
        },
        "{path}"
    );
    match ext {
        "png" => assert!(r.body.starts_with(b"\x89PNG\r\n\x1a\n")),
        "woff2" => assert!(r.body.starts_with(b"wOF2")),
        _ => assert!(std::str::from_utf8(&r.body).is_ok()),
    }
    assert!(
        (100..=5000).contains(&r.body.len()),
        "{path} {}",
        r.body.len()
    );
    if fetch {
        let got = common::get(web, spec, &path, &[("Accept-Encoding", "gzip")]);
        assert_eq!(got.status, 200, "{path}");
        assert_eq!(got.header("content-type"), Some(ty), "{path}");
        assert_eq!(got.header("content-encoding"), None, "{path}");
        assert!(got.body == r.body, "{path}: served bytes differ");
        let etag = got.header("etag").expect("an ETag").to_string();
        let again = common::get(web, spec, &path, &[("If-None-Match", etag.as_str())]);
        assert_eq!(again.status, 304, "{path}");
        let mut s = common::connect(web, spec);
        common::send(&mut s, "HEAD", web, spec, &path, &[]);
        let head = common::read_response(&mut s, true).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(
            head.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
    }
}

/// Not assets: on a host without requisites, or a name the web never generated.
fn not_assets_are_not_served(web: &Web) {
    let plain_host = web
        .hosts
        .iter()
        .find(|h| !h.requisites && h.hostile.is_none());
    let plain_host = plain_host.unwrap();
    let req_host = &web.hosts[web.requisite_hosts()[0] as usize];
    assert_eq!(web.resolve(plain_host.index, "/static/site.css"), None);
    assert_eq!(web.resolve(req_host.index, "/static/nope.png"), None);
    assert_eq!(web.resolve(req_host.index, "/static/img-8.png"), None);
    assert_eq!(
        common::get(web, plain_host, "/static/site.css", &[]).status,
        404
    );
    assert_eq!(
        common::get(web, req_host, "/static/img-9.png", &[]).status,
        404
    );
}

fn at_host(at: PageRef) -> Option<u32> {
    match at {
        PageRef::Page { host, .. } => Some(host),
        _ => None,
    }
}

#[test]
fn model_requisites_equal_what_the_rendered_html_and_css_load() {
    let web = req_web(13, 40, 120);
    let (mut pages, mut requisites, mut based) = (0, 0, 0);
    let mut tags = BTreeSet::new();
    for at in requisite_pages(&web) {
        let spec = web.page(at);
        let url = web.url(at);
        let html = String::from_utf8_lossy(&web.render(at).body).into_owned();
        // Archive mode: the requisites, in document order.
        let found = scan_requisites(&html, &url);
        let want: Vec<(String, String)> = expected_links_with(&web, &spec, false, true)
            .into_iter()
            .filter(|m| m.link.requisite)
            .map(|m| (m.link.url, m.link.tag.to_string()))
            .collect();
        assert_eq!(found, want, "{url}");
        // Not archive mode: the links, `<link rel=stylesheet>` among them, as the independent
        // link extractor finds them.
        let (links, _) = extract(&html, &url);
        let want: Vec<(String, String, bool)> = expected_links(&web, &spec, false)
            .into_iter()
            .map(|m| (m.link.url, m.link.tag.to_string(), m.link.nofollow))
            .collect();
        assert_eq!(links, want, "{url}");
        // Archive mode's list is the links plus the requisites.
        let all = expected_links_with(&web, &spec, false, true);
        assert_eq!(
            all.iter().filter(|m| !m.link.requisite).count() + found.len(),
            all.len()
        );
        assert!(html.find("<h1>").unwrap() < html.find("<img").unwrap());
        assert!(!html.contains("<template") && !html.contains("<noscript"));
        pages += 1;
        requisites += found.len();
        based += usize::from(spec.base.is_some());
        tags.extend(found.into_iter().map(|(_, t)| t));
    }
    eprintln!("{pages} pages ({based} with <base>), {requisites} requisites checked");
    assert!(pages > 1000 && based > 10 && requisites > 3 * pages);
    assert_eq!(
        tags.into_iter().collect::<Vec<_>>(),
        ["img", "link", "script", "source", "style"]
    );
    // Stylesheets: their @imports and url()s, resolved against the stylesheet's URL.
    let mut sheets = 0;
    for h in web.requisite_hosts() {
        for at in web.assets(h) {
            let spec = web.page(at);
            let url = web.url(at);
            let body = web.render(at).body;
            let want: Vec<String> = expected_links_with(&web, &spec, false, true)
                .into_iter()
                .map(|m| {
                    assert_eq!((m.link.tag, m.link.followed), ("css", true));
                    m.link.url
                })
                .collect();
            assert!(expected_links(&web, &spec, true).is_empty());
            if web.render(at).content_type != "text/css" {
                assert!(want.is_empty(), "{url}");
                continue;
            }
            let text = String::from_utf8(body).unwrap();
            let found: Vec<String> = css_refs(&text).iter().map(|u| resolve(&url, u)).collect();
            assert_eq!(found, want, "{url}:\n{text}");
            assert!(!found.is_empty());
            sheets += 1;
        }
    }
    assert_eq!(sheets, 2 * web.requisite_hosts().len());
    // Both spellings of @import occur.
    let imports: BTreeSet<bool> = web
        .requisite_hosts()
        .into_iter()
        .map(|h| {
            let css = web
                .render(PageRef::Asset {
                    host: h,
                    n: ASSET_SITE_CSS,
                })
                .body;
            String::from_utf8(css).unwrap().contains("@import url(")
        })
        .collect();
    assert_eq!(imports.len(), 2);
}

fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// A hash of every page's rendered answer and robots.txt, and of two truths (depth 2 and the
/// default policy), in a form that existed before requisites did.
fn fingerprint(web: &Web) -> (u64, u64) {
    let mut pages = 0xcbf2_9ce4_8422_2325u64;
    for h in 0..web.config.hosts {
        if let Some(r) = web.render_robots(h) {
            fnv(&mut pages, &r.body);
        }
        for p in 0..web.config.pages {
            let r = web.render(PageRef::Page { host: h, page: p });
            let head = format!("{} {} {:?}", r.status, r.content_type, r.headers);
            fnv(&mut pages, head.as_bytes());
            fnv(&mut pages, &r.body);
        }
    }
    let mut t = 0xcbf2_9ce4_8422_2325u64;
    for max_depth in [2, 100] {
        let tr = truth(
            web,
            &Policy {
                max_depth,
                ..Policy::new(web)
            },
        );
        for f in &tr.fetched {
            let line = format!(
                "{} {} {} {:?} {:?} {:?}\n",
                f.url, f.depth, f.status, f.outcome, f.via, f.location
            );
            fnv(&mut t, line.as_bytes());
        }
        for (u, r) in &tr.never {
            fnv(&mut t, format!("{u} {r:?}\n").as_bytes());
        }
        for p in &tr.pages {
            let line = format!(
                "{} {} {} {}\n",
                p.url, p.depth, p.meta_nofollow, p.header_nofollow
            );
            fnv(&mut t, line.as_bytes());
            for l in &p.links {
                let line = format!("{} {} {} {}\n", l.url, l.tag, l.nofollow, l.followed);
                fnv(&mut t, line.as_bytes());
            }
        }
        fnv(
            &mut t,
            format!("{:?} {:?}\n", tr.delays, tr.hosts_at_budget).as_bytes(),
        );
    }
    (pages, t)
}

#[test]
fn a_web_without_requisites_is_the_web_it_was_before_them() {
    let web = Web::new(WebConfig {
        seed: 3,
        hosts: 40,
        pages: 30,
        hostile_every: 5,
        tls_every: 4,
        subdomain_trap: true,
        ..WebConfig::default()
    });
    assert_eq!(web.config.requisites_every, 0);
    assert!(web.requisite_hosts().is_empty());
    // Computed by websim before requisites existed (the same function, commit before them).
    assert_eq!(
        fingerprint(&web),
        (0x075a_0bbe_7388_4e0e, 0xe689_6e86_ae79_741e)
    );
    // Archive mode changes nothing on a web without requisites: no /static/ anywhere.
    let plain = truth(&web, &Policy::new(&web));
    let a = truth(&web, &archive(&web));
    assert_eq!(a.fetched, plain.fetched);
    assert_eq!(a.never, plain.never);
    assert_eq!(a.pages, plain.pages);
    assert!(a.fetched.iter().all(|f| !f.url.contains("/static/")));
    assert!(a.never.iter().all(|(u, _)| !u.contains("/static/")));
    // The files of the default policy do not mention requisites; nor does the config.
    let dir = tempfile::tempdir().unwrap();
    plain.write_files(&web, dir.path()).unwrap();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        assert!(!text.contains("requisite"));
    }
    assert!(!serde_json::to_string(&web.config)
        .unwrap()
        .contains("requisite"));
    assert!(!serde_json::to_string(&web.hosts)
        .unwrap()
        .contains("requisite"));
}
