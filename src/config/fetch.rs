//! `[fetch]` in `crawl.toml`: politeness, the limits that bound every server, and the SSRF guard.
//!
//! Every limit has a default a production crawl can keep; each one exists because some server
//! out there (and one of websim's hostile hosts) behaves that way: a slow drip is ended by
//! `min_rate`, an endless body by `max_body` (the record is kept, marked truncated), a gzip bomb by
//! `max_decoded`, huge headers by `max_header_bytes`, a stall by the timeouts, and a host that
//! keeps the whole partition waiting by `deadline_secs` (its unfinished URLs are deferred, not
//! lost). A redirect's target is recorded and re-enters the crawl as a link; one on the same host
//! is also fetched later in the same run (`follow_redirects` hops), through the host's queue.
//! `max_redirects` bounds robots.txt (RFC 9309 §2.3.1.2: at least five hops).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::bytesize::ByteSize;
use crate::error::{Error, Result};
use crate::warc::Compression;

/// `[fetch]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FetchSection {
    /// The User-Agent sent; its product token (before `/`) selects robots.txt groups unless
    /// `robots_token` is set.
    pub user_agent: String,
    /// The product token robots.txt groups are matched against (RFC 9309 §2.2.1), when it is
    /// not the User-Agent's own (a crawler known to sites by another name). Empty: the
    /// User-Agent's product token.
    pub robots_token: String,
    /// A `From:` header (RFC 9110 §10.1.2: a mailbox for the crawl's operator) sent with every
    /// request, robots.txt included. Empty: none.
    pub from: String,
    /// Certificate authorities trusted for `https`: `"webpki"` (Mozilla's, compiled in),
    /// `"system"` (the machine's CA bundle) or `"both"` (`crate::fetch::tls`).
    pub tls_roots: TlsRoots,
    /// More CA certificates to trust (PEM files, relative to the crawl directory): a company's
    /// CA, a test web's.
    pub extra_ca_files: Vec<std::path::PathBuf>,
    /// Fetch worker threads per partition.
    pub threads: u32,
    /// Back queues (hosts in rotation) per worker thread; Mercator suggests about 3.
    pub queues_per_thread: u32,
    /// Least delay between two requests to one host, in seconds.
    pub default_delay_secs: f64,
    /// robots.txt crawl-delay is honoured up to this many seconds (a larger one is capped, and
    /// the host's fetches spread over later cycles).
    pub max_crawl_delay_secs: f64,
    /// Delay after a response = at least this multiple of its duration (Heritrix's delay
    /// factor): slow hosts are hit less often.
    pub delay_factor: f64,
    /// A host that answers 429 or 5xx is slowed down: its next request waits at least this long
    /// after the first such answer, twice as long after each further one in a row, up to
    /// `backoff_max_secs`; an answer of any other status resets it. In seconds.
    pub backoff_base_secs: f64,
    /// The longest back-off after repeated 429/5xx answers, in seconds.
    pub backoff_max_secs: f64,
    /// A `Retry-After` (seconds or an HTTP date) on a 429 or 503 is obeyed up to this many
    /// seconds; a longer one is capped (the host's URLs then wait for later in the run, or for
    /// the next cycle when the deadline comes first).
    pub max_retry_after_secs: f64,
    /// Connections open at once to one IP address, over all its virtual hosts and, with the
    /// local executor, over every partition fetched at once (`crate::fetch::ipgate`).
    pub per_ip_connections: u32,
    /// Least time between the end of a request to one IP address and the start of the next, over
    /// all its hosts and partitions (0: only the per-host delays).
    pub per_ip_delay_secs: f64,
    /// Connection set-up timeout, in seconds.
    pub connect_timeout_secs: f64,
    /// Longest silence while reading a response, in seconds.
    pub read_timeout_secs: f64,
    /// Longest time for one whole response, in seconds.
    pub total_timeout_secs: f64,
    /// Slowest transfer accepted, bytes per second, averaged after `min_rate_grace_secs`.
    pub min_rate: u64,
    /// Seconds before `min_rate` applies.
    pub min_rate_grace_secs: f64,
    /// Body bytes kept per response (as sent, before decoding); longer bodies are truncated
    /// and recorded with `WARC-Truncated: length`.
    pub max_body: ByteSize,
    /// Decoded bytes a Content-Encoding may expand to (gzip bombs).
    pub max_decoded: ByteSize,
    /// Total size of a response's status line and headers.
    pub max_header_bytes: ByteSize,
    /// Redirect hops followed for robots.txt (at least 5, RFC 9309).
    pub max_redirects: u32,
    /// Redirects of pages to their own host (`http` to `https`, a trailing slash, a moved page)
    /// followed in the same run, at most this many hops in a chain (0: none; the target waits
    /// for the next cycle). Each hop is its own fetch, recorded in the WARC and the URL db, and
    /// goes through the host's queue: its delay, the target origin's robots.txt, the scope and
    /// the follow budget (`follow_per_host`) apply. A target on another host re-enters the
    /// crawl as a link, as do targets the crawl has seen.
    pub follow_redirects: u32,
    /// Same-origin links of the pages a run fetches that the crawl has never seen, followed
    /// within the same run, at most this many per host and run (0: none; every link waits for
    /// the next cycle). A chain of "next" links then costs one run, not one cycle per link.
    /// Scope, depth, robots.txt, delays and the host's lifetime budget apply as to any URL; the
    /// merge still records and deduplicates every link.
    pub follow_per_host: u32,
    /// Parse each page as it arrives and commit the partition's parse stage with the fetch: one
    /// decode and one link extraction per page (shared with the following), and no reading the
    /// WARC back. `false` leaves the parse to `dragnet parse`, which reads the WARC; both write
    /// the same links and pages.
    pub parse: bool,
    /// Write an answer whose payload is byte for byte that of the URL's last capture as a
    /// `revisit` record (identical-payload-digest profile, as Heritrix does) pointing at that
    /// capture, with the HTTP headers and no body: a recrawl of unchanged pages costs their
    /// headers, not their bodies. `false` writes every answer as a `response`.
    pub dedup: bool,
    /// Media types whose bodies are kept (prefixes such as `text/` allowed); others are recorded
    /// with their headers only. Empty keeps everything.
    pub content_types: Vec<String>,
    /// Allow loopback, private, link-local and other non-public addresses (tests and the demo
    /// crawl loopback webs; a production crawl must not).
    pub allow_private_addresses: bool,
    /// The fetch stage of one partition ends after this many seconds; URLs not fetched by then
    /// are recorded as deferred.
    pub deadline_secs: f64,
    /// A host whose requests fail this many times in a row (no answer, timeout, slow drip, cut
    /// body) is given up for the run: its remaining URLs are recorded as `host_failing` at once
    /// (without waiting out the host's delay) and retried in a later cycle. 0 never gives up
    /// (only the deadline ends such a host).
    pub max_host_failures: u32,
    /// A host that failed in this many fetch runs in a row (it had URLs and none got an answer:
    /// robots.txt unreachable, connection refused, timeouts, TLS failures) is *parked*: its URLs
    /// stay in the frontier, not in the fetch lists, for 1 cycle, then 2, 4, ... with each
    /// further failed run, at most `max_park_cycles`; the first answer ends it. 0 never parks.
    pub park_after_failed_runs: u32,
    /// The longest a host is parked, in cycles.
    pub max_park_cycles: u32,
    /// How long a fetched robots.txt stays valid, in seconds (RFC 9309: at most 24 hours
    /// is recommended).
    pub robots_ttl_secs: f64,
    /// WARC compression: `"gzip"` (`.warc.gz`, one member per record: what every WARC tool
    /// reads; the default of new crawls), `"zstd"` (`.warc.zst`, the IIPC warc-zstd layout) or
    /// `"none"`. Left out of crawl.toml, a crawl keeps what its manifest recorded at `init`,
    /// and a crawl whose manifest predates that keeps `"zstd"`, the default it was made with
    /// (`crate::crawl::manifest`; docs/formats.md, "WARC files").
    pub warc_compression: WarcCompression,
    /// `.warc.zst` only: start each file with a zstd dictionary trained from the partition's
    /// records of the cycle before (the warc-zstd dictionary frame) and compress every record
    /// with it. Cycle 0, and a partition with too few records the cycle before, write plain
    /// frames.
    pub warc_dictionary: bool,
    /// Start a new WARC file after this many bytes.
    pub warc_rotate: ByteSize,
    /// Compression level of WARC records: zstd -7..=19 (default 3 with `warc_dictionary`, 1
    /// without: every fetched byte passes through it, and without a dictionary level 3 cost the
    /// fetch stage a third of its CPU for ~10% smaller files; see docs/BENCHMARKS.md), gzip 0..=12 (libdeflate's levels; default 1, the cheapest,
    /// within a few percent of zlib's 6 in size: docs/BENCHMARKS.md, "WARC compression").
    pub warc_level: Option<i32>,
}

