//! One WARC file converted ([`convert_stream`]): its records read with their digests verified,
//! each record's member or frame decompressed again on its own from a second handle and streamed
//! into one new member or frame of the output (see the module docs of [`super`]).

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{FileReport, Options};
use crate::error::{Error, IoContext, Result};
use crate::warc::cdxj;
use crate::warc::http::HttpHead;
use crate::warc::{Compression, ReaderOptions, RecordEnd, WarcHeader, WarcReader};

const BUF: usize = 64 << 10;

/// One record as it was moved: where it was and where it is now, with its header (and its
/// HTTP head, for the records a CDXJ index lists).
pub struct Moved<'a> {
    /// Offset of its member or frame in the input.
    pub old_offset: u64,
    /// Length of its member or frame in the input.
    pub old_length: u64,
    /// Offset of its member or frame in the output.
    pub new_offset: u64,
    /// Length of its member or frame in the output.
    pub new_length: u64,
    /// The WARC header.
    pub header: &'a WarcHeader,
    /// The HTTP head of a response or revisit.
    pub http: Option<&'a HttpHead>,
}

/// Converts the WARC file at `input` into `out` (a new file: offsets count from its first
/// byte), calling `moved` for every record. Digests are verified on the way.
pub fn convert_stream(
    input: &Path,
    out: &mut dyn Write,
    opts: &Options,
    moved: &mut dyn FnMut(&Moved<'_>) -> Result<()>,
) -> Result<FileReport> {
    let mut src = Input::open(input)?;
    let mut packer = Packer::new(opts)?;
    let mut out = Counting { inner: out, n: 0 };
    out.write_all(Packer::preamble(opts)).ctx("write", input)?;
    let mut rep = FileReport {
        input: input.to_path_buf(),
        bytes_in: src.raw.metadata().ctx("stat", input)?.len(),
        ..FileReport::default()
    };
    while let Some(rec) = src.next_record()? {
        let new_offset = out.n;
        let n = src.repack(&rec, &mut packer, &mut out)?;
        let new_length = out.n - new_offset;
        rep.records += 1;
        rep.record_bytes_in += rec.end.length;
        rep.record_bytes_out += new_length;
        rep.plain_bytes += n;
        moved(&Moved {
            old_offset: rec.end.offset,
            old_length: rec.end.length,
            new_offset,
            new_length,
            header: &rec.header,
            http: rec.http.as_ref(),
        })?;
    }
    rep.bytes_out = out.n;
    Ok(rep)
}

/// The file being converted: its records read (digests verified) through one handle, their
/// members or frames read again through another.
struct Input<'a> {
    path: &'a Path,
    rd: WarcReader<File>,
    from: Compression,
    raw: File,
    /// The file's dictionary, prepared for decompressing its frames.
    dict: Option<zstd::dict::DecoderDictionary<'static>>,
}

/// A record of the input as read: its header, its HTTP head (for the records a CDXJ index
/// lists), its block's length, and where its member or frame lies.
struct Original {
    header: WarcHeader,
    http: Option<HttpHead>,
    block: u64,
    end: RecordEnd,
}

