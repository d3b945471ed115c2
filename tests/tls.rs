//! HTTPS: websim serves some hosts over TLS with certificates from a CA it makes at start (valid,
//! expired, for the wrong name, self-signed; some hosts seeded as `http://` and moved to HTTPS
//! by a 301). A crawl that trusts the CA through `[fetch] extra_ca_files` fetches exactly the
//! ground truth; certificate failures are recorded per URL with their reason and never accepted;
//! the WARC names what came over TLS by its `https://` URL.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dragnet::config::fetch::TlsRoots;
use dragnet::exec::run_cycles;
use dragnet::fetch::client::{Fetcher, Validators};
use dragnet::fetch::tls::client_config;
use dragnet::records::FetchResult;
use dragnet::resolve::Resolver;
use url::Url;
use websim::model::{PageRef, Tls, Web, WebConfig};
use websim::server::{Server, ServerOptions};

const M: u32 = 3;

fn tls_web(hosts: u32, pages: u32) -> (Arc<Web>, Server) {
    Server::start_web(
        WebConfig {
            seed: 23,
            port: 0,
            tls_port: 0,
            listeners: 2,
            hosts,
            pages,
            hostile_every: 0,
            tls_every: 2,
            max_crawl_delay: Duration::from_millis(20),
            ..WebConfig::default()
        },
        ServerOptions::default(),
    )
    .unwrap()
}

fn host_of_kind(web: &Web, kind: Tls) -> u32 {
    web.hosts
        .iter()
        .find(|h| h.tls == Some(kind))
        .unwrap_or_else(|| panic!("a {kind:?} host"))
        .index
}

/// Every fetch result of the crawl (any status), by URL, in cycle order.
fn results(dir: &dragnet::crawl::CrawlDir, cycles: u32) -> BTreeMap<String, Vec<FetchResult>> {
    let mut out: BTreeMap<String, Vec<FetchResult>> = BTreeMap::new();
    for f in common::fetch_results(dir, M, cycles) {
        out.entry(f.url.clone()).or_default().push(f);
    }
    out
}

#[test]
fn a_mixed_http_and_https_crawl_fetches_exactly_the_truth() {
    let (web, server) = tls_web(16, 12);
    for kind in Tls::CYCLE {
        host_of_kind(&web, kind);
    }
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), server.ca_pem().expect("a CA")).unwrap();
    let mut cfg = common::websim_config(M, 4);
    cfg.prioritize.block = 16;
    cfg.fetch.extra_ca_files = vec![ca.path().to_path_buf()];
    let seeds = common::websim_homes(&web);
    assert!(seeds.iter().any(|s| s.starts_with("http://")));
    assert!(seeds.iter().any(|s| s.starts_with("https://")));
    let c = common::websim_crawl(&web, &seeds, cfg);
    let opts = common::until_empty(40);
    let r = run_cycles(&c.dir, &c.cfg, &opts).unwrap();
    assert!(r.complete(), "{r:?}");
    let audit = server.stop();
    assert_eq!(audit.counts.total(), 0, "politeness: {:?}", audit.counts);

    let should = common::truth_fetched(&web);
    let got = common::outcome(&c.dir, M).fetched;
    let missing: Vec<_> = should.difference(&got).collect();
    let extra: Vec<_> = got.difference(&should).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}\nextra {extra:?}"
    );
    assert!(got.iter().any(|u| u.starts_with("https://")), "{got:?}");

    // Certificate failures: the URLs of such hosts carry the reason (later cycles may say
    // `host_failing` once the host has failed often enough); never a status.
    let cycles = dragnet::crawl::next_cycle(&c.dir, M);
    let all = results(&c.dir, cycles);
    for (kind, reason) in [
        (Tls::Expired, "tls_expired"),
        (Tls::WrongName, "tls_wrong_name"),
        (Tls::SelfSigned, "tls_untrusted"),
    ] {
        let h = host_of_kind(&web, kind);
        let home = web.url(PageRef::Page { host: h, page: 0 });
        let tries = all
            .get(&home)
            .unwrap_or_else(|| panic!("no result for {home}"));
        assert_eq!(tries[0].error, reason, "{home}: {tries:?}");
        assert!(tries.iter().all(|f| f.status == 0), "{home}: {tries:?}");
    }
    // The http:// seed of a host that moved: a 301 to its https:// home, which was fetched.
    let up = host_of_kind(&web, Tls::Upgrade);
    let seed = web.seed_url(up);
    assert_eq!(all[&seed][0].status, 301, "{seed}");
    assert_eq!(all[&seed][0].redirect, format!("{}/", web.origin(up)));
    assert_eq!(all[&format!("{}/", web.origin(up))][0].status, 200);

    // The WARC names TLS fetches by their https:// URL.
    let mut https_responses = BTreeSet::new();
    for cycle in 0..cycles {
        let Ok(files) = std::fs::read_dir(c.dir.warc_dir(cycle)) else {
            continue;
        };
        for e in files.flatten() {
            let mut rd =
                dragnet::warc::reader::WarcReader::open(&e.path(), Default::default()).unwrap();
            while let Some(rec) = rd.next_record().unwrap() {
                let h = rec.header();
                if h.record_type() == dragnet::warc::RecordType::Response {
                    if let Some(u) = h.target_uri().filter(|u| u.starts_with("https://")) {
                        https_responses.insert(u.to_string());
                    }
                }
            }
        }
    }
    for u in got.iter().filter(|u| u.starts_with("https://")) {
        assert!(https_responses.contains(u), "{u} not in the WARC");
    }
}

