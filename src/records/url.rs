//! The records about one URL: [`FetchItem`] (to fetch), [`FetchResult`] (what fetching gave)
//! and [`UrlRecord`] with its [`UrlState`] (what the URL db knows).

use super::{Dec, DecodeError, Enc, FetchErrorKind};

/// One URL to fetch: the payload of a fetch list ([`crate::run::Schema::FETCHLIST`]), keyed by
/// host key and URL fingerprint.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchItem {
    /// Canonical URL.
    pub url: String,
    /// Link distance from the seeds (seeds are 0).
    pub depth: u32,
    /// Priority the URL was scheduled with (OPIC cash).
    pub priority: f64,
    /// `ETag` of the last fetch, sent as `If-None-Match` (recrawls; empty: none).
    pub etag: String,
    /// `Last-Modified` of the last fetch, sent as `If-Modified-Since` (empty: none).
    pub last_modified: String,
    /// The capture holding the URL's last payload (recrawls): an answer with the same payload
    /// digest is written as a revisit referring to it (`[fetch] dedup`).
    pub capture: Capture,
    /// From the reserve: listed beyond `fetch_budget`, fetched only while the cycle's window is
    /// open and recorded `deferred` (back to the frontier) if it closes first
    /// ([`crate::fetch::window`]).
    pub reserve: bool,
}

/// A response record holding a URL's payload: what an identical-payload-digest revisit refers
/// to (Heritrix's duplication reduction).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capture {
    /// Its `WARC-Payload-Digest` (`sha1:` and base32); empty: no capture known.
    pub payload_digest: String,
    /// Its `WARC-Date`, Unix microseconds.
    pub date_us: u64,
    /// Its `WARC-Record-ID`, angle brackets included.
    pub record_id: String,
}

impl Capture {
    /// Whether a capture is known.
    pub fn is_known(&self) -> bool {
        !self.payload_digest.is_empty()
    }

    /// The bytes of its strings, for sizing an encoder.
    fn text_len(&self) -> usize {
        self.payload_digest.len() + self.record_id.len()
    }

    fn put(&self, e: &mut Enc) {
        e.str(&self.payload_digest)
            .u64(self.date_us)
            .str(&self.record_id);
    }

    fn get(d: &mut Dec<'_>) -> Result<Capture, DecodeError> {
        Ok(Capture {
            payload_digest: d.str("capture digest")?.to_string(),
            date_us: d.u64("capture date")?,
            record_id: d.str("capture record id")?.to_string(),
        })
    }
}

impl FetchItem {
    /// Version 1: url, depth, priority. Version 2 adds the validators of a recrawl, version 3
    /// the capture a revisit would refer to, version 4 a flags byte (bit 0: `reserve`); an item
    /// is written in the oldest version that holds it, so first fetches stay byte-identical to
    /// what earlier builds wrote.
    const VERSION: u8 = 4;

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let v4 = self.reserve;
        let v3 = v4 || self.capture.is_known();
        let v2 = v3 || !self.etag.is_empty() || !self.last_modified.is_empty();
        let mut e = Enc::sized(
            self.url.len() + self.etag.len() + self.last_modified.len() + self.capture.text_len(),
        );
        e.u8(if v4 {
            4
        } else if v3 {
            3
        } else if v2 {
            2
        } else {
            1
        })
        .str(&self.url)
        .u64(u64::from(self.depth))
        .f64(self.priority);
        if v2 {
            e.str(&self.etag).str(&self.last_modified);
        }
        if v3 {
            self.capture.put(&mut e);
        }
        if v4 {
            e.u8(u8::from(self.reserve));
        }
        e.0
    }

    /// Whether an encoded item is of the reserve, without decoding it: only a version 4 item
    /// can be, and its flags byte is its last. (A damaged payload is told apart by
    /// [`FetchItem::decode`].)
    pub fn is_reserve_payload(b: &[u8]) -> bool {
        b.first() == Some(&4) && b.last().is_some_and(|f| f & 1 != 0)
    }

    /// Decodes a payload (versions 1 to 4).
    pub fn decode(b: &[u8]) -> Result<FetchItem, DecodeError> {
        let mut d = Dec(b);
        let v = d.u8("record version")?;
        if v == 0 || v > FetchItem::VERSION {
            return Err(DecodeError(format!(
                "fetch list record version {v} is not supported (this build reads 1 to {})",
                FetchItem::VERSION
            )));
        }
        let mut item = FetchItem {
            url: d.str("url")?.to_string(),
            depth: u32::try_from(d.u64("depth")?)
                .map_err(|_| DecodeError("depth out of range".into()))?,
            priority: d.f64("priority")?,
            ..FetchItem::default()
        };
        if v >= 2 {
            item.etag = d.str("etag")?.to_string();
            item.last_modified = d.str("last_modified")?.to_string();
        }
        if v >= 3 {
            item.capture = Capture::get(&mut d)?;
        }
        if v >= 4 {
            let flags = d.u8("flags")?;
            if flags & !1 != 0 {
                return Err(DecodeError(format!(
                    "fetch list record flags {flags:#04x}: bits this build does not know"
                )));
            }
            item.reserve = flags & 1 != 0;
        }
        d.end()?;
        Ok(item)
    }
}