impl Input<'_> {
    fn open(path: &Path) -> Result<Input<'_>> {
        let ropts = ReaderOptions {
            verify_digests: true,
            ..ReaderOptions::default()
        };
        let rd = WarcReader::open(path, ropts)?;
        let dict = rd
            .dictionary()
            .map(|d| zstd::dict::DecoderDictionary::copy(d.bytes()));
        Ok(Input {
            path,
            from: rd.compression(),
            rd,
            raw: File::open(path).ctx("open", path)?,
            dict,
        })
    }

    /// The next record, read to its end; a digest that does not match is an error at its
    /// offset.
    fn next_record(&mut self) -> Result<Option<Original>> {
        let Some(mut rec) = self.rd.next_record()? else {
            return Ok(None);
        };
        let header = rec.header().clone();
        let block = rec.content_length();
        let http = if header.is_http() && cdxj::is_indexed(&header.record_type()) {
            rec.http_head().ok()
        } else {
            None
        };
        let end = rec.finish()?;
        for (what, check) in [
            ("WARC-Block-Digest", &end.block_digest),
            ("WARC-Payload-Digest", &end.payload_digest),
        ] {
            if check.is_bad() {
                return Err(Error::corrupt(
                    self.path,
                    end.offset,
                    format!(
                        "the record's {what} does not match its content ({}): nothing converted",
                        header.record_id().unwrap_or("no WARC-Record-ID")
                    ),
                ));
            }
        }
        Ok(Some(Original {
            header,
            http,
            block,
            end,
        }))
    }

    /// `rec`'s member or frame decompressed on its own and packed into one on `out`; the bytes
    /// of the record, checked against the size its member or frame said.
    fn repack(&self, rec: &Original, packer: &mut Packer, out: &mut dyn Write) -> Result<u64> {
        let end = &rec.end;
        let size = plain_size(
            &self.raw, self.path, self.from, end.offset, end.length, rec.block,
        )?;
        let slice = Slice {
            file: &self.raw,
            pos: end.offset,
            end: end.offset + end.length,
        };
        let n = self.unpack(slice, size, packer, out).map_err(|e| {
            if e.raw_os_error().is_some() {
                Error::io("convert", self.path, e)
            } else {
                Error::corrupt(self.path, end.offset, format!("converting the record: {e}"))
            }
        })?;
        if size.is_some_and(|s| s != n) {
            return Err(Error::corrupt(
                self.path,
                end.offset,
                format!(
                    "the record decompressed to {n} bytes, its frame or member said {}",
                    size.unwrap_or(0)
                ),
            ));
        }
        Ok(n)
    }

    /// The member or frame in `slice` decompressed into `packer` (`size` bytes, if known).
    fn unpack(
        &self,
        mut slice: Slice<'_>,
        size: Option<u64>,
        packer: &mut Packer,
        out: &mut dyn Write,
    ) -> io::Result<u64> {
        match self.from {
            Compression::None => packer.pack(&mut slice, size, out),
            Compression::Gzip => {
                let buffered = BufReader::with_capacity(BUF, slice);
                packer.pack(&mut flate2::bufread::GzDecoder::new(buffered), size, out)
            }
            Compression::Zstd => {
                let buffered = BufReader::with_capacity(BUF, slice);
                let d = match &self.dict {
                    Some(dd) => zstd::stream::read::Decoder::with_prepared_dictionary(buffered, dd),
                    None => zstd::stream::read::Decoder::with_buffer(buffered),
                };
                packer.pack(&mut d?.single_frame(), size, out)
            }
        }
    }
}

/// A `Write` that counts.
struct Counting<'a> {
    inner: &'a mut dyn Write,
    n: u64,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `[offset, end)` of a file, read with `pread`.
struct Slice<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for Slice<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let left = self.end.saturating_sub(self.pos);
        let n = out.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if n == 0 {
            return Ok(0);
        }
        let k = self.file.read_at(&mut out[..n], self.pos)?;
        if k == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file ends inside the record",
            ));
        }
        self.pos += k as u64;
        Ok(k)
    }
}

/// Writes records as members or frames of one compression.
struct Packer {
    to: Compression,
    level: Option<i32>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    inbuf: Box<[u8]>,
    outbuf: Box<[u8]>,
}

impl Packer {
    fn new(opts: &Options) -> Result<Packer> {
        let zstd = match opts.to {
            Compression::Zstd => {
                let level = opts.level.unwrap_or(3);
                let bad = |e: io::Error| Error::Usage(format!("zstd level {level}: {e}"));
                let mut c = match &opts.dictionary {
                    Some(d) => {
                        zstd::bulk::Compressor::with_dictionary(level, d.bytes()).map_err(|e| {
                            Error::Usage(format!("zstd dictionary {}: not usable: {e}", d.id()))
                        })?
                    }
                    None => zstd::bulk::Compressor::new(level).map_err(bad)?,
                };
                c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
                    .map_err(bad)?;
                c.set_parameter(zstd::zstd_safe::CParameter::ContentSizeFlag(true))
                    .map_err(bad)?;
                Some(c)
            }
            Compression::Gzip => {
                if let Some(l) = opts.level.filter(|l| !(0..=9).contains(l)) {
                    return Err(Error::Usage(format!("gzip level {l} is not in 0..=9")));
                }
                None
            }
            Compression::None => None,
        };
        Ok(Packer {
            to: opts.to,
            level: opts.level,
            zstd,
            inbuf: vec![0; BUF].into_boxed_slice(),
            outbuf: vec![0; zstd::zstd_safe::CCtx::out_size().max(BUF)].into_boxed_slice(),
        })
    }

