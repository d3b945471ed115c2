//! robots.txt: parsing and matching per RFC 9309, with Google's parser as the reference.
//!
//! RFC 9309 (the Robots Exclusion Protocol) was written alongside Google's open-source parser
//! (github.com/google/robotstxt, `robots.cc`), and where the RFC leaves room (typos, missing
//! colons, byte-level details) we do what that parser does, because it is what webmasters test
//! their files against. `tests/robots_conformance.rs` runs Google's own test cases and 8,000
//! verdicts of its `robots_main` on real files; `docs/robots.md` records the numbers.
//!
//! # Reading a file
//!
//! [`Robots::parse`] takes bytes, not text: robots.txt is supposed to be UTF-8 but real files are
//! Latin-1, HTML error pages or UTF-16, and Google reads them as bytes too. It never fails.
//! - Only the first [`MAX_ROBOTS_BYTES`] (500 KiB, RFC 9309 §2.5) are read; a line keeps its
//!   first [`MAX_LINE_BYTES`] bytes (Google's limit). A leading UTF-8 byte-order mark, or a
//!   prefix of one, is skipped.
//! - Lines end at CR, LF or CRLF, mixed freely. A NUL byte ends a line's content (Google handles
//!   lines as C strings). `#` starts a comment. Surrounding whitespace is ignored.
//! - `key: value`; a line without a colon is read as `key value` if it has exactly two words
//!   (`Disallow /x`), as Google does.
//! - Keys are matched case-insensitively *by prefix*, with Google's accepted typos:
//!   `user-agent` (`useragent`, `user agent`), `allow`, `disallow` (`dissallow`, `dissalow`,
//!   `disalow`, `diasllow`, `disallaw`), `sitemap` (`site-map`). We add `crawl-delay`
//!   (`crawl delay`, `crawldelay`), which Google ignores. Other keys are ignored.
//! - Allow/disallow values are normalized as Google does: bytes >= 0x80 are %-escaped and the
//!   hex digits of existing escapes upper-cased (`/café` → `/caf%C3%A9`, `%aa` → `%AA`).
//!   Nothing else is decoded; URL paths are matched as given (see [`Robots::allowed`]).
//!
//! # Groups
//!
//! A group is a run of `user-agent` lines and the rules after them. A `user-agent` line starts a
//! new group only after an allow or disallow line: `sitemap`, `crawl-delay` and unknown lines do
//! not end a run of user agents (RFC 9309 §2.2.1 and Google's `ID_LineSyntax_Groups_OtherRules`
//! test). Rules before the first `user-agent` line are ignored. Google evaluates a file in one
//! streaming pass per query; keeping the groups instead gives the same answers (a group that
//! neither names the agent nor is for `*` leaves Google's state untouched, so where it ends does
//! not matter) and lets one parse serve every check.
//!
//! A `user-agent` value is `*` (also `* anything`, as Google reads it) or a product token: the
//! value's leading run of `[A-Za-z_-]` (so `Googlebot/2.1` names `googlebot`). A crawler's own
//! token is the part of its user agent before the first `/` ([`agent_token`]); it names a group
//! if equal to one of the group's tokens, ignoring ASCII case. All groups that name the agent
//! apply, merged; if none does, all `*` groups apply, merged; if there are none, everything is
//! allowed.
//!
//! `crawl-delay` is not in RFC 9309 and Google ignores it. A `crawl-delay` line applies to the
//! `user-agent` lines just above it (since the previous `crawl-delay` line or the start of the
//! group), not to the whole group: in `User-agent: bingbot`, `Crawl-delay: 2`, `User-agent: *`,
//! `Disallow: /x`, the disallow is for both agents (Google's grouping) but the delay only for
//! bingbot, which is what such files mean and how protego reads them. An agent's delay is the
//! largest given to the lines that select it: those naming it, or else the `*` lines.
//!
//! # Matching
//!
//! The longest matching pattern wins, counted in bytes of the normalized pattern (`*` and `$`
//! included), and an allow wins a tie (RFC 9309 §2.2.2). Empty patterns match nothing that
//! matters (`Disallow:` allows all). Google's special case is kept: `Allow: /d/index.html` also
//! allows `/d/` (Google: "index.htm and index.html are normalized to /"). `/robots.txt` itself
//! is always allowed (RFC 9309 §2.2.2: "implicitly allowed"), which Google's matcher does not do.
//!
//! Patterns are compiled once: the normalized text, whether it ends in `$` and whether it holds a
//! `*`. A pattern without `*` is a prefix (or, with `$`, an equality) test. With `*`, the pieces
//! between stars are found left to right, each at its leftmost place after the previous one (the
//! first anchored at the start, the last, under `$`, at the end). Taking the leftmost place is
//! never wrong for a pattern whose only wildcard is `*`, so there is no backtracking; each piece
//! is found with the standard library's Two-Way substring search, which is linear, so a check
//! costs O(path + pattern) bytes however many stars there are. (Google's matcher keeps a set of
//! positions and is O(path × pattern).) [`AgentRules`] goes further for the hot path of a crawler
//! checking many URLs of one host: it selects one agent's rules once and sorts them longest
//! first, so the first pattern that matches decides.
//!
//! # Fetch outcomes (RFC 9309 §2.3.1)
//!
//! [`RobotsStatus::from_response`] turns the outcome of fetching `/robots.txt` into a policy:
//! 2xx: the file's rules; 4xx: "unavailable", everything is allowed; 5xx or a network error
//! ([`RobotsStatus::Unreachable`]): "unreachable", everything is disallowed. 429 Too Many
//! Requests is treated as unreachable, as Google does: the host asked us to back off. Redirects
//! are followed by the fetcher, up to [`MAX_REDIRECTS`] hops, even to other hosts (§2.3.1.2),
//! and the file found applies to the host that was asked, not to the redirect target; a 3xx that
//! is still a redirect after that counts as unavailable. Caching the status per host for at most 24 hours
//! (§2.4), and what to do about a host unreachable for 30 days, are the fetcher's business.

