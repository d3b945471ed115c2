//! [`FrontierUpdate`]: what merge tells prioritize to put (back) into the frontier.

use super::{Dec, DecodeError, Enc};
use crate::run::Schema;

/// A URL prioritize must put (back) into the frontier: the payload of a `new` run
/// ([`crate::run::Schema::NEW`]), keyed by fingerprint.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrontierUpdate {
    /// Canonical URL.
    pub url: String,
    /// Its OPIC cash now (its priority).
    pub score: f64,
    /// Its link distance from the seeds.
    pub depth: u32,
    /// Discovered this cycle.
    pub new: bool,
    /// A fetched URL whose recrawl is due (version 2 of the record).
    pub recrawl: bool,
}

impl FrontierUpdate {
    /// Version 1: url, score, depth, new (0 or 1). Version 2 turns the last byte into flags
    /// (bit 0 new, bit 1 recrawl); an update that is not a recrawl is still written as version 1.
    const VERSION: u8 = 2;

    /// The run files it is the payload of.
    pub const SCHEMA: Schema = Schema::NEW;

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::sized(self.url.len());
        e.u8(if self.recrawl { 2 } else { 1 })
            .str(&self.url)
            .f64(self.score)
            .u64(u64::from(self.depth))
            .u8(u8::from(self.new) | (u8::from(self.recrawl) << 1));
        e.0
    }

    /// Decodes a payload (version 1 or 2).
    pub fn decode(b: &[u8]) -> std::result::Result<FrontierUpdate, DecodeError> {
        let mut d = Dec(b);
        let v = d.u8("record version")?;
        if v == 0 || v > FrontierUpdate::VERSION {
            return Err(DecodeError(format!(
                "frontier update record version {v} is not supported (this build reads 1 to {})",
                FrontierUpdate::VERSION
            )));
        }
        let url = d.str("url")?.to_owned();
        let score = d.f64("score")?;
        let depth =
            u32::try_from(d.u64("depth")?).map_err(|_| DecodeError("depth out of range".into()))?;
        let flags = d.u8("flags")?;
        let known = if v == 1 { 1 } else { 3 };
        if flags & !known != 0 {
            return Err(DecodeError(format!(
                "unknown frontier update flags {flags:#x}"
            )));
        }
        d.end()?;
        Ok(FrontierUpdate {
            url,
            score,
            depth,
            new: flags & 1 != 0,
            recrawl: flags & 2 != 0,
        })
    }
}
