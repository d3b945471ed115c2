//! The gzip members of a `.warc.gz` file, one per record: libdeflate, which compresses a whole
//! buffer at once (faster than a streaming zlib at every level for records compressed whole,
//! docs/BENCHMARKS.md, "WARC compression"), and at the default level the small records'
//! prebuilt code ([`super::small`]), which skips libdeflate's per-member set-up.

use super::small::{SmallGzip, SMALL_RECORD};
use super::KEEP_BUFFER;

/// Makes one gzip member per record, reusing its compressors and buffers.
pub struct GzipMembers {
    gz: libdeflater::Compressor,
    /// At the default level only: a level asked for is libdeflate's for every record.
    small: Option<SmallGzip>,
    /// A record's pieces one after the other, for libdeflate, which compresses whole buffers.
    plain: Vec<u8>,
    packed: Vec<u8>,
}

impl GzipMembers {
    /// Members at libdeflate's `level` (0..=12), `None` if there is no such level.
    /// [`super::GZIP_LEVEL`], the default, sends small records to the prebuilt code.
    pub fn new(level: i32) -> Option<GzipMembers> {
        let l = libdeflater::CompressionLvl::new(level).ok()?;
        Some(GzipMembers {
            gz: libdeflater::Compressor::new(l),
            small: (level == super::GZIP_LEVEL).then(SmallGzip::new),
            plain: Vec::new(),
            packed: Vec::new(),
        })
    }

    /// `pieces`, one after the other, as one gzip member. For libdeflate, which takes its
    /// input whole, the pieces are copied into one buffer first (a copy costs a small fraction
    /// of compressing it), and the member is made in a buffer that only grows (to the bound of
    /// the largest record), so it is not zeroed again for every record. A record of at most
    /// 2,048 bytes (`SMALL_RECORD`) goes to the prebuilt code, if it fits it.
    pub fn member(&mut self, pieces: &[&[u8]]) -> std::io::Result<&[u8]> {
        for buf in [&mut self.packed, &mut self.plain] {
            if buf.capacity() > KEEP_BUFFER {
                buf.clear();
                buf.shrink_to(KEEP_BUFFER);
            }
        }
        let plain = &mut self.plain;
        plain.clear();
        for p in pieces {
            plain.extend_from_slice(p);
        }
        if let Some(member) = self
            .small
            .as_mut()
            .filter(|_| plain.len() <= SMALL_RECORD)
            .and_then(|s| s.member(plain))
        {
            return Ok(member);
        }
        let out = &mut self.packed;
        let bound = self.gz.gzip_compress_bound(plain.len());
        if out.len() < bound {
            out.resize(bound, 0);
        }
        let n = self
            .gz
            .gzip_compress(plain, out)
            .map_err(|e| std::io::Error::other(format!("libdeflate: {e:?}")))?;
        Ok(&out[..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Small and large records, text or not, at the default level and another: each member
    /// reads back, and only the default level's small text records skip libdeflate.
    #[test]
    fn every_member_reads_back_whatever_took_it() {
        let text =
            b"WARC/1.1\r\nWARC-Type: request\r\nContent-Length: 0\r\n\r\n\r\n\r\n".repeat(60);
        let binary: Vec<u8> = (0..SMALL_RECORD as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        for level in [super::super::GZIP_LEVEL, 6] {
            let mut g = GzipMembers::new(level).unwrap();
            for (data, small) in [
                (&text[..200], true),
                (&text[..], false),
                (&binary[..], false),
                (&b""[..], true),
            ] {
                let member = g
                    .member(&[&data[..data.len() / 2], &data[data.len() / 2..]])
                    .unwrap()
                    .to_vec();
                let mut back = Vec::new();
                flate2::read::GzDecoder::new(&member[..])
                    .read_to_end(&mut back)
                    .unwrap();
                assert_eq!(back, data);
                let prebuilt = (data.len() <= SMALL_RECORD)
                    .then(|| SmallGzip::new().member(data).map(<[u8]>::to_vec))
                    .flatten();
                let default = level == super::super::GZIP_LEVEL;
                assert_eq!(
                    prebuilt.as_ref() == Some(&member),
                    small && default,
                    "{level} {}",
                    data.len()
                );
            }
        }
        assert!(GzipMembers::new(13).is_none());
    }
}
