//! `dragnet warc convert`: WARC files from one record compression to another (`.warc.gz` <->
//! `.warc.zst`, with or without a warc-zstd dictionary, and `.warc` to either), streaming, in
//! bounded memory, every record byte for byte the same once decompressed.
//!
//! How one file is converted ([`convert_stream`]): a [`WarcReader`] reads the input record by
//! record with digest verification on (a `WARC-Block-Digest` or `WARC-Payload-Digest` that does
//! not match stops the conversion, naming the file and the record's offset), and tells where
//! each record's gzip member or zstd frame lies (offset, length). That member is then read
//! again from a second handle, decompressed on its own (the file's dictionary, if any) and
//! streamed into one new member or frame of the output: the bytes inside are exactly the
//! record's, whatever its header spelling, and nothing is held but 64 KiB buffers (a record of
//! any size streams through). A zstd frame is written with `Frame_Content_Size` (from the input
//! frame's header, or a gzip member's ISIZE, or the plain record's length) and a checksum, as
//! the fetch's writer writes them; a gzip member with mtime 0 and OS 255, level 6; with a
//! dictionary, the file starts with the warc-zstd dictionary frame (magic `0x184D2A5D`) and
//! every frame uses it.
//!
//! Two uses:
//!
//! - [`convert_files`]: anyone's files into an output directory that passed
//!   [`crate::storage::out`]'s rules, through a staging directory (nothing appears in it unless
//!   every file converted; the inputs are only read).
//! - [`convert_crawl`]: a crawl's own WARC files in place, under the crawl lock, one (cycle,
//!   partition) at a time: the new WARC files, the fetch-results run (file names, offsets and
//!   lengths of its records), the partition's CDXJ index, its fetch marker (outputs and their
//!   checksums, `warc_bytes`) and the parse and merge markers that list the fetch-results run
//!   as an input are written beside the originals under staged names (`.NAME.convert`); a
//!   journal (`cycles/C/fetch/pNNNN.convert`) lists them, and once it is published the staged
//!   files are renamed over their final names. The cycle indexes and `indexes/index.cdxj` are
//!   then merged again, and only after that are the old WARC files removed and the journals
//!   with them. A kill before a journal leaves the originals as they were (the staged files are
//!   removed by the next run); a kill after it is finished by the next run (docs/formats.md,
//!   "Converting WARC files").

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::crawl::{CrawlDir, DoneMarker, FileDigest, Stage};
use crate::error::{Error, IoContext, Result};
use crate::storage::{self, AtomicFile};
use crate::warc::cdxj::{self, CdxjSorter};
use crate::warc::http::HttpHead;
use crate::warc::{Compression, ReaderOptions, WarcHeader, WarcReader};

const BUF: usize = 64 << 10;
/// Magic of a zstd dictionary (`ZDICT`), little-endian: `37 A4 30 EC`.
const ZDICT_MAGIC: [u8; 4] = [0x37, 0xa4, 0x30, 0xec];

/// A zstd dictionary for `--to zst --dictionary F`.
#[derive(Clone)]
pub struct Dictionary {
    /// The dictionary (as `zstd --train` writes it).
    pub bytes: Vec<u8>,
    /// Where it came from (for messages).
    pub path: PathBuf,
}

impl Dictionary {
    /// Reads a zstd dictionary file (itself zstd-compressed or not); an error naming the file
    /// if it is not one.
    pub fn load(path: &Path) -> Result<Dictionary> {
        let mut bytes = std::fs::read(path).ctx("read", path)?;
        if bytes.starts_with(&crate::warc::frame::ZSTD_MAGIC) {
            bytes = zstd::bulk::decompress(&bytes, crate::warc::frame::MAX_DICT)
                .map_err(|e| Error::corrupt(path, 0, format!("compressed zstd dictionary: {e}")))?;
        }
        if !bytes.starts_with(&ZDICT_MAGIC) || bytes.len() < 8 {
            return Err(Error::Usage(format!(
                "{}: not a zstd dictionary (it should start with the bytes 37 a4 30 ec; `zstd \
                 --train FILES -o DICT` makes one)",
                path.display()
            )));
        }
        if bytes.len() > crate::warc::frame::MAX_DICT {
            return Err(Error::Usage(format!(
                "{}: a dictionary of {} bytes is over the {} MiB readers accept",
                path.display(),
                bytes.len(),
                crate::warc::frame::MAX_DICT >> 20
            )));
        }
        Ok(Dictionary {
            bytes,
            path: path.to_path_buf(),
        })
    }