/// `[fetch] warc_compression`: the compression named (`gzip`, `zstd`, `none`), parsed once as
/// crawl.toml is read, and whether crawl.toml wrote it or it is the default (a crawl opened
/// without it takes its manifest's). A name that is none of them is kept as written, for
/// [`FetchSection::validate`] to refuse. It reads as the name (`&*` or
/// [`WarcCompression::as_str`]), and a `&str` or `String` converts into an explicit one, as
/// crawl.toml's value is.
#[derive(Clone, Eq)]
pub struct WarcCompression {
    /// The compression, or the name as written when it names none.
    value: std::result::Result<Compression, String>,
    explicit: bool,
}

impl WarcCompression {
    fn named(name: &str, explicit: bool) -> WarcCompression {
        WarcCompression {
            value: Compression::parse(name).ok_or_else(|| name.to_owned()),
            explicit,
        }
    }

    /// The default of new crawls (`gzip`), as a value crawl.toml did not give.
    pub fn default_for_new_crawls() -> WarcCompression {
        WarcCompression {
            value: Ok(Compression::Gzip),
            explicit: false,
        }
    }

    /// `name` as a value crawl.toml did not give (what a crawl's manifest says).
    pub fn implied(name: &str) -> WarcCompression {
        WarcCompression::named(name, false)
    }

