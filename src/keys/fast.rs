//! Canonical joins without the URL parser, for the link targets most pages are made of.
//!
//! An extracted link becomes a canonical URL by resolving it against the page's base (WHATWG
//! parsing) and canonicalizing the result ([`Canonicalizer::canonicalize_parsed`]). On the
//! peerbench web that was a URL parse and a canonical round per distinct target of a page
//! (5.4 million for 5.6 million links: the extractor's caches, sized by a partition's share of
//! the sort budget, cannot hold a partition's URLs), ~6% of a crawl's CPU.
//!
//! Most targets need none of what the parser does: `p/12.html`, `/docs/a.html#top`,
//! `//example.com/x` or `https://example.com:8080/x` resolve by concatenation when the base is
//! canonical and the target holds no escape, query, dot segment, upper-case host, default or
//! zero-padded port, IDNA label or numeric host. [`FastBase::join`] writes those directly, and
//! says so; every other target goes the parser's way. Its result is exactly the parser's:
//! `tests` compare the two over generated targets and bases.

use std::collections::HashSet;

use url::{Position, Url};

use super::Canonicalizer;

/// A page's base URL, when the joins of simple targets against it can be written out: it is
/// http(s), without user information, and canonical up to its path.
#[derive(Debug, Clone, Copy)]
pub struct FastBase<'a> {
    /// `http` or `https`.
    scheme: &'a str,
    /// The scheme and authority: `https://example.com:8080`.
    origin: &'a str,
    /// Everything up to the last `/` of the path, included.
    dir: &'a str,
    /// [`super::host_key`] of the host.
    host_key: u64,
}

impl<'a> FastBase<'a> {
    /// The fast base of `base`, if it has one: `base` is http(s), has no user information, and
    /// up to its path is its own canonical form under `canon`'s rules. That takes a parse,
    /// unless the base's directory is in `known` and its last segment is a simple path: then
    /// the base is canonical for the reason a simple join is. A base found canonical adds its
    /// directory to `known`.
    pub fn new(canon: &Canonicalizer, base: &'a Url, known: &mut KnownDirs) -> Option<Self> {
        let scheme = base.scheme();
        if !matches!(scheme, "http" | "https") || !base.username().is_empty() {
            return None;
        }
        if base.password().is_some() || base.host_str().is_none_or(str::is_empty) {
            return None;
        }
        let upto_path = &base[..Position::AfterPath];
        let origin = &base[..Position::BeforePath];
        let dir = &upto_path[..=upto_path.rfind('/')?];
        if dir.len() < origin.len() + 1 {
            return None;
        }
        if !(known.0.contains(dir) && simple_path(&upto_path[dir.len()..])) {
            match canon.canonicalize(upto_path, None) {
                Ok(key) if key.url == upto_path => known.insert(dir),
                _ => return None,
            }
        }
        Some(FastBase {
            scheme,
            origin,
            dir,
            host_key: super::host_key(base.host_str()?),
        })
    }

    /// Appends the canonical URL of `target` resolved against this base to `out` and returns
    /// its [`super::host_key`], if `target` is simple enough to need no parser (see the module
    /// docs); else leaves `out` as it was and returns `None`. The caller checks the result's
    /// length against `max_url_len`, as for any canonical URL.
    pub fn join(&self, target: &str, out: &mut String) -> Option<u64> {
        // The fragment is dropped, but must hold no whitespace or control (which the parser
        // strips or removes anywhere) and no non-ASCII; the rest is checked byte by byte below.
        let end = memchr::memchr(b'#', target.as_bytes()).unwrap_or(target.len());
        if !target.as_bytes()[end..]
            .iter()
            .all(|&c| (0x21..0x7f).contains(&c))
        {
            return None;
        }
        let t = &target[..end];
        let (prefix_scheme, authority_and_path, prefix): (&str, &str, &str) =
            if let Some(rest) = t.strip_prefix("http://") {
                ("http", rest, "")
            } else if let Some(rest) = t.strip_prefix("https://") {
                ("https", rest, "")
            } else if let Some(rest) = t.strip_prefix("//") {
                (self.scheme, rest, "")
            } else if t.starts_with('/') {
                ("", t, self.origin)
            } else if !t.is_empty() {
                ("", t, self.dir)
            } else {
                return None;
            };
        if prefix_scheme.is_empty() {
            if !simple_path(authority_and_path) {
                return None;
            }
            out.push_str(prefix);
            out.push_str(authority_and_path);
            return Some(self.host_key);
        }
        let slash = authority_and_path.find('/')?;
        let (authority, path) = authority_and_path.split_at(slash);
        let host = simple_authority(prefix_scheme, authority)?;
        if !simple_path(path) {
            return None;
        }
        out.push_str(prefix_scheme);
        out.push_str("://");
        out.push_str(authority);
        out.push_str(path);
        Some(super::host_key(host))
    }
}

