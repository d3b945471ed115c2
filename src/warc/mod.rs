//! WARC files: what the fetch stage writes and the parse stage (and offline reprocessing) reads.
//!
//! WARC (ISO 28500; we write version 1.1, read 1.0 and 1.1) is the archive format every web
//! archive tool understands, so a crawl's raw fetches stay useful outside dragnet: pywb replays
//! them, warcio checks them, and an analyst can re-parse last month's files with a new filter
//! without fetching anything again (docs/design.md §7). That is also why we keep to what warcio and
//! Common Crawl do where the standard leaves a choice (digests as `sha1:` + base32 over the bytes
//! after the HTTP header block, request before response, one compressed member per record).
//!
//! - [`writer`]: [`WarcWriter`] appends records (warcinfo, request, response, revisit, metadata),
//!   compresses each record on its own (one zstd frame or gzip member, so any record can be read
//!   from its offset alone), rotates files at a size and publishes each finished file atomically
//!   through [`crate::storage`]. It returns every record's file, offset and compressed length: the
//!   fetch-results run and CDXJ indexes store them.
//! - [`reader`]: [`WarcReader`] streams records one at a time with bounded memory, detects
//!   gzip / zstd (with the warc-zstd dictionary frame) / plain, reports each record's offset and
//!   length in the compressed file, verifies digests on request, and turns every malformed byte
//!   into [`Error::Corrupt`](crate::Error::Corrupt) naming the file and offset.
//! - [`http`]: the HTTP message inside a request/response block: status line, headers,
//!   de-chunking and Content-Encoding decoding with a decompression cap.
//! - [`digest`]: `sha1:` base32 digests as warcio computes and compares them.
//! - [`check`]: `dragnet check warc`, a verifying listing of a file's records.
//! - [`zstd_frame`]: where a zstd frame ends, from its block headers (nothing decompressed).
//! - [`dictionary`]: the warc-zstd dictionary: trained from records, the dictionary frame that
//!   starts a `.warc.zst` file, [`Codec`] (a compression and its dictionary) for the writer.
//!
//! The byte-level description (header list, framing, naming, offsets) is in `docs/formats.md`.

pub mod cdxj;
pub mod check;
pub mod dictionary;
pub mod digest;
pub(crate) mod frame;
pub mod http;
pub mod memory;
pub mod reader;
pub mod train;
pub mod writer;
pub mod zstd_frame;

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

pub use dictionary::{Codec, Dictionary};
pub use digest::{DigestCheck, Sha1Digest};
pub use reader::{ReaderOptions, Record, RecordEnd, WarcReader};
pub use writer::{
    Exchange, ExchangeLocations, GzipMembers, RecordLocation, ResponseKind, Revisit, Room,
    WarcWriter, WriterConfig, WriterSummary,
};

/// The WARC version line we write.
pub const WARC_VERSION: &str = "WARC/1.1";

/// `WARC-Profile` of a revisit record written for an HTTP 304 Not Modified answer to a
/// conditional GET.
pub const PROFILE_SERVER_NOT_MODIFIED: &str =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

/// `WARC-Profile` of a revisit record whose payload equals an earlier capture's.
pub const PROFILE_IDENTICAL_PAYLOAD_DIGEST: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// How records are compressed in a file; each record is compressed on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Uncompressed `.warc`.
    None,
    /// `.warc.gz`: one gzip member per record (WARC 1.1 Annex D), what every WARC reader
    /// reads; the default of new crawls.
    Gzip,
    /// `.warc.zst`: one zstd frame per record (IIPC warc-zstd proposal), after the dictionary
    /// frame when the writer has a dictionary.
    Zstd,
}

