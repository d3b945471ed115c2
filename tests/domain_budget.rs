//! Budgets by registered domain (Public Suffix List): websim's subdomain trap mints hosts
//! (`s0.trap-subs.test`, `s1...`, an endless binary tree) that no per-host budget bounds; the
//! per-domain budget does, and the crawl fetches exactly as many of them as the ground truth
//! with the same budget (which ones may differ: the truth goes breadth-first, the crawl by
//! priority).

use crate::common;

use std::time::Duration;

use dragnet::exec::run_cycles;
use websim::model::{Hostile, WebConfig, SUB_DOMAIN};
use websim::truth::{truth, Outcome, Policy};

#[test]
fn a_trap_minting_subdomains_is_bounded_by_the_domain_budget() {
    // Fetches per registered domain: more than the web's own domain (websim.test) uses, far
    // fewer than the trap's tree holds within the depth limit (2^12 subdomains).
    const BUDGET: u32 = 240;
    let (web, server) = websim::server::Server::start_web(
        WebConfig {
            seed: 81,
            port: 0,
            listeners: 2,
            hosts: 6,
            pages: 6,
            hostile_every: 5,
            subdomain_trap: true,
            max_crawl_delay: Duration::from_millis(20),
            ..WebConfig::default()
        },
        websim::server::ServerOptions::default(),
    )
    .unwrap();
    let trap = web.sub_trap_host().expect("a trap host");
    assert_eq!(web.hosts[trap as usize].hostile, Some(Hostile::Trap));
    let mut cfg = common::websim_config(1, 4);
    cfg.scope.allowed_domains = vec!["websim.test".into(), SUB_DOMAIN.into()];
    cfg.scope.max_depth = 12;
    cfg.resolve.entries = vec![format!(
        "*.{SUB_DOMAIN}:*:{}",
        web.hosts[trap as usize].addr
    )];
    // The trap host's own budget, as the truth has it, and the domain budget (one partition: the
    // crawl's budget per domain is exactly it).
    cfg.prioritize.max_urls_per_host_total = u64::from(web.config.pages) + 100;
    cfg.prioritize.max_urls_per_domain_total = u64::from(BUDGET);
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let opts = common::until_empty(40);
    let r = run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    assert!(r.complete() && r.stopped.contains("empty"), "{r:?}");
    assert_eq!(server.stop().counts.total(), 0);

    let mut policy = Policy::new(&web);
    policy.max_depth = 12;
    policy.max_pages_per_domain = Some(BUDGET);
    let t = truth(&web, &policy);
    let is_sub = |u: &str| u.contains(&format!(".{SUB_DOMAIN}"));
    let truth_subs = t
        .fetched
        .iter()
        .filter(|f| is_sub(&f.url) && f.outcome != Outcome::Robots)
        .count();
    let got = common::outcome(&c.dir, 1).fetched;
    let got_subs = got.iter().filter(|u| is_sub(u)).count();
    // The budget binds: the truth fetches exactly that many, and so does the crawl.
    assert_eq!(truth_subs, BUDGET as usize);
    assert_eq!(got_subs, truth_subs, "subdomain pages fetched vs the truth");
    // The other hosts are the truth exactly; the trap host (bound by its own budget, where the
    // crawl's priority order and the truth's breadth-first order pick different URLs) by count.
    let trap_origin = web.origin(trap);
    let should: Vec<&str> = t
        .fetched
        .iter()
        .filter(|f| f.outcome != Outcome::Robots && f.status > 0 && !is_sub(&f.url))
        .map(|f| f.url.as_str())
        .collect();
    let (trap_should, other_should): (Vec<&str>, Vec<&str>) = should
        .into_iter()
        .partition(|u| u.starts_with(&trap_origin));
    let (trap_got, other_got): (Vec<&String>, Vec<&String>) = got
        .iter()
        .filter(|u| !is_sub(u))
        .partition(|u| u.starts_with(&trap_origin));
    assert_eq!(other_got, other_should);
    let check = dragnet::ops::check::check_crawl(&c.dir, Some(&c.cfg)).unwrap();
    assert!(check.ok(), "{check:?}");
    // (The seed from `init` is listed before prioritize counts the host's budget: one more.)
    assert!(
        trap_got.len().abs_diff(trap_should.len()) <= 1,
        "trap host: {} fetched, truth {}",
        trap_got.len(),
        trap_should.len()
    );
}
