//! The response head as received: parsed once, with `httparse` as the protocol engine parses it,
//! into what the fetch keeps (the WARC block's head and the same head parsed, [`HttpHead`], for
//! the parse and the index, and the few fields the crawl reads) and the head the engine frames
//! the body from.
//!
//! The engine (`ureq-proto`) turns a head into an `http::Response`: a builder call, a
//! `HeaderValue` allocation and a header-map insertion per field (with the map's regrowth past a
//! dozen), ~4% of a crawl's CPU for fields of which it reads three. So the engine is given a head
//! of those three alone: the status line, then every `Content-Length`, `Transfer-Encoding` and
//! `Connection` field as received, in order. From them (and the version and status) it decides the
//! body's framing and whether the connection may be kept, as it would from the whole head; it
//! reads nothing else of a final answer. A 1xx answer is given to the engine whole (it refuses a
//! `100` with fields).
//!
//! The kept head is what the engine's `http::Response` gave before, byte for byte (the golden
//! WARCs rest on it): names lower-cased, the fields grouped by name in the order each name first
//! appears (a header map's order), `Transfer-Encoding` left out (the body is stored de-chunked),
//! the status line with the code's canonical reason phrase. The tests hold it to the engine's own
//! parse.

use std::borrow::Cow;

use ureq_proto::http;

use crate::warc::http::{HttpHead, DEFAULT_MAX_HEAD};

/// The most header fields a head may have: the engine's own limit.
pub(super) const MAX_FIELDS: usize = 128;

/// A parsed response head (see the module docs).
#[derive(Debug)]
pub(super) struct Received {
    /// The status code (100..=999).
    pub status: u16,
    /// Bytes of the head as received, blank line included.
    pub len: usize,
    /// The WARC block's head: status line, fields but `Transfer-Encoding`, blank line.
    pub bytes: Vec<u8>,
    /// `bytes` parsed (`None` past [`DEFAULT_MAX_HEAD`], as `crate::warc::http::read_head`).
    pub head: Option<HttpHead>,
    /// What the protocol engine is given: the framing fields of a final answer, or a 1xx whole.
    pub framing: Vec<u8>,
    /// The first `Content-Type`, `ETag`, `Last-Modified`, `Location` and `Retry-After`, each
    /// trimmed, `None` if absent or not visible ASCII.
    pub content_type: Option<String>,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub location: Option<String>,
    pub retry_after: Option<String>,
    /// The first `Content-Length`, read as those are, if it is a number.
    pub content_length: Option<usize>,
    /// The engine closes the connection after this answer, whatever its body: `Connection:
    /// close`, HTTP/1.0 without `Connection: keep-alive`, or `101`. (A body framed by the
    /// close closes it too.) The fetch reads a body of known length itself, without the
    /// engine, and keeps the connection by this.
    pub close: bool,
}

/// Why a head does not parse.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum HeadError {
    /// More than [`MAX_FIELDS`] fields.
    TooManyFields,
    /// Not an HTTP/1.x response head (httparse's reason, or the status code's).
    Invalid(String),
}