impl Compression {
    /// The file name suffix: `.warc`, `.warc.gz` or `.warc.zst`.
    pub fn suffix(self) -> &'static str {
        match self {
            Compression::None => ".warc",
            Compression::Gzip => ".warc.gz",
            Compression::Zstd => ".warc.zst",
        }
    }

    /// The compression a file name implies by its suffix, if it is a WARC name.
    pub fn from_name(name: &str) -> Option<Compression> {
        [Compression::Zstd, Compression::Gzip, Compression::None]
            .into_iter()
            .find(|c| name.ends_with(c.suffix()))
    }

    /// Parses the names [`Compression::name`] gives (as `warc_compression` in crawl.toml's
    /// `[fetch]` section spells them).
    pub fn parse(name: &str) -> Option<Compression> {
        match name {
            "none" => Some(Compression::None),
            "gzip" => Some(Compression::Gzip),
            "zstd" => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// A short name for listings and configuration: `none`, `gzip`, `zstd`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The file name of the `serial`-th WARC file of a writer: `p0007-000001.warc.zst`.
pub fn file_name(prefix: &str, serial: u32, compression: Compression) -> String {
    format!("{prefix}-{serial:06}{}", compression.suffix())
}

/// `WARC-Type` of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RecordType {
    /// `warcinfo`: describes the records that follow it in the file.
    Warcinfo,
    /// `response`: a full response from the server (for HTTP: status line, headers, body).
    Response,
    /// `resource`: a resource without protocol headers.
    Resource,
    /// `request`: the request as sent.
    Request,
    /// `metadata`: content about another record.
    Metadata,
    /// `revisit`: a revisit of content already archived (or, with the server-not-modified
    /// profile, a 304 answer to a conditional request).
    Revisit,
    /// `conversion`: an alternative version of another record's content.
    Conversion,
    /// `continuation`: a segment of a record split across records.
    Continuation,
    /// Any other value, kept as written.
    Other(String),
}

impl RecordType {
    /// Parses a `WARC-Type` value (case-insensitively, as warcio does).
    pub fn parse(s: &str) -> RecordType {
        // Compared in place: this runs for every record read (no lower-cased copy).
        let t = s.trim();
        [
            ("warcinfo", RecordType::Warcinfo),
            ("response", RecordType::Response),
            ("resource", RecordType::Resource),
            ("request", RecordType::Request),
            ("metadata", RecordType::Metadata),
            ("revisit", RecordType::Revisit),
            ("conversion", RecordType::Conversion),
            ("continuation", RecordType::Continuation),
        ]
        .into_iter()
        .find(|(name, _)| t.eq_ignore_ascii_case(name))
        .map_or_else(|| RecordType::Other(t.to_owned()), |(_, r)| r)
    }

    /// The `WARC-Type` value.
    pub fn as_str(&self) -> &str {
        match self {
            RecordType::Warcinfo => "warcinfo",
            RecordType::Response => "response",
            RecordType::Resource => "resource",
            RecordType::Request => "request",
            RecordType::Metadata => "metadata",
            RecordType::Revisit => "revisit",
            RecordType::Conversion => "conversion",
            RecordType::Continuation => "continuation",
            RecordType::Other(s) => s,
        }
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a response block holds less than the server sent (`WARC-Truncated`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Truncated {
    /// The body exceeded the configured size cap.
    Length,
    /// The fetch exceeded its time limit.
    Time,
    /// The connection was lost.
    Disconnect,
    /// Another reason.
    Unspecified,
}

impl Truncated {
    /// The `WARC-Truncated` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Truncated::Length => "length",
            Truncated::Time => "time",
            Truncated::Disconnect => "disconnect",
            Truncated::Unspecified => "unspecified",
        }
    }
}

/// The header of one WARC record: the version line and the named fields in file order.
///
/// Values are kept as text; bytes that are not UTF-8 (seen in old files) are replaced by U+FFFD.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarcHeader {
    /// The version line without its line end, e.g. `WARC/1.1`.
    pub version: String,
    /// Fields in file order, names as written.
    pub fields: Vec<(String, String)>,
}

impl WarcHeader {
    /// The first value of a field, names compared case-insensitively.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `WARC-Type` (an empty `Other` if it is missing).
    pub fn record_type(&self) -> RecordType {
        RecordType::parse(self.get("WARC-Type").unwrap_or(""))
    }

    /// `WARC-Target-URI`, without the angle brackets some WARC 1.1 writers put around it.
    pub fn target_uri(&self) -> Option<&str> {
        self.get("WARC-Target-URI").map(unbracket)
    }

    /// `WARC-Record-ID`, with its angle brackets.
    pub fn record_id(&self) -> Option<&str> {
        self.get("WARC-Record-ID")
    }

    /// `WARC-Date`.
    pub fn date(&self) -> Option<&str> {
        self.get("WARC-Date")
    }

    /// `Content-Type`.
    pub fn content_type(&self) -> Option<&str> {
        self.get("Content-Type")
    }

    /// `Content-Length`, if present and a number.
    pub fn content_length(&self) -> Option<u64> {
        self.get("Content-Length")?.trim().parse().ok()
    }

    /// Whether the block is an HTTP message whose headers warcio parses before the payload: a
    /// request, response or revisit record with an `http:`/`https:` target URI.
    pub fn is_http(&self) -> bool {
        is_http(&self.record_type(), self.target_uri())
    }

    /// The serialized header, version line through the empty line.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 * (self.fields.len() + 1));
        out.extend_from_slice(self.version.as_bytes());
        out.extend_from_slice(b"\r\n");
        for (n, v) in &self.fields {
            out.extend_from_slice(n.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// Formats a time as a `WARC-Date`: RFC 3339 in UTC, with microseconds when `micros` is set
/// (WARC 1.1 allows fractions of a second; WARC 1.0 readers expect whole seconds).
pub fn warc_date(t: SystemTime, micros: bool) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let mut s = String::with_capacity(27);
    crate::util::push_rfc3339(&mut s, d.as_secs());
    if micros {
        s.push('.');
        crate::util::push_digits(&mut s, u64::from(d.subsec_micros()), 6);
    }
    s.push('Z');
    s
}

/// A `WARC-Target-URI` value without the angle brackets some WARC 1.1 writers put around it.
pub(super) fn unbracket(u: &str) -> &str {
    let u = u.trim();
    u.strip_prefix('<')
        .and_then(|u| u.strip_suffix('>'))
        .unwrap_or(u)
}

/// [`WarcHeader::is_http`] of a record of type `t` and target URI `uri` (unbracketed).
fn is_http(t: &RecordType, uri: Option<&str>) -> bool {
    let typed = matches!(
        t,
        RecordType::Request | RecordType::Response | RecordType::Revisit
    );
    let uri = uri.unwrap_or("").as_bytes();
    let starts = |p: &str| {
        uri.get(..p.len())
            .is_some_and(|u| u.eq_ignore_ascii_case(p.as_bytes()))
    };
    typed && (starts("http:") || starts("https:"))
}

/// Parses a `WARC-Date` (`YYYY-MM-DDThh:mm:ss[.fraction]Z`, the shorter forms W3C-DTF allows are
/// not accepted) into seconds and nanoseconds since the Unix epoch.
pub fn parse_warc_date(s: &str) -> Option<(u64, u32)> {
    crate::util::parse_rfc3339_nanos(s)
}

/// Where record IDs come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdSource {
    /// Fresh 128-bit values seeded from the OS's randomness (through std's hasher keys), the time
    /// and the process id: unique across machines and runs.
    Random,
    /// A deterministic sequence from a seed: the same seed gives the same IDs (tests, golden
    /// files).
    Seeded(u64),
}

/// Generates `<urn:uuid:...>` record IDs in the version-4 layout (RFC 9562: random bits with the
/// version and variant fields set) from xxh3-128 of a 128-bit key and a counter. Not a CSPRNG,
/// and it need not be: IDs must be unique, not unguessable, and this needs no extra dependency.
#[derive(Clone, Debug)]
pub struct IdGen {
    key: [u8; 16],
    counter: u64,
}

impl IdGen {
    /// A generator for `source`.
    pub fn new(source: IdSource) -> IdGen {
        let mut key = [0u8; 16];
        match source {
            IdSource::Seeded(seed) => {
                key[..8].copy_from_slice(&seed.to_le_bytes());
                key[8..].copy_from_slice(b"dragnet\0");
            }
            IdSource::Random => {
                use std::hash::{BuildHasher, Hasher};
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_nanos();
                for (i, half) in key.chunks_mut(8).enumerate() {
                    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                    h.write_u128(now);
                    h.write_u32(std::process::id());
                    h.write_usize(i);
                    half.copy_from_slice(&h.finish().to_le_bytes());
                }
            }
        }
        IdGen { key, counter: 0 }
    }

    /// The next ID, e.g. `<urn:uuid:0f8fad5b-d9cb-469f-a165-70867728950e>`.
    pub fn next_id(&mut self) -> String {
        self.counter += 1;
        let mut input = [0u8; 24];
        input[..16].copy_from_slice(&self.key);
        input[16..].copy_from_slice(&self.counter.to_le_bytes());
        let mut b = xxhash_rust::xxh3::xxh3_128(&input).to_le_bytes();
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // variant 10

        // Written digit by digit: two IDs per page, so no formatting machinery per byte.
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut id = String::with_capacity(47);
        id.push_str("<urn:uuid:");
        for (i, x) in b.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                id.push('-');
            }
            id.push(HEX[usize::from(x >> 4)] as char);
            id.push(HEX[usize::from(x & 0x0f)] as char);
        }
        id.push('>');
        id
    }
}