    /// The dictionary's ID (bytes 4..8, little-endian), as frames made with it name it.
    pub fn id(&self) -> u32 {
        u32::from_le_bytes([self.bytes[4], self.bytes[5], self.bytes[6], self.bytes[7]])
    }
}

/// What to convert to.
#[derive(Clone)]
pub struct Options {
    /// The output compression (gzip or zstd; `None` writes plain `.warc`).
    pub to: Compression,
    /// Compression level; `None` for the fetch writer's (gzip 6, zstd 3).
    pub level: Option<i32>,
    /// With `to` zstd: the dictionary frame at the start of each file, used by every frame.
    pub dictionary: Option<Dictionary>,
}

impl Options {
    /// Options for `to` at the default level, without a dictionary.
    pub fn new(to: Compression) -> Options {
        Options {
            to,
            level: None,
            dictionary: None,
        }
    }

    /// Whether a file read as `from` (with a dictionary frame or not) is already what these
    /// options write, so that converting it in place would change nothing worth the rewrite.
    pub fn keeps(&self, from: Compression, has_dictionary: bool) -> bool {
        from == self.to
            && (self.to != Compression::Zstd || has_dictionary || self.dictionary.is_none())
    }
}

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

/// What converting one file did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FileReport {
    /// The input.
    pub input: PathBuf,
    /// The output (its final name).
    pub output: PathBuf,
    /// Records converted.
    pub records: u64,
    /// Bytes of the input file.
    pub bytes_in: u64,
    /// Bytes of the output file.
    pub bytes_out: u64,
    /// Bytes of the input's records (its members or frames; without a dictionary frame).
    pub record_bytes_in: u64,
    /// Bytes of the output's records.
    pub record_bytes_out: u64,
    /// Bytes of the records decompressed.
    pub plain_bytes: u64,
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
                        zstd::bulk::Compressor::with_dictionary(level, &d.bytes).map_err(|e| {
                            Error::Usage(format!(
                                "{}: not a usable zstd dictionary: {e}",
                                d.path.display()
                            ))
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
    fn preamble(opts: &Options) -> Vec<u8> {
        match (&opts.dictionary, opts.to) {
            (Some(d), Compression::Zstd) => {
                let mut v = Vec::with_capacity(d.bytes.len() + 8);
                v.extend_from_slice(&crate::warc::frame::DICT_MAGIC.to_le_bytes());
                v.extend_from_slice(&(d.bytes.len() as u32).to_le_bytes());
                v.extend_from_slice(&d.bytes);
                v
            }
            _ => Vec::new(),
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

/// The dictionary in the warc-zstd dictionary frame at the start of `file`, if it has one
/// (stored as it is, or as one zstd frame).
fn input_dictionary(file: &File, path: &Path) -> Result<Option<Vec<u8>>> {
    let mut head = [0u8; 8];
    let k = file.read_at(&mut head, 0).ctx("read", path)?;
    if k < 8
        || u32::from_le_bytes([head[0], head[1], head[2], head[3]])
            != crate::warc::frame::DICT_MAGIC
    {
        return Ok(None);
    }
    let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if size > crate::warc::frame::MAX_DICT {
        return Err(Error::corrupt(
            path,
            4,
            format!("zstd dictionary frame of {size} bytes"),
        ));
    }
    let mut data = vec![0; size];
    file.read_exact_at(&mut data, 8).map_err(|_| {
        Error::corrupt(
            path,
            0,
            format!("zstd dictionary frame of {size} bytes is truncated"),
        )
    })?;
    if data.starts_with(&crate::warc::frame::ZSTD_MAGIC) {
        data = zstd::bulk::decompress(&data, crate::warc::frame::MAX_DICT)
            .map_err(|e| Error::corrupt(path, 8, format!("compressed zstd dictionary: {e}")))?;
    }
    Ok(Some(data))
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

/// Converts the WARC file at `input` into `out` (a new file: offsets count from its first
/// byte), calling `moved` for every record. Digests are verified on the way.
pub fn convert_stream(
    input: &Path,
    out: &mut dyn Write,
    opts: &Options,
    moved: &mut dyn FnMut(&Moved<'_>) -> Result<()>,
) -> Result<FileReport> {
    let ropts = ReaderOptions {
        verify_digests: true,
        ..ReaderOptions::default()
    };
    let mut rd = WarcReader::open(input, ropts)?;
    let from = rd.compression();
    let raw = File::open(input).ctx("open", input)?;
    let dict = match from {
        Compression::Zstd => input_dictionary(&raw, input)?,
        _ => None,
    };
    let ddict = dict.as_deref().map(zstd::dict::DecoderDictionary::copy);
    let mut packer = Packer::new(opts)?;
    let mut out = Counting { inner: out, n: 0 };
    let pre = Packer::preamble(opts);
    out.write_all(&pre).ctx("write", input)?;
    let mut rep = FileReport {
        input: input.to_path_buf(),
        bytes_in: raw.metadata().ctx("stat", input)?.len(),
        ..FileReport::default()
    };
    while let Some(mut rec) = rd.next_record()? {
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
                    input,
                    end.offset,
                    format!(
                        "the record's {what} does not match its content ({}): nothing converted",
                        header.record_id().unwrap_or("no WARC-Record-ID")
                    ),
                ));
            }
        }
        let size = plain_size(&raw, input, from, end.offset, end.length, block)?;
        let mut slice = Slice {
            file: &raw,
            pos: end.offset,
            end: end.offset + end.length,
        };
        let new_offset = out.n;
        let bad = |e: io::Error| {
            if e.raw_os_error().is_some() {
                Error::io("convert", input, e)
            } else {
                Error::corrupt(input, end.offset, format!("converting the record: {e}"))
            }
        };
        let n = match from {
            Compression::None => packer.pack(&mut slice, size, &mut out),
            Compression::Gzip => {
                let mut d = flate2::bufread::GzDecoder::new(BufReader::with_capacity(BUF, slice));
                packer.pack(&mut d, size, &mut out)
            }
            Compression::Zstd => {
                let d = match &ddict {
                    Some(dd) => zstd::stream::read::Decoder::with_prepared_dictionary(
                        BufReader::with_capacity(BUF, slice),
                        dd,
                    ),
                    None => zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(
                        BUF, slice,
                    )),
                };
                d.map(|d| d.single_frame())
                    .and_then(|mut d| packer.pack(&mut d, size, &mut out))
            }
        }
        .map_err(bad)?;
        if size.is_some_and(|s| s != n) {
            return Err(Error::corrupt(
                input,
                end.offset,
                format!(
                    "the record decompressed to {n} bytes, its frame or member said {}",
                    size.unwrap_or(0)
                ),
            ));
        }
        let new_length = out.n - new_offset;
        rep.records += 1;
        rep.record_bytes_in += end.length;
        rep.record_bytes_out += new_length;
        rep.plain_bytes += n;
        moved(&Moved {
            old_offset: end.offset,
            old_length: end.length,
            new_offset,
            new_length,
            header: &header,
            http: http.as_ref(),
        })?;
    }
    rep.bytes_out = out.n;
    Ok(rep)
}

/// The name of `input`'s conversion to `to`: its WARC suffix (`.warc`, `.warc.gz`, `.warc.zst`)
/// replaced, or `to`'s suffix added to a name without one.
pub fn output_name(input: &str, to: Compression) -> String {
    let stem = Compression::from_name(input)
        .and_then(|c| input.strip_suffix(c.suffix()))
        .unwrap_or(input);
    format!("{stem}{}", to.suffix())
}

/// Whether `name` is one [`convert_files`] writes (for `--force` over an earlier output).
pub fn is_output_name(name: &str) -> bool {
    Compression::from_name(name).is_some()
}

/// What [`convert_files`] or [`convert_crawl`] did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Files converted.
    pub files: Vec<FileReport>,
    /// Files that already were what was asked (crawl mode): kept as they are.
    pub kept: u64,
    /// (cycle, partition) units converted (crawl mode).
    pub partitions: u64,
    /// Units an earlier, interrupted run had committed and this one finished (crawl mode).
    pub resumed: u64,
    /// CDXJ lines of the crawl's index after the conversion (crawl mode).
    pub index_lines: Option<u64>,
}

