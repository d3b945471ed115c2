//! Scope rules an operator sets (SURT prefixes, regexes, file extensions) hold for seeds, for
//! discovered links and, after a configuration change, for the URLs already in the frontier;
//! `dragnet inject` adds seeds between cycles, deduplicated by the normal merge.

use crate::common;

use std::collections::BTreeMap;

use dragnet::crawl::Config;
use dragnet::exec::{run_cycles, CycleOptions};

const M: u32 = 2;

fn until_empty() -> CycleOptions {
    common::until_empty(30)
}

fn one_cycle() -> CycleOptions {
    common::until_empty(1)
}

fn denied(url: &str) -> bool {
    url.ends_with(".pdf") || url.contains("/shop/") || url.contains("://h0001.websim.test")
}

fn save(c: &common::Crawl, cfg: &Config) {
    std::fs::write(c.dir.config_path(), cfg.to_toml()).unwrap();
}

#[test]
fn rules_hold_for_seeds_links_and_the_frontier_after_a_change() {
    let (web, server) = common::small_web(61, 6, 30);
    let c = common::websim_crawl(
        &web,
        &common::websim_homes(&web),
        common::websim_config(M, 4),
    );
    // Cycle 0 with the scope of the crawl's start: its links fill the frontier.
    run_cycles(&c.dir, &c.cfg, &one_cycle()).unwrap();
    // The operator adds rules: a SURT prefix (pywb's form, any port), a regex, an extension.
    let mut cfg = Config::load(&c.dir.config_path()).unwrap();
    cfg.scope.deny_surt_prefixes = vec!["test,websim,h0001".into()];
    cfg.scope.deny_regex = vec!["/shop/".into()];
    cfg.scope.deny_extensions = vec!["PDF".into()];
    save(&c, &cfg);
    let cfg = Config::load(&c.dir.config_path()).unwrap();
    let r = run_cycles(&c.dir, &cfg, &until_empty()).unwrap();
    assert!(r.complete(), "{r:?}");
    assert_eq!(server.stop().counts.total(), 0);

    let cycles = dragnet::exec::next_cycle(&c.dir, M);
    let mut refused = 0;
    for f in common::fetch_results(&c.dir, M, cycles)
        .into_iter()
        .filter(|f| !f.url.ends_with("/robots.txt"))
    {
        if f.error == "out_of_scope" {
            assert!(denied(&f.url), "{} refused", f.url);
            refused += 1;
        }
    }
    assert!(refused > 0, "the frontier held URLs the new rules refuse");
    // Nothing the rules deny was fetched after cycle 0.
    let before = common::fetched_urls(&c.dir, M, 1);
    let after = common::fetched_urls(&c.dir, M, cycles);
    let late: Vec<_> = after.difference(&before).filter(|u| denied(u)).collect();
    assert!(late.is_empty(), "{late:?}");

    // Seeds the rules deny are skipped at init, each with its reason.
    let tmp = tempfile::tempdir().unwrap();
    let seeds = tmp.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        "http://a.websim.test/shop/x\nhttp://a.websim.test/ok\n",
    )
    .unwrap();
    let conf = tmp.path().join("crawl.toml");
    std::fs::write(&conf, cfg.to_toml()).unwrap();
    let mut bad = Vec::new();
    let opts = dragnet::crawl::InitOptions {
        seeds,
        config: Some(conf),
        partitions: None,
    };
    let rep =
        dragnet::crawl::init(&tmp.path().join("c"), &opts, &mut |b| bad.push(b.clone())).unwrap();
    assert_eq!(rep.seeds, 1);
    assert_eq!(bad.len(), 1);
    assert!(bad[0].error.contains("denied_regex"), "{:?}", bad[0]);
}

#[test]
fn inject_adds_seeds_between_cycles_and_the_merge_deduplicates_them() {
    let (web, server) = common::small_web(62, 8, 10);
    let homes = common::websim_homes(&web);
    let mut cfg = common::websim_config(M, 4);
    // Each host a world of its own: only seeds and injections reach the others.
    cfg.scope.allow_regex = homes.iter().map(|h| regex_prefix(h)).take(3).collect();
    let c = common::websim_crawl(&web, &homes[..3], cfg);
    run_cycles(&c.dir, &c.cfg, &one_cycle()).unwrap();

    // Widen the scope to every host, then inject homes of hosts 3.. and one known URL again.
    let mut cfg = Config::load(&c.dir.config_path()).unwrap();
    cfg.scope.allow_regex.clear();
    save(&c, &cfg);
    let seeds = c.tmp.path().join("more.txt");
    let mut lines: Vec<String> = homes[3..].to_vec();
    lines.push(homes[0].clone());
    lines.push("not a url".into());
    std::fs::write(&seeds, lines.join("\n")).unwrap();
    let mut bad = 0;
    let r = dragnet::crawl::inject(c.dir.root(), &seeds, 2.0, &mut |_| bad += 1).unwrap();
    assert_eq!(
        (r.cycle, r.seeds, r.bad, bad),
        (1, homes.len() as u64 - 2, 1, 1)
    );
    assert!(!r.files.is_empty());

    let cfg = Config::load(&c.dir.config_path()).unwrap();
    run_cycles(&c.dir, &cfg, &one_cycle()).unwrap();
    // The merge of cycle 1 read the injected runs.
    let inputs: Vec<String> = (0..M)
        .flat_map(|p| {
            dragnet::crawl::DoneMarker::read(&c.dir.done_path(1, dragnet::crawl::Stage::Merge, p))
                .unwrap()
                .unwrap()
                .inputs
                .into_iter()
                .map(|i| i.path)
        })
        .collect();
    assert!(inputs.iter().any(|i| i.contains("inject-")), "{inputs:?}");
    let done = run_cycles(&c.dir, &cfg, &until_empty()).unwrap();
    assert!(done.complete(), "{done:?}");
    assert_eq!(server.stop().counts.total(), 0);
    // Every host was crawled to the truth of the whole web, and the known home only once.
    let cycles = dragnet::exec::next_cycle(&c.dir, M);
    assert_eq!(
        common::fetched_urls(&c.dir, M, cycles),
        common::truth_fetched(&web)
    );
    let mut times: BTreeMap<String, u32> = BTreeMap::new();
    for f in common::fetch_results(&c.dir, M, cycles)
        .into_iter()
        .filter(|f| f.status > 0)
    {
        *times.entry(f.url).or_default() += 1;
    }
    assert_eq!(times[&homes[0]], 1);
    assert_eq!(times[&homes[5]], 1);
    // Injected runs are files like any other of the crawl: `check crawl` finds nothing wrong.
    let check = dragnet::crawl::check::check_crawl(&c.dir, Some(&cfg)).unwrap();
    assert!(check.ok(), "{check:?}");
}

/// A regex matching the URLs of `home`'s host.
fn regex_prefix(home: &str) -> String {
    let origin = home.trim_end_matches('/');
    format!("^{}/", origin.replace('.', r"\."))
}