    /// The name ([`Compression::name`], or the unknown name as written).
    pub fn as_str(&self) -> &str {
        match &self.value {
            Ok(c) => c.name(),
            Err(name) => name,
        }
    }

    /// Whether crawl.toml (or the code building the configuration) gave it.
    pub fn is_explicit(&self) -> bool {
        self.explicit
    }

    /// The compression it names (`None` for a name that is none of them: refused by
    /// [`FetchSection::validate`]).
    pub fn compression(&self) -> Option<Compression> {
        self.value.as_ref().ok().copied()
    }
}

impl Default for WarcCompression {
    fn default() -> Self {
        WarcCompression::default_for_new_crawls()
    }
}

/// Two values are equal when they name the same compression, given or implied.
impl PartialEq for WarcCompression {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl std::fmt::Debug for WarcCompression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for WarcCompression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::ops::Deref for WarcCompression {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for WarcCompression {
    fn from(name: &str) -> Self {
        WarcCompression::named(name, true)
    }
}

impl From<String> for WarcCompression {
    fn from(name: String) -> Self {
        WarcCompression::named(&name, true)
    }
}

impl Serialize for WarcCompression {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for WarcCompression {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d).map(WarcCompression::from)
    }
}

impl Default for FetchSection {
    fn default() -> Self {
        FetchSection {
            user_agent: concat!("dragnet/", env!("CARGO_PKG_VERSION")).into(),
            robots_token: String::new(),
            from: String::new(),
            tls_roots: TlsRoots::Webpki,
            extra_ca_files: Vec::new(),
            threads: 16,
            queues_per_thread: 3,
            default_delay_secs: 1.0,
            max_crawl_delay_secs: 30.0,
            delay_factor: 2.0,
            backoff_base_secs: 1.0,
            backoff_max_secs: 300.0,
            max_retry_after_secs: 600.0,
            per_ip_connections: 2,
            connect_timeout_secs: 10.0,
            read_timeout_secs: 20.0,
            total_timeout_secs: 60.0,
            min_rate: 1024,
            min_rate_grace_secs: 10.0,
            max_body: ByteSize(10 << 20),
            max_decoded: ByteSize(50 << 20),
            max_header_bytes: ByteSize(64 << 10),
            per_ip_delay_secs: 0.0,
            max_redirects: 5,
            follow_redirects: 5,
            follow_per_host: 1000,
            parse: true,
            dedup: true,
            content_types: Vec::new(),
            allow_private_addresses: false,
            deadline_secs: 3600.0,
            max_host_failures: 3,
            park_after_failed_runs: 2,
            max_park_cycles: 16,
            robots_ttl_secs: 86_400.0,
            warc_compression: WarcCompression::default_for_new_crawls(),
            warc_dictionary: true,
            warc_rotate: ByteSize(1 << 30),
            warc_level: None,
        }
    }
}

/// How a check of [`FetchSection::validate`] words an error: the key and why.
type Bad<'a> = dyn Fn(&str, String) -> Error + 'a;

impl FetchSection {
    /// The product token robots.txt is read for: `robots_token`, or the User-Agent's.
    pub fn robots_agent(&self) -> &str {
        if self.robots_token.is_empty() {
            crate::robots::agent_token(&self.user_agent)
        } else {
            &self.robots_token
        }
    }

