//! URL keys: canonical URLs, fingerprints, host keys, partitions and SURTs (docs/design.md §3).
//!
//! - [`Canonicalizer`] turns an input URL into its canonical form, once, on entry; every later
//!   stage sees only canonical URLs.
//! - [`fingerprint`] (xxh3-64 of the canonical URL) identifies a URL in run files and the seen
//!   set; [`host_key`] (xxh3-64 of the host) groups a host's URLs.
//! - [`partition_of`] maps a host key onto one of the crawl's M logical partitions, so all URLs
//!   of a host live in one partition and one fetch task owns the host's politeness.
//! - [`surt()`] computes the SURT keys CDXJ indexes are sorted on, compatible with pywb and
//!   warcio.
//!
//! `docs/keys.md` explains each rule and records the conformance numbers.

mod canon;
mod fast;
pub mod surt;

pub use canon::{strip_userinfo, CanonConfig, CanonError, Canonicalizer};
pub use fast::{FastBase, KnownDirs};
pub use surt::surt;

use xxhash_rust::xxh3::xxh3_64;

/// A byte class for the fast paths' scans: ASCII letters and digits, and the bytes of `extra`.
const fn alnum_and(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c as u8).is_ascii_alphanumeric();
        c += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    t
}

/// The fingerprint of a canonical URL: xxh3-64 of its bytes.
///
/// Only canonical URLs may be fingerprinted: the point of the fingerprint is that equivalent
/// URLs share it.
pub fn fingerprint(canonical_url: &str) -> u64 {
    xxh3_64(canonical_url.as_bytes())
}

/// The key of a canonical host: xxh3-64 of the host as the `url` crate serializes it (lower
/// case, IDNA A-labels, no port, an IPv6 address in brackets).
pub fn host_key(host: &str) -> u64 {
    xxh3_64(host.as_bytes())
}

/// The host of a canonical URL string, as [`UrlKey::host`] has it (no user info, no port; an
/// IPv6 address keeps its brackets), without parsing the URL again. Empty if there is none.
pub fn host_of(canonical_url: &str) -> &str {
    // Byte scans (each delimiter is ASCII, so every cut is a char boundary): this runs for
    // every link a fetch follows and every URL a split routes.
    let b = canonical_url.as_bytes();
    let mut from = 0;
    let rest = loop {
        let Some(i) = memchr::memchr(b':', &b[from..]).map(|i| from + i) else {
            return "";
        };
        if b[i + 1..].starts_with(b"//") {
            break &canonical_url[i + 3..];
        }
        from = i + 1;
    };
    let end = rest
        .bytes()
        .position(|c| matches!(c, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let authority = &rest[..end];
    let hostport =
        memchr::memrchr(b'@', authority.as_bytes()).map_or(authority, |i| &authority[i + 1..]);
    if hostport.starts_with('[') {
        return hostport.find(']').map_or(hostport, |i| &hostport[..=i]);
    }
    &hostport[..memchr::memchr(b':', hostport.as_bytes()).unwrap_or(hostport.len())]
}

/// The origin of `url` (`scheme://host[:port]`) as [`url::Origin::ascii_serialization`] writes
/// it, borrowed from the URL's own text where that is the same string: an http(s) URL without
/// user info, whose serialization already has the host in ASCII and no default port. Robots
/// policies are keyed by it, and the fetch asked for it (a `format!`) once or twice a page.
pub fn origin(url: &url::Url) -> std::borrow::Cow<'_, str> {
    if matches!(url.scheme(), "http" | "https")
        && url.has_host()
        && url.username().is_empty()
        && url.password().is_none()
    {
        std::borrow::Cow::Borrowed(&url[..url::Position::BeforePath])
    } else {
        std::borrow::Cow::Owned(url.origin().ascii_serialization())
    }
}

/// The registered domain of a canonical host ("eTLD+1" by the Public Suffix List, compiled in
/// through the `psl` crate): `a1.trap.example.co.uk` -> `example.co.uk`. An IP address, a name
/// with no public suffix rule, or a public suffix itself is its own domain. Budgets per domain
/// use it, so a trap minting subdomains (`a1.trap.example`, `a2.trap.example`, ...) shares one
/// budget (`[scope] max_new_urls_per_domain`, `[prioritize] max_urls_per_domain_total`).
pub fn registered_domain(host: &str) -> &str {
    if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
        return host;
    }
    psl::domain_str(host).unwrap_or(host)
}

#[cfg(test)]
mod domain_tests {
    #[test]
    fn registered_domains() {
        use super::registered_domain as d;
        assert_eq!(d("a1.trap.example.co.uk"), "example.co.uk");
        assert_eq!(d("www.example.com"), "example.com");
        assert_eq!(d("s3.trap-subs.test"), "trap-subs.test");
        assert_eq!(d("h0001.websim.test"), "websim.test");
        assert_eq!(d("user.github.io"), "user.github.io");
        assert_eq!(d("127.0.0.1"), "127.0.0.1");
        assert_eq!(d("[::1]"), "[::1]");
    }
}

/// The key of a registered domain (xxh3-64, like [`host_key`]).
pub fn domain_key(host: &str) -> u64 {
    xxh3_64(registered_domain(host).as_bytes())
}