/// Directories (`http://host/a/b/`) of bases found canonical ([`FastBase::new`]), so that
/// most pages' bases are checked without a parse. Bounded: emptied at [`KnownDirs::MAX`].
#[derive(Debug, Default)]
pub struct KnownDirs(HashSet<Box<str>>);

impl KnownDirs {
    /// Directories kept before the set is emptied.
    pub const MAX: usize = 4096;

    fn insert(&mut self, dir: &str) {
        if self.0.len() >= KnownDirs::MAX {
            self.0.clear();
        }
        self.0.insert(dir.into());
    }
}

/// Bytes a path may hold and keep through parsing and canonicalization as they are: none the
/// parser encodes, no `%` (escapes are normalized), `;` (session ids are removed), `?` (a
/// query), `:` (a scheme, in a relative target's first segment) or `\` (a `/` to the parser).
const PATH_BYTES: [bool; 256] = super::alnum_and(b"-._~/!$&()*+,=@");

/// A path (or a relative target) of [`PATH_BYTES`] with no `.` or `..` segment, in one pass.
fn simple_path(path: &str) -> bool {
    let dot_segment = |len: usize, dots: usize| len > 0 && len == dots && dots <= 2;
    let (mut len, mut dots) = (0, 0);
    for &c in path.as_bytes() {
        if !PATH_BYTES[c as usize] {
            return false;
        }
        if c == b'/' {
            if dot_segment(len, dots) {
                return false;
            }
            (len, dots) = (0, 0);
        } else {
            len += 1;
            dots += usize::from(c == b'.');
        }
    }
    !dot_segment(len, dots)
}

