//! `[scope]` and `[split]` in `crawl.toml`: which discovered URLs the crawl keeps, the defences
//! against crawler traps, and the size of the split stage's CLOCK cache.
//!
//! A crawler trap is a site that generates URLs without end: a calendar with a "next month" link
//! forever, session ids in every link, `/a/b/a/b/a/b/...` paths from a relative-link bug. No single
//! rule catches them all, so several cheap ones work together, each counted separately in the
//! split stage's `.done` so an operator can see which one fired: a depth limit (links from the
//! seeds), a limit on path segments and on how often one segment repeats, a limit on query
//! arguments, substrings that drop a URL, and a budget of new URLs per host per cycle (the
//! trap's host cannot swamp the frontier in any one cycle). Session ids are removed earlier, by
//! canonicalization (`[canon]`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[scope]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScopeSection {
    /// Hosts the crawl stays on: a host is in scope if it equals one of these or ends with `.`
    /// and one of these (`example.org` covers `www.example.org`). Empty: every host.
    pub allowed_domains: Vec<String>,
    /// Largest link distance from the seeds that is still crawled.
    pub max_depth: u32,
    /// Follow links marked `rel=nofollow` (or on pages whose robots meta says nofollow).
    pub follow_nofollow: bool,
    /// Most path segments a URL may have (`/a/b/c` has 3).
    pub max_path_segments: u32,
    /// Most times one path segment may occur in a URL's path (`/a/b/a/b/a` has `a` 3 times).
    pub max_repeated_segments: u32,
    /// Most query arguments a URL may have.
    pub max_query_params: u32,
    /// URLs containing any of these substrings are dropped (e.g. `"/calendar/"`, `"action=edit"`).
    pub drop_patterns: Vec<String>,
    /// New URLs one host may add to the crawl per cycle from one partition's links (the rest are
    /// dropped this cycle and may be found again later).
    pub max_new_urls_per_host: u64,
    /// The same per registered domain (Public Suffix List: `a.x.example` and `b.x.example` are
    /// both `x.example`): new URLs all the hosts of one domain may add per cycle from one
    /// partition's links (0: no limit). Bounds a trap that mints subdomains.
    pub max_new_urls_per_domain: u64,
    /// SURT prefixes a URL must start with (any of them; empty: no such rule), in pywb's form
    /// (`org,example)/docs`) or as a URL (`http://example.org/docs`, turned into its SURT).
    pub allow_surt_prefixes: Vec<String>,
    /// SURT prefixes (same forms) that put a URL out of scope.
    pub deny_surt_prefixes: Vec<String>,
    /// Regular expressions (Rust `regex` syntax, unanchored) a URL must match (any of them;
    /// empty: no such rule).
    pub allow_regex: Vec<String>,
    /// Regular expressions that put a matching URL out of scope.
    pub deny_regex: Vec<String>,
    /// File extensions (of the path's last segment, case-insensitive, without the dot) that put
    /// a URL out of scope, e.g. `["zip", "iso", "mp4"]`.
    pub deny_extensions: Vec<String>,
    /// The compiled rules above (made once, on first use).
    #[serde(skip)]
    pub(crate) compiled: Compiled,
}

/// The compiled SURT and regex rules of a [`ScopeSection`], built on first use.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compiled(std::sync::OnceLock<std::sync::Arc<Rules>>);

impl PartialEq for Compiled {
    /// Always equal: a cache of what the compared fields already say.
    fn eq(&self, _: &Compiled) -> bool {
        true
    }
}

#[derive(Debug)]
pub(crate) struct Rules {
    allow_surt: Vec<String>,
    deny_surt: Vec<String>,
    allow_regex: Option<regex::RegexSet>,
    deny_regex: Option<regex::RegexSet>,
    deny_extensions: Vec<String>,
}

impl Rules {
    fn any(&self) -> bool {
        !self.allow_surt.is_empty()
            || !self.deny_surt.is_empty()
            || self.allow_regex.is_some()
            || self.deny_regex.is_some()
            || !self.deny_extensions.is_empty()
    }
}

/// A SURT prefix as configured: pywb's form as is (lower-cased), or a URL turned into its SURT.
fn surt_prefix(p: &str) -> String {
    if p.contains("://") {
        crate::keys::surt(p)
    } else {
        p.to_ascii_lowercase()
    }
}

fn regex_set(
    key: &str,
    patterns: &[String],
) -> std::result::Result<Option<regex::RegexSet>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for p in patterns {
        regex::Regex::new(p)
            .map_err(|e| format!("scope.{key}: {p:?} is not a valid regex: {e}"))?;
    }
    regex::RegexSet::new(patterns)
        .map(Some)
        .map_err(|e| format!("scope.{key}: {e}"))
}

