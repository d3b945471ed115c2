//! URL canonicalization on entry (docs/design.md §3).
//!
//! Every URL that enters the crawl (seeds, extracted links, redirects) goes through
//! [`Canonicalizer::canonicalize`] once; every later stage handles only the canonical form, and
//! the URL fingerprint is computed on it. Two URLs that canonicalize alike are fetched once.
//!
//! The transform is WHATWG parsing (the `url` crate, as browsers do: lower-case host, IDNA,
//! IPv4 forms, default port, dot segments, `/` for an empty path) followed by edits that RFC 3986
//! §6 lists as equivalence-preserving, plus the configurable query rules of [`CanonConfig`];
//! user information (credentials) is removed, so no password is stored or sent.
//! It is *idempotent*: canonicalizing a canonical URL (after serializing and re-parsing it)
//! gives it back unchanged. That is what makes fingerprints stable across stages and cycles; it
//! is checked over the whole WHATWG test corpus and by a property test
//! (`tests/url_conformance.rs`). Rules and defaults are explained in `docs/keys.md`.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use url::Url;

use super::UrlKey;

/// Inputs longer than this many times [`CanonConfig::max_url_len`] are rejected before parsing,
/// so a pathological multi-megabyte `href` costs nothing.
const INPUT_LEN_FACTOR: usize = 16;

/// Error messages quote at most this many bytes of the offending input.
const QUOTED_INPUT_MAX: usize = 256;

/// Re-parse rounds [`Canonicalizer::canonicalize_url`] allows before settling; in practice the
/// second round always confirms the first.
const MAX_ROUNDS: usize = 4;

/// The `[canon]` section of `crawl.toml`: the URL canonicalization rules of a crawl.
///
/// Changing these on an existing crawl changes fingerprints: URLs already seen under the old
/// rules may be crawled again under their new canonical form.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CanonConfig {
    /// Query arguments to remove, by name, matched ASCII-case-insensitively. A name ending in
    /// `*` matches every name starting with the rest (`utm_*`). The default removes session ids
    /// (`jsessionid`, `phpsessid`, `aspsessionid*`, `cfid`, `cftoken`, `sessionid`,
    /// `session_id`) and per-click tracking tags (`utm_*`, `gclid`, `fbclid`): they never change
    /// the page, but make every visit's links distinct URLs. `sid` is deliberately absent: many
    /// sites use it for content ids.
    pub drop_query_params: Vec<String>,
    /// Remove `;jsessionid=…` path parameters (Java servlet URL rewriting):
    /// `/cart.do;jsessionid=A1B2?x=1` becomes `/cart.do?x=1`. Default: true.
    pub strip_path_session_ids: bool,
    /// Sort query arguments by name (stable: repeated names keep their order). Default: false,
    /// because argument order is significant to some servers (`?a=1&b=2` and `?b=2&a=1` can be
    /// different pages, e.g. order-sensitive signatures or positional handlers), and a wrong
    /// merge loses a page while a missed merge only costs a duplicate fetch.
    pub sort_query: bool,
    /// Remove an empty query: `http://a/b?` becomes `http://a/b`. Default: true.
    pub drop_empty_query: bool,
    /// Longest canonical URL accepted, in bytes; longer ones are rejected (`TooLong`). Default:
    /// 2048, the limit search engines and sitemaps use; longer URLs are nearly always traps.
    pub max_url_len: usize,
}

impl Default for CanonConfig {
    fn default() -> Self {
        let params = [
            "jsessionid",
            "phpsessid",
            "aspsessionid*",
            "cfid",
            "cftoken",
            "sessionid",
            "session_id",
            "utm_*",
            "gclid",
            "fbclid",
        ];
        CanonConfig {
            drop_query_params: params.iter().map(|s| s.to_string()).collect(),
            strip_path_session_ids: true,
            sort_query: false,
            drop_empty_query: true,
            max_url_len: 2048,
        }
    }
}

