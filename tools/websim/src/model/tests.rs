//! Tests of the model (generation, paths, link statistics).
use super::*;

fn web() -> Web {
    Web::new(WebConfig {
        hosts: 200,
        pages: 300,
        ..WebConfig::default()
    })
}

#[test]
fn same_seed_same_web() {
    let a = web();
    let b = web();
    assert_eq!(a.hosts, b.hosts);
    for h in [0u32, 7, 199] {
        for p in [0u32, 1, 50, 299] {
            let r = PageRef::Page { host: h, page: p };
            assert_eq!(a.page(r), b.page(r));
        }
    }
}

#[test]
fn paths_round_trip() {
    let w = web();
    for h in 0..w.config.hosts {
        for p in 0..w.config.pages {
            let r = PageRef::Page { host: h, page: p };
            assert_eq!(w.resolve(h, &w.path(r)), Some(r), "{}", w.path(r));
        }
    }
    assert_eq!(w.resolve(0, "/docs/page-999999.html"), None);
    assert_eq!(w.resolve(0, "/nope"), None);
    let trap = w
        .hosts
        .iter()
        .find(|h| h.hostile == Some(Hostile::Trap))
        .unwrap()
        .index;
    for r in [
        PageRef::Calendar {
            host: trap,
            month: -30,
        },
        PageRef::Session {
            host: trap,
            item: 3,
            sid: 0xabc,
        },
    ] {
        assert_eq!(w.resolve(trap, &w.path(r)), Some(r));
    }
}

#[test]
fn link_statistics_match_the_paper() {
    let w = web();
    let (mut total, mut local, mut repeats, mut outside) = (0usize, 0usize, 0usize, 0usize);
    for h in 0..50 {
        for p in 0..100 {
            let at = PageRef::Page { host: h, page: p };
            let spec = w.page(at);
            let mut seen = std::collections::HashSet::new();
            for l in &spec.links {
                total += 1;
                if !seen.insert(l.to) {
                    repeats += 1;
                }
                match l.to {
                    PageRef::Page { host, .. } if host == h => local += 1,
                    PageRef::Outside { .. } => outside += 1,
                    _ => {}
                }
            }
        }
    }
    let f = |n: usize| n as f64 / total as f64;
    assert!((0.75..0.90).contains(&f(local)), "local {}", f(local));
    assert!((0.25..0.45).contains(&f(repeats)), "repeats {}", f(repeats));
    assert!(outside > 0 && f(outside) < 0.03, "outside {}", f(outside));
}

#[test]
fn every_hostile_kind_and_robots_kind_occurs() {
    let w = web();
    for k in Hostile::ALL {
        assert!(w.hosts.iter().any(|h| h.hostile == Some(k)), "{k:?}");
    }
    for s in [
        RobotsServe::Text,
        RobotsServe::NotFound,
        RobotsServe::ServerError,
        RobotsServe::Timeout,
        RobotsServe::Html,
        RobotsServe::Huge,
    ] {
        assert!(w.hosts.iter().any(|h| h.robots_serve == s), "{s:?}");
    }
    let addrs: std::collections::HashSet<_> = w.hosts.iter().map(|h| h.addr).collect();
    assert_eq!(addrs.len(), 4, "hosts share a few loopback addresses");
}
