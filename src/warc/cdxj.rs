//! CDXJ indexes of WARC files, the format pywb replays from and `cdxj-indexer` writes:
//! one line per capture, `<SURT> <14-digit timestamp> <JSON>`, sorted by key.
//!
//! ```text
//! org,iana)/ 20140126200624 {"url": "http://www.iana.org/", "mime": "text/html", "status": "200", "digest": "sha1:OSSAPWJ23L56IYVRW3GFEAR4MCJMGPTB", "length": "2258", "offset": "334", "filename": "iana.warc.gz"}
//! ```
//!
//! The JSON fields, as `cdxj-indexer` writes them (all strings): `url` (WARC-Target-URI),
//! `mime` (the HTTP `Content-Type` without parameters; `warc/revisit` for a revisit record, the
//! record's own type for a resource), `status` (HTTP status, absent for a resource), `digest`
//! (WARC-Payload-Digest as written, `sha1:` and base32), `length` and `offset` (the record's
//! gzip member or zstd frame in the file: what a replay tool seeks to and reads), `filename`
//! (the file's name, without directories). Indexed: `response`, `revisit` and `resource`
//! records; `request`, `metadata`, `warcinfo` and `conversion` records are not (neither are they
//! by `cdxj-indexer` by default). The key is the SURT of the URL (`crate::keys::surt`, pywb's
//! form) and the WARC-Date as `YYYYMMDDhhmmss`.
//!
//! `dragnet index --warc FILES... [--out F]` indexes anyone's WARCs (`.warc`, `.warc.gz`,
//! `.warc.zst`). `tests/cdxj.rs` compares every field of every line with `cdxj-indexer`'s on the
//! test data's WARCs.

use std::io::Write;
use std::path::Path;

use super::reader::{ReaderOptions, WarcReader};
use super::RecordType;
use crate::error::{Error, IoContext, Result};

/// One line of a CDXJ index: its sort key (`SURT timestamp`) and the JSON after it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CdxjLine {
    /// `SURT 14-digit-timestamp`.
    pub key: String,
    /// The JSON object.
    pub json: String,
}

impl CdxjLine {
    /// The line as written (without the newline).
    pub fn text(&self) -> String {
        format!("{} {}", self.key, self.json)
    }
}

/// `2014-01-26T20:06:24Z` -> `20140126200624` (fractions dropped); `None` if it is not a
/// WARC-Date.
fn timestamp14(date: &str) -> Option<String> {
    let digits: String = date
        .chars()
        .take_while(|c| *c != '.' && *c != 'Z')
        .filter(char::is_ascii_digit)
        .collect();
    (digits.len() >= 14).then(|| digits[..14].to_string())
}

/// Appends the CDXJ lines of the WARC file at `path` to `out` (unsorted: in file order).
pub fn index_file(path: &Path, out: &mut Vec<CdxjLine>) -> Result<()> {
    let filename = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut rd = WarcReader::open(path, ReaderOptions::default())?;
    while let Some(mut rec) = rd.next_record()? {
        let h = rec.header().clone();
        let kind = h.record_type();
        if !matches!(
            kind,
            RecordType::Response | RecordType::Revisit | RecordType::Resource
        ) {
            rec.finish()?;
            continue;
        }
        let offset = rec.offset();
        let url = h.target_uri().unwrap_or("").to_string();
        let date = h.date().and_then(timestamp14);
        let (mime, status) = match kind {
            RecordType::Resource => (
                h.content_type()
                    .unwrap_or("")
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string(),
                None,
            ),
            _ => {
                // The HTTP head of the response (a revisit carries one too).
                let head = rec.http_head().ok();
                let status = head.as_ref().and_then(|h| h.status());
                let mime = if kind == RecordType::Revisit {
                    "warc/revisit".to_string()
                } else {
                    head.as_ref()
                        .and_then(|h| h.get("content-type"))
                        .and_then(|v| v.split(';').next())
                        .map(|v| v.trim().to_ascii_lowercase())
                        .unwrap_or_else(|| "unk".to_string())
                };
                (mime, status)
            }
        };
        let end = rec.finish()?;
        let (Some(date), false) = (date, url.is_empty()) else {
            continue; // not replayable without a URL and a date
        };
        // In `cdxj-indexer`'s field order, with its spacing.
        let mut fields: Vec<(&str, String)> = vec![("url", url.clone()), ("mime", mime)];
        if let Some(s) = status {
            fields.push(("status", s.to_string()));
        }
        if let Some(d) = h.get("WARC-Payload-Digest") {
            fields.push(("digest", d.to_string()));
        }
        fields.push(("length", end.length.to_string()));
        fields.push(("offset", offset.to_string()));
        fields.push(("filename", filename.clone()));
        let json = format!(
            "{{{}}}",
            fields
                .iter()
                .map(|(k, v)| format!(
                    "\"{k}\": {}",
                    serde_json::to_string(v).expect("strings serialize")
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.push(CdxjLine {
            key: format!("{} {date}", crate::keys::surt(&url)),
            json,
        });
    }
    Ok(())
}

/// Indexes `files` and writes the lines sorted (pywb needs them so) to `out`.
pub fn index_files(files: &[std::path::PathBuf], out: &mut dyn Write) -> Result<u64> {
    let mut lines = Vec::new();
    for f in files {
        index_file(f, &mut lines)?;
    }
    lines.sort();
    for l in &lines {
        writeln!(out, "{}", l.text()).map_err(|e| Error::io("write", Path::new("<cdxj>"), e))?;
    }
    Ok(lines.len() as u64)
}

/// [`index_files`] into a file (published atomically) or standard output.
pub fn index_to(files: &[std::path::PathBuf], out: Option<&Path>) -> Result<u64> {
    match out {
        Some(path) => {
            let mut buf = Vec::new();
            let n = index_files(files, &mut buf)?;
            crate::storage::write_atomic(path, &buf)?;
            Ok(n)
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            let n = index_files(files, &mut lock)?;
            lock.flush().ctx("write", Path::new("<stdout>"))?;
            Ok(n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(
            timestamp14("2014-01-26T20:06:24Z").as_deref(),
            Some("20140126200624")
        );
        assert_eq!(
            timestamp14("2024-05-18T01:58:10.123456Z").as_deref(),
            Some("20240518015810")
        );
        assert_eq!(timestamp14("yesterday"), None);
    }
}