#[test]
fn certificates_are_checked_and_failures_named() {
    let (web, server) = tls_web(16, 4);
    let mut resolver = Resolver::default();
    resolver
        .add_hosts_text(&websim::cli::hosts_file(&web), Path::new("websim.hosts"))
        .unwrap();
    let resolver = Arc::new(resolver);
    let section = dragnet::config::FetchSection {
        allow_private_addresses: true,
        connect_timeout_secs: 2.0,
        read_timeout_secs: 2.0,
        total_timeout_secs: 5.0,
        ..Default::default()
    };
    let home = |kind| Url::parse(&format!("{}/", web.origin(host_of_kind(&web, kind)))).unwrap();
    let kind_of = |f: &Fetcher, url: &Url| match f.fetch(url, Validators::default()) {
        Ok(got) => format!("{}", got.status),
        Err(e) => e.kind().to_string(),
    };

    // Mozilla's roots only: the test CA is unknown, so even the valid host is refused.
    let plain = Fetcher::new(&section, resolver.clone());
    assert_eq!(kind_of(&plain, &home(Tls::Valid)), "tls_untrusted");

    // Trusting the test CA: valid hosts answer; the others fail with their reason.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), server.ca_pem().unwrap()).unwrap();
    let tls = client_config(
        TlsRoots::Webpki,
        &["ca.pem".into()],
        dir.path(),
        Path::new("crawl.toml"),
    )
    .unwrap();
    let f = Fetcher::new(&section, resolver).with_tls(tls);
    assert_eq!(kind_of(&f, &home(Tls::Valid)), "200");
    assert_eq!(kind_of(&f, &home(Tls::Upgrade)), "200");
    assert_eq!(kind_of(&f, &home(Tls::Expired)), "tls_expired");
    assert_eq!(kind_of(&f, &home(Tls::WrongName)), "tls_wrong_name");
    assert_eq!(kind_of(&f, &home(Tls::SelfSigned)), "tls_untrusted");
    // The plain-HTTP port of a TLS host moves every page to HTTPS (robots.txt stays).
    let up = host_of_kind(&web, Tls::Upgrade);
    let got = f
        .fetch(
            &Url::parse(&web.seed_url(up)).unwrap(),
            Validators::default(),
        )
        .unwrap();
    assert_eq!(got.status, 301);
    assert_eq!(got.location.as_deref(), Some(home(Tls::Upgrade).as_str()));
    let robots = Url::parse(&format!("{}/robots.txt", web.http_origin(up))).unwrap();
    assert_ne!(f.fetch(&robots, Validators::default()).unwrap().status, 301);
}

#[test]
fn a_bad_ca_file_is_a_configuration_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.pem"), "no certificate here\n").unwrap();
    let cfg = Path::new("/crawl/crawl.toml");
    for (file, says) in [
        ("missing.pem", "cannot read it"),
        ("empty.pem", "no certificate in it"),
    ] {
        let e = client_config(TlsRoots::Webpki, &[file.into()], dir.path(), cfg)
            .unwrap_err()
            .to_string();
        assert!(e.contains(file) && e.contains(says), "{e}");
        assert!(
            e.contains("extra_ca_files") && e.contains("crawl.toml"),
            "{e}"
        );
    }
}

/// `[fetch] follow_redirects`: the `http://` seed of a host that moved to HTTPS is followed to
/// its `https://` home in the same run (its own robots.txt first), so the move does not cost a
/// cycle; with 0 the target waits for the next cycle.
#[test]
fn a_move_to_https_is_followed_in_the_same_run() {
    let (web, server) = tls_web(16, 4);
    let up = host_of_kind(&web, Tls::Upgrade);
    let seed = web.seed_url(up);
    let home = format!("{}/", web.origin(up));
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), server.ca_pem().unwrap()).unwrap();
    for (hops, followed) in [(5, true), (0, false)] {
        let mut cfg = common::websim_config(1, 2);
        cfg.fetch.extra_ca_files = vec![ca.path().to_path_buf()];
        cfg.fetch.follow_redirects = hops;
        let c = common::websim_crawl(&web, std::slice::from_ref(&seed), cfg);
        let quiet = dragnet::fetch::FetchOptions {
            progress: dragnet::fetch::ProgressMode::Quiet,
            ..Default::default()
        };
        dragnet::fetch::fetch_partition(&c.dir, &c.cfg, 0, 0, &quiet).unwrap();
        let all = results(&c.dir, 1);
        assert_eq!(all[&seed][0].status, 301, "{hops}");
        assert_eq!(
            all.get(&home).map(|r| r[0].status),
            followed.then_some(200),
            "{hops}"
        );
    }
    assert_eq!(server.stop().counts.total(), 0);
}