use std::time::Duration;

mod pattern;

use pattern::Pattern;
pub use pattern::{escape_pattern, path_params_query};

/// How many bytes of a robots.txt are read; the rest is ignored (RFC 9309 §2.5: "at least 500
/// kibibytes").
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// How many bytes of one line are read; the rest of the line is ignored. Google's limit:
/// 8 × 2083 (the longest URL some browsers accept), less its C string terminator.
pub const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

/// Redirect hops the fetcher follows for `/robots.txt` (RFC 9309 §2.3.1.2: at least five).
pub const MAX_REDIRECTS: u32 = 5;

const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// A parsed robots.txt: its groups, compiled, and its sitemaps.
#[derive(Clone, Debug, Default)]
pub struct Robots {
    groups: Vec<Group>,
    sitemaps: Vec<String>,
    stats: RobotsStats,
}

/// What [`Robots::parse`] saw, for operators and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RobotsStats {
    /// Bytes read (at most [`MAX_ROBOTS_BYTES`]).
    pub bytes: usize,
    /// Whether the body was longer than [`MAX_ROBOTS_BYTES`] and its tail ignored.
    pub truncated: bool,
    /// Lines read (a final line ending does not start another line).
    pub lines: usize,
    /// Groups (runs of `user-agent` lines with their rules).
    pub groups: usize,
    /// `user-agent` lines.
    pub user_agents: usize,
    /// `allow` and `disallow` lines, including those outside any group.
    pub rules: usize,
    /// `sitemap` lines.
    pub sitemaps: usize,
    /// `crawl-delay` lines, valid or not.
    pub crawl_delays: usize,
    /// Lines with a `key: value` shape but a key we do not know.
    pub unknown: usize,
}

#[derive(Clone, Debug, Default)]
struct Group {
    /// The group's `user-agent` lines, in file order.
    agents: Vec<Agent>,
    /// Allow and disallow rules with non-empty patterns, in file order.
    rules: Vec<Rule>,
}

#[derive(Clone, Debug)]
struct Agent {
    /// The product token, or `None` for `*`. A token may be empty (`user-agent: *x`).
    token: Option<Box<str>>,
    /// Crawl-delay in seconds: the largest valid value given to this line's run of agents.
    crawl_delay: Option<f64>,
}

impl Agent {
    /// Whether this line names `token`, or is `*` and `token` is `None`.
    fn is(&self, token: Option<&str>) -> bool {
        match (&self.token, token) {
            (Some(mine), Some(t)) => mine.eq_ignore_ascii_case(t),
            (None, None) => true,
            _ => false,
        }
    }
}

impl Group {
    fn names(&self, token: &str) -> bool {
        self.agents.iter().any(|a| a.is(Some(token)))
    }

