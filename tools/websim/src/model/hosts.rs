//! Host generation: each host's personality (robots.txt variant, sitemaps, charset, content
//! coding, hostile kind) drawn from the seed. Split from `model.rs` to keep files short.

use super::*;

pub(super) fn gen_host(cfg: &WebConfig, h: u32) -> HostSpec {
    let mut r = Rng::new(cfg.seed, &[T_HOST, h.into()]);
    let name = format!("h{h:04}.websim.test");
    let listeners = u32::from(cfg.listeners.max(1));
    let addr = Ipv4Addr::new(127, 0, 1, (1 + h % listeners) as u8);
    let hostile = if cfg.hostile_every > 0 && h % cfg.hostile_every == cfg.hostile_every - 1 {
        Some(Hostile::ALL[((h / cfg.hostile_every) as usize) % Hostile::ALL.len()])
    } else {
        None
    };
    // Chosen without drawing from `r`, so a web without TLS hosts is the same as before.
    let tls = (cfg.tls_every > 0 && h % cfg.tls_every == 0 && hostile.is_none())
        .then(|| Tls::CYCLE[((h / cfg.tls_every) as usize) % Tls::CYCLE.len()]);
    let origin = super::origin(cfg, &name, tls.is_some());
    let rate_limited = cfg.rate_limit_every > 0
        && h % cfg.rate_limit_every == cfg.rate_limit_every / 2
        && hostile.is_none()
        && tls.is_none();
    let sitemap = match r.below(10) {
        0 | 1 => Some(SitemapKind::Urlset),
        2 => Some(SitemapKind::Index),
        3 => Some(SitemapKind::Gzipped),
        _ => None,
    };
    let sitemaps = match sitemap {
        Some(SitemapKind::Urlset) => vec![format!("{origin}/sitemap.xml")],
        Some(SitemapKind::Index) => vec![format!("{origin}/sitemap_index.xml")],
        Some(SitemapKind::Gzipped) => vec![format!("{origin}/sitemap.xml.gz")],
        None => vec![],
    };
    let (serve, groups, beyond) = robots_variant(cfg, &mut r);
    let mut robots = RobotsSpec {
        serve,
        groups,
        beyond_limit: beyond,
        sitemaps: if serve == RobotsServe::Text || serve == RobotsServe::Huge {
            sitemaps
        } else {
            vec![]
        },
    };
    // Chosen without drawing from `r`, so a web without requisites is the same as before.
    let requisites = requisites::is_requisite_host(cfg, h, hostile);
    if requisites {
        requisites::robots_rules(cfg, h, &mut robots);
    }
    let sitemap = if robots.sitemaps.is_empty() {
        None
    } else {
        sitemap
    };
    let charset = match r.below(10) {
        0..=6 => Charset::Utf8,
        7 | 8 => Charset::Windows1252,
        _ => Charset::Latin1,
    };
    let charset_decl = *r.pick(&[CharsetDecl::Header, CharsetDecl::Meta, CharsetDecl::Both]);
    let coding = match r.below(10) {
        0 => Some(Coding::Gzip),
        1 => Some(Coding::Deflate),
        2 => Some(Coding::Brotli),
        _ => None,
    };
    HostSpec {
        index: h,
        name,
        addr,
        robots_serve: robots.serve,
        robots,
        sitemap,
        charset,
        charset_decl,
        coding,
        hostile,
        tls,
        rate_limited,
        requisites,
    }
}

/// A host's robots.txt variant: how it is served, its groups, and the groups written beyond the
/// 500 KiB a crawler reads (only for [`RobotsServe::Huge`]).
fn robots_variant(cfg: &WebConfig, r: &mut Rng) -> (RobotsServe, Vec<Group>, Vec<Group>) {
    let max_delay = cfg.max_crawl_delay.as_secs_f64();
    let delay = |r: &mut Rng| {
        ((r.unit() * max_delay * 10.0).round() / 10.0)
            .max(0.1)
            .min(max_delay.max(0.1))
    };
    let star = |rules: Vec<Rule>, crawl_delay| Group {
        agents: vec!["*".into()],
        rules,
        crawl_delay,
    };
    match r.below(100) {
        0..=39 => (
            RobotsServe::Text,
            vec![star(vec![rule(false, "")], None)],
            vec![],
        ),
        40..=64 => {
            let rules = [
                rule(false, "/shop/"),
                rule(true, "/shop/page-"),
                rule(false, "/*.pdf$"),
                rule(false, "/archive/*page-1"),
                rule(false, "/go/"),
            ];
            let n = 2 + r.below(4) as usize;
            (
                RobotsServe::Text,
                vec![star(rules[..n].to_vec(), None)],
                vec![],
            )
        }
        65..=74 => (
            RobotsServe::Text,
            vec![
                star(vec![rule(false, "/")], None),
                Group {
                    agents: vec!["dragnet".into(), "websim-polite".into()],
                    rules: vec![rule(false, "/blog/"), rule(true, "/blog/page-1")],
                    crawl_delay: None,
                },
            ],
            vec![],
        ),
        75..=82 => (
            RobotsServe::Text,
            vec![star(vec![rule(false, "/about/")], Some(delay(r)))],
            vec![],
        ),
        83..=87 => (RobotsServe::NotFound, vec![], vec![]),
        88..=90 => (RobotsServe::ServerError, vec![], vec![]),
        91..=92 => (RobotsServe::Timeout, vec![], vec![]),
        93..=95 => (RobotsServe::Html, vec![], vec![]),
        _ => (
            RobotsServe::Huge,
            vec![star(vec![rule(false, "/news/")], None)],
            vec![star(vec![rule(false, "/docs/")], None)],
        ),
    }
}

/// An `Allow` (`allow`) or `Disallow` rule.
fn rule(allow: bool, pattern: &str) -> Rule {
    Rule {
        allow,
        pattern: pattern.into(),
    }
}