impl Received {
    /// Parses the head at the start of `input`: `Ok(None)` while it is incomplete.
    pub(super) fn parse(input: &[u8]) -> Result<Option<Received>, HeadError> {
        let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
        let mut res = httparse::Response::new(&mut fields);
        let len = match res.parse(input) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyFields),
            Err(e) => return Err(HeadError::Invalid(e.to_string())),
        };
        // httparse reads `HTTP/1.` and one digit; the engine takes 0 and 1.
        let http10 = match res.version {
            Some(0) => true,
            Some(1) => false,
            v => {
                return Err(HeadError::Invalid(format!(
                    "unsupported version HTTP/1.{v:?}"
                )))
            }
        };
        let code = res.code.unwrap_or(0);
        let status = http::StatusCode::from_u16(code)
            .map_err(|_| HeadError::Invalid(format!("invalid status code: {code:03}")))?;
        let fields: &[httparse::Header<'_>] = res.headers;

        // One look at each field's name for the ones the crawl reads (the first of each); their
        // names all differ in length.
        let mut wanted: [Option<&[u8]>; 6] = [None; 6];
        for f in fields {
            let is = |name: &str| f.name.eq_ignore_ascii_case(name);
            let want = match f.name.len() {
                4 if is("etag") => Want::Etag,
                8 if is("location") => Want::Location,
                11 if is("retry-after") => Want::RetryAfter,
                12 if is("content-type") => Want::ContentType,
                13 if is("last-modified") => Want::LastModified,
                14 if is("content-length") => Want::ContentLength,
                _ => continue,
            };
            wanted[want as usize].get_or_insert(f.value);
        }
        // As the engine reads `Connection` (`HeaderValue::to_str`, then comma-separated tokens,
        // trimmed, compared without case).
        let (mut close, mut keep_alive) = (status.as_u16() == 101, false);
        for f in fields {
            if f.name.len() != 10 || !f.name.eq_ignore_ascii_case("connection") {
                continue;
            }
            let Some(v) = visible_ascii(f.value) else {
                continue;
            };
            for token in v.split(',').map(str::trim) {
                close |= token.eq_ignore_ascii_case("close");
                keep_alive |= token.eq_ignore_ascii_case("keep-alive");
            }
        }
        close |= http10 && !keep_alive;
        let framing = if status.is_informational() {
            input[..len].to_vec()
        } else {
            framing_head(http10, status, fields)
        };
        let (bytes, head) = kept_head(http10, status, fields, kept_order(fields).get());
        // As `HeaderValue::to_str`: visible ASCII and tabs only; then trimmed.
        let text = |w: Want| Some(visible_ascii(wanted[w as usize]?)?.trim().to_string());
        Ok(Some(Received {
            status: code,
            len,
            content_type: text(Want::ContentType),
            etag: text(Want::Etag),
            last_modified: text(Want::LastModified),
            location: text(Want::Location),
            retry_after: text(Want::RetryAfter),
            content_length: text(Want::ContentLength).and_then(|v| v.parse().ok()),
            bytes,
            head,
            framing,
            close,
        }))
    }
}

/// `v` as text if it is visible ASCII and tabs only, as `HeaderValue::to_str` takes it.
fn visible_ascii(v: &[u8]) -> Option<&str> {
    v.iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b))
        .then(|| std::str::from_utf8(v).expect("ASCII"))
}

/// The fields [`Received`] keeps the first value of.
#[derive(Clone, Copy)]
enum Want {
    Etag,
    Location,
    RetryAfter,
    ContentType,
    LastModified,
    ContentLength,
}

/// Whether a field frames the body or decides the connection's reuse.
fn is_framing(name: &str) -> bool {
    match name.len() {
        10 => name.eq_ignore_ascii_case("connection"),
        14 => name.eq_ignore_ascii_case("content-length"),
        17 => name.eq_ignore_ascii_case("transfer-encoding"),
        _ => false,
    }
}

/// Whether a field is `Transfer-Encoding`.
fn is_transfer_encoding(name: &str) -> bool {
    name.len() == 17 && name.eq_ignore_ascii_case("transfer-encoding")
}

/// The order the engine's header map gives the kept fields: by name, each name where it first
/// appears, its values in order; `Transfer-Encoding` left out. Names are told apart by length and
/// first byte before they are compared.
fn kept_order(fields: &[httparse::Header<'_>]) -> Order {
    debug_assert!(fields.len() <= MAX_FIELDS && MAX_FIELDS <= 256);
    let key = |f: &httparse::Header<'_>| {
        (
            f.name.len(),
            f.name.as_bytes().first().map(u8::to_ascii_lowercase),
        )
    };
    let mut order = Order {
        at: [0; MAX_FIELDS],
        len: 0,
    };
    let mut placed = [false; MAX_FIELDS];
    for (i, f) in fields.iter().enumerate() {
        if placed[i] || is_transfer_encoding(f.name) {
            continue;
        }
        order.push(i);
        let k = key(f);
        for (j, g) in fields.iter().enumerate().skip(i + 1) {
            if !placed[j] && key(g) == k && g.name.eq_ignore_ascii_case(f.name) {
                placed[j] = true;
                order.push(j);
            }
        }
    }
    order
}

