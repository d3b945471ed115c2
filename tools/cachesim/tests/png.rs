//! The PNG writer: signature, chunk layout, CRCs (checked with crc32fast), and pixels that
//! decompress back to what was drawn.

use std::io::Read;

use cachesim::plot::{chart, Canvas, Series};
use cachesim::png::{crc32, encode_rgb, SIGNATURE};

struct Chunk {
    kind: [u8; 4],
    data: Vec<u8>,
}

/// Splits a PNG file into chunks, checking every CRC.
fn parse(bytes: &[u8]) -> Vec<Chunk> {
    assert!(bytes.starts_with(&SIGNATURE), "no PNG signature");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let mut out = Vec::new();
    let mut p = 8;
    while p < bytes.len() {
        let len = u32::from_be_bytes(bytes[p..p + 4].try_into().unwrap()) as usize;
        let kind: [u8; 4] = bytes[p + 4..p + 8].try_into().unwrap();
        let data = bytes[p + 8..p + 8 + len].to_vec();
        let crc = u32::from_be_bytes(bytes[p + 8 + len..p + 12 + len].try_into().unwrap());
        let mut h = crc32fast::Hasher::new();
        h.update(&kind);
        h.update(&data);
        assert_eq!(crc, h.finalize(), "bad CRC on chunk {:?}", kind);
        assert_eq!(crc, crc32(&bytes[p + 4..p + 8 + len]));
        out.push(Chunk { kind, data });
        p += 12 + len;
    }
    assert_eq!(p, bytes.len(), "trailing bytes");
    out
}

fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let chunks = parse(bytes);
    assert_eq!(&chunks[0].kind, b"IHDR");
    assert_eq!(&chunks.last().unwrap().kind, b"IEND");
    assert!(chunks.last().unwrap().data.is_empty());
    let ihdr = &chunks[0].data;
    assert_eq!(ihdr.len(), 13);
    let w = u32::from_be_bytes(ihdr[0..4].try_into().unwrap());
    let h = u32::from_be_bytes(ihdr[4..8].try_into().unwrap());
    assert_eq!(&ihdr[8..], &[8, 2, 0, 0, 0]);
    let idat: Vec<u8> = chunks
        .iter()
        .filter(|c| &c.kind == b"IDAT")
        .flat_map(|c| c.data.iter().copied())
        .collect();
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    assert_eq!(raw.len(), h as usize * (1 + 3 * w as usize));
    let mut rgb = Vec::new();
    for row in raw.chunks_exact(1 + 3 * w as usize) {
        assert_eq!(row[0], 0, "filter type");
        rgb.extend_from_slice(&row[1..]);
    }
    (w, h, rgb)
}

#[test]
fn small_image_round_trips() {
    let (w, h) = (7u32, 5u32);
    let rgb: Vec<u8> = (0..w * h * 3).map(|i| (i * 37 % 251) as u8).collect();
    let png = encode_rgb(w, h, &rgb).unwrap();
    assert!(png.starts_with(&[0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]));
    assert_eq!(decode(&png), (w, h, rgb));
    assert!(encode_rgb(3, 3, &[0; 5]).is_err());
}

#[test]
fn chart_file_is_valid_png() {
    let series = vec![
        Series {
            label: "LRU".into(),
            color: [30, 90, 220],
            points: vec![(10.0, 0.6), (11.0, 0.4), (12.0, 0.2)],
        },
        Series {
            label: "MIN".into(),
            color: [0, 0, 0],
            points: vec![(10.0, 0.5), (11.0, 0.3), (12.0, 0.1)],
        },
    ];
    let canvas = chart("TEST", 10, 12, &series);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chart.png");
    std::fs::write(&path, canvas.to_png().unwrap()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let (w, h, rgb) = decode(&bytes);
    assert_eq!((w, h), (canvas.width, canvas.height));
    // The blue line was drawn somewhere.
    assert!(rgb.chunks_exact(3).any(|p| p == [30, 90, 220]));
    let mut c = Canvas::new(4, 4, [255, 255, 255]);
    c.set(1, 2, [1, 2, 3]);
    assert_eq!(c.get(1, 2), [1, 2, 3]);
}