    fn star(&self) -> bool {
        self.agents.iter().any(|a| a.is(None))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    allow: bool,
    pattern: Pattern,
}

impl Robots {
    /// Parses a robots.txt body. Never fails: what cannot be read is ignored, as RFC 9309 §2.2
    /// asks. See the module docs for what is read.
    pub fn parse(body: &[u8]) -> Robots {
        let truncated = body.len() > MAX_ROBOTS_BYTES;
        let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
        let mut p = Parser {
            robots: Robots::default(),
            after_rule: false,
            after_delay: false,
            run_start: 0,
        };
        p.robots.stats.bytes = body.len();
        p.robots.stats.truncated = truncated;
        let bom = body
            .iter()
            .zip(UTF8_BOM)
            .take_while(|(a, b)| **a == *b)
            .count();
        let mut rest = &body[bom..];
        while !rest.is_empty() {
            let (line, next) = match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    let crlf = rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n');
                    (&rest[..end], &rest[end + 1 + usize::from(crlf)..])
                }
                None => (rest, &rest[rest.len()..]),
            };
            p.line(&line[..line.len().min(MAX_LINE_BYTES)]);
            rest = next;
        }
        p.robots.stats.groups = p.robots.groups.len();
        p.robots
    }

    /// Whether `agent` may fetch `url_or_path`.
    ///
    /// `agent` is the crawler's user agent or product token (`dragnet/0.1 (+https://…)` or
    /// `dragnet`; see [`agent_token`]). `url_or_path` is an absolute URL or a path; what is
    /// matched is its path, parameters and query ([`path_params_query`]), taken as given: it must
    /// already be %-encoded, as canonical URLs are (a raw `ツ` in a URL does not match a rule
    /// written `ツ`, which is normalized to `%E3%83%84`; Google behaves the same).
    ///
    /// Does not allocate (except for a URL whose path starts with `?` or `;`). To check many
    /// URLs for one agent, [`Robots::for_agent`] is faster still.
    pub fn allowed(&self, agent: &str, url_or_path: &str) -> bool {
        let path = path_params_query(url_or_path);
        if path == "/robots.txt" {
            return true;
        }
        let (mut allow, mut disallow) = (0, 0);
        for g in self.selected_groups(agent_token(agent)) {
            for r in &g.rules {
                let best = if r.allow { &mut allow } else { &mut disallow };
                if r.pattern.priority() > *best && r.pattern.matches(&path) {
                    *best = r.pattern.priority();
                }
            }
        }
        disallow <= allow
    }

    /// The crawl-delay that applies to `agent`: the largest valid `crawl-delay` value given to
    /// the `user-agent` lines naming it, or if none names it, to the `*` lines (see the module
    /// docs; the largest is the politest reading when groups are merged). Values are seconds,
    /// fractions allowed; negative, non-finite and unparsable values are ignored. The fetcher
    /// caps what it accepts.
    pub fn crawl_delay(&self, agent: &str) -> Option<Duration> {
        let token = agent_token(agent);
        let who = self.names_token(token).then_some(token);
        let secs = self
            .groups
            .iter()
            .flat_map(|g| &g.agents)
            .filter(|a| a.is(who))
            .filter_map(|a| a.crawl_delay)
            .reduce(f64::max)?;
        Duration::try_from_secs_f64(secs).ok()
    }

    /// The `sitemap` values, in file order, as written (not resolved or checked; invalid UTF-8
    /// replaced with U+FFFD). They belong to no group.
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }

    /// What the parser saw.
    pub fn stats(&self) -> RobotsStats {
        self.stats
    }

    /// Whether a group names `agent` (so `*` groups do not apply to it).
    pub fn names_agent(&self, agent: &str) -> bool {
        self.names_token(agent_token(agent))
    }

    fn names_token(&self, token: &str) -> bool {
        self.groups.iter().any(|g| g.names(token))
    }

    /// `agent`'s rules, selected and sorted once, for checking many URLs.
    pub fn for_agent(&self, agent: &str) -> AgentRules {
        let mut rules: Vec<Rule> = self
            .selected_groups(agent_token(agent))
            .flat_map(|g| g.rules.iter().cloned())
            .collect();
        // Longest first, allow before disallow: the first match decides. Stable, so duplicates
        // keep file order (it does not matter which of two equal rules wins).
        rules.sort_by_key(|r| (std::cmp::Reverse(r.pattern.priority()), !r.allow));
        rules.dedup();
        AgentRules {
            rules,
            crawl_delay: self.crawl_delay(agent),
        }
    }

    /// The groups whose rules apply to the product token `token`: those naming it, or if none
    /// does, the `*` groups.
    fn selected_groups<'a>(&'a self, token: &'a str) -> impl Iterator<Item = &'a Group> + 'a {
        let named = self.names_token(token);
        self.groups
            .iter()
            .filter(move |g| if named { g.names(token) } else { g.star() })
    }
}