/// Where a URL stands in the crawl.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum UrlState {
    /// Known, never fetched.
    Unfetched = 0,
    /// Fetched with a 2xx answer.
    Fetched = 1,
    /// Answered with a redirect (its target is a separate URL).
    Redirected = 2,
    /// A permanent failure (4xx, robots-disallowed, out of scope).
    Gone = 3,
    /// A temporary failure (5xx, timeout); retried later.
    Retry = 4,
    /// Fetched before and answered 304 Not Modified last time.
    NotModified = 5,
}

impl UrlState {
    /// The state's name, as status, metrics and `dragnet export` write it.
    pub fn name(self) -> &'static str {
        match self {
            UrlState::Unfetched => "unfetched",
            UrlState::Fetched => "fetched",
            UrlState::Redirected => "redirected",
            UrlState::Gone => "gone",
            UrlState::Retry => "retry",
            UrlState::NotModified => "not_modified",
        }
    }

    fn from_u8(v: u8) -> Result<UrlState, DecodeError> {
        Ok(match v {
            0 => UrlState::Unfetched,
            1 => UrlState::Fetched,
            2 => UrlState::Redirected,
            3 => UrlState::Gone,
            4 => UrlState::Retry,
            5 => UrlState::NotModified,
            _ => return Err(DecodeError(format!("unknown URL state {v}"))),
        })
    }
}

/// A URL's entry in the URL db ([`crate::run::Schema::URLDB`]), keyed by fingerprint.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlRecord {
    /// Canonical URL.
    pub url: String,
    /// Where the URL stands.
    pub state: UrlState,
    /// Link distance from the seeds.
    pub depth: u32,
    /// Current priority (OPIC cash).
    pub score: f64,
    /// Cycle in which the URL was first discovered.
    pub discovered: u32,
    /// Last fetch time, Unix seconds (0: never).
    pub fetched_at: u64,
    /// Last HTTP status (0: never fetched).
    pub http_status: u16,
    /// `ETag` of the last response, for conditional GET.
    pub etag: String,
    /// `Last-Modified` of the last response, for conditional GET.
    pub last_modified: String,
    /// xxh3-64 of the last payload (0: none), to see changes.
    pub digest: u64,
    /// How many fetches found the content changed.
    pub changes: u32,
    /// How many fetches in all.
    pub fetches: u32,
    /// Cycle + 1 in which a recrawl of this fetched URL was put into the frontier (0: none
    /// pending). Cleared when the next fetch result is folded in.
    pub recrawl_queued: u32,
    /// Failed attempts in a row (no usable answer, robots.txt unreachable, host failing); reset
    /// by a usable answer. At `[prioritize] max_attempts` the URL is given up (state `Gone`).
    pub failures: u32,
    /// The response record holding the URL's last payload (version 3): what a revisit of an
    /// unchanged payload refers to.
    pub capture: Capture,
}

