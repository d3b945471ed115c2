//! `dragnet fetch|parse|split|merge|prioritize`: one stage of one partition, run by hand through
//! the same envelope as the executors (`dragnet::exec::run_stage`: skip if done, refuse if the
//! upstream stage is not, `.done` or `.failed` after), then a one-line summary on stderr.

use dragnet::crawl::report::counter as c;
use dragnet::crawl::{CrawlDir, Stage, StageReport};
use dragnet::error::{EXIT_OK, EXIT_PARTIAL};
use dragnet::fetch::{FetchOptions, ProgressMode};
use dragnet::Error;

use super::args::StageArgs;

/// Runs `stage` for the partition `args` names; exit 1 if a fetch's deadline deferred URLs.
pub(crate) fn run(stage: Stage, args: &StageArgs, progress: ProgressMode) -> Result<i32, Error> {
    let (crawl, cfg) = CrawlDir::open(&args.dir)?;
    let fetch = FetchOptions {
        progress,
        ..FetchOptions::default()
    };
    let r = dragnet::exec::run_stage(&crawl, &cfg, stage, args.cycle, args.partition, &fetch)?;
    if args.json {
        println!("{}", serde_json::to_string(&r).expect("report serializes"));
    }
    let (cycle, p) = (args.cycle, args.partition);
    if r.skipped {
        eprintln!("{stage}: cycle {cycle} partition {p} is already done (its .done marker exists); nothing to do");
    } else {
        eprintln!(
            "{stage}: cycle {cycle} partition {p}: {}",
            summary(stage, cycle, &r)
        );
    }
    Ok(match stage {
        Stage::Fetch if r.count(&c::error("deferred")) > 0 => EXIT_PARTIAL,
        _ => EXIT_OK,
    })
}

/// What a stage did, in a line.
pub(crate) fn summary(stage: Stage, cycle: u32, r: &StageReport) -> String {
    let n = |k: &str| r.count(k);
    let list = |keys: &mut dyn Iterator<Item = (String, u64)>| {
        let v: Vec<String> = keys
            .filter(|(_, v)| *v > 0)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    match stage {
        Stage::Fetch => {
            let errors = list(&mut r.counts.iter().filter_map(|(k, v)| {
                k.strip_prefix(c::ERROR_PREFIX).map(|k| (k.to_owned(), *v))
            }));
            format!(
                "{} URLs, {} requests ({} robots.txt), {} 2xx, {} 3xx, {} 4xx, {} 5xx, {:.1} MiB in {:.1}s ({:.0} requests/s); errors: {errors}; {} WARC files",
                n(c::URLS),
                n(c::REQUESTS),
                n(c::ROBOTS_REQUESTS),
                n(&c::status_class(2)),
                n(&c::status_class(3)),
                n(&c::status_class(4)),
                n(&c::status_class(5)),
                n(c::BYTES) as f64 / (1 << 20) as f64,
                r.seconds,
                n(c::REQUESTS) as f64 / r.seconds.max(1e-9),
                n(c::WARC_FILES),
            )
        }
        Stage::Parse => parse_summary(r),
        Stage::Split => {
            let refused = list(
                &mut [
                    "nofollow",
                    "out_of_domain",
                    "too_deep",
                    "trap_path",
                    "trap_repeat",
                    "trap_query",
                    "dropped_pattern",
                    "over_host_budget",
                ]
                .iter()
                .map(|k| ((*k).to_owned(), n(k))),
            );
            format!(
                "{} links to {} URLs; {} routed with their URL, {} as cash credits; cache hit rate {:.1}%; refused: {refused} in {:.1}s",
                n(c::LINKS),
                n("targets"),
                n("routed"),
                n("credits"),
                n(c::CACHE_HIT_PERMILLE) as f64 / 10.0,
                r.seconds
            )
        }
        Stage::Merge => format!(
            "{} URLs known before, {} new, {} after; {} fetch results folded in, {} links to known URLs ({} cash credits), {} frontier updates in {:.1}s",
            n("known_before"),
            n(c::NEW),
            n("known_after"),
            n("fetch_results"),
            n("links_to_known"),
            n("credits"),
            n("updates"),
            r.seconds
        ),
        Stage::Prioritize => format!(
            "{} inserted ({} new, {} recrawls), {} extracted, {} stale, {} over their host's cap; {} URLs from {} hosts in the fetch list of cycle {}; frontier {} in {:.1}s",
            n("inserted_new") + n("inserted_requeue") + n("inserted_recrawl"),
            n("inserted_new"),
            n("inserted_recrawl"),
            n("extracted"),
            n("stale") + n("stale_unknown"),
            n("host_capped"),
            n(c::SELECTED),
            n("hosts"),
            cycle + 1,
            n(c::FRONTIER),
            r.seconds
        ),
        Stage::Init => String::new(),
    }
}

/// What a parse (or a reparse) did, in a line.
pub(crate) fn parse_summary(r: &StageReport) -> String {
    let n = |k: &str| r.count(k);
    format!(
        "{} pages ({} HTML, {:.1} MiB), {} links ({} followed, {} nofollow, {} unusable), {} redirects, {} robots.txt sitemaps in {:.1}s ({:.0} pages/s)",
        n(c::PAGES),
        n("html_pages"),
        n(c::BYTES) as f64 / (1 << 20) as f64,
        n(c::LINKS),
        n("links_followed"),
        n("links_nofollow"),
        n("links_unusable"),
        n("redirects"),
        n("robots_sitemaps"),
        r.seconds,
        n(c::PAGES) as f64 / r.seconds.max(1e-9),
    )
}