/// The logical partition, in `0..partitions`, of a host key.
///
/// `((host_key as u128 * partitions as u128) >> 64)` is Lemire's "fast range" reduction: it
/// scales the 64-bit key onto `0..partitions` with a multiply instead of a division. Because
/// xxh3 output is uniform, every partition gets a share of the key space that differs from
/// `2^64 / partitions` by less than one key, for any M (not only powers of two). And the mapping
/// is monotonic: partition `p` owns the contiguous key range
/// `[ceil(p * 2^64 / M), ceil((p + 1) * 2^64 / M))`, so records sorted by host key are also
/// sorted by partition, and a sorted run splits into partitions by cutting it at M - 1 points,
/// with no re-sort. (A modulo would scatter neighbouring keys over all partitions.)
///
/// `partitions` must be at least 1 (checked in debug builds; a release build maps everything
/// to partition 0 when it is 0).
pub fn partition_of(host_key: u64, partitions: u32) -> u32 {
    debug_assert!(partitions > 0, "a crawl has at least one partition");
    ((u128::from(host_key) * u128::from(partitions)) >> 64) as u32
}

/// A canonical URL with its keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UrlKey {
    /// The canonical URL.
    pub url: String,
    /// [`fingerprint`] of `url`.
    pub fingerprint: u64,
    /// The URL's host as the `url` crate serializes it (no port; IPv6 in brackets); empty for
    /// a URL without a host.
    pub host: String,
    /// [`host_key`] of `host`.
    pub host_key: u64,
}

impl UrlKey {
    /// The keys of a URL that is already canonical (as [`Canonicalizer::canonicalize_url`]
    /// returns it). The URL is not canonicalized again.
    pub fn new(canonical: url::Url) -> UrlKey {
        let host = canonical.host_str().unwrap_or_default().to_owned();
        let url: String = canonical.into();
        UrlKey {
            fingerprint: fingerprint(&url),
            host_key: host_key(&host),
            url,
            host,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_xxh3_of_the_strings() {
        let key = UrlKey::new(url::Url::parse("http://[::1]:8080/a").unwrap());
        assert_eq!(key.host, "[::1]");
        assert_eq!(key.fingerprint, xxh3_64(b"http://[::1]:8080/a"));
        assert_eq!(key.host_key, xxh3_64(b"[::1]"));
        assert_eq!(fingerprint(""), 0x2d06800538d394c2);
    }

    #[test]
    fn origin_is_the_url_crates() {
        for u in [
            "http://a.example/x",
            "http://a.example:80/x",
            "https://a.example:443/",
            "https://a.example:80/",
            "http://user:pw@b.example:8080/?q",
            "http://@c.example/",
            "http://[::1]:8080/a",
            "http://127.0.1.1:8081/p/0001.html",
            "http://B\u{fc}cher.Example/x#f",
            "ftp://f.example/",
            "file:///etc/hosts",
            "data:text/plain,x",
        ] {
            let url = url::Url::parse(u).unwrap();
            assert_eq!(origin(&url), url.origin().ascii_serialization(), "{u}");
        }
    }

    #[test]
    fn host_of_agrees_with_the_url_crate() {
        for u in [
            "http://a.example/x",
            "http://user:pw@b.example:8080/?q",
            "http://[::1]:8080/a",
            "https://[2001:db8::1]/",
            "http://127.0.0.1:9/",
            "http://c.example?x",
        ] {
            let key = UrlKey::new(url::Url::parse(u).unwrap());
            assert_eq!(host_of(u), key.host, "{u}");
        }
        assert_eq!(host_of("no-scheme"), "");
    }

    proptest::proptest! {
        /// The byte scans cut any string where `str` splitting did.
        #[test]
        fn host_of_cuts_as_splitting_did(u in "[a:/@?#\\[\\]é1]{0,16}") {
            fn by_splitting(u: &str) -> &str {
                let Some((_, rest)) = u.split_once("://") else {
                    return "";
                };
                let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
                let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                if hostport.starts_with('[') {
                    return hostport.find(']').map_or(hostport, |i| &hostport[..=i]);
                }
                hostport.split(':').next().unwrap_or("")
            }
            proptest::prop_assert_eq!(host_of(&u), by_splitting(&u));
        }
    }

    #[test]
    fn partitions_are_contiguous_key_ranges() {
        assert_eq!(partition_of(0, 256), 0);
        assert_eq!(partition_of(u64::MAX, 256), 255);
        assert_eq!(partition_of(1 << 56, 256), 1);
        assert_eq!(partition_of((1 << 56) - 1, 256), 0);
        assert_eq!(partition_of(u64::MAX, 1), 0);
        assert_eq!(partition_of(u64::MAX, 3), 2);
        assert_eq!(partition_of(u64::MAX / 3, 3), 0);
        assert_eq!(partition_of(u64::MAX / 3 + 1, 3), 1);
        // Monotonic in the key.
        let mut keys: Vec<u64> = (0..1000u64).map(|i| xxh3_64(&i.to_le_bytes())).collect();
        keys.sort_unstable();
        let parts: Vec<u32> = keys.iter().map(|&k| partition_of(k, 7)).collect();
        assert!(parts.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn partitions_are_balanced() {
        let m = 10u32;
        let mut counts = vec![0u32; m as usize];
        for i in 0..100_000u64 {
            counts[partition_of(xxh3_64(&i.to_le_bytes()), m) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
    }
}
