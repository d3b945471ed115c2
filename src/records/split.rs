//! [`SplitRecord`]: what split sends the partition that owns a URL.

use super::{check_version, Dec, DecodeError, Enc};
use crate::run::Schema;

/// What the owner partition receives about one URL: the payload of a split run
/// ([`crate::run::Schema::SPLIT`]), keyed by the URL's fingerprint.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SplitRecord {
    /// The canonical URL; empty for a cash credit to a URL the sender's cache says is known.
    pub url: String,
    /// OPIC cash the URL receives.
    pub cash: f64,
    /// Smallest link distance from the seeds among its in-links.
    pub depth: u32,
    /// In-links collapsed into this record.
    pub inlinks: u32,
}

impl SplitRecord {
    /// The run files it is the payload of.
    pub const SCHEMA: Schema = Schema::SPLIT;
    const VERSION: u8 = 1;

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::sized(self.url.len());
        e.u8(SplitRecord::VERSION)
            .str(&self.url)
            .f64(self.cash)
            .u64(u64::from(self.depth))
            .u64(u64::from(self.inlinks));
        e.0
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> std::result::Result<SplitRecord, DecodeError> {
        let mut d = Dec(b);
        check_version(&mut d, "split", SplitRecord::VERSION)?;
        let small = |v: u64, what: &str| {
            u32::try_from(v).map_err(|_| DecodeError(format!("{what} out of range")))
        };
        let r = SplitRecord {
            url: d.str("url")?.to_owned(),
            cash: d.f64("cash")?,
            depth: small(d.u64("depth")?, "depth")?,
            inlinks: small(d.u64("inlinks")?, "inlinks")?,
        };
        d.end()?;
        Ok(r)
    }
}