    /// The WARC compression level to use: `warc_level`, or the default for the codec.
    pub fn warc_level(&self) -> Option<i32> {
        match (self.warc_level, self.warc_compression.compression()) {
            (Some(l), _) => Some(l),
            // With a dictionary, level 3 costs 7% more CPU than 1 and makes files 14% smaller
            // (docs/BENCHMARKS.md, "WARC compression"); without one, 22% more for 4%.
            (None, Some(Compression::Zstd)) => Some(if self.warc_dictionary { 3 } else { 1 }),
            (None, _) => None,
        }
    }

    /// Checks values; errors name the key, the file and what is allowed.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let bad = |key: &str, why: String| Error::config(path, format!("fetch.{key}: {why}"));
        self.check_headers(&bad)?;
        if self.park_after_failed_runs > 0 && self.max_park_cycles == 0 {
            return Err(bad(
                "max_park_cycles",
                "must be at least 1 while park_after_failed_runs is on (default 16); set \
                 park_after_failed_runs = 0 to never park a failing host"
                    .into(),
            ));
        }
        self.check_agent(&bad)?;
        self.check_counts_and_times(&bad)?;
        self.check_sizes_and_redirects(&bad)?;
        self.check_warc(&bad)
    }

    /// Every value sent as an HTTP header (`user_agent`, `from`), checked alike before anything
    /// else reads it.
    fn check_headers(&self, bad: &Bad<'_>) -> Result<()> {
        for (key, value, example) in [
            (
                "user_agent",
                &self.user_agent,
                "\"dragnet/0.1 (+https://example.org/bot)\"",
            ),
            ("from", &self.from, "\"crawler@example.org\""),
        ] {
            header_value(value).map_err(|why| {
                bad(
                    key,
                    format!(
                        "{value:?} {why}: an HTTP header value must be one line of text \
                         (control characters other than tab are refused); remove it, e.g. \
                         {example}"
                    ),
                )
            })?;
        }
        Ok(())
    }

    /// The product tokens robots.txt groups are matched against: the User-Agent's, and
    /// `robots_token` when set (RFC 9309).
    fn check_agent(&self, bad: &Bad<'_>) -> Result<()> {
        let token = crate::robots::agent_token(&self.user_agent);
        if !crate::robots::is_valid_agent_token(token) {
            return Err(bad(
                "user_agent",
                format!(
                    "{:?} must start with a product token of letters, '-' and '_' \
                     (RFC 9309), e.g. \"dragnet/0.1 (+https://example.org/bot)\"",
                    self.user_agent
                ),
            ));
        }
        if !self.robots_token.is_empty() && !crate::robots::is_valid_agent_token(&self.robots_token)
        {
            return Err(bad(
                "robots_token",
                format!(
                    "{:?} must be a product token of letters, '-' and '_' (RFC 9309)",
                    self.robots_token
                ),
            ));
        }
        Ok(())
    }