/// One agent's rules from a [`Robots`], sorted longest first ([`Robots::for_agent`]).
#[derive(Clone, Debug, Default)]
pub struct AgentRules {
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

impl AgentRules {
    /// Whether the agent may fetch `url_or_path`; the same answer as [`Robots::allowed`].
    pub fn allowed(&self, url_or_path: &str) -> bool {
        let path = path_params_query(url_or_path);
        if path == "/robots.txt" {
            return true;
        }
        self.rules
            .iter()
            .find(|r| r.pattern.matches(&path))
            .is_none_or(|r| r.allow)
    }

    /// The agent's crawl-delay ([`Robots::crawl_delay`]).
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }

    /// Number of non-empty allow and disallow rules that apply to the agent.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether no rule applies: everything is allowed.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// The policy that follows from fetching a host's `/robots.txt` (RFC 9309 §2.3.1).
#[derive(Clone, Debug)]
pub enum RobotsStatus {
    /// A 2xx response: its rules apply.
    Rules(Robots),
    /// A 4xx response other than 429 (or redirects beyond [`MAX_REDIRECTS`]): "unavailable",
    /// the crawler may access everything.
    Unavailable,
    /// A 5xx response, a 429, or a network error: "unreachable", the crawler must assume
    /// complete disallow (until it fetches the file again).
    Unreachable,
}

impl RobotsStatus {
    /// The policy for a final HTTP `status` (after redirects) with `body`.
    pub fn from_response(status: u16, body: &[u8]) -> RobotsStatus {
        match status {
            200..=299 => RobotsStatus::Rules(Robots::parse(body)),
            429 => RobotsStatus::Unreachable,
            300..=499 => RobotsStatus::Unavailable,
            // 5xx, and codes HTTP does not define: assume the worst.
            _ => RobotsStatus::Unreachable,
        }
    }

    /// Whether `agent` may fetch `url_or_path` ([`Robots::allowed`]). `/robots.txt` itself is
    /// always allowed, so that an unreachable file can be fetched again.
    pub fn allowed(&self, agent: &str, url_or_path: &str) -> bool {
        match self {
            RobotsStatus::Rules(r) => r.allowed(agent, url_or_path),
            RobotsStatus::Unavailable => true,
            RobotsStatus::Unreachable => path_params_query(url_or_path) == "/robots.txt",
        }
    }

    /// The crawl-delay for `agent` ([`Robots::crawl_delay`]); `None` unless there are rules.
    pub fn crawl_delay(&self, agent: &str) -> Option<Duration> {
        match self {
            RobotsStatus::Rules(r) => r.crawl_delay(agent),
            _ => None,
        }
    }