impl UrlRecord {
    /// Version 1: up to `fetches`. Version 2 adds `recrawl_queued` and `failures`, version 3
    /// the `capture`; a record is written in the oldest version that holds it, so URL dbs stay
    /// byte-identical to earlier builds' until those are set.
    const VERSION: u8 = 3;

    /// A newly discovered URL.
    pub fn discovered(url: String, depth: u32, score: f64, cycle: u32) -> UrlRecord {
        UrlRecord {
            url,
            state: UrlState::Unfetched,
            depth,
            score,
            discovered: cycle,
            fetched_at: 0,
            http_status: 0,
            etag: String::new(),
            last_modified: String::new(),
            digest: 0,
            changes: 0,
            fetches: 0,
            recrawl_queued: 0,
            failures: 0,
            capture: Capture::default(),
        }
    }

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let v3 = self.capture.is_known();
        let v2 = v3 || self.recrawl_queued != 0 || self.failures != 0;
        let mut e = Enc::sized(
            self.url.len() + self.etag.len() + self.last_modified.len() + self.capture.text_len(),
        );
        e.u8(if v3 {
            3
        } else if v2 {
            2
        } else {
            1
        })
        .str(&self.url)
        .u8(self.state as u8)
        .u64(u64::from(self.depth))
        .f64(self.score)
        .u64(u64::from(self.discovered))
        .u64(self.fetched_at)
        .u64(u64::from(self.http_status))
        .str(&self.etag)
        .str(&self.last_modified)
        .u64(self.digest)
        .u64(u64::from(self.changes))
        .u64(u64::from(self.fetches));
        if v2 {
            e.u64(u64::from(self.recrawl_queued))
                .u64(u64::from(self.failures));
        }
        if v3 {
            self.capture.put(&mut e);
        }
        e.0
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> Result<UrlRecord, DecodeError> {
        let mut d = Dec(b);
        let v = d.u8("record version")?;
        if v == 0 || v > UrlRecord::VERSION {
            return Err(DecodeError(format!(
                "URL db record version {v} is not supported (this build reads 1 to {})",
                UrlRecord::VERSION
            )));
        }
        let small = |v: u64, what: &str| {
            u32::try_from(v).map_err(|_| DecodeError(format!("{what} out of range")))
        };
        let r = UrlRecord {
            url: d.str("url")?.to_string(),
            state: UrlState::from_u8(d.u8("state")?)?,
            depth: small(d.u64("depth")?, "depth")?,
            score: d.f64("score")?,
            discovered: small(d.u64("discovered")?, "discovered")?,
            fetched_at: d.u64("fetched_at")?,
            http_status: u16::try_from(d.u64("http_status")?)
                .map_err(|_| DecodeError("http_status out of range".into()))?,
            etag: d.str("etag")?.to_string(),
            last_modified: d.str("last_modified")?.to_string(),
            digest: d.u64("digest")?,
            changes: small(d.u64("changes")?, "changes")?,
            fetches: small(d.u64("fetches")?, "fetches")?,
            recrawl_queued: 0,
            failures: 0,
            capture: Capture::default(),
        };
        let mut r = r;
        if v >= 2 {
            r.recrawl_queued = small(d.u64("recrawl_queued")?, "recrawl_queued")?;
            r.failures = small(d.u64("failures")?, "failures")?;
        }
        if v >= 3 {
            r.capture = Capture::get(&mut d)?;
        }
        d.end()?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetch_item_round_trip_and_truncation() {
        let f = FetchItem {
            url: "http://example.com/".into(),
            depth: 3,
            priority: 0.25,
            ..FetchItem::default()
        };
        let b = f.encode();
        assert_eq!(b[0], 1, "no validators: written as version 1");
        assert_eq!(FetchItem::decode(&b).unwrap(), f);
        for n in 0..b.len() {
            assert!(FetchItem::decode(&b[..n]).is_err(), "truncated to {n}");
        }
        let mut v5 = b.clone();
        v5[0] = 5;
        assert!(FetchItem::decode(&v5).unwrap_err().0.contains("version 5"));
        let recrawl = FetchItem {
            etag: "\"e1\"".into(),
            last_modified: "Tue, 01 Dec 2026 10:00:00 GMT".into(),
            ..f.clone()
        };
        let b = recrawl.encode();
        assert_eq!(b[0], 2, "validators need version 2");
        assert_eq!(FetchItem::decode(&b).unwrap(), recrawl);
        for n in 0..b.len() {
            assert!(FetchItem::decode(&b[..n]).is_err(), "truncated to {n}");
        }
        let dedup = FetchItem {
            capture: Capture {
                payload_digest: "sha1:AAAA".into(),
                date_us: 1_700_000_000_123_456,
                record_id: "<urn:uuid:x>".into(),
            },
            etag: String::new(),
            ..recrawl.clone()
        };
        let b = dedup.encode();
        assert_eq!(b[0], 3, "a capture needs version 3");
        assert_eq!(FetchItem::decode(&b).unwrap(), dedup);
        for n in 0..b.len() {
            assert!(FetchItem::decode(&b[..n]).is_err(), "truncated to {n}");
        }
        let reserve = FetchItem {
            reserve: true,
            ..f.clone()
        };
        let b = reserve.encode();
        assert_eq!(b[0], 4, "the reserve flag needs version 4");
        assert_eq!(*b.last().unwrap(), 1);
        assert_eq!(FetchItem::decode(&b).unwrap(), reserve);
        assert!(FetchItem::is_reserve_payload(&b));
        for listed in [&f, &recrawl, &dedup] {
            assert!(!FetchItem::is_reserve_payload(&listed.encode()));
        }
        for n in 0..b.len() {
            assert!(FetchItem::decode(&b[..n]).is_err(), "truncated to {n}");
        }
        // A version 4 item without the flag reads as a listed one; unknown flag bits refuse.
        let mut listed = b.clone();
        *listed.last_mut().unwrap() = 0;
        assert_eq!(FetchItem::decode(&listed).unwrap(), f);
        *listed.last_mut().unwrap() = 2;
        assert!(FetchItem::decode(&listed).unwrap_err().0.contains("flags"));
    }

    #[test]
    fn url_record_round_trip() {
        let mut r = UrlRecord::discovered("https://a.test/x".into(), 1, 0.5, 7);
        r.etag = "\"abc\"".into();
        r.state = UrlState::NotModified;
        r.digest = u64::MAX;
        let b = r.encode();
        assert_eq!(UrlRecord::decode(&b).unwrap(), r);
        assert_eq!(b[0], 1, "nothing of version 2 set: written as version 1");
        let mut extra = b.clone();
        extra.push(0);
        assert!(UrlRecord::decode(&extra).is_err());
        r.recrawl_queued = 9;
        r.failures = 2;
        let b = r.encode();
        assert_eq!(b[0], 2);
        assert_eq!(UrlRecord::decode(&b).unwrap(), r);
        for n in 0..b.len() {
            assert!(UrlRecord::decode(&b[..n]).is_err(), "truncated to {n}");
        }
        r.recrawl_queued = 0;
        r.failures = 0;
        r.capture.payload_digest = "sha1:BBBB".into();
        r.capture.date_us = 5;
        let b = r.encode();
        assert_eq!(b[0], 3);
        assert_eq!(UrlRecord::decode(&b).unwrap(), r);
        for n in 0..b.len() {
            assert!(UrlRecord::decode(&b[..n]).is_err(), "truncated to {n}");
        }
    }
}

/// What became of one URL of a fetch list: the payload of a fetch-results run
/// ([`crate::run::Schema::FETCHED`]), keyed by URL fingerprint. Parse finds the page in the WARC
/// through `warc_file` and `warc_offset`; merge folds the rest into the URL db.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchResult {
    /// Canonical URL.
    pub url: String,
    /// HTTP status (0: no answer; see `error`).
    pub status: u16,
    /// When the request started, Unix milliseconds.
    pub fetched_at_ms: u64,
    /// How long the response took, milliseconds.
    pub duration_ms: u32,
    /// Media type of the response, without parameters (`text/html`).
    pub content_type: String,
    /// Body bytes received (as sent, before decoding).
    pub length: u64,
    /// The body was cut at the size cap or by a timeout (`WARC-Truncated`).
    pub truncated: bool,
    /// xxh3-64 of the decoded payload (0: none), for change detection.
    pub digest: u64,
    /// WARC file name (in the cycle's `warc/` directory) of the response record; empty if none.
    pub warc_file: String,
    /// Offset of the response record in that file.
    pub warc_offset: u64,
    /// Compressed length of the response record.
    pub warc_length: u64,
    /// `ETag` validator, for the next conditional GET.
    pub etag: String,
    /// `Last-Modified` validator.
    pub last_modified: String,
    /// `Location` of a redirect, resolved against the URL (it re-enters the crawl as a link).
    pub redirect: String,
    /// Why there is no usable answer: empty, or a [`FetchErrorKind`]'s string (`timeout`,
    /// `robots`, `deferred`, ...). Kept as the string, so a kind another build wrote still
    /// decodes; read it with [`FetchResult::error_kind`].
    pub error: String,
    /// Link distance from the seeds, from the fetch list (v2; 0 in v1 records).
    pub depth: u32,
    /// The OPIC cash the URL was scheduled with, from the fetch list: what parse splits over the
    /// page's out-links (v2; 0 in v1 records).
    pub priority: f64,
    /// `WARC-Payload-Digest` of the record (v3; empty if none).
    pub payload_digest: String,
    /// `WARC-Record-ID` of the record (v3; empty if none).
    pub record_id: String,
    /// `WARC-Date` of the record, Unix microseconds (v3; 0 if none).
    pub warc_date_us: u64,
    /// The record is a revisit of an identical payload ([`Capture`]): no body in the WARC (v3).
    pub revisit: bool,
}