impl Default for ScopeSection {
    fn default() -> Self {
        ScopeSection {
            allowed_domains: Vec::new(),
            max_depth: 50,
            follow_nofollow: false,
            max_path_segments: 32,
            max_repeated_segments: 3,
            max_query_params: 16,
            drop_patterns: Vec::new(),
            max_new_urls_per_host: 100_000,
            max_new_urls_per_domain: 0,
            allow_surt_prefixes: Vec::new(),
            deny_surt_prefixes: Vec::new(),
            allow_regex: Vec::new(),
            deny_regex: Vec::new(),
            deny_extensions: Vec::new(),
            compiled: Compiled::default(),
        }
    }
}

/// `[split]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SplitSection {
    /// Fingerprints in the CLOCK cache each partition keeps between cycles (16 bytes each).
    /// 2^20 caught 98% of the avoidable repeats on the synthetic stream of `docs/cachesim.md`.
    pub cache_entries: u64,
}

impl Default for SplitSection {
    fn default() -> Self {
        SplitSection {
            cache_entries: 1 << 20,
        }
    }
}

impl SplitSection {
    /// Checks values.
    pub fn validate(&self, path: &Path) -> Result<()> {
        if self.cache_entries == 0 || self.cache_entries >= u64::from(u32::MAX) {
            return Err(Error::config(
                path,
                format!(
                    "split.cache_entries: {} must be between 1 and 2^32 - 2 (default 1048576)",
                    self.cache_entries
                ),
            ));
        }
        Ok(())
    }
}

impl ScopeSection {
    /// Checks values.
    pub fn validate(&self, path: &Path) -> Result<()> {
        for d in &self.allowed_domains {
            if d.is_empty() || d.starts_with('.') || d.contains('/') || d != &d.to_ascii_lowercase()
            {
                return Err(Error::config(
                    path,
                    format!(
                        "scope.allowed_domains: {d:?} must be a lower-case host name such as \"example.org\" (no scheme, path or leading dot)"
                    ),
                ));
            }
        }
        if self.drop_patterns.iter().any(String::is_empty) {
            return Err(Error::config(
                path,
                "scope.drop_patterns: an empty pattern would drop every URL",
            ));
        }
        for (key, list) in [
            ("allow_surt_prefixes", &self.allow_surt_prefixes),
            ("deny_surt_prefixes", &self.deny_surt_prefixes),
            ("deny_extensions", &self.deny_extensions),
        ] {
            if list.iter().any(|p| p.trim().is_empty()) {
                return Err(Error::config(
                    path,
                    format!("scope.{key}: an empty entry would match every URL"),
                ));
            }
        }
        self.compile().map_err(|why| Error::config(path, why))?;
        Ok(())
    }

    fn compile(&self) -> std::result::Result<Rules, String> {
        Ok(Rules {
            allow_surt: self
                .allow_surt_prefixes
                .iter()
                .map(|p| surt_prefix(p))
                .collect(),
            deny_surt: self
                .deny_surt_prefixes
                .iter()
                .map(|p| surt_prefix(p))
                .collect(),
            allow_regex: regex_set("allow_regex", &self.allow_regex)?,
            deny_regex: regex_set("deny_regex", &self.deny_regex)?,
            deny_extensions: self
                .deny_extensions
                .iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
        })
    }

    fn rules(&self) -> std::sync::Arc<Rules> {
        self.compiled
            .0
            .get_or_init(|| {
                // Checked when the configuration was loaded; a section made in code with a bad
                // pattern leaves that rule out rather than failing every URL.
                std::sync::Arc::new(self.compile().unwrap_or(Rules {
                    allow_surt: Vec::new(),
                    deny_surt: Vec::new(),
                    allow_regex: None,
                    deny_regex: None,
                    deny_extensions: Vec::new(),
                }))
            })
            .clone()
    }