/// `Read::read` for a type that is `BufRead` already: as much of what `fill_buf` holds as fits.
pub(crate) fn read_buffered<B: std::io::BufRead + ?Sized>(
    r: &mut B,
    out: &mut [u8],
) -> std::io::Result<usize> {
    let buf = r.fill_buf()?;
    let n = buf.len().min(out.len());
    out[..n].copy_from_slice(&buf[..n]);
    r.consume(n);
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_round_trip() {
        let t = UNIX_EPOCH + Duration::new(1_795_424_040, 123_456_789);
        assert_eq!(warc_date(t, false), "2026-11-23T08:54:00Z");
        assert_eq!(warc_date(t, true), "2026-11-23T08:54:00.123456Z");
        assert_eq!(
            parse_warc_date("2026-11-23T08:54:00.123456Z"),
            Some((1_795_424_040, 123_456_000))
        );
        assert_eq!(
            parse_warc_date("2000-02-29T00:00:00Z"),
            Some((951_782_400, 0))
        );
        assert_eq!(parse_warc_date("1970-01-01T00:00:00Z"), Some((0, 0)));
        for bad in [
            "",
            "2000-02-29",
            "2000-13-01T00:00:00Z",
            "2000-02-29T00:00:00.Z",
            "x",
        ] {
            assert_eq!(parse_warc_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn ids_are_v4_unique_and_seedable() {
        let mut a = IdGen::new(IdSource::Seeded(7));
        let mut b = IdGen::new(IdSource::Seeded(7));
        let ids: Vec<String> = (0..1000).map(|_| a.next_id()).collect();
        assert_eq!(ids[0], b.next_id());
        let set: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(set.len(), ids.len());
        let id = &ids[0];
        assert_eq!(id.len(), "<urn:uuid:>".len() + 36);
        assert_eq!(&id[24..25], "4", "{id}");
        assert!(matches!(&id[29..30], "8" | "9" | "a" | "b"), "{id}");
        // The canonical 8-4-4-4-12 text of the generator's 16 bytes, lowercase.
        let mut c = IdGen::new(IdSource::Seeded(7));
        c.counter = 41;
        let mut input = [0u8; 24];
        input[..16].copy_from_slice(&c.key);
        input[16..].copy_from_slice(&42u64.to_le_bytes());
        let mut u = xxhash_rust::xxh3::xxh3_128(&input).to_le_bytes();
        u[6] = (u[6] & 0x0f) | 0x40;
        u[8] = (u[8] & 0x3f) | 0x80;
        let h =
            |r: std::ops::Range<usize>| u[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
        let want = format!(
            "<urn:uuid:{}-{}-{}-{}-{}>",
            h(0..4),
            h(4..6),
            h(6..8),
            h(8..10),
            h(10..16)
        );
        assert_eq!(c.next_id(), want);
        let mut r1 = IdGen::new(IdSource::Random);
        let mut r2 = IdGen::new(IdSource::Random);
        assert_ne!(r1.next_id(), r2.next_id());
    }

    #[test]
    fn names_and_suffixes() {
        assert_eq!(
            file_name("p0007", 1, Compression::Zstd),
            "p0007-000001.warc.zst"
        );
        assert_eq!(Compression::from_name("a.warc.gz"), Some(Compression::Gzip));
        assert_eq!(Compression::from_name("a.warc"), Some(Compression::None));
        assert_eq!(Compression::from_name("a.txt"), None);
        for c in [Compression::None, Compression::Gzip, Compression::Zstd] {
            assert_eq!(Compression::parse(c.name()), Some(c));
        }
        assert_eq!(RecordType::parse("Response"), RecordType::Response);
    }
}