/// `host[:port]` as the parser and canonicalization would leave it: lower-case ASCII labels
/// (letters, digits, `-`), none empty or an IDNA A-label (`xn--`), the last starting with a
/// letter (so the host is no IPv4 number); a port of digits without a leading zero, at most
/// 65535, and not the scheme's default. Returns the host.
fn simple_authority<'a>(scheme: &str, authority: &'a str) -> Option<&'a str> {
    let (host, port) = match authority.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    };
    let labels_ok = host.split('.').all(|l| {
        !l.is_empty()
            && !l.starts_with("xn--")
            && l.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    });
    let last_ok = host
        .rsplit('.')
        .next()
        .is_some_and(|l| l.as_bytes().first().is_some_and(u8::is_ascii_lowercase));
    let port_ok = port.is_none_or(|p| {
        let default = if scheme == "http" { 80 } else { 443 };
        !p.is_empty()
            && p.len() <= 5
            && p.bytes().all(|c| c.is_ascii_digit())
            && !p.starts_with('0')
            && p.parse::<u32>().is_ok_and(|n| n <= 65535 && n != default)
    });
    (labels_ok && last_ok && port_ok).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::CanonConfig;
    use proptest::prelude::*;

    /// What the extractor's slow path makes of `target`: the parser's join (fragment removed),
    /// then canonicalization of the parsed URL.
    fn slow(canon: &Canonicalizer, base: &Url, target: &str) -> Option<String> {
        let mut url = base.join(target).ok()?;
        url.set_fragment(None);
        canon.canonicalize_parsed(url).ok().map(|k| k.url)
    }

    fn fast(canon: &Canonicalizer, base: &Url, target: &str) -> Option<String> {
        // Twice: checked by a parse, then by its known directory.
        let mut known = KnownDirs::default();
        let first = FastBase::new(canon, base, &mut known).map(|b| (b.origin, b.dir, b.host_key));
        let fb = FastBase::new(canon, base, &mut known);
        assert_eq!(first, fb.map(|b| (b.origin, b.dir, b.host_key)), "{base}");
        let fb = fb?;
        let mut out = String::from("junk");
        let taken = fb.join(target, &mut out);
        assert!(out.starts_with("junk"));
        let Some(host_key) = taken else {
            assert_eq!(
                out, "junk",
                "{target:?} appended to out without being taken"
            );
            return None;
        };
        let url = &out["junk".len()..];
        let parsed = Url::parse(url).expect("the fast way writes URLs");
        assert_eq!(
            host_key,
            crate::keys::host_key(parsed.host_str().unwrap()),
            "{url}"
        );
        Some(url.to_owned())
    }

    const BASES: &[&str] = &[
        "http://h0109.peer.test:8081/p/0001.html",
        "http://example.com/",
        "https://example.com/a/b/c?x=1&y=2",
        "https://www.example.org:8443/dir/",
        "http://127.0.0.1:8080/x/y",
        "http://[::1]:9000/a/b",
        "http://a.b/%7Efoo/bar.html",
        "http://a.b/%41/x",
        "http://a.b/x;jsessionid=AB12/y",
        "http://user:pw@a.b/x",
        "http://Example.COM/x",
        "http://example.com./x",
        "http://example.com:80/x",
        "https://xn--bcher-kva.example/a",
        "file:///tmp/x",
    ];

    #[test]
    fn common_targets_take_the_fast_way_and_match_the_parser() {
        let canon = Canonicalizer::default();
        let base = Url::parse(BASES[0]).unwrap();
        for t in [
            "p/0622.html",
            "/p/0004.html",
            "p/0622.html#s7",
            "/p/0080.print.html#s3",
            "http://h0109.peer.test:8081/p/0562.html",
            "http://h0110.peer.test:8081/",
            "//h0109.peer.test:8081/p/0469.html",
            "https://example.com/a",
            "a//b/",
            "x/.../y",
            "/a@b/c!$&()*+,=~",
        ] {
            let f = fast(&canon, &base, t);
            assert!(f.is_some(), "{t:?} should take the fast way");
            assert_eq!(f, slow(&canon, &base, t), "{t:?}");
        }
        for t in [
            "./p/0860.html",
            "../x",
            "a/./b",
            "p/x.html?q=1",
            "p/%41.html",
            "p/x;jsessionid=1",
            "http://H0110.peer.test/",
            "http://a.test:80/",
            "http://a.test:0080/",
            "http://a.test:/",
            "http://1.2.3.4/",
            "http://a.0x10/",
            "http://xn--bcher-kva.example/",
            "http://a..b/",
            "http://a.b",
            "https://a.b:443/",
            "mailto:x@y",
            "javascript:void(0)",
            "",
            "#top",
            "p/ x",
            "p\\x",
            "p/caf\u{e9}",
            "HTTP://a.b/",
        ] {
            assert_eq!(
                fast(&canon, &base, t),
                None,
                "{t:?} should go the parser's way"
            );
        }
        for b in [
            "http://user:pw@a.b/x",
            "http://example.com./x",
            "http://a.b/x;jsessionid=AB12/y",
            "http://a.b/%7Efoo/",
            "file:///tmp/x",
        ] {
            let known = &mut KnownDirs::default();
            assert!(
                FastBase::new(&canon, &Url::parse(b).unwrap(), known).is_none(),
                "{b}"
            );
        }
    }

    /// Pieces of targets: every form the fast way takes, and every byte or form it must leave
    /// to the parser.
    const PIECES: &[&str] = &[
        "http://",
        "https://",
        "//",
        "/",
        "./",
        "../",
        ".",
        "..",
        "xn--",
        ":8081",
        ":80",
        ":0",
        "%2e",
        "%41",
        ";jsessionid=1",
        "a",
        "B",
        "7",
        "p.html",
        "-",
        "@",
        ":",
        "?",
        "#",
        "%",
        "\\",
        " ",
        "\t",
        "'",
        "\"",
        "<",
        "`",
        "{",
        "|",
        "^",
        "[",
        "]",
        "\u{e9}",
        "~",
        "!",
    ];

    /// Every target of up to three pieces against every base: the fast way agrees with the
    /// parser wherever it answers, and answers often (so the test cannot pass by declining).
    #[test]
    fn the_fast_way_is_the_parsers_way_for_every_short_target() {
        let canon = Canonicalizer::default();
        let bases: Vec<Url> = BASES.iter().map(|b| Url::parse(b).unwrap()).collect();
        let (mut taken, mut all) = (0, 0);
        let n = PIECES.len();
        for code in 0..(n * n * n + n * n + n + 1) {
            let (mut t, mut c) = (String::new(), code);
            while c > 0 {
                t.push_str(PIECES[(c - 1) % n]);
                c = (c - 1) / n;
            }
            for base in &bases {
                all += 1;
                if let Some(f) = fast(&canon, base, &t) {
                    taken += 1;
                    assert_eq!(Some(f), slow(&canon, base, &t), "{base} + {t:?}");
                }
            }
        }
        // 28,251 of 984,615 when written: most combinations are no simple target.
        assert!(taken > 20_000, "fast way taken {taken} times of {all}");
    }

    fn target() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            proptest::sample::select(PIECES).prop_map(str::to_owned),
            "[a-zA-Z0-9]{1,6}",
            "[-._~!$&()*+,=@:;?#%\\\\ \t'\"<>`{}|^\\[\\]]",
        ];
        proptest::collection::vec(piece, 0..8).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// Whatever the target, the fast way either declines or gives what the parser and
        /// canonicalization give.
        #[test]
        fn the_fast_way_is_the_parsers_way(b in 0..BASES.len(), t in target(), sort in any::<bool>()) {
            let canon = Canonicalizer::new(&CanonConfig { sort_query: sort, ..CanonConfig::default() });
            let base = Url::parse(BASES[b]).unwrap();
            if let Some(f) = fast(&canon, &base, &t) {
                prop_assert_eq!(Some(f), slow(&canon, &base, &t), "target {:?}", t);
            }
        }
    }
}