/// Indexes of fields, in order (at most [`MAX_FIELDS`], on the stack).
struct Order {
    at: [u8; MAX_FIELDS],
    len: usize,
}

impl Order {
    fn push(&mut self, i: usize) {
        self.at[self.len] = i as u8;
        self.len += 1;
    }

    fn get(&self) -> &[u8] {
        &self.at[..self.len]
    }
}

/// The status line as the kept head starts (without its line end): `HTTP/1.1 200 OK`, the
/// reason left empty when the code has none (the line then ends in a space, which the parsed
/// head trims).
fn push_status_line(out: &mut Vec<u8>, http10: bool, status: http::StatusCode) {
    out.extend_from_slice(if http10 { b"HTTP/1.0 " } else { b"HTTP/1.1 " });
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
}

/// The head the engine frames a final answer's body from: the status line and the fields that
/// decide the framing and the connection's reuse, as received.
fn framing_head(
    http10: bool,
    status: http::StatusCode,
    fields: &[httparse::Header<'_>],
) -> Vec<u8> {
    let mut h = Vec::with_capacity(96);
    h.extend_from_slice(if http10 { b"HTTP/1.0 " } else { b"HTTP/1.1 " });
    h.extend_from_slice(status.as_str().as_bytes());
    h.extend_from_slice(b" R\r\n");
    for f in fields.iter().filter(|f| is_framing(f.name)) {
        h.extend_from_slice(f.name.as_bytes());
        h.extend_from_slice(b": ");
        h.extend_from_slice(f.value);
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    h
}

/// The kept head's bytes (status line, the kept fields in `order` with names lower-cased, blank
/// line), and the same head as [`crate::warc::http::read_head`] reads it from them: the start
/// line without trailing space, values lossily decoded and trimmed, `None` past
/// [`DEFAULT_MAX_HEAD`] as there.
fn kept_head(
    http10: bool,
    status: http::StatusCode,
    fields: &[httparse::Header<'_>],
    order: &[u8],
) -> (Vec<u8>, Option<HttpHead>) {
    let fields_size: usize = order
        .iter()
        .map(|&i| fields[i as usize].name.len() + fields[i as usize].value.len() + 4)
        .sum();
    let mut h = Vec::with_capacity(fields_size + 64);
    push_status_line(&mut h, http10, status);
    let line_end = h.len();
    h.extend_from_slice(b"\r\n");
    let size = h.len() + fields_size + 2;
    let mut head = (size <= DEFAULT_MAX_HEAD).then(|| {
        // The line is ASCII: a version, three digits and a reason.
        let line = String::from_utf8_lossy(&h[..line_end]);
        HttpHead::with_capacity(line.trim_end().to_string(), order.len(), fields_size)
    });
    for &i in order {
        let f = &fields[i as usize];
        let name_at = h.len();
        h.extend_from_slice(f.name.as_bytes());
        h[name_at..].make_ascii_lowercase();
        if let Some(head) = &mut head {
            // A name is a token: ASCII.
            let name = std::str::from_utf8(&h[name_at..]).expect("a token");
            let value = match std::str::from_utf8(f.value) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => String::from_utf8_lossy(f.value),
            };
            head.push(name, value.trim());
        }
        h.extend_from_slice(b": ");
        h.extend_from_slice(f.value);
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    debug_assert_eq!(h.len(), size);
    if let Some(head) = &mut head {
        head.len = size as u64;
    }
    (h, head)
}

#[cfg(test)]
mod tests;
