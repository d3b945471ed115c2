//! Page requisites (`WebConfig::requisites_every`, `Policy::requisites`): the assets are served
//! with their types, the model's requisites are what the rendered HTML and CSS load (found by a
//! scan written here from scratch), the truth fetches each reachable one once at the depth of the
//! first page needing it, and a web without requisites is the web it was before they existed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use websim::model::{
    asset_type, requisite_offset, PageKind, PageRef, Web, WebConfig, ASSETS, ASSET_BG, ASSET_FONT,
    ASSET_SITE_CSS, ASSET_THEME_CSS,
};
use websim::truth::{expected_links, expected_links_with, truth, Outcome, Policy, Reason, Truth};

use crate::common;
use crate::truth::{attrs, check_invariants, extract, resolve, target};

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
    let pages = requisite_pages(&web);
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
            let PageRef::Asset { n, .. } = at else {
                unreachable!()
            };
            let path = served_web.path(at);
            assert!(path.starts_with("/static/"), "{path}");
            assert_eq!(served_web.resolve(h, &path), Some(at));
            let r = served_web.render(at);
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
            if checked < 60 {
                let got = common::get(&served_web, spec, &path, &[("Accept-Encoding", "gzip")]);
                assert_eq!(got.status, 200, "{path}");
                assert_eq!(got.header("content-type"), Some(ty), "{path}");
                assert_eq!(got.header("content-encoding"), None, "{path}");
                assert!(got.body == r.body, "{path}: served bytes differ");
                let etag = got.header("etag").expect("an ETag").to_string();
                let again = common::get(
                    &served_web,
                    spec,
                    &path,
                    &[("If-None-Match", etag.as_str())],
                );
                assert_eq!(again.status, 304, "{path}");
                let mut s = common::connect(&served_web, spec);
                common::send(&mut s, "HEAD", &served_web, spec, &path, &[]);
                let head = common::read_response(&mut s, true).unwrap();
                assert_eq!(head.status, 200);
                assert_eq!(
                    head.header("content-length"),
                    Some(r.body.len().to_string().as_str())
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 14 * 20, "{checked}");
    // Not assets: on a host without requisites, or a name the web never generated.
    let plain_host = served_web
        .hosts
        .iter()
        .find(|h| !h.requisites && h.hostile.is_none());
    let plain_host = plain_host.unwrap();
    let req_host = &served_web.hosts[served_web.requisite_hosts()[0] as usize];
    assert_eq!(
        served_web.resolve(plain_host.index, "/static/site.css"),
        None
    );
    assert_eq!(served_web.resolve(req_host.index, "/static/nope.png"), None);
    assert_eq!(
        served_web.resolve(req_host.index, "/static/img-8.png"),
        None
    );
    assert_eq!(
        common::get(&served_web, plain_host, "/static/site.css", &[]).status,
        404
    );
    assert_eq!(
        common::get(&served_web, req_host, "/static/img-9.png", &[]).status,
        404
    );
    server.stop();
}

fn at_host(at: PageRef) -> Option<u32> {
    match at {
        PageRef::Page { host, .. } => Some(host),
        _ => None,
    }
}

// ---- An independent scan of requisites in HTML and CSS. ----

/// The URLs of a `srcset` (descriptors dropped).
fn srcset(v: &str) -> Vec<&str> {
    v.split(',')
        .filter_map(|c| c.split_whitespace().next())
        .collect()
}

/// `url(...)` values of CSS text, quotes stripped, and `@import` targets (either spelling), in
/// order.
fn css_refs(css: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = css;
    loop {
        let imp = rest.find("@import");
        let url = rest.find("url(");
        let (at, is_import) = match (imp, url) {
            (Some(i), Some(u)) if i < u => (i, true),
            (_, Some(u)) => (u, false),
            (Some(i), None) => (i, true),
            (None, None) => break,
        };
        if is_import {
            let after = rest[at + "@import".len()..].trim_start();
            if let Some(inner) = after.strip_prefix("url(") {
                let end = inner.find(')').unwrap();
                out.push(unquote(&inner[..end]));
                rest = &inner[end + 1..];
            } else {
                let q = after.chars().next().unwrap();
                let end = after[1..].find(q).unwrap() + 1;
                out.push(after[1..end].to_string());
                rest = &after[end + 1..];
            }
        } else {
            let inner = &rest[at + 4..];
            let end = inner.find(')').unwrap();
            out.push(unquote(&inner[..end]));
            rest = &inner[end + 1..];
        }
    }
    out
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(|c| c == '"' || c == '\'').to_string()
}

/// `(url, tag)` of every requisite of an HTML page: `<link rel=stylesheet href>`, `<script
/// src>`, `<img src srcset>`, `<source srcset>`, `url()` in `style` attributes.
fn scan_requisites(html: &str, doc: &str) -> Vec<(String, String)> {
    let mut base = doc.to_string();
    let mut based = false;
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        rest = &rest[end..];
        let name_end = tag
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(tag.len());
        let name = tag[..name_end].to_ascii_lowercase();
        let a: HashMap<String, String> = attrs(&tag[name_end..]).into_iter().collect();
        let mut push = |u: &str, t: &str| out.push((resolve(&base, u), t.to_string()));
        match name.as_str() {
            "link"
                if a.get("rel")
                    .is_some_and(|r| r.eq_ignore_ascii_case("stylesheet")) =>
            {
                push(&a["href"], "link")
            }
            "script" => {
                if let Some(s) = a.get("src") {
                    push(s, "script");
                }
            }
            "img" => {
                if let Some(s) = a.get("src") {
                    push(s, "img");
                }
                for u in a.get("srcset").map_or(vec![], |s| srcset(s)) {
                    push(u, "img");
                }
            }
            "source" => {
                for u in a.get("srcset").map_or(vec![], |s| srcset(s)) {
                    push(u, "source");
                }
            }
            _ => {}
        }
        if let Some(style) = a.get("style") {
            for u in css_refs(style) {
                push(&u, "style");
            }
        }
        if name == "base" && !based {
            if let Some(h) = a.get("href") {
                base = resolve(doc, h);
                based = true;
            }
        }
    }
    out
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