    /// The sitemaps listed ([`Robots::sitemaps`]); none unless there are rules.
    pub fn sitemaps(&self) -> &[String] {
        match self {
            RobotsStatus::Rules(r) => r.sitemaps(),
            _ => &[],
        }
    }
}

/// The product token of a user agent: the part before the first `/`, without surrounding
/// whitespace (`dragnet/0.1 (+https://example.org/bot)` → `dragnet`). RFC 9309 §2.2.1 asks
/// crawlers to use a token of `[A-Za-z_-]` only ([`is_valid_agent_token`]).
pub fn agent_token(user_agent: &str) -> &str {
    user_agent
        .split('/')
        .next()
        .unwrap_or_default()
        .trim_matches(|c: char| c.is_ascii_whitespace())
}

/// Whether `token` is a product token a crawler can be named by in robots.txt: non-empty, only
/// `A-Z a-z _ -` (Google's `IsValidUserAgentToObey`).
pub fn is_valid_agent_token(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(is_token_byte)
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'-' || b == b'_'
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    Sitemap,
    CrawlDelay,
    Unknown,
}

impl Key {
    fn classify(key: &[u8]) -> Key {
        let starts = |prefixes: &[&str]| {
            prefixes
                .iter()
                .any(|p| key.len() >= p.len() && key[..p.len()].eq_ignore_ascii_case(p.as_bytes()))
        };
        // Google's order: a key is tested as user-agent, allow, disallow, sitemap.
        if starts(&["user-agent", "useragent", "user agent"]) {
            Key::UserAgent
        } else if starts(&["allow"]) {
            Key::Allow
        } else if starts(&[
            "disallow",
            "dissallow",
            "dissalow",
            "disalow",
            "diasllow",
            "disallaw",
        ]) {
            Key::Disallow
        } else if starts(&["sitemap", "site-map"]) {
            Key::Sitemap
        } else if starts(&["crawl-delay", "crawl delay", "crawldelay"]) {
            Key::CrawlDelay
        } else {
            Key::Unknown
        }
    }
}

/// C `isspace` in the C locale, which Google strips with (includes vertical tab, unlike
/// `u8::is_ascii_whitespace`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r')
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

/// Splits a line into key and value as Google's `GetKeyAndValueFrom` does; `None` for lines
/// without a directive (empty, comment, no separator, empty key).
fn key_value(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = match line.iter().position(|&b| b == 0 || b == b'#') {
        Some(end) => &line[..end],
        None => line,
    };
    let line = trim(line);
    let (key, value) = match line.iter().position(|&b| b == b':') {
        Some(colon) => (&line[..colon], &line[colon + 1..]),
        None => {
            // Google: "some people forget the colon": `key value`, exactly two words.
            let sep = line.iter().position(|&b| b == b' ' || b == b'\t')?;
            let value = &line[sep..];
            let value = &value[value
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count()..];
            if value.iter().any(|&b| b == b' ' || b == b'\t') {
                return None;
            }
            (&line[..sep], value)
        }
    };
    let key = trim(key);
    (!key.is_empty()).then(|| (key, trim(value)))
}

struct Parser {
    robots: Robots,
    /// An allow or disallow line came after the current group's last `user-agent` line, so the
    /// next `user-agent` line starts a new group.
    after_rule: bool,
    /// A crawl-delay line came after the last `user-agent` line, so the next one starts a new
    /// run of agents within the group.
    after_delay: bool,
    /// Index, in the current group's agents, of the first agent of the current run: the agents
    /// a crawl-delay line applies to.
    run_start: usize,
}

impl Parser {
    fn line(&mut self, line: &[u8]) {
        let stats = &mut self.robots.stats;
        stats.lines += 1;
        let Some((key, value)) = key_value(line) else {
            return;
        };
        match Key::classify(key) {
            Key::UserAgent => {
                stats.user_agents += 1;
                if self.after_rule || self.robots.groups.is_empty() {
                    self.robots.groups.push(Group::default());
                    self.after_rule = false;
                    self.after_delay = true;
                }
                let group = self.robots.groups.last_mut().expect("pushed above");
                if self.after_delay {
                    self.run_start = group.agents.len();
                    self.after_delay = false;
                }
                // Google: `*` alone, or followed by whitespace, is the global agent.
                let token =
                    if value.first() == Some(&b'*') && value.get(1).is_none_or(|&b| is_space(b)) {
                        None
                    } else {
                        let len = value.iter().take_while(|&&b| is_token_byte(b)).count();
                        Some(std::str::from_utf8(&value[..len]).expect("ASCII").into())
                    };
                group.agents.push(Agent {
                    token,
                    crawl_delay: None,
                });
            }
            k @ (Key::Allow | Key::Disallow) => {
                stats.rules += 1;
                let Some(group) = self.robots.groups.last_mut() else {
                    return; // before any user-agent line
                };
                self.after_rule = true;
                let text = escape_pattern(value);
                if text.is_empty() {
                    return; // matches with priority 0: never decides anything
                }
                let allow = k == Key::Allow;
                if allow {
                    // Google: `Allow: /d/index.htm[l...]` also allows `/d/` exactly.
                    if let Some(slash) = text.rfind('/') {
                        if text[slash..].starts_with("/index.htm") {
                            let dir = format!("{}$", &text[..=slash]);
                            group.rules.push(Rule {
                                allow,
                                pattern: Pattern::new(dir),
                            });
                        }
                    }
                }
                group.rules.push(Rule {
                    allow,
                    pattern: Pattern::new(text),
                });
            }
            Key::Sitemap => {
                stats.sitemaps += 1;
                if !value.is_empty() {
                    let url = String::from_utf8_lossy(value).into_owned();
                    self.robots.sitemaps.push(url);
                }
            }
            Key::CrawlDelay => {
                stats.crawl_delays += 1;
                let Some(group) = self.robots.groups.last_mut() else {
                    return;
                };
                self.after_delay = true;
                let secs = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0);
                if let Some(secs) = secs {
                    for a in &mut group.agents[self.run_start..] {
                        a.crawl_delay = Some(a.crawl_delay.map_or(secs, |d| d.max(secs)));
                    }
                }
            }
            Key::Unknown => stats.unknown += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_tokens() {
        assert_eq!(agent_token("dragnet/0.1 (+https://x.org/bot)"), "dragnet");
        assert_eq!(agent_token(" Foo Bar "), "Foo Bar");
        assert!(is_valid_agent_token("Foo_bot-x"));
        assert!(!is_valid_agent_token("Foobot/2.1"));
        assert!(!is_valid_agent_token(""));
    }

    #[test]
    fn groups_merge_and_fall_back_to_star() {
        let r = Robots::parse(
            b"user-agent: *\ndisallow: /\n\nuser-agent: a\ndisallow: /x\nsitemap: s1\n\
              user-agent: b\ncrawl-delay: 2\ndisallow: /y\nuser-agent: A\ncrawl-delay: 1.5\nallow: /x/ok\n",
        );
        assert!(!r.allowed("a", "/x"));
        assert!(r.allowed("a", "/x/ok"));
        assert!(r.allowed("a", "/y"));
        assert!(!r.allowed("b", "/y"));
        assert!(r.allowed("b", "/x"));
        assert!(!r.allowed("c", "/x"));
        assert!(r.allowed("c", "/robots.txt"));
        assert_eq!(r.crawl_delay("b"), Some(Duration::from_secs(2)));
        assert_eq!(r.crawl_delay("a/1.0"), Some(Duration::from_millis(1500)));
        assert_eq!(r.crawl_delay("c"), None);
        assert_eq!(r.sitemaps(), ["s1"]);
        assert_eq!(r.stats().groups, 4);
        let a = r.for_agent("A");
        assert_eq!(a.len(), 2);
        assert!(!a.allowed("http://h/x") && a.allowed("http://h/x/ok?q"));
    }

    #[test]
    fn crawl_delay_belongs_to_the_agents_just_before_it() {
        // One group for Google (crawl-delay does not end a run of user agents), so all three
        // agents get the disallow; but each delay was meant for the agents right above it.
        let r = Robots::parse(
            b"User-agent: Slurp\r\nCrawl-delay: 2\r\n\r\nUser-agent: bingbot\r\nCrawl-delay: 3\r\n\r\n\
              User-agent: *\r\nCrawl-delay: 1\r\nDisallow: /m\r\nCrawl-delay: 0.5\r\n",
        );
        assert_eq!(r.stats().groups, 1);
        for agent in ["slurp", "bingbot", "dragnet"] {
            assert!(!r.allowed(agent, "/m/x"), "{agent}");
        }
        assert_eq!(r.crawl_delay("Slurp"), Some(Duration::from_secs(2)));
        assert_eq!(r.crawl_delay("bingbot"), Some(Duration::from_secs(3)));
        assert_eq!(r.crawl_delay("dragnet"), Some(Duration::from_secs(1)));
        assert_eq!(
            Robots::parse(b"Crawl-delay: 5\nUser-agent: *\n").crawl_delay("x"),
            None
        );
        assert_eq!(
            Robots::parse(b"User-agent: *\nCrawl-delay: -1\nCrawl-delay: x\n").crawl_delay("x"),
            None
        );
    }

    #[test]
    fn fetch_outcomes() {
        let ok = RobotsStatus::from_response(200, b"User-agent: *\nDisallow: /p\n");
        assert!(!ok.allowed("x", "/p") && ok.allowed("x", "/q"));
        for s in [301, 400, 401, 403, 404, 410] {
            assert!(matches!(
                RobotsStatus::from_response(s, b""),
                RobotsStatus::Unavailable
            ));
        }
        for s in [429, 500, 503, 599, 100, 999] {
            let st = RobotsStatus::from_response(s, b"");
            assert!(matches!(st, RobotsStatus::Unreachable), "{s}");
            assert!(!st.allowed("x", "http://h/") && st.allowed("x", "http://h/robots.txt"));
        }
        assert!(RobotsStatus::Unavailable.allowed("x", "/anything"));
    }

    #[test]
    fn limits() {
        let mut body = b"User-agent: *\nDisallow: /a\n".to_vec();
        body.resize(MAX_ROBOTS_BYTES, b'\n');
        body.extend_from_slice(b"Disallow: /b\n");
        let r = Robots::parse(&body);
        assert!(r.stats().truncated);
        assert!(!r.allowed("x", "/a") && r.allowed("x", "/b"));
    }
}