    /// The operator's rules (SURT prefixes, regexes, extensions): why `url` is out, if it is.
    fn rule_refusal(&self, url: &str, path: &str) -> Option<&'static str> {
        let r = self.rules();
        if !r.any() {
            return None;
        }
        if !r.deny_extensions.is_empty() {
            let last = path.rsplit('/').next().unwrap_or("");
            if let Some((_, ext)) = last.rsplit_once('.') {
                if r.deny_extensions
                    .iter()
                    .any(|e| e.eq_ignore_ascii_case(ext))
                {
                    return Some("denied_extension");
                }
            }
        }
        if !r.allow_surt.is_empty() || !r.deny_surt.is_empty() {
            let s = crate::keys::surt(url);
            if r.deny_surt.iter().any(|p| s.starts_with(p.as_str())) {
                return Some("denied_surt");
            }
            if !r.allow_surt.is_empty() && !r.allow_surt.iter().any(|p| s.starts_with(p.as_str())) {
                return Some("not_allowed_surt");
            }
        }
        if r.deny_regex.as_ref().is_some_and(|set| set.is_match(url)) {
            return Some("denied_regex");
        }
        if r.allow_regex.as_ref().is_some_and(|set| !set.is_match(url)) {
            return Some("not_allowed_regex");
        }
        None
    }

    /// Why `url` (canonical, with host `host`) at `depth` is out of scope, or `None` if it is
    /// in. Reasons are counter names: `out_of_domain`, `too_deep`, `trap_path`, `trap_repeat`,
    /// `trap_query`, `dropped_pattern`, and for the operator's rules `denied_extension`,
    /// `denied_surt`, `not_allowed_surt`, `denied_regex`, `not_allowed_regex`.
    pub fn refusal(&self, url: &str, host: &str, depth: u32) -> Option<&'static str> {
        if !self.allowed_domains.is_empty()
            && !self.allowed_domains.iter().any(|d| {
                host == d
                    || (host.len() > d.len()
                        && host.ends_with(d.as_str())
                        && host.as_bytes()[host.len() - d.len() - 1] == b'.')
            })
        {
            return Some("out_of_domain");
        }
        if depth > self.max_depth {
            return Some("too_deep");
        }
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let path_query = rest.find('/').map_or("", |i| &rest[i..]);
        let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
        let segments = || path.split('/').filter(|s| !s.is_empty());
        // Counted first: most URLs have too few segments to repeat one too often, and need no
        // list of them (this runs for every link target the split routes).
        let n = segments().count();
        if n > self.max_path_segments as usize {
            return Some("trap_path");
        }
        if n > self.max_repeated_segments as usize {
            let mut sorted: Vec<&str> = segments().collect();
            sorted.sort_unstable();
            let mut run = 1;
            for w in sorted.windows(2) {
                run = if w[0] == w[1] { run + 1 } else { 1 };
                if run > self.max_repeated_segments {
                    return Some("trap_repeat");
                }
            }
        }
        if !query.is_empty() && query.split('&').count() > self.max_query_params as usize {
            return Some("trap_query");
        }
        if self.drop_patterns.iter().any(|p| url.contains(p.as_str())) {
            return Some("dropped_pattern");
        }
        self.rule_refusal(url, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_rules_surt_regex_extensions() {
        let s = ScopeSection {
            deny_surt_prefixes: vec!["http://example.org/private".into(), "org,bad)".into()],
            deny_regex: vec![r"[?&]sessionid=".into()],
            deny_extensions: vec![".ZIP".into(), "iso".into()],
            ..ScopeSection::default()
        };
        let r = |u: &str| s.refusal(u, crate::keys::host_of(u), 1);
        assert_eq!(r("http://example.org/public/a.html"), None);
        assert_eq!(r("https://www.example.org/private/x"), Some("denied_surt"));
        assert_eq!(r("http://bad.org/"), Some("denied_surt"));
        assert_eq!(
            r("http://example.org/a?x=1&sessionid=9"),
            Some("denied_regex")
        );
        assert_eq!(r("http://example.org/dl/big.zip"), Some("denied_extension"));
        assert_eq!(
            r("http://example.org/dl/big.iso?x=1"),
            Some("denied_extension")
        );
        assert_eq!(r("http://example.org/zip/"), None);
        let only = ScopeSection {
            allow_surt_prefixes: vec!["org,example)/docs".into()],
            allow_regex: vec![r"\.html$".into(), r"/$".into()],
            ..ScopeSection::default()
        };
        let r = |u: &str| only.refusal(u, crate::keys::host_of(u), 1);
        assert_eq!(r("http://example.org/docs/a.html"), None);
        assert_eq!(
            r("http://example.org/blog/a.html"),
            Some("not_allowed_surt")
        );
        assert_eq!(
            r("http://example.org/docs/a.pdf"),
            Some("not_allowed_regex")
        );
        // A bad pattern is a configuration error naming the key and the pattern.
        let bad = ScopeSection {
            deny_regex: vec!["(unclosed".into()],
            ..ScopeSection::default()
        };
        let e = bad
            .validate(Path::new("crawl.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("scope.deny_regex") && e.contains("(unclosed"),
            "{e}"
        );
    }

    #[test]
    fn rules() {
        let s = ScopeSection {
            allowed_domains: vec!["example.org".into()],
            max_depth: 3,
            drop_patterns: vec!["/calendar/".into()],
            max_query_params: 2,
            ..ScopeSection::default()
        };
        let ok = |u: &str, h: &str| s.refusal(u, h, 1);
        assert_eq!(ok("http://example.org/a", "example.org"), None);
        assert_eq!(ok("http://www.example.org/a", "www.example.org"), None);
        assert_eq!(
            ok("http://badexample.org/", "badexample.org"),
            Some("out_of_domain")
        );
        assert_eq!(
            s.refusal("http://example.org/", "example.org", 4),
            Some("too_deep")
        );
        assert_eq!(
            ok("http://example.org/a/b/a/b/a/b/a", "example.org"),
            Some("trap_repeat")
        );
        assert_eq!(ok("http://example.org/a/b/a/b/a", "example.org"), None);
        assert_eq!(
            ok("http://example.org/x?a=1&b=2&c=3", "example.org"),
            Some("trap_query")
        );
        assert_eq!(
            ok("http://example.org/calendar/2026", "example.org"),
            Some("dropped_pattern")
        );
        let path: String = (0..40).map(|i| format!("/{i}")).collect();
        let deep = format!("http://example.org{path}");
        assert_eq!(ok(&deep, "example.org"), Some("trap_path"));
    }
}
