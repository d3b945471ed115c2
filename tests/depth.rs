//! Depth: a URL's depth is the smallest over its discoveries of its linking page's depth + 1
//! (seeds 0), as websim's truth computes it; a nofollow link discovers nothing, so it gives no
//! depth either. With `[scope] max_depth = 1` the crawl fetches exactly what the truth at depth
//! 1 lists: on this web, h0000's `/dl/data-5.bin` and h0005's `/shop/page-12.html` are linked
//! from their home page only with `rel=nofollow`, and are depth 2 by their followed links.

use crate::common;

use std::collections::BTreeSet;

use websim::truth::Policy;

#[test]
fn max_depth_one_fetches_what_the_truth_at_depth_one_lists() {
    let (web, server) = common::small_web(71, 6, 14);
    let mut cfg = common::websim_config(3, 2);
    cfg.scope.max_depth = 1;
    cfg.cycle.keep_cycles = 0;
    let c = common::websim_crawl(&web, &common::websim_homes(&web), cfg);
    let r = dragnet::exec::run_cycles(&c.dir, &c.cfg, &common::until_empty(30)).unwrap();
    assert!(r.stopped.contains("empty"), "{}", r.stopped);
    let got: BTreeSet<String> = common::fetched_urls(&c.dir, 3, r.cycles.len() as u32)
        .into_iter()
        .filter(|u| !u.ends_with("/robots.txt"))
        .collect();
    let want = common::truth_fetched_under(
        &web,
        &Policy {
            max_depth: 1,
            ..Policy::new(&web)
        },
    );
    let missing: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, extra {extra:?}"
    );
    server.stop();
}