    /// The dictionary frame, if the output has one: magic, size, the dictionary.
    fn preamble(opts: &Options) -> &[u8] {
        match (&opts.dictionary, opts.to) {
            (Some(d), Compression::Zstd) => d.frame(),
            _ => &[],
        }
    }

    /// Streams `src` (`size` bytes, if known) into one member or frame on `out`. Returns the
    /// bytes read from `src`.
    fn pack(
        &mut self,
        src: &mut dyn Read,
        size: Option<u64>,
        out: &mut dyn Write,
    ) -> io::Result<u64> {
        let mut n = 0u64;
        match self.to {
            Compression::None => {
                n = io::copy(src, out)?;
            }
            Compression::Gzip => {
                let level = flate2::Compression::new(self.level.unwrap_or(6) as u32);
                let mut gz = flate2::GzBuilder::new().write(out, level);
                loop {
                    let k = read_some(src, &mut self.inbuf)?;
                    if k == 0 {
                        break;
                    }
                    gz.write_all(&self.inbuf[..k])?;
                    n += k as u64;
                }
                gz.finish()?;
            }
            Compression::Zstd => {
                use zstd::zstd_safe::{InBuffer, OutBuffer, ResetDirective};
                let err = |code: usize| {
                    io::Error::other(zstd::zstd_safe::get_error_name(code).to_owned())
                };
                let cctx = self
                    .zstd
                    .as_mut()
                    .expect("a zstd packer has a context")
                    .context_mut();
                cctx.reset(ResetDirective::SessionOnly).map_err(err)?;
                cctx.set_pledged_src_size(size).map_err(err)?;
                loop {
                    let k = read_some(src, &mut self.inbuf)?;
                    if k == 0 {
                        break;
                    }
                    n += k as u64;
                    let mut i = InBuffer::around(&self.inbuf[..k]);
                    while i.pos() < k {
                        let mut o = OutBuffer::around(&mut self.outbuf[..]);
                        cctx.compress_stream(&mut o, &mut i).map_err(err)?;
                        let made = o.pos();
                        out.write_all(&self.outbuf[..made])?;
                    }
                }
                loop {
                    let mut o = OutBuffer::around(&mut self.outbuf[..]);
                    let left = cctx.end_stream(&mut o).map_err(err)?;
                    let made = o.pos();
                    out.write_all(&self.outbuf[..made])?;
                    if left == 0 {
                        break;
                    }
                }
            }
        }
        Ok(n)
    }
}

/// `read` until something or the end, retrying interrupted reads.
fn read_some(src: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match src.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// The decompressed size of the record whose member or frame is `[offset, offset + length)`,
/// when the input says it: a zstd frame's `Frame_Content_Size`, a gzip member's ISIZE (the size
/// modulo 2^32, placed at or above the block's `Content-Length`), a plain record's length.
fn plain_size(
    file: &File,
    path: &Path,
    from: Compression,
    offset: u64,
    length: u64,
    block: u64,
) -> Result<Option<u64>> {
    Ok(match from {
        Compression::None => Some(length),
        Compression::Zstd => {
            let mut head = [0u8; 18];
            let k = file.read_at(&mut head, offset).ctx("read", path)?;
            match zstd::zstd_safe::get_frame_content_size(&head[..k]) {
                Ok(Some(n)) => Some(n),
                _ => None,
            }
        }
        Compression::Gzip => {
            if length < 18 {
                return Err(Error::corrupt(
                    path,
                    offset,
                    "gzip member shorter than its header and trailer",
                ));
            }
            let mut t = [0u8; 4];
            file.read_exact_at(&mut t, offset + length - 4)
                .ctx("read", path)?;
            let isize = u64::from(u32::from_le_bytes(t));
            let mut n = (block & !0xffff_ffff) | isize;
            if n < block {
                n += 1 << 32;
            }
            Some(n)
        }
    })
}
