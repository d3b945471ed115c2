//! dragnet's resolver table reads the hosts files websim writes: every host of a web (and of a
//! graph web) resolves to the loopback address websim serves it on, without `/etc/hosts`.

use std::net::IpAddr;
use std::path::Path;

use dragnet::resolve::{ResolveConfig, Resolver};
use websim::model::{Web, WebConfig};

#[test]
fn websim_hosts_file_resolves_every_host() {
    let web = Web::new(WebConfig {
        hosts: 300,
        listeners: 5,
        ..WebConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("websim.hosts");
    std::fs::write(&path, websim::cli::hosts_file(&web)).unwrap();
    let cfg = ResolveConfig {
        hosts_files: vec!["websim.hosts".into()],
        ..ResolveConfig::default()
    };
    let r = Resolver::from_config(&cfg, dir.path(), &dir.path().join("crawl.toml")).unwrap();
    assert_eq!(r.len(), web.hosts.len());
    for h in &web.hosts {
        let got = r.lookup(&h.name, web.config.port).expect(&h.name);
        assert_eq!(got, &[IpAddr::V4(h.addr)], "{}", h.name);
        assert!(h.addr.is_loopback());
    }
    // A name websim does not serve falls through to the system resolver.
    assert!(r.lookup("x001.outside.test", web.config.port).is_none());
}

#[test]
fn export_hosts_file_resolves_too() {
    let web = Web::new(WebConfig {
        hosts: 20,
        pages: 5,
        hostile_every: 0,
        ..WebConfig::default()
    });
    let dir = tempfile::tempdir().unwrap();
    websim::export::export(&web, dir.path()).unwrap();
    let mut r = Resolver::default();
    let text = std::fs::read_to_string(dir.path().join("hosts")).unwrap();
    r.add_hosts_text(&text, Path::new("hosts")).unwrap();
    for h in &web.hosts {
        assert_eq!(r.lookup(&h.name, 80), Some(&[IpAddr::V4(h.addr)][..]));
    }
}