impl Report {
    /// Bytes read from the inputs.
    pub fn bytes_in(&self) -> u64 {
        self.files.iter().map(|f| f.bytes_in).sum()
    }
    /// Bytes written.
    pub fn bytes_out(&self) -> u64 {
        self.files.iter().map(|f| f.bytes_out).sum()
    }
    /// Records converted.
    pub fn records(&self) -> u64 {
        self.files.iter().map(|f| f.records).sum()
    }
}

/// Converts `files` into the directory `out` (checked by [`crate::storage::out`]: not in a crawl,
/// holding no input, new or empty or, with `--force`, holding earlier outputs), each to
/// [`output_name`]; the files appear there together once every one converted.
pub fn convert_files(
    files: &[PathBuf],
    out: &crate::storage::out::Output,
    opts: &Options,
) -> Result<Report> {
    let mut names: Vec<String> = Vec::with_capacity(files.len());
    for f in files {
        let name = f
            .file_name()
            .map(|n| output_name(&n.to_string_lossy(), opts.to))
            .ok_or_else(|| Error::Usage(format!("{}: not a file name", f.display())))?;
        if let Some(i) = names.iter().position(|n| *n == name) {
            return Err(Error::Usage(format!(
                "{} and {} would both be converted to {name}: convert them into different \
                 directories",
                files[i].display(),
                f.display()
            )));
        }
        names.push(name);
    }
    let staged = out.stage_dir()?;
    let mut report = Report::default();
    for (f, name) in files.iter().zip(&names) {
        let mut file = AtomicFile::create(&staged.path().join(name))?;
        let mut rep = {
            let mut w = BufWriter::with_capacity(1 << 20, &mut file);
            let rep = convert_stream(f, &mut w, opts, &mut |_| Ok(()))?;
            w.flush().ctx("write", f)?;
            rep
        };
        file.commit()?;
        rep.output = out.given().join(name);
        report.files.push(rep);
    }
    staged.publish(names.last().map_or("", String::as_str))?;
    Ok(report)
}

