//! Reading one WARC record's HTTP response for the parse: its head and its payload, decoded
//! and capped (`dragnet parse` reads records from the WARC; the fetch's inline parse has the
//! response in memory and decodes its payload with [`payload`] alike).

use std::path::PathBuf;

use super::Extractor;
use crate::error::Result;
use crate::warc::http::{self, HttpHead};
use crate::warc::memory::MemRecord;
use crate::warc::reader::{ReaderOptions, WarcReader};
use crate::warc::RecordType;

/// An HTTP response's head and payload: the payload borrowed from the record (`Some`), or in the
/// caller's buffer (`None`).
pub(in crate::parse) type Response<'p> = (HttpHead, Option<&'p [u8]>);

impl Extractor {
    /// Decodes the HTTP response in `plain` (the plain bytes of one WARC record) and returns its
    /// head and payload, decoded and capped at `max_decoded`: borrowed from `plain` if the
    /// payload has no codings (`Some`), else decoded into `body` (`None`).
    pub(in crate::parse) fn response<'p>(
        &self,
        plain: &'p [u8],
        path: &dyn Fn() -> PathBuf,
        body: &mut Vec<u8>,
    ) -> Result<Option<Response<'p>>> {
        body.clear();
        let opts = ReaderOptions::default();
        let Some(rec) = MemRecord::parse(plain, &opts) else {
            // Not the usual shape: the streaming reader decides (and reports any corruption).
            let mut rd = WarcReader::new(plain, path(), opts)?;
            let Some(mut rec) = rd.next_record()? else {
                return Ok(None);
            };
            if rec.header().record_type() != RecordType::Response || !rec.header().is_http() {
                return Ok(None);
            }
            let Ok(head) = rec.http_head() else {
                return Ok(None);
            };
            if let Ok(mut r) = rec.http_payload(&head, self.max_decoded) {
                // A body that stops decoding (truncated gzip, cap) still yields what it has.
                let _ = r.read_to_end(body);
            }
            return Ok(Some((head, None)));
        };
        if rec.record_type() != RecordType::Response || !rec.is_http() {
            return Ok(None);
        }
        let mut block = rec.block();
        let Ok(head) = http::read_head(&mut block, http::DEFAULT_MAX_HEAD) else {
            return Ok(None);
        };
        let rest = block.rest();
        let payload = payload(self.max_decoded, &head, rest, block, body);
        Ok(Some((head, payload)))
    }
}

/// The decoded payload of a response with HTTP head `head`, of which `rest` are the bytes
/// after the head (and `reader` reads them), at most `max_decoded` bytes: a slice of `rest`
/// when it has no content or transfer coding, else `None` and the decoded bytes in `body` (as
/// much as decodes: a truncated gzip member or a cut body still yields what it has).
pub(in crate::parse) fn payload<'p>(
    max_decoded: u64,
    head: &HttpHead,
    rest: &'p [u8],
    reader: impl std::io::BufRead + 'p,
    body: &mut Vec<u8>,
) -> Option<&'p [u8]> {
    if head.codings().is_empty() {
        // What the capped payload reader would copy out.
        let cap = usize::try_from(max_decoded).unwrap_or(usize::MAX);
        return Some(&rest[..rest.len().min(cap)]);
    }
    http::read_payload(head, reader, max_decoded, body);
    None
}