    /// Thread and connection counts, and every value in seconds.
    fn check_counts_and_times(&self, bad: &Bad<'_>) -> Result<()> {
        for (key, v, min) in [
            ("threads", self.threads, 1),
            ("queues_per_thread", self.queues_per_thread, 1),
            ("per_ip_connections", self.per_ip_connections, 1),
        ] {
            if v < min || v > 4096 {
                return Err(bad(key, format!("{v} must be between {min} and 4096")));
            }
        }
        for (key, v, positive) in [
            ("default_delay_secs", self.default_delay_secs, false),
            ("max_crawl_delay_secs", self.max_crawl_delay_secs, false),
            ("delay_factor", self.delay_factor, false),
            ("backoff_base_secs", self.backoff_base_secs, false),
            ("backoff_max_secs", self.backoff_max_secs, false),
            ("max_retry_after_secs", self.max_retry_after_secs, false),
            ("connect_timeout_secs", self.connect_timeout_secs, true),
            ("read_timeout_secs", self.read_timeout_secs, true),
            ("total_timeout_secs", self.total_timeout_secs, true),
            ("min_rate_grace_secs", self.min_rate_grace_secs, false),
            ("deadline_secs", self.deadline_secs, true),
            ("robots_ttl_secs", self.robots_ttl_secs, false),
            ("per_ip_delay_secs", self.per_ip_delay_secs, false),
        ] {
            if !v.is_finite() || v < 0.0 || (positive && v == 0.0) || v > 1e9 {
                let want = if positive { "> 0" } else { ">= 0" };
                return Err(bad(key, format!("{v} must be a number of seconds {want}")));
            }
        }
        Ok(())
    }

    /// The size limits of a response, and the redirect hops.
    fn check_sizes_and_redirects(&self, bad: &Bad<'_>) -> Result<()> {
        if self.max_body.0 < 1024 || self.max_decoded.0 < self.max_body.0 {
            return Err(bad(
                "max_body",
                format!(
                    "{} must be at least 1 KiB and at most max_decoded ({})",
                    self.max_body, self.max_decoded
                ),
            ));
        }
        if self.max_header_bytes.0 < 1024 {
            return Err(bad(
                "max_header_bytes",
                format!("{} must be at least 1 KiB", self.max_header_bytes),
            ));
        }
        if self.follow_redirects > 20 {
            return Err(bad(
                "follow_redirects",
                format!(
                    "{} must be at most 20 (a longer chain is a loop or a trap)",
                    self.follow_redirects
                ),
            ));
        }
        if self.max_redirects < 5 {
            return Err(bad(
                "max_redirects",
                format!(
                    "{} must be at least 5 (RFC 9309 asks crawlers to follow five hops for robots.txt)",
                    self.max_redirects
                ),
            ));
        }
        Ok(())
    }

    /// The WARC files: compression, its level, rotation.
    fn check_warc(&self, bad: &Bad<'_>) -> Result<()> {
        let Some(compression) = self.warc_compression.compression() else {
            return Err(bad(
                "warc_compression",
                format!(
                    "{:?} must be \"zstd\", \"gzip\" or \"none\"",
                    self.warc_compression
                ),
            ));
        };
        if let Some(l) = self.warc_level {
            let ok = match compression {
                Compression::Zstd => (-7..=19).contains(&l),
                Compression::Gzip => (0..=12).contains(&l),
                Compression::None => true,
            };
            if !ok {
                return Err(bad(
                    "warc_level",
                    format!(
                        "{l} is out of range for {}: zstd takes -7..=19, gzip 0..=12",
                        self.warc_compression
                    ),
                ));
            }
        }
        if self.warc_rotate.0 < 1 << 20 {
            return Err(bad(
                "warc_rotate",
                format!("{} must be at least 1 MiB", self.warc_rotate),
            ));
        }
        Ok(())
    }
}