// ---------------------------------------------------------------------------------------------
// A crawl's own files, in place.

/// The suffix of a staged file: `.NAME.convert` beside `NAME`.
const STAGED: &str = ".convert";

/// `dir/.NAME.convert` for `dir/NAME`.
fn staged(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}{STAGED}"))
}

/// `cycles/C/fetch/pNNNN.convert`: the journal of a partition's conversion.
fn journal_path(crawl: &CrawlDir, cycle: u32, p: u32) -> PathBuf {
    crawl
        .stage_dir(cycle, Stage::Fetch)
        .join(format!("{}.convert", CrawlDir::partition_name(p)))
}

/// What a partition's conversion changes, once committed: staged files to rename over their
/// final names (in order), then old files to remove after the crawl's indexes are rewritten.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    magic: String,
    /// (staged, final), relative to the crawl.
    renames: Vec<(String, String)>,
    /// Relative to the crawl.
    remove: Vec<String>,
}

const JOURNAL_MAGIC: &str = "dragnet-convert";

impl Journal {
    fn read(path: &Path) -> Result<Option<Journal>> {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let j: Journal = serde_json::from_slice(&text)
            .map_err(|e| Error::corrupt(path, 0, format!("conversion journal: {e}")))?;
        if j.magic != JOURNAL_MAGIC {
            return Err(Error::corrupt(path, 0, "not a conversion journal"));
        }
        Ok(Some(j))
    }