/// Why an input could not become a crawlable canonical URL.
#[derive(Debug, thiserror::Error)]
pub enum CanonError {
    /// The input is not a URL (or not one relative to the base).
    #[error("cannot parse URL {input:?}: {source}")]
    Parse {
        /// The input, as given (at most 256 bytes of it).
        input: String,
        /// The parser's reason.
        #[source]
        source: url::ParseError,
    },
    /// The URL's scheme is not crawled.
    #[error("URL {input:?} has scheme {scheme:?}; only http and https URLs are crawled")]
    Scheme {
        /// The input, as given (at most 256 bytes of it).
        input: String,
        /// The URL's scheme.
        scheme: String,
    },
    /// The URL has no host.
    #[error("URL {input:?} has no host")]
    NoHost {
        /// The input, as given (at most 256 bytes of it).
        input: String,
    },
    /// The URL is longer than `max_url_len`.
    #[error(
        "URL is {len} bytes long, over the limit of {max} bytes; raise canon.max_url_len in \
         crawl.toml to accept it"
    )]
    TooLong {
        /// Length of the canonical URL (or of the input, if it was rejected before parsing).
        len: usize,
        /// The configured limit.
        max: usize,
    },
}

fn quoted(input: &str) -> String {
    if input.len() <= QUOTED_INPUT_MAX {
        return input.to_owned();
    }
    let mut end = QUOTED_INPUT_MAX;
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &input[..end])
}

/// Applies a [`CanonConfig`] to URLs.
#[derive(Debug, Clone)]
pub struct Canonicalizer {
    config: CanonConfig,
    /// `drop_query_params` without `*`, lower-cased.
    drop_exact: Vec<String>,
    /// `drop_query_params` ending in `*`, without it, lower-cased.
    drop_prefix: Vec<String>,
}

impl Default for Canonicalizer {
    fn default() -> Self {
        Canonicalizer::new(&CanonConfig::default())
    }
}

impl Canonicalizer {
    /// A canonicalizer applying `config`.
    pub fn new(config: &CanonConfig) -> Self {
        let mut drop_exact = Vec::new();
        let mut drop_prefix = Vec::new();
        for name in &config.drop_query_params {
            match name.strip_suffix('*') {
                Some(prefix) => drop_prefix.push(prefix.to_ascii_lowercase()),
                None => drop_exact.push(name.to_ascii_lowercase()),
            }
        }
        Canonicalizer {
            config: config.clone(),
            drop_exact,
            drop_prefix,
        }
    }

    /// The configuration this canonicalizer applies.
    pub fn config(&self) -> &CanonConfig {
        &self.config
    }

    /// The crawl's entry point: trim surrounding ASCII whitespace, parse `input` (relative to
    /// `base` if given), require an `http`/`https` URL with a host, canonicalize it
    /// ([`Canonicalizer::canonicalize_url`]) and enforce `max_url_len`.
    pub fn canonicalize(&self, input: &str, base: Option<&Url>) -> Result<UrlKey, CanonError> {
        let trimmed = input.trim_matches(|c: char| c.is_ascii_whitespace());
        let max = self.config.max_url_len;
        if trimmed.len() > max.saturating_mul(INPUT_LEN_FACTOR) {
            return Err(CanonError::TooLong {
                len: trimmed.len(),
                max,
            });
        }
        let parsed = match base {
            Some(base) => base.join(trimmed),
            None => Url::parse(trimmed),
        };
        let url = parsed.map_err(|source| CanonError::Parse {
            input: quoted(input),
            source,
        })?;
        self.checked(url, Some(input))
    }

    /// [`Canonicalizer::canonicalize`] of `url.as_str()` without a base, for a URL the caller
    /// has parsed already (a link target the extractor resolved): the same checks and the same
    /// result, without parsing the URL again. The `url` crate holds that parsing a URL's
    /// serialization gives the same URL back (`Url::check_invariants`), so this is what parsing
    /// `url.as_str()` would have started from.
    pub fn canonicalize_parsed(&self, url: Url) -> Result<UrlKey, CanonError> {
        let max = self.config.max_url_len;
        let len = url.as_str().len();
        if len > max.saturating_mul(INPUT_LEN_FACTOR) {
            return Err(CanonError::TooLong { len, max });
        }
        self.checked(url, None)
    }

    /// The checks of [`Canonicalizer::canonicalize`] after parsing, then canonicalization;
    /// `input` (or else the URL) is quoted in errors.
    fn checked(&self, url: Url, input: Option<&str>) -> Result<UrlKey, CanonError> {
        let max = self.config.max_url_len;
        let input = || quoted(input.unwrap_or(url.as_str()));
        if !matches!(url.scheme(), "http" | "https") {
            return Err(CanonError::Scheme {
                input: input(),
                scheme: url.scheme().to_owned(),
            });
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(CanonError::NoHost { input: input() });
        }
        let url = self.canonicalize_url(url);
        let len = url.as_str().len();
        if len > max {
            return Err(CanonError::TooLong { len, max });
        }
        Ok(UrlKey::new(url))
    }

