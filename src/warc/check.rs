//! `dragnet check warc`: read a WARC file end to end, verify every digest, and describe each
//! record (offset, length, type, URI, HTTP status, digest checks).
//!
//! It lives in the library, not the binary, so tests and other tools get the same listing the
//! operator sees.

use std::path::Path;

use serde::Serialize;

use super::reader::{ReaderOptions, WarcReader};
use super::{DigestCheck, RecordType};
use crate::error::Result;

/// One record as `check warc` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct RecordReport {
    /// Offset of the record in the file.
    pub offset: u64,
    /// Length of the record in the file (compressed).
    pub length: u64,
    /// The version line, `WARC/1.0` or `WARC/1.1`.
    pub version: String,
    /// `WARC-Type`.
    #[serde(rename = "type")]
    pub warc_type: String,
    /// `WARC-Target-URI`.
    pub uri: Option<String>,
    /// `WARC-Record-ID`.
    pub record_id: Option<String>,
    /// `WARC-Date`.
    pub date: Option<String>,
    /// `Content-Length` of the block.
    pub content_length: u64,
    /// HTTP status of a response or revisit block, when it has a parsable status line.
    pub status: Option<u16>,
    /// `WARC-Truncated`, if present.
    pub truncated: Option<String>,
    /// Block digest check: `ok`, `bad`, `absent` or `unchecked`.
    pub block_digest: &'static str,
    /// Payload digest check.
    pub payload_digest: &'static str,
    /// For a bad digest: what was expected and what the bytes hash to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<String>,
}

/// What `check warc` found in one file.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FileReport {
    /// Record framing: `none`, `gzip` or `zstd`.
    pub compression: String,
    /// Whether a warc-zstd dictionary frame was present.
    pub dictionary: bool,
    /// Records read.
    pub records: u64,
    /// Records with a digest that does not match.
    pub bad_digests: u64,
    /// Records whose digests were all present and verified.
    pub verified: u64,
}

/// Reads `path` to the end with digest verification, calling `each` for every record. A framing
/// or compression error ends the file with `Err` ([`crate::Error::Corrupt`] with the offset);
/// digest mismatches are counted, not errors.
pub fn check_file(path: &Path, each: &mut dyn FnMut(&RecordReport)) -> Result<FileReport> {
    let opts = ReaderOptions {
        verify_digests: true,
        ..ReaderOptions::default()
    };
    let mut rd = WarcReader::open(path, opts)?;
    let mut report = FileReport {
        compression: rd.compression().name().to_owned(),
        dictionary: rd.has_dictionary(),
        ..FileReport::default()
    };
    while let Some(mut rec) = rd.next_record()? {
        let h = rec.header().clone();
        let kind = h.record_type();
        let status = if h.is_http()
            && matches!(kind, RecordType::Response | RecordType::Revisit)
            && rec.content_length() > 0
        {
            // HTTP garbage is the server's, not the file's: it only leaves the status empty.
            rec.http_head().ok().and_then(|head| head.status())
        } else {
            None
        };
        let end = rec.finish()?;
        let mismatches: Vec<String> = [
            ("block", &end.block_digest),
            ("payload", &end.payload_digest),
        ]
        .into_iter()
        .filter_map(|(what, c)| match c {
            DigestCheck::Bad { expected, actual } => Some(format!(
                "{what} digest {expected} but the bytes hash to {actual}"
            )),
            _ => None,
        })
        .collect();
        report.records += 1;
        if !mismatches.is_empty() {
            report.bad_digests += 1;
        }
        let checked = [&end.block_digest, &end.payload_digest];
        if checked.iter().any(|c| **c == DigestCheck::Ok)
            && checked
                .iter()
                .all(|c| matches!(c, DigestCheck::Ok | DigestCheck::Absent))
        {
            report.verified += 1;
        }
        each(&RecordReport {
            offset: end.offset,
            length: end.length,
            version: h.version.clone(),
            warc_type: kind.as_str().to_owned(),
            uri: h.target_uri().map(str::to_owned),
            record_id: h.record_id().map(str::to_owned),
            date: h.date().map(str::to_owned),
            content_length: h.content_length().unwrap_or(0),
            status,
            truncated: h.get("WARC-Truncated").map(str::to_owned),
            block_digest: end.block_digest.as_str(),
            payload_digest: end.payload_digest.as_str(),
            mismatches,
        });
    }
    Ok(report)
}
