//! Every payload that crosses a stage boundary, in one place: the five stages stand side by side
//! and meet only here and in the run files (`docs/formats.md` gives each byte layout).
//!
//! | record | run files ([`Schema`](crate::run::Schema)) | written by | read by |
//! |---|---|---|---|
//! | [`FetchItem`] | `cycles/N/fetchlist/pP.run` (`FETCHLIST`) | init, prioritize | fetch |
//! | [`FetchResult`] | `cycles/N/fetched/pP.run` (`FETCHED`) | fetch | parse, merge, status |
//! | [`HostRecord`] | `state/pP/hosts.N.run` (`HOSTS`) | fetch | fetch, parse |
//! | [`LinkRecord`] | `cycles/N/links/pP.run` (`LINKS`) | parse | split |
//! | [`PageRecord`] | `cycles/N/pages/pP.run` (`PAGES`) | parse | analysts (`check run`) |
//! | [`SplitRecord`] | `cycles/N/split/to-pQ/from-pP.run` (`SPLIT`) | split | merge |
//! | [`UrlRecord`] | `state/pP/urldb.N.run` (`URLDB`) | merge | merge, prioritize |
//! | [`FrontierUpdate`] | `cycles/N/new/pP.run` (`NEW`) | merge | prioritize |
//!
//! Payloads are small hand-rolled binary records: a leading record-version byte, then fields as
//! LEB128 varints, little-endian floats and length-prefixed UTF-8 strings. A version byte per
//! record lets later releases add fields without rewriting old files; readers refuse versions
//! they do not know instead of guessing. Each record type names its schema (`SCHEMA`).

mod frontier;
mod hosts;
mod kind;
mod links;
mod split;
mod url;

pub use frontier::FrontierUpdate;
pub use hosts::{next_budget, HostBudgets, HostRecord, OriginRobots, Policy};
pub use kind::FetchErrorKind;
pub use links::{LinkKind, LinkRecord, LinkView, PageRecord};
pub use split::SplitRecord;
pub use url::{Capture, FetchItem, FetchResult, UrlRecord, UrlState};

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
    /// An encoder whose buffer holds `text` bytes of strings plus the fixed fields (a record's
    /// varints, floats and flags) without growing: one allocation per record, where growing
    /// from empty took four or five on the hot paths (split, merge, prioritize).
    pub fn sized(text: usize) -> Enc {
        Enc(Vec::with_capacity(text + 64))
    }
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
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Enc {
        put_varint(&mut self.0, b.len() as u64);
        self.0.extend_from_slice(b);
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
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], DecodeError> {
        let n = self.u64(what)? as usize;
        let b = self.0.get(..n).ok_or_else(|| Dec::err(what))?;
        self.0 = &self.0[n..];
        Ok(b)
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

pub(crate) fn check_version(d: &mut Dec<'_>, what: &str, known: u8) -> Result<(), DecodeError> {
    let v = d.u8("record version")?;
    if v == known {
        Ok(())
    } else {
        Err(DecodeError(format!(
            "{what} record version {v} is not supported (this build reads {known})"
        )))
    }
}