    /// The canonical form of any parsed URL (any scheme).
    ///
    /// The fragment and the user information (`user:secret@`, credentials: [`strip_userinfo`])
    /// are always removed. For the WHATWG "special" schemes (http, https, ws, wss, ftp, file), in
    /// addition to what parsing already did: trailing dots of a domain host are removed
    /// (`example.com.` is `example.com`); in path and query, escapes of unreserved characters
    /// are decoded and the others upper-cased (`%7e%2f` is `~%2F`, RFC 3986 §6.2.2);
    /// `;jsessionid=` path parameters and the configured query arguments are removed, the query
    /// optionally sorted, and an empty query dropped. Other schemes keep everything else as the
    /// parser gave it: without a known syntax, no other edit is known to be safe.
    ///
    /// The result is a fixed point: serializing it, re-parsing and canonicalizing again gives
    /// the same string. Edits can enable each other (removing a parameter can empty the
    /// query), so rounds repeat until the re-parsed result comes back unchanged.
    ///
    /// A round that edits nothing is already the fixed point: the `url` crate holds that
    /// parsing a URL's serialization gives the same URL back (`Url::check_invariants`), so the
    /// re-parse would give back the URL the round just left as it was, and is skipped. (Most
    /// URLs a crawl meets are such: one parse each instead of two.)
    pub fn canonicalize_url(&self, url: Url) -> Url {
        let (mut current, edited) = self.round(url);
        if !edited {
            return current;
        }
        for _ in 0..MAX_ROUNDS {
            let Ok(reparsed) = Url::parse(current.as_str()) else {
                return current;
            };
            let (next, _) = self.round(reparsed);
            if next.as_str() == current.as_str() {
                return next;
            }
            current = next;
        }
        current
    }

    /// One round of edits on a parsed URL, and whether it may have changed the URL (false only
    /// if it certainly did not).
    fn round(&self, mut url: Url) -> (Url, bool) {
        let mut edited = url.fragment().is_some();
        url.set_fragment(None);
        edited |= strip_userinfo(&mut url);
        if !url.is_special() {
            return (url, edited);
        }
        if let Some(url::Host::Domain(domain)) = url.host() {
            let trimmed = domain.trim_end_matches('.');
            if trimmed.len() != domain.len() && !trimmed.is_empty() {
                let trimmed = trimmed.to_owned();
                // A trimmed name that the host parser refuses (say `1.2.3.999` after
                // `1.2.3.999..`) keeps its dots: the URL stays as parsed.
                let _ = url.set_host(Some(&trimmed));
                edited = true;
            }
        }
        let path = normalize_escapes(url.path());
        let path = if self.config.strip_path_session_ids {
            Cow::Owned(strip_jsessionid(&path).into_owned())
        } else {
            path
        };
        if path != url.path() {
            let path = path.into_owned();
            url.set_path(&path);
            edited = true;
        }
        if let Some(query) = url.query() {
            let normalized = normalize_escapes(query);
            let new = self.query_rules(&normalized);
            if new.as_deref() != Some(query) {
                url.set_query(new.as_deref());
                edited = true;
            }
        }
        (url, edited)
    }

    /// Apply `drop_query_params`, `sort_query` and `drop_empty_query` to a query (without `?`).
    fn query_rules(&self, query: &str) -> Option<String> {
        if query.is_empty() {
            return (!self.config.drop_empty_query).then(String::new);
        }
        let mut args: Vec<&str> = query.split('&').collect();
        let before = args.len();
        args.retain(|arg| !self.drops(arg_name(arg)));
        let dropped = args.len() != before;
        if self.config.sort_query {
            args.sort_by(|a, b| arg_name(a).cmp(arg_name(b)));
        }
        let out = args.join("&");
        if out.is_empty() && (dropped || self.config.drop_empty_query) {
            None
        } else {
            Some(out)
        }
    }

    fn drops(&self, name: &str) -> bool {
        self.drop_exact.iter().any(|d| d.eq_ignore_ascii_case(name))
            || self.drop_prefix.iter().any(|p| {
                name.len() >= p.len()
                    && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
            })
    }
}