impl FetchResult {
    /// Version 2 adds `depth` and `priority`, version 3 `payload_digest`, `record_id` and
    /// `revisit`; a result is written in the oldest version that can hold it.
    const VERSION: u8 = 3;

    /// The error kind, if `error` names one this build knows (`None`: no error, or a kind
    /// written by another build, which callers take as an unnamed failure).
    pub fn error_kind(&self) -> Option<FetchErrorKind> {
        FetchErrorKind::parse(&self.error)
    }

    /// Whether the answer is usable: no error, or only `decoded_too_large`.
    pub fn usable(&self) -> bool {
        self.error.is_empty() || self.error_kind() == Some(FetchErrorKind::DecodedTooLarge)
    }

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::sized(
            self.url.len()
                + self.content_type.len()
                + self.warc_file.len()
                + self.etag.len()
                + self.last_modified.len()
                + self.redirect.len()
                + self.error.len()
                + self.payload_digest.len()
                + self.record_id.len(),
        );
        e.u8(1)
            .str(&self.url)
            .u64(u64::from(self.status))
            .u64(self.fetched_at_ms)
            .u64(u64::from(self.duration_ms))
            .str(&self.content_type)
            .u64(self.length)
            .u8(u8::from(self.truncated))
            .u64(self.digest)
            .str(&self.warc_file)
            .u64(self.warc_offset)
            .u64(self.warc_length)
            .str(&self.etag)
            .str(&self.last_modified)
            .str(&self.redirect)
            .str(&self.error);
        let v3 = !self.payload_digest.is_empty()
            || !self.record_id.is_empty()
            || self.warc_date_us != 0
            || self.revisit;
        if v3 || self.depth != 0 || self.priority != 0.0 {
            e.0[0] = 2;
            e.u64(u64::from(self.depth)).f64(self.priority);
        }
        if v3 {
            e.0[0] = 3;
            e.str(&self.payload_digest)
                .str(&self.record_id)
                .u64(self.warc_date_us)
                .u8(u8::from(self.revisit));
        }
        e.0
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> Result<FetchResult, DecodeError> {
        let mut d = Dec(b);
        let v = d.u8("record version")?;
        if v == 0 || v > FetchResult::VERSION {
            return Err(DecodeError(format!(
                "fetch result record version {v} is not supported (this build reads 1 to {})",
                FetchResult::VERSION
            )));
        }
        let range = |what: &str| DecodeError(format!("{what} out of range"));
        let mut r = FetchResult {
            url: d.str("url")?.to_string(),
            status: u16::try_from(d.u64("status")?).map_err(|_| range("status"))?,
            fetched_at_ms: d.u64("fetched_at_ms")?,
            duration_ms: u32::try_from(d.u64("duration_ms")?).map_err(|_| range("duration"))?,
            content_type: d.str("content_type")?.to_string(),
            length: d.u64("length")?,
            truncated: match d.u8("truncated")? {
                0 => false,
                1 => true,
                v => return Err(DecodeError(format!("truncated flag {v} is not 0 or 1"))),
            },
            digest: d.u64("digest")?,
            warc_file: d.str("warc_file")?.to_string(),
            warc_offset: d.u64("warc_offset")?,
            warc_length: d.u64("warc_length")?,
            etag: d.str("etag")?.to_string(),
            last_modified: d.str("last_modified")?.to_string(),
            redirect: d.str("redirect")?.to_string(),
            error: d.str("error")?.to_string(),
            ..FetchResult::default()
        };
        if v >= 2 {
            r.depth = u32::try_from(d.u64("depth")?).map_err(|_| range("depth"))?;
            r.priority = d.f64("priority")?;
        }
        if v >= 3 {
            r.payload_digest = d.str("payload_digest")?.to_string();
            r.record_id = d.str("record_id")?.to_string();
            r.warc_date_us = d.u64("warc_date_us")?;
            r.revisit = match d.u8("revisit")? {
                0 => false,
                1 => true,
                v => return Err(DecodeError(format!("revisit flag {v} is not 0 or 1"))),
            };
        }
        d.end()?;
        Ok(r)
    }
}

