//! A minimal PNG encoder: 8-bit RGB, no interlace, filter 0 on every row, one IDAT chunk
//! compressed with `flate2`'s zlib encoder, CRC-32 computed here.

use std::io::{self, Write};

use flate2::write::ZlibEncoder;
use flate2::Compression;

/// The 8-byte PNG signature.
pub const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// CRC-32 (ISO 3309 / ITU-T V.42, polynomial 0xEDB88320 reflected), as PNG chunks use it.
pub fn crc32(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (n, e) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c = table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Encodes `rgb` (`width * height * 3` bytes, rows top to bottom) as a PNG file.
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8]) -> io::Result<Vec<u8>> {
    let row = width as usize * 3;
    if width == 0 || height == 0 || rgb.len() != row * height as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "pixel buffer does not match the image size",
        ));
    }
    let mut out = SIGNATURE.to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // depth 8, RGB, deflate, filter 0, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    for r in rgb.chunks_exact(row) {
        z.write_all(&[0])?; // filter type None
        z.write_all(r)?;
    }
    chunk(&mut out, b"IDAT", &z.finish()?);
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn crc_of_iend() {
        // The CRC every PNG ends with.
        assert_eq!(super::crc32(b"IEND"), 0xAE42_6082);
        assert_eq!(super::crc32(b"123456789"), 0xCBF4_3926);
    }
}