/// Removes the user information (`user:password@`) of `url`, if it has any; `true` if it did.
///
/// Credentials in a URL are never crawled with (a crawler sends no one's password) and must not
/// be stored: canonicalization strips them, as Heritrix's `StripUserinfoRule` does, so they
/// never reach the URL db, a fingerprint, a WARC record or an index, and every `user:pw@`
/// spelling of a page is one URL. The fetch client applies it to a redirect's `Location` too.
pub fn strip_userinfo(url: &mut Url) -> bool {
    if url.username().is_empty() && url.password().is_none() {
        return false;
    }
    // Both only fail for URLs that cannot have user information (no host, `file:`).
    let _ = url.set_password(None);
    let _ = url.set_username("");
    true
}

fn arg_name(arg: &str) -> &str {
    arg.split('=').next().unwrap_or(arg)
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 §6.2.2.1–2 on a serialized path or query: decode escapes of unreserved characters,
/// upper-case the hex of the others. Text that is not a valid escape (a lone `%`) is kept.
///
/// One exception keeps the result stable: a decoded hex digit is left encoded when it would
/// follow a lone `%` (or a lone `%` and one hex digit), since decoding it would create a new
/// escape out of the lone `%` that the next round would decode again (`%%341` would become
/// `%41`, then `A`).
fn normalize_escapes(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    if !bytes.contains(&b'%') {
        return Cow::Borrowed(s);
    }
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = (bytes[i] == b'%')
            .then(|| {
                Some((
                    hex_value(*bytes.get(i + 1)?)?,
                    hex_value(*bytes.get(i + 2)?)?,
                ))
            })
            .flatten();
        let Some((hi, lo)) = escape else {
            out.push(bytes[i]);
            i += 1;
            continue;
        };
        let b = hi << 4 | lo;
        let n = out.len();
        let after_lone_percent = out.last() == Some(&b'%')
            || (n >= 2 && out[n - 2] == b'%' && out[n - 1].is_ascii_hexdigit());
        if is_unreserved(b) && !(b.is_ascii_hexdigit() && after_lone_percent) {
            out.push(b);
        } else {
            out.push(b'%');
            out.push(bytes[i + 1].to_ascii_uppercase());
            out.push(bytes[i + 2].to_ascii_uppercase());
        }
        i += 3;
    }
    // Only ASCII bytes were replaced by ASCII bytes, so the text is still UTF-8.
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(s),
    }
}