#[cfg(test)]
mod fetch_result_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every fetch result survives a round trip, and every proper prefix of its encoding is
        /// refused rather than misread.
        #[test]
        fn round_trips_and_refuses_prefixes(
            url in ".{0,40}", status in any::<u16>(), at in any::<u64>(), dur in any::<u32>(),
            ct in "[a-z/]{0,12}", len in any::<u64>(), truncated in any::<bool>(),
            digest in any::<u64>(), file in "[a-z0-9.-]{0,20}", off in any::<u64>(),
            wlen in any::<u64>(), etag in ".{0,10}", lm in ".{0,10}", redirect in ".{0,20}",
            error in "[a-z_]{0,10}", depth in 0u32..3, priority in prop_oneof![Just(0.0), 0.0f64..2.0],
            payload_digest in prop_oneof![Just(String::new()), "sha1:[A-Z2-7]{4}"],
            record_id in prop_oneof![Just(String::new()), "<urn:uuid:[a-f0-9]{4}>"],
            revisit in any::<bool>(), warc_date_us in prop_oneof![Just(0u64), any::<u64>()],
        ) {
            let r = FetchResult {
                url, status, fetched_at_ms: at, duration_ms: dur, content_type: ct, length: len,
                truncated, digest, warc_file: file, warc_offset: off, warc_length: wlen, etag,
                last_modified: lm, redirect, error, depth, priority, payload_digest, record_id,
                warc_date_us, revisit,
            };
            let v3 = !r.payload_digest.is_empty() || !r.record_id.is_empty() || revisit
                || warc_date_us != 0;
            let v1 = !v3 && depth == 0 && priority == 0.0;
            let b = r.encode();
            prop_assert_eq!(b[0], if v1 { 1 } else if v3 { 3 } else { 2 });
            prop_assert_eq!(FetchResult::decode(&b).unwrap(), r);
            for cut in 0..b.len() {
                prop_assert!(FetchResult::decode(&b[..cut]).is_err());
            }
        }
    }
}