    /// Renames what is still staged (a rename already done has no staged file left).
    fn apply(&self, crawl: &CrawlDir) -> Result<()> {
        for (from, to) in &self.renames {
            let (from, to) = (crawl.root().join(from), crawl.root().join(to));
            if from.exists() {
                storage::fault::check("rename", &from)
                    .and_then(|()| std::fs::rename(&from, &to))
                    .ctx("rename", &from)?;
                storage::sync_dir(to.parent().expect("in a directory"))?;
            } else if !to.exists() {
                return Err(Error::corrupt(
                    &from,
                    0,
                    format!(
                        "the conversion journal lists it, but neither it nor {} exists: restore \
                         the crawl from a copy",
                        to.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Removes the old files (after the indexes no longer name them).
    fn finish(&self, crawl: &CrawlDir) -> Result<()> {
        for old in &self.remove {
            let path = crawl.root().join(old);
            match storage::fault::check("remove", &path).and_then(|()| std::fs::remove_file(&path))
            {
                Ok(()) => storage::sync_dir(path.parent().expect("in a directory"))?,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove", &path, e)),
            }
        }
        Ok(())
    }
}

/// Where one old record went: old offset, new offset, new length (24 bytes, little-endian),
/// written in input order (so sorted by old offset) to a scratch file, then searched through a
/// memory map: memory stays bounded whatever the number of records.
struct OffsetMap {
    path: PathBuf,
    w: Option<BufWriter<File>>,
    map: Option<memmap2::Mmap>,
    /// (old file name, new file name, first entry, entries) per converted file.
    files: Vec<(String, String, u64, u64)>,
    n: u64,
}

impl OffsetMap {
    fn new(dir: &Path) -> Result<OffsetMap> {
        let path = dir.join(format!(
            ".convert-map{}{}",
            storage::TEMP_MARK,
            storage::temp_writer_tag()
        ));
        let f = File::create(&path).ctx("create", &path)?;
        Ok(OffsetMap {
            path,
            w: Some(BufWriter::new(f)),
            map: None,
            files: Vec::new(),
            n: 0,
        })
    }

    fn start(&mut self, old: &str, new: &str) {
        self.files.push((old.to_owned(), new.to_owned(), self.n, 0));
    }

    fn push(&mut self, old_off: u64, new_off: u64, new_len: u64) -> Result<()> {
        let w = self.w.as_mut().expect("map being written");
        for v in [old_off, new_off, new_len] {
            w.write_all(&v.to_le_bytes()).ctx("write", &self.path)?;
        }
        self.n += 1;
        self.files.last_mut().expect("a file started").3 += 1;
        Ok(())
    }

    fn seal(&mut self) -> Result<()> {
        let w = self.w.take().expect("sealed once");
        w.into_inner()
            .map_err(|e| Error::io("write", &self.path, e.into_error()))?;
        if self.n > 0 {
            let f = File::open(&self.path).ctx("open", &self.path)?;
            // SAFETY: the scratch file is private to this process and no longer written.
            self.map = Some(unsafe { memmap2::Mmap::map(&f) }.ctx("map", &self.path)?);
        }
        Ok(())
    }

    fn entry(&self, i: u64) -> (u64, u64, u64) {
        let m = self.map.as_ref().expect("sealed with entries");
        let at = (i * 24) as usize;
        let v = |k: usize| {
            u64::from_le_bytes(m[at + k * 8..at + k * 8 + 8].try_into().expect("8 bytes"))
        };
        (v(0), v(1), v(2))
    }

    /// Whether `old` is one of the files converted.
    fn converts(&self, old: &str) -> bool {
        !old.is_empty() && self.files.iter().any(|f| f.0 == old)
    }

    /// Where the record at `old_off` of `old` went: (new file, new offset, new length).
    fn find(&self, old: &str, old_off: u64) -> Option<(&str, u64, u64)> {
        let (_, new, first, count) = self.files.iter().find(|f| f.0 == old)?;
        let (mut lo, mut hi) = (*first, first + count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (o, n, l) = self.entry(mid);
            match o.cmp(&old_off) {
                std::cmp::Ordering::Equal => return Some((new.as_str(), n, l)),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }
}

impl Drop for OffsetMap {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Removes what conversions of `cycle` staged and did not commit (partitions without a
/// journal), and the temporaries of dead writers in the directories it writes.
fn sweep_staged(crawl: &CrawlDir, cycle: u32) -> Result<()> {
    let dirs = [
        crawl.warc_dir(cycle),
        crawl.stage_dir(cycle, Stage::Fetch),
        crawl.stage_dir(cycle, Stage::Parse),
        crawl.stage_dir(cycle, Stage::Merge),
        crawl
            .fetched(cycle, 0)
            .parent()
            .expect("fetched/")
            .to_path_buf(),
        crawl
            .partition_cdxj(cycle, 0)
            .parent()
            .expect("cdxj/")
            .to_path_buf(),
    ];
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(".p").filter(|_| name.ends_with(STAGED)) else {
                continue;
            };
            let Some(p) = rest.get(..4).and_then(|d| d.parse::<u32>().ok()) else {
                continue;
            };
            if !journal_path(crawl, cycle, p).exists() {
                let path = e.path();
                std::fs::remove_file(&path).ctx("remove", &path)?;
            }
        }
        storage::remove_temps(&dir)?;
    }
    Ok(())
}

/// A WARC file a fetch marker lists as its output (not a WET file).
fn is_warc_output(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    !name.contains(".warc.wet") && Compression::from_name(name).is_some()
}

/// Converts partition `p` of `cycle` (its fetch committed): stages everything, then publishes
/// its journal and applies it. `None` if nothing needed converting.
fn convert_partition(
    crawl: &CrawlDir,
    cycle: u32,
    p: u32,
    opts: &Options,
    report: &mut Report,
) -> Result<Option<Journal>> {
    let done = crawl.done_path(cycle, Stage::Fetch, p);
    let Some(marker) = DoneMarker::read(&done)? else {
        return Ok(None);
    };
    let root = crawl.root();
    let mut todo: Vec<(usize, PathBuf)> = Vec::new();
    for (i, d) in marker.outputs.iter().enumerate() {
        if !is_warc_output(&d.path) {
            continue;
        }
        let path = root.join(&d.path);
        let rd = WarcReader::open(&path, ReaderOptions::default())?;
        if opts.keeps(rd.compression(), rd.has_dictionary()) {
            report.kept += 1;
        } else {
            todo.push((i, path));
        }
    }
    if todo.is_empty() {
        return Ok(None);
    }
    let warc_dir = crawl.warc_dir(cycle);
    let prefix = crate::crawl::warc_filename_prefix(cycle);
    let mut map = OffsetMap::new(&warc_dir)?;
    let mut sorter = CdxjSorter::new(64 << 20, &warc_dir);
    let mut renames: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut remove: Vec<PathBuf> = Vec::new();
    let mut outputs = marker.outputs.clone();
    let (mut bytes_in, mut bytes_out) = (0u64, 0u64);
    let mut converted: Vec<String> = Vec::new();
    for (i, path) in &todo {
        let old_name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let new_name = output_name(&old_name, opts.to);
        let fin = warc_dir.join(&new_name);
        let stage = staged(&fin);
        map.start(&old_name, &new_name);
        let mut file = AtomicFile::create(&stage)?;
        let filename = format!("{prefix}{new_name}");
        let mut rep = {
            let mut w = BufWriter::with_capacity(1 << 20, &mut file);
            let rep = convert_stream(path, &mut w, opts, &mut |m| {
                map.push(m.old_offset, m.new_offset, m.new_length)?;
                if let Some(line) =
                    cdxj::record_line(m.header, m.http, m.new_offset, m.new_length, &filename)
                {
                    sorter.push(line)?;
                }
                Ok(())
            })?;
            w.flush().ctx("write", &stage)?;
            rep
        };
        file.commit()?;
        rep.output = fin.clone();
        bytes_in += rep.record_bytes_in;
        bytes_out += rep.record_bytes_out;
        report.files.push(rep);
        let mut d = FileDigest::of_file(crawl, &stage)?;
        d.path = crawl.relative(&fin);
        outputs[*i] = d;
        renames.push((stage, fin.clone()));
        if fin != *path {
            remove.push(path.clone());
        }
        converted.push(format!("{prefix}{old_name}"));
    }
    map.seal()?;

    // The partition's index: the converted files' lines, and the kept files' lines as they were.
    let cdxj_path = crawl.partition_cdxj(cycle, p);
    if cdxj_path.exists() {
        let f = File::open(&cdxj_path).ctx("open", &cdxj_path)?;
        let mut lines = crate::util::lines::LineReader::new(BufReader::new(f), cdxj::MAX_CDXJ_LINE);
        while let Some(l) = lines.next_line().ctx("read", &cdxj_path)? {
            let text = String::from_utf8_lossy(l.text).into_owned();
            let names_converted = converted.iter().any(|c| {
                text.ends_with(&format!(
                    "\"filename\": {}}}",
                    serde_json::to_string(c).expect("string")
                ))
            });
            if !names_converted {
                sorter.push(text)?;
            }
        }
        let stage = staged(&cdxj_path);
        crate::warc::cdxj::write_sorted(sorter, &stage)?;
        replace_output(
            crawl,
            &mut outputs,
            &cdxj_path,
            FileDigest::of_file(crawl, &stage)?,
        );
        renames.push((stage, cdxj_path));
    } else {
        drop(sorter);
    }

    // The fetch results: each record's file, offset and length in the new files.
    let fetched = crawl.fetched(cycle, p);
    let mut fetched_digest = None;
    if fetched.exists() {
        use crate::records::FetchResult;
        use crate::run::{Cursor, RunReader, RunWriter, Schema};
        let stage = staged(&fetched);
        let mut r = RunReader::open_expect(&fetched, Schema::FETCHED)?;
        let mut w = RunWriter::create(&stage, Schema::FETCHED)?;
        while r.advance()? {
            let mut fr = FetchResult::decode(r.payload())
                .map_err(|e| Error::corrupt(&fetched, 0, format!("fetch result: {e}")))?;
            if map.converts(&fr.warc_file) {
                let Some((name, off, len)) = map.find(&fr.warc_file, fr.warc_offset) else {
                    return Err(Error::corrupt(
                        &fetched,
                        0,
                        format!(
                            "{}: its record is at offset {} of {}, where no record of that file \
                             starts; nothing converted",
                            fr.url, fr.warc_offset, fr.warc_file
                        ),
                    ));
                };
                fr.warc_file = name.to_owned();
                fr.warc_offset = off;
                fr.warc_length = len;
            }
            w.push(r.key(), &fr.encode())?;
        }
        w.finish()?;
        let mut d = FileDigest::of_run(crawl, &stage)?;
        d.path = crawl.relative(&fetched);
        replace_output(crawl, &mut outputs, &fetched, d.clone());
        fetched_digest = Some(d);
        renames.push((stage, fetched));
    }

    // The fetch marker, and the markers that list the fetch results as an input.
    let mut m = marker.clone();
    m.outputs = outputs;
    if let Some(b) = m.counts.get_mut("warc_bytes") {
        *b = b.saturating_sub(bytes_in) + bytes_out;
    }
    let stage = staged(&done);
    m.publish(&stage)?;
    let mut marker_renames = vec![(stage, done)];
    if let Some(d) = &fetched_digest {
        for st in [Stage::Parse, Stage::Merge] {
            let path = crawl.done_path(cycle, st, p);
            let Some(mut other) = DoneMarker::read(&path)? else {
                continue;
            };
            let mut changed = false;
            for input in other.inputs.iter_mut().filter(|i| i.path == d.path) {
                *input = d.clone();
                changed = true;
            }
            if changed {
                let stage = staged(&path);
                other.publish(&stage)?;
                marker_renames.push((stage, path));
            }
        }
    }
    // WARC files first, then the runs and indexes that point into them, the markers last.
    renames.extend(marker_renames);
    let rel = |v: &[PathBuf]| v.iter().map(|p| crawl.relative(p)).collect::<Vec<_>>();
    let journal = Journal {
        magic: JOURNAL_MAGIC.into(),
        renames: renames
            .iter()
            .map(|(a, b)| (crawl.relative(a), crawl.relative(b)))
            .collect(),
        remove: rel(&remove),
    };
    let text = serde_json::to_vec_pretty(&journal).expect("journal serializes");
    storage::write_atomic(&journal_path(crawl, cycle, p), &text)?;
    journal.apply(crawl)?;
    report.partitions += 1;
    Ok(Some(journal))
}

/// Replaces the output entry of `path` in a marker's outputs (adds it if missing).
fn replace_output(crawl: &CrawlDir, outputs: &mut Vec<FileDigest>, path: &Path, d: FileDigest) {
    let rel = crawl.relative(path);
    match outputs.iter_mut().find(|o| o.path == rel) {
        Some(o) => *o = d,
        None => outputs.push(d),
    }
}

/// Converts the WARC files of the crawl at `crawl` (of `partitions` partitions) in place; the
/// caller holds the crawl lock. Resumes a conversion that was killed.
pub fn convert_crawl(crawl: &CrawlDir, partitions: u32, opts: &Options) -> Result<Report> {
    let mut report = Report::default();
    let mut touched: Vec<u32> = Vec::new();
    let converted = convert_all(crawl, partitions, opts, &mut report, &mut touched);
    // What was committed is finished even when a later partition failed: the crawl is left
    // consistent (partly converted), and the error is the failed file's.
    touched.dedup();
    let finished = finish(crawl, partitions, &touched, &mut report);
    converted?;
    finished?;
    Ok(report)
}

/// Every partition converted (or an interrupted one's journal applied) until one fails; the
/// cycles touched in `touched`.
fn convert_all(
    crawl: &CrawlDir,
    partitions: u32,
    opts: &Options,
    report: &mut Report,
    touched: &mut Vec<u32>,
) -> Result<()> {
    for c in crawl.cycles() {
        sweep_staged(crawl, c)?;
        for p in 0..partitions {
            let jp = journal_path(crawl, c, p);
            if let Some(j) = Journal::read(&jp)? {
                j.apply(crawl)?;
                report.resumed += 1;
                touched.push(c);
                continue;
            }
            match convert_partition(crawl, c, p, opts, report) {
                Ok(Some(_)) => touched.push(c),
                Ok(None) => {}
                Err(e) => {
                    // Nothing of this partition was committed: its staged files go.
                    if !jp.exists() {
                        let _ = sweep_staged(crawl, c);
                    }
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// The indexes of the cycles `touched` and the crawl's made again (they name the new files),
/// then the old files the journals list removed, and the journals.
fn finish(crawl: &CrawlDir, partitions: u32, touched: &[u32], report: &mut Report) -> Result<()> {
    for &c in touched {
        if crawl.cycle_cdxj(c).exists() {
            crate::ops::index::index_cycle(crawl, partitions, c)?;
        }
    }
    if !touched.is_empty() {
        report.index_lines = rewrite_crawl_index(crawl, partitions)?;
    }
    for c in crawl.cycles() {
        for p in 0..partitions {
            let jp = journal_path(crawl, c, p);
            if let Some(j) = Journal::read(&jp)? {
                j.finish(crawl)?;
                storage::fault::check("remove", &jp)
                    .and_then(|()| std::fs::remove_file(&jp))
                    .ctx("remove", &jp)?;
                storage::sync_dir(jp.parent().expect("fetch/"))?;
            }
        }
    }
    Ok(())
}

/// `indexes/index.cdxj` merged again from the cycles' indexes it holds (they were rewritten),
/// published atomically; rebuilt as a cycle's end would if a cycle index is missing.
fn rewrite_crawl_index(crawl: &CrawlDir, partitions: u32) -> Result<Option<u64>> {
    use crate::ops::index;
    let whole = index::crawl_index(crawl);
    if !whole.exists() {
        return Ok(None);
    }
    let held = index::indexed_cycles(crawl);
    let inputs: Vec<PathBuf> = held.iter().map(|&c| crawl.cycle_cdxj(c)).collect();
    if inputs.iter().any(|p| !p.exists()) {
        std::fs::remove_file(&whole).ctx("remove", &whole)?;
        let cycles = crawl.indexes_dir().join("index.cycles");
        let _ = std::fs::remove_file(&cycles);
        return Ok(index::rebuild(crawl, partitions)?.crawl_lines);
    }
    let mut file = AtomicFile::create(&whole)?;
    let n = {
        let mut w = BufWriter::with_capacity(1 << 16, &mut file);
        let n = cdxj::merge_sorted(&inputs, &mut w, &whole, true)?;
        w.flush().ctx("write", &whole)?;
        n
    };
    file.commit()?;
    Ok(Some(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names() {
        assert_eq!(output_name("a.warc.zst", Compression::Gzip), "a.warc.gz");
        assert_eq!(output_name("a.warc.gz", Compression::Zstd), "a.warc.zst");
        assert_eq!(output_name("a.warc", Compression::Zstd), "a.warc.zst");
        assert_eq!(output_name("a.bin", Compression::Gzip), "a.bin.warc.gz");
        assert!(is_output_name("x.warc.gz") && !is_output_name("x.txt"));
    }

    #[test]
    fn keeps_only_what_is_asked() {
        let gz = Options::new(Compression::Gzip);
        assert!(gz.keeps(Compression::Gzip, false));
        assert!(!gz.keeps(Compression::Zstd, false));
        let mut z = Options::new(Compression::Zstd);
        assert!(z.keeps(Compression::Zstd, false));
        z.dictionary = Some(Dictionary {
            bytes: vec![0x37, 0xa4, 0x30, 0xec, 1, 0, 0, 0],
            path: "d".into(),
        });
        assert!(!z.keeps(Compression::Zstd, false));
        assert!(z.keeps(Compression::Zstd, true));
        assert_eq!(z.dictionary.as_ref().unwrap().id(), 1);
    }
}
