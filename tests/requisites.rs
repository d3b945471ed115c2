//! Page requisites (archive mode, `[parse] requisites = true`; issue 22 point 4): on a websim
//! web whose pages load images, scripts, stylesheets (with `@import` and `url()`), `srcset`
//! candidates and `style` backgrounds, the crawl fetches exactly what websim's truth says an
//! archiving crawler must: every requisite once however many pages share it, at its page's own
//! depth (so `max_depth` does not cut a page from its assets: at `max_depth = 0` the seeds come
//! with theirs), none that robots.txt disallows or the scope excludes; without archive mode, no
//! image, script or font at all.

use crate::common;

use std::collections::BTreeSet;

use websim::model::WebConfig;
use websim::truth::Policy;

fn web() -> (std::sync::Arc<websim::model::Web>, websim::server::Server) {
    websim::server::Server::start_web(
        WebConfig {
            seed: 71,
            port: 0,
            listeners: 2,
            hosts: 6,
            pages: 14,
            hostile_every: 0,
            requisites_every: 2,
            max_crawl_delay: std::time::Duration::from_millis(20),
            ..WebConfig::default()
        },
        websim::server::ServerOptions::default(),
    )
    .unwrap()
}

fn truth_set(web: &websim::model::Web, requisites: bool, max_depth: u32) -> BTreeSet<String> {
    let policy = Policy {
        requisites,
        max_depth,
        ..Policy::new(web)
    };
    common::truth_fetched_under(web, &policy)
}

fn crawl(web: &websim::model::Web, requisites: bool, max_depth: u32) -> BTreeSet<String> {
    let mut cfg = common::websim_config(3, 2);
    cfg.parse.requisites = requisites;
    cfg.scope.max_depth = max_depth;
    let c = common::websim_crawl(web, &common::websim_homes(web), cfg);
    let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(30)).unwrap();
    assert!(r.stopped.contains("empty"), "{}", r.stopped);
    common::fetched_urls(&c.dir, 3, r.cycles.len() as u32)
        .into_iter()
        .filter(|u| !u.ends_with("/robots.txt"))
        .collect()
}

fn is_asset(u: &str) -> bool {
    u.contains("/static/") && !u.ends_with(".css")
}

#[test]
fn archive_mode_fetches_every_requisite_the_truth_lists_once_and_nothing_else() {
    let (web, server) = web();
    // max_depth 0: the seeds, and their requisites all the same.
    for max_depth in [100, 0] {
        let want = truth_set(&web, true, max_depth);
        assert!(
            want.iter().filter(|u| is_asset(u)).count() >= 10,
            "a web with requisites"
        );
        let got = crawl(&web, true, max_depth);
        let missing: Vec<_> = want.difference(&got).collect();
        let extra: Vec<_> = got.difference(&want).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "max_depth {max_depth}: missing {missing:?}, extra {extra:?}"
        );
    }
    // Without archive mode: the truth of an ordinary crawl, no image, script or font.
    let want = truth_set(&web, false, 100);
    let got = crawl(&web, false, 100);
    assert_eq!(got, want);
    assert!(!got.iter().any(|u| is_asset(u)), "{got:?}");
    server.stop();
}
