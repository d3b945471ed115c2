//! Payload encodings of the crawl's run files (fetch lists, URL db).
//!
//! Payloads are small hand-rolled binary records: a leading record-version byte, then fields as
//! LEB128 varints, little-endian floats and length-prefixed UTF-8 strings. A version byte per
//! record lets later releases add fields without rewriting old files; readers refuse versions
//! they do not know instead of guessing. Layouts are listed in `docs/formats.md`.

use crate::run::format::{get_varint, put_varint};

/// Why a payload could not be decoded (mapped to `Error::Corrupt` by the caller, who knows the
/// file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Appends fields to a payload.
#[derive(Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    /// An unsigned varint.
    pub fn u64(&mut self, v: u64) -> &mut Enc {
        put_varint(&mut self.0, v);
        self
    }
    /// A float, 8 bytes little-endian.
    pub fn f64(&mut self, v: f64) -> &mut Enc {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A length-prefixed string.
    pub fn str(&mut self, s: &str) -> &mut Enc {
        put_varint(&mut self.0, s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    /// One byte.
    pub fn u8(&mut self, v: u8) -> &mut Enc {
        self.0.push(v);
        self
    }
}

/// Reads fields from a payload.
pub struct Dec<'a>(pub &'a [u8]);

impl<'a> Dec<'a> {
    fn err(what: &str) -> DecodeError {
        DecodeError(format!("payload truncated or malformed at {what}"))
    }
    /// An unsigned varint.
    pub fn u64(&mut self, what: &str) -> Result<u64, DecodeError> {
        let (v, n) = get_varint(self.0).ok_or_else(|| Dec::err(what))?;
        self.0 = &self.0[n..];
        Ok(v)
    }
    /// A float.
    pub fn f64(&mut self, what: &str) -> Result<f64, DecodeError> {
        let b: [u8; 8] = self
            .0
            .get(..8)
            .ok_or_else(|| Dec::err(what))?
            .try_into()
            .expect("8 bytes");
        self.0 = &self.0[8..];
        Ok(f64::from_le_bytes(b))
    }
    /// A string.
    pub fn str(&mut self, what: &str) -> Result<&'a str, DecodeError> {
        let n = self.u64(what)? as usize;
        let b = self.0.get(..n).ok_or_else(|| Dec::err(what))?;
        self.0 = &self.0[n..];
        std::str::from_utf8(b).map_err(|_| DecodeError(format!("{what} is not UTF-8")))
    }
    /// One byte.
    pub fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        let (&b, rest) = self.0.split_first().ok_or_else(|| Dec::err(what))?;
        self.0 = rest;
        Ok(b)
    }
    /// Fails unless every byte was consumed.
    pub fn end(&self) -> Result<(), DecodeError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(DecodeError(format!(
                "{} unexpected bytes after the last field",
                self.0.len()
            )))
        }
    }
}

fn check_version(d: &mut Dec<'_>, what: &str, known: u8) -> Result<(), DecodeError> {
    let v = d.u8("record version")?;
    if v == known {
        Ok(())
    } else {
        Err(DecodeError(format!(
            "{what} record version {v} is not supported (this build reads {known})"
        )))
    }
}

/// One URL to fetch: the payload of a fetch list ([`crate::run::Schema::FETCHLIST`]), keyed by
/// host key and URL fingerprint.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchItem {
    /// Canonical URL.
    pub url: String,
    /// Link distance from the seeds (seeds are 0).
    pub depth: u32,
    /// Priority the URL was scheduled with (OPIC cash).
    pub priority: f64,
}

impl FetchItem {
    const VERSION: u8 = 1;

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::default();
        e.u8(FetchItem::VERSION)
            .str(&self.url)
            .u64(u64::from(self.depth))
            .f64(self.priority);
        e.0
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> Result<FetchItem, DecodeError> {
        let mut d = Dec(b);
        check_version(&mut d, "fetch list", FetchItem::VERSION)?;
        let item = FetchItem {
            url: d.str("url")?.to_string(),
            depth: u32::try_from(d.u64("depth")?)
                .map_err(|_| DecodeError("depth out of range".into()))?,
            priority: d.f64("priority")?,
        };
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
}

impl UrlRecord {
    const VERSION: u8 = 1;

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
        }
    }

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::default();
        e.u8(UrlRecord::VERSION)
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
        e.0
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> Result<UrlRecord, DecodeError> {
        let mut d = Dec(b);
        check_version(&mut d, "URL db", UrlRecord::VERSION)?;
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
        };
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
        };
        let b = f.encode();
        assert_eq!(FetchItem::decode(&b).unwrap(), f);
        for n in 0..b.len() {
            assert!(FetchItem::decode(&b[..n]).is_err(), "truncated to {n}");
        }
        let mut v2 = b.clone();
        v2[0] = 2;
        assert!(FetchItem::decode(&v2).unwrap_err().0.contains("version 2"));
    }

    #[test]
    fn url_record_round_trip() {
        let mut r = UrlRecord::discovered("https://a.test/x".into(), 1, 0.5, 7);
        r.etag = "\"abc\"".into();
        r.state = UrlState::NotModified;
        r.digest = u64::MAX;
        let b = r.encode();
        assert_eq!(UrlRecord::decode(&b).unwrap(), r);
        let mut extra = b.clone();
        extra.push(0);
        assert!(UrlRecord::decode(&extra).is_err());
    }
}