/// Whether `value` may be sent as an HTTP header value (RFC 9110 §5.5): no control character
/// but tab. CR and LF would end the header (or the request) early and let the value write
/// headers of its own; the HTTP client refuses such a request, so every fetch would fail. The
/// one check for every header value taken from the configuration.
pub fn header_value(value: &str) -> std::result::Result<(), String> {
    match value
        .bytes()
        .enumerate()
        .find(|&(_, b)| (b < 0x20 && b != b'\t') || b == 0x7f)
    {
        None => Ok(()),
        Some((at, b)) => {
            let name = match b {
                b'\r' => "a carriage return (CR)".to_string(),
                b'\n' => "a line feed (LF)".to_string(),
                0 => "a NUL byte".to_string(),
                0x7f => "a DEL character".to_string(),
                _ => format!("the control character 0x{b:02x}"),
            };
            Err(format!("holds {name} at byte {at}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `warc_compression` is parsed as it is read and reads back as written; a name that is
    /// no compression is kept for `validate` to refuse.
    #[test]
    fn warc_compression_is_parsed_once_and_reads_as_written() {
        for c in [Compression::None, Compression::Gzip, Compression::Zstd] {
            let w = WarcCompression::from(c.name());
            assert_eq!((w.compression(), w.as_str()), (Some(c), c.name()));
            assert!(w.is_explicit());
            assert_eq!(w, WarcCompression::implied(c.name()));
        }
        let odd = WarcCompression::implied("lz4");
        assert_eq!((odd.compression(), odd.as_str()), (None, "lz4"));
        let f = FetchSection {
            warc_compression: "lz4".into(),
            ..FetchSection::default()
        };
        let e = f.validate(Path::new("crawl.toml")).unwrap_err().to_string();
        assert!(e.contains("fetch.warc_compression: \"lz4\""), "{e}");
    }

    /// CR, LF and the other control characters (but tab) in a header value from the
    /// configuration are a configuration error naming the key; `from` and `user_agent` alike.
    #[test]
    fn header_values_with_control_characters_are_refused() {
        let path = Path::new("crawl.toml");
        for key in ["user_agent", "from"] {
            for (value, what) in [
                ("dragnet/0.1\r\nX-Evil: 1", "carriage return"),
                ("dragnet/0.1\nX-Evil: 1", "line feed"),
                ("dragnet/0.1\r", "carriage return"),
                ("dragnet/0.1\0", "NUL"),
                ("dragnet/0.1\x1b[0m", "0x1b"),
                ("dragnet/0.1\x7f", "DEL"),
            ] {
                let mut f = FetchSection::default();
                match key {
                    "user_agent" => f.user_agent = value.into(),
                    _ => f.from = value.into(),
                }
                let e = f.validate(path).unwrap_err();
                assert_eq!(e.exit_code(), crate::error::EXIT_USAGE, "{e}");
                let msg = e.to_string();
                assert!(msg.contains(&format!("fetch.{key}")), "{msg}");
                assert!(msg.contains(what) && msg.contains("crawl.toml"), "{msg}");
            }
        }
        // A tab, spaces and text beyond ASCII are fine.
        let f = FetchSection {
            user_agent: "dragnet/0.1\t(+https://example.org/bot; café)".into(),
            from: "ops@example.org".into(),
            ..FetchSection::default()
        };
        f.validate(path).unwrap();
        assert_eq!(header_value(""), Ok(()));
        assert!(
            header_value("a\u{85}b").is_ok(),
            "C1 controls are bytes >= 0x80"
        );
    }
}

/// `[fetch] tls_roots`: which certificate authorities are trusted (besides `extra_ca_files`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TlsRoots {
    /// Mozilla's root program, compiled in.
    #[default]
    Webpki,
    /// The machine's CA bundle.
    System,
    /// Both.
    Both,
}
