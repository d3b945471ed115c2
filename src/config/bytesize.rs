//! [`ByteSize`]: a size in bytes as configuration files write it. A leaf, so that every section
//! of crawl.toml (`[sort]`, `[fetch]`, ...) can use it without depending on the others.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A size in bytes, written as an integer or a string such as `"256 MiB"`, `"1GiB"`, `"512M"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// Parses `"256 MiB"`, `"64k"`, `"1 GB"` (powers of 1024 for K/M/G/T with or without `i`/`B`).
    pub fn parse(s: &str) -> Option<ByteSize> {
        let s = s.trim();
        let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let n: u64 = num.parse().ok()?;
        let unit = unit.trim().to_ascii_lowercase();
        let unit = unit.trim_end_matches('b').trim_end_matches('i');
        let mult: u64 = match unit {
            "" => 1,
            "k" => 1 << 10,
            "m" => 1 << 20,
            "g" => 1 << 30,
            "t" => 1 << 40,
            _ => return None,
        };
        n.checked_mul(mult).map(ByteSize)
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [
            (1u64 << 40, "TiB"),
            (1 << 30, "GiB"),
            (1 << 20, "MiB"),
            (1 << 10, "KiB"),
        ];
        for (m, u) in units {
            if self.0 >= m && self.0.is_multiple_of(m) {
                return write!(f, "{} {u}", self.0 / m);
            }
        }
        write!(f, "{}", self.0)
    }
}

impl Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            N(u64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::N(n) => Ok(ByteSize(n)),
            Raw::S(s) => ByteSize::parse(&s).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "'{s}' is not a size; write e.g. 268435456, \"256 MiB\" or \"1 GiB\""
                ))
            }),
        }
    }
}