/// Remove every `;jsessionid=…` path parameter (up to the next `;` or `/`), ASCII
/// case-insensitively.
fn strip_jsessionid(path: &str) -> Cow<'_, str> {
    const NEEDLE: &[u8] = b";jsessionid=";
    let bytes = path.as_bytes();
    let found = |from: usize| {
        (from..bytes.len().saturating_sub(NEEDLE.len() - 1))
            .find(|&i| bytes[i..i + NEEDLE.len()].eq_ignore_ascii_case(NEEDLE))
    };
    let Some(mut at) = found(0) else {
        return Cow::Borrowed(path);
    };
    let mut out = String::with_capacity(path.len());
    let mut copied = 0;
    loop {
        out.push_str(&path[copied..at]);
        let value_start = at + NEEDLE.len();
        let end = bytes[value_start..]
            .iter()
            .position(|&b| b == b';' || b == b'/')
            .map_or(bytes.len(), |n| value_start + n);
        copied = end;
        match found(end) {
            Some(next) => at = next,
            None => break,
        }
    }
    out.push_str(&path[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon_with(config: &CanonConfig, s: &str) -> String {
        Canonicalizer::new(config)
            .canonicalize(s, None)
            .map(|k| k.url)
            .unwrap()
    }

    fn canon(s: &str) -> String {
        canon_with(&CanonConfig::default(), s)
    }

    #[test]
    fn parser_rules() {
        assert_eq!(canon("HTTP://Example.COM:80"), "http://example.com/");
        assert_eq!(
            canon("https://example.com:443/a/./b/../c"),
            "https://example.com/a/c"
        );
        assert_eq!(
            canon("http://example.com:8080/"),
            "http://example.com:8080/"
        );
        assert_eq!(canon("http://bücher.ch/"), "http://xn--bcher-kva.ch/");
        assert_eq!(canon("http://0x7f.1/"), "http://127.0.0.1/");
    }

    #[test]
    fn fragment_removed() {
        assert_eq!(canon("http://a.com/b#frag"), "http://a.com/b");
        assert_eq!(canon("http://a.com/b?q#"), "http://a.com/b?q");
    }

    #[test]
    fn trailing_dots_removed() {
        assert_eq!(canon("http://example.com./x"), "http://example.com/x");
        assert_eq!(canon("http://example.com.../x"), "http://example.com/x");
        assert_eq!(canon("http://1.2.3.4../"), "http://1.2.3.4/");
        // Trimming would leave nothing, or a host the parser refuses: kept.
        assert_eq!(canon("http://./"), "http://./");
        assert_eq!(canon("http://1.2.3.999../"), "http://1.2.3.999../");
    }

    #[test]
    fn escapes_normalized() {
        assert_eq!(
            canon("http://a.com/%7euser/%41%2f%2a"),
            "http://a.com/~user/A%2F%2A"
        );
        assert_eq!(
            canon("http://a.com/?q=%7e%3d%3D"),
            "http://a.com/?q=~%3D%3D"
        );
        assert_eq!(canon("http://a.com/a%2Eb"), "http://a.com/a.b");
        assert_eq!(canon("http://a.com/%zz%"), "http://a.com/%zz%");
        // A lone '%' never turns into an escape.
        assert_eq!(canon("http://a.com/%%341"), "http://a.com/%%341");
        assert_eq!(canon("http://a.com/%4%31"), "http://a.com/%4%31");
        assert_eq!(canon("http://a.com/%%7e"), "http://a.com/%~");
    }

    #[test]
    fn path_session_ids() {
        assert_eq!(
            canon("http://a.com/cart.do;jsessionid=A1B2C3?x=1"),
            "http://a.com/cart.do?x=1"
        );
        assert_eq!(
            canon("http://a.com/a;JSESSIONID=1/b;x=2"),
            "http://a.com/a/b;x=2"
        );
        assert_eq!(
            canon("http://a.com/a;jsessionid=1;jsessionid=2;v=3"),
            "http://a.com/a;v=3"
        );
        let keep = CanonConfig {
            strip_path_session_ids: false,
            ..CanonConfig::default()
        };
        assert_eq!(
            canon_with(&keep, "http://a.com/a;jsessionid=1"),
            "http://a.com/a;jsessionid=1"
        );
    }

    #[test]
    fn query_params_dropped() {
        assert_eq!(
            canon("http://a.com/?a=1&JSESSIONID=x&b=2"),
            "http://a.com/?a=1&b=2"
        );
        assert_eq!(
            canon("http://a.com/?utm_source=x&utm_medium=y"),
            "http://a.com/"
        );
        assert_eq!(
            canon("http://a.com/?ASPSESSIONIDQQGGQGPA=X&sid=1"),
            "http://a.com/?sid=1"
        );
        assert_eq!(canon("http://a.com/?x=1&fbclid=abc"), "http://a.com/?x=1");
        assert_eq!(canon("http://a.com/?utm=1"), "http://a.com/?utm=1");
        let none = CanonConfig {
            drop_query_params: vec![],
            ..CanonConfig::default()
        };
        assert_eq!(
            canon_with(&none, "http://a.com/?utm_source=x"),
            "http://a.com/?utm_source=x"
        );
    }

    #[test]
    fn query_sorting() {
        assert_eq!(canon("http://a.com/?b=1&a=2"), "http://a.com/?b=1&a=2");
        let sort = CanonConfig {
            sort_query: true,
            ..CanonConfig::default()
        };
        assert_eq!(
            canon_with(&sort, "http://a.com/?b=1&a=2&b=0&a"),
            "http://a.com/?a=2&a&b=1&b=0"
        );
    }

    #[test]
    fn empty_query() {
        assert_eq!(canon("http://a/b?"), "http://a/b");
        let keep = CanonConfig {
            drop_empty_query: false,
            ..CanonConfig::default()
        };
        assert_eq!(canon_with(&keep, "http://a/b?"), "http://a/b?");
        // Emptied by dropping arguments: removed either way.
        assert_eq!(canon_with(&keep, "http://a/b?jsessionid=1"), "http://a/b");
    }

    #[test]
    fn entry_errors() {
        let c = Canonicalizer::default();
        assert!(matches!(
            c.canonicalize("not a url", None),
            Err(CanonError::Parse { .. })
        ));
        assert!(matches!(
            c.canonicalize("mailto:a@b.c", None),
            Err(CanonError::Scheme { scheme, .. }) if scheme == "mailto"
        ));
        assert!(matches!(
            c.canonicalize("ftp://a.com/", None),
            Err(CanonError::Scheme { .. })
        ));
        let long = format!("http://a.com/{}", "x".repeat(2048));
        assert!(matches!(
            c.canonicalize(&long, None),
            Err(CanonError::TooLong { max: 2048, .. })
        ));
        let huge = format!("http://a.com/{}", "x".repeat(2048 * 16));
        assert!(matches!(
            c.canonicalize(&huge, None),
            Err(CanonError::TooLong { .. })
        ));
        let msg = c
            .canonicalize(&format!("x:{}", "y".repeat(1000)), None)
            .unwrap_err()
            .to_string();
        assert!(msg.len() < 400, "{msg}");
    }

    /// User information (credentials) is removed, however it is spelled: every spelling of a
    /// page is one canonical URL with one fingerprint, and no secret is kept.
    #[test]
    fn userinfo_is_stripped_and_spellings_are_one_url() {
        let c = Canonicalizer::default();
        let want = c.canonicalize("http://example.com/a?b", None).unwrap();
        assert_eq!(want.url, "http://example.com/a?b");
        for spelling in [
            "http://user@example.com/a?b",
            "http://user:secret@example.com/a?b",
            "http://:secret@example.com/a?b",
            "http://user:@example.com/a?b",
            "http://@example.com/a?b",
            "http://:@example.com/a?b",
            "http://us%65r:s%40cr%3At@example.com/a?b",
            "http://user%40corp:p%20w@example.com/a?b",
            "http://user@host@example.com/a?b",
            "HTTP://User:Secret@EXAMPLE.com:80/a?b#frag",
        ] {
            let key = c.canonicalize(spelling, None).unwrap();
            assert_eq!(key.url, want.url, "{spelling}");
            assert_eq!(key.fingerprint, want.fingerprint, "{spelling}");
            assert_eq!(key.host_key, want.host_key, "{spelling}");
        }
        // A port, https, and a relative link whose authority carries credentials.
        assert_eq!(
            canon("https://u:p@example.com:8443/x"),
            "https://example.com:8443/x"
        );
        let base = Url::parse("http://a.example/dir/").unwrap();
        let key = c
            .canonicalize("//admin:hunter2@b.example/x", Some(&base))
            .unwrap();
        assert_eq!(key.url, "http://b.example/x");
        // canonicalize_url too, for any scheme, idempotently.
        let u = c.canonicalize_url(Url::parse("ws://u:p@h.example/").unwrap());
        assert_eq!(u.as_str(), "ws://h.example/");
        assert!(!strip_userinfo(&mut u.clone()));
        let u = c.canonicalize_url(Url::parse("redis://u:p@h.example:6379/0#x").unwrap());
        assert_eq!(u.as_str(), "redis://h.example:6379/0");
        let mut u = Url::parse("http://u:p@h.example/").unwrap();
        assert!(strip_userinfo(&mut u));
        assert_eq!(u.as_str(), "http://h.example/");
    }

    #[test]
    fn relative_and_whitespace() {
        let c = Canonicalizer::default();
        let base = Url::parse("http://Example.com/dir/page.html").unwrap();
        let key = c.canonicalize("  ../other?b#c \n", Some(&base)).unwrap();
        assert_eq!(key.url, "http://example.com/other?b");
        assert_eq!(key.host, "example.com");
    }

    #[test]
    fn non_special_keeps_all_but_fragment() {
        let c = Canonicalizer::default();
        let u = Url::parse("foo://H.com/%7e/a?utm_source=1&b#x").unwrap();
        assert_eq!(
            c.canonicalize_url(u).as_str(),
            "foo://H.com/%7e/a?utm_source=1&b"
        );
    }

    #[test]
    fn config_from_toml_section() {
        let cfg: CanonConfig = toml::from_str("sort_query = true\nmax_url_len = 100\n").unwrap();
        assert!(cfg.sort_query);
        assert_eq!(cfg.max_url_len, 100);
        assert_eq!(
            cfg.drop_query_params,
            CanonConfig::default().drop_query_params
        );
        assert!(toml::from_str::<CanonConfig>("sort_querry = true").is_err());
    }
}
