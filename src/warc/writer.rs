//! Writing WARC 1.1 files: what the fetch stage produces for every URL it fetched.
//!
//! Each record is compressed on its own (one zstd frame with content size and checksum, or one
//! gzip member), so a record can be read from its offset without the rest of the file: that is
//! what CDXJ indexes and the fetch-results run point into. A `.warc.zst` writer given a
//! dictionary ([`WriterConfig::dictionary`], [`super::dictionary`]) starts each file with the
//! warc-zstd dictionary frame and compresses every record with it, as the IIPC proposal says.
//!
//! Gzip members are made by [`GzipMembers`]: libdeflate, which compresses a whole buffer at
//! once (faster than a streaming zlib at every level for records compressed whole,
//! docs/BENCHMARKS.md, "WARC compression"), and for small records at the default level
//! Huffman codes built once (`small.rs`), without libdeflate's per-member set-up. The
//! compressors and buffers are made once per writer and reused for every record.
//!
//! A record is built in memory before it is written, because its digests come before its block
//! in the header: the fetch stage holds a body in memory anyway (threads x max body size,
//! docs/design.md §1), and gives it with room in front ([`Room`]): compressed where it lies.
//!
//! Files are named `<prefix>-<serial>.warc[.gz|.zst]` (`p0007-000001.warc.zst`), start with a
//! warcinfo record, and rotate once they reach the configured size; a request and its response are
//! never split across files. Each file is written under a temporary name and published with
//! [`AtomicFile`] (fsync, rename, fsync-dir) when it is complete, so a reader never sees a file
//! that is still being written and a killed fetch leaves no partial WARC behind.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::cdxj::{self, CdxjSorter};
use super::dictionary::{Codec, Dictionary};
use super::digest;
use super::http::HttpHead;
use super::{
    file_name, warc_date, Compression, IdGen, IdSource, RecordType, Truncated,
    PROFILE_IDENTICAL_PAYLOAD_DIGEST, PROFILE_SERVER_NOT_MODIFIED, WARC_VERSION,
};
use crate::error::{Error, IoContext, Result};
use crate::storage::{self, AtomicFile};

mod fields;
mod gzip;
mod packing;
mod small;
use fields::{clean_str, ip_text, put_field, warc_fields};
pub use gzip::{GzipMembers, Room};

/// Default rotation size: 1 GB, the customary WARC file size.
pub const DEFAULT_ROTATE_BYTES: u64 = 1_000_000_000;

/// The gzip level when none is given: libdeflate's level 1, the cheapest per byte, whose
/// members were within a few percent of zlib's level 6 on crawl records (docs/BENCHMARKS.md,
/// "WARC compression").
pub const GZIP_LEVEL: i32 = 1;

/// How a [`WarcWriter`] names, compresses and rotates its files.
#[derive(Clone, Debug)]
pub struct WriterConfig {
    /// Directory the files are published in (created if missing).
    pub dir: PathBuf,
    /// File name prefix, e.g. `p0007` for partition 7.
    pub prefix: String,
    /// Record compression; also decides the file suffix.
    pub compression: Compression,
    /// The zstd dictionary each `.warc.zst` file starts with and every record is compressed
    /// with (`None`: plain frames; ignored for other compressions).
    pub dictionary: Option<Arc<Dictionary>>,
    /// Compression level; `None` for the codec's default (zstd 3, gzip [`GZIP_LEVEL`]).
    pub level: Option<i32>,
    /// A file is finished and published once it holds at least this many bytes.
    pub rotate_bytes: u64,
    /// Serial number of the first file (default 1).
    pub first_serial: u32,
    /// Where record IDs come from.
    pub ids: IdSource,
    /// Write `WARC-Date` with microseconds (WARC 1.1) instead of whole seconds.
    pub subsecond_dates: bool,
    /// Extra `name: value` fields for each file's warcinfo record (operator, isPartOf, robots,
    /// http-header-user-agent, ...), after `software`, `format` and `conformsTo`.
    pub warcinfo: Vec<(String, String)>,
    /// Index the records as they are written ([`WarcWriter::take_index`]), or not (`None`).
    pub index: Option<WriterIndex>,
    /// A WET file (text conversions, [`WarcWriter::write_conversion`]): named
    /// `<prefix>-<serial>.warc.wet.zst` (or `.gz`, or none), as Common Crawl names its WET files.
    pub wet: bool,
}

/// How a [`WarcWriter`] indexes what it writes: a CDXJ line per response, revisit and resource
/// record ([`super::cdxj::record_line`]), sorted within a memory budget.
#[derive(Clone, Debug)]
pub struct WriterIndex {
    /// Put before each file's name in the `filename` field (`000003/warc/` in a crawl, whose
    /// index is read from `cycles/`).
    pub filename_prefix: String,
    /// Memory for the lines before they spill to disk.
    pub budget: usize,
    /// Where spills go (a private directory under it).
    pub tmp_dir: PathBuf,
}

impl WriterConfig {
    /// A configuration with the defaults: random IDs, 1 GB files, microsecond dates, serial 1.
    /// `codec` is a [`Compression`], or a [`Codec`] that also names a zstd dictionary.
    pub fn new(
        dir: impl Into<PathBuf>,
        prefix: impl Into<String>,
        codec: impl Into<Codec>,
    ) -> Self {
        let codec = codec.into();
        WriterConfig {
            dir: dir.into(),
            prefix: prefix.into(),
            compression: codec.compression,
            dictionary: codec.dictionary,
            level: None,
            rotate_bytes: DEFAULT_ROTATE_BYTES,
            first_serial: 1,
            ids: IdSource::Random,
            subsecond_dates: true,
            warcinfo: Vec::new(),
            index: None,
            wet: false,
        }
    }
}

/// Where a record was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordLocation {
    /// The file's name (no directory), e.g. `p0007-000001.warc.zst`.
    pub file: String,
    /// Byte offset of the record's compressed member in the file.
    pub offset: u64,
    /// Length of the compressed member in bytes.
    pub length: u64,
    /// `WARC-Record-ID`, angle brackets included.
    pub record_id: String,
    /// `WARC-Payload-Digest`, if the record has one.
    pub payload_digest: Option<String>,
}

/// What the server answered, and so which record holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseKind<'a> {
    /// A `response` record; `truncated` says why the block is shorter than what was sent.
    Response {
        /// `WARC-Truncated`, if the fetcher cut the body.
        truncated: Option<Truncated>,
    },
    /// A 304 Not Modified answer to a conditional GET: a `revisit` record with the
    /// server-not-modified profile whose block is the 304's status line and headers.
    NotModified(Revisit<'a>),
    /// An answer whose payload is that of an earlier capture: a `revisit` record with the
    /// identical-payload-digest profile whose block is the response's status line and headers
    /// (`response_rest`, the body, is not written; `WARC-Truncated: length`, as Heritrix
    /// writes it).
    IdenticalPayload(Revisit<'a>),
}

/// What a server-not-modified revisit refers to (all optional: the urldb may know them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Revisit<'a> {
    /// `WARC-Refers-To-Target-URI`: the earlier capture's URI, when it differs.
    pub refers_to_uri: Option<&'a str>,
    /// `WARC-Refers-To-Date`: when the earlier capture was made.
    pub refers_to_date: Option<SystemTime>,
    /// `WARC-Refers-To`: the earlier response record's ID.
    pub refers_to: Option<&'a str>,
    /// `WARC-Payload-Digest` of the earlier capture's payload.
    pub payload_digest: Option<&'a str>,
}

/// One fetch: the request as sent and the response as received.
#[derive(Debug)]
pub struct Exchange<'a> {
    /// The URL fetched (`WARC-Target-URI`).
    pub target_uri: &'a str,
    /// When the fetch started (`WARC-Date` of both records).
    pub date: SystemTime,
    /// The server's address (`WARC-IP-Address`).
    pub ip: Option<IpAddr>,
    /// The HTTP request as sent: request line, headers, blank line, body. `None` writes no
    /// request record.
    pub request: Option<&'a [u8]>,
    /// The HTTP response as received: status line, headers, blank line, body (chunked and
    /// content-encoded as sent, possibly cut short: see `kind`).
    pub response: &'a [u8],
    /// More of the response, written after `response`: a caller holding the head and the body
    /// in separate buffers passes them as they are instead of copying them into one (empty
    /// otherwise). Or, instead, `response_room`.
    pub response_rest: &'a [u8],
    /// The rest of the response in a buffer with room in front of it (then `response_rest` is
    /// empty): a `.warc.gz` record is compressed where it lies, without a copy ([`Room`]).
    pub response_room: Option<Room<'a>>,
    /// The response's head parsed already, if the caller has it (the CDXJ line reads its status
    /// and media type); `None` parses it from `response`.
    pub response_head: Option<&'a HttpHead>,
    /// Response or not-modified revisit.
    pub kind: ResponseKind<'a>,
}

/// Where an exchange's records were written (always the same file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeLocations {
    /// The request record, if one was written.
    pub request: Option<RecordLocation>,
    /// The response or revisit record.
    pub response: RecordLocation,
}

/// What a writer produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriterSummary {
    /// Published files, in order.
    pub files: Vec<PathBuf>,
    /// The length and xxh3 of each published file, in the order of `files`: taken as the bytes
    /// were written, so a `.done` marker needs no second read of a gigabyte file.
    pub sums: Vec<crate::storage::Sum>,
    /// Records written, warcinfo included.
    pub records: u64,
    /// Bytes written over all files.
    pub bytes: u64,
}

struct OpenFile {
    file: AtomicFile,
    name: String,
    /// The `filename` of its CDXJ lines (the index's prefix and `name`).
    index_name: String,
    warcinfo_id: String,
    /// Bytes up to the end of the last record written whole.
    whole: u64,
}

/// Appends records to a sequence of WARC files; see the module docs.
pub struct WarcWriter {
    cfg: WriterConfig,
    ids: IdGen,
    serial: u32,
    open: Option<OpenFile>,
    summary: WriterSummary,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    gzip: Option<GzipMembers>,
    /// A record's zstd frame.
    packed: Vec<u8>,
    /// A record's header, written field by field.
    head: Vec<u8>,
    index: Option<CdxjSorter>,
}

/// One record to write.
struct Rec<'a> {
    kind: RecordType,
    id: String,
    date: SystemTime,
    target: Option<&'a str>,
    extra: Vec<(&'static str, String)>,
    content_type: &'a str,
    /// The block, in pieces written one after the other (and `room`'s body after them).
    block: [&'a [u8]; 2],
    /// The end of the block where it lies, with room before it ([`Room`]).
    room: Option<Room<'a>>,
    /// The block's HTTP head, parsed by the caller (else parsed here for the index).
    head: Option<&'a HttpHead>,
    payload: Payload,
}

impl Rec<'_> {
    /// The block's pieces: `block[0]`, then `block[1]` and `room`'s body (one is empty).
    fn pieces(&self) -> [&[u8]; 3] {
        let rest = self.room.as_ref().map_or(&[][..], Room::body);
        [self.block[0], self.block[1], rest]
    }
}

/// What ends every record, after its block.
const TAIL: &[u8] = b"\r\n\r\n";

/// A writer's record buffers (its own and its [`GzipMembers`]') are shrunk back to this after a
/// bigger record, so one huge response does not pin their size for the rest of the stage.
const KEEP_BUFFER: usize = 1 << 20;

enum Payload {
    /// No payload digest.
    None,
    /// The block is an HTTP message: digest the bytes after its header block.
    Http,
    /// The payload is the whole block.
    Block,
    /// A digest given by the caller (a revisit's earlier payload).
    Given(String),
}

impl WarcWriter {
    /// Starts a writer; no file is created before the first record.
    pub fn new(cfg: WriterConfig) -> Result<WarcWriter> {
        let where_ = Path::new("<warc writer>");
        if cfg.prefix.is_empty() || cfg.prefix.contains(['/', '\\']) || cfg.prefix.starts_with('.')
        {
            return Err(Error::config(
                where_,
                format!(
                    "bad WARC file prefix {:?}: use a plain name such as p0007",
                    cfg.prefix
                ),
            ));
        }
        if cfg.rotate_bytes == 0 {
            return Err(Error::config(where_, "WARC rotation size must be positive"));
        }
        storage::create_dir_all(&cfg.dir)?;
        let zstd = match cfg.compression {
            Compression::Zstd => {
                // The dictionary is loaded into the context once; each frame reuses it.
                let dict = cfg.dictionary.as_ref().map_or(&[][..], |d| d.bytes());
                let mut c = zstd::bulk::Compressor::with_dictionary(cfg.level.unwrap_or(3), dict)
                    .map_err(|e| {
                    Error::config(where_, format!("zstd level or dictionary: {e}"))
                })?;
                for p in [
                    zstd::zstd_safe::CParameter::ChecksumFlag(true),
                    zstd::zstd_safe::CParameter::ContentSizeFlag(true),
                ] {
                    c.set_parameter(p).ctx("configure zstd for", &cfg.dir)?;
                }
                Some(c)
            }
            _ => None,
        };
        let gzip = match cfg.compression {
            Compression::Gzip => {
                let l = cfg.level.unwrap_or(GZIP_LEVEL);
                Some(GzipMembers::new(l).ok_or_else(|| {
                    Error::config(where_, format!("gzip level {l} is not in 0..=12"))
                })?)
            }
            _ => None,
        };
        let index = cfg
            .index
            .as_ref()
            .map(|i| CdxjSorter::new(i.budget, &i.tmp_dir));
        Ok(WarcWriter {
            index,
            ids: IdGen::new(cfg.ids),
            serial: cfg.first_serial,
            open: None,
            summary: WriterSummary::default(),
            zstd,
            gzip,
            packed: Vec::new(),
            head: Vec::new(),
            cfg,
        })
    }

    /// The directory files are published in.
    pub fn dir(&self) -> &Path {
        &self.cfg.dir
    }

    /// The file currently being written (published only when finished), if any.
    pub fn current_file(&self) -> Option<&str> {
        self.open.as_ref().map(|o| o.name.as_str())
    }

    /// Files published so far.
    pub fn published(&self) -> &[PathBuf] {
        &self.summary.files
    }

    /// Writes the request record (if any) and the response or revisit record of one fetch, in
    /// that order and in the same file, each pointing at the other with `WARC-Concurrent-To`.
    pub fn write_exchange(&mut self, ex: Exchange<'_>) -> Result<ExchangeLocations> {
        self.ensure_open(ex.date)?;
        let req_id = ex.request.map(|_| self.ids.next_id());
        let resp_id = self.ids.next_id();
        let ip = ex.ip.map(|ip| ("WARC-IP-Address", ip_text(ip)));
        let request = match ex.request {
            Some(block) => {
                let mut extra: Vec<_> = ip.clone().into_iter().collect();
                extra.push(("WARC-Concurrent-To", resp_id.clone()));
                Some(self.write(Rec {
                    kind: RecordType::Request,
                    id: req_id.clone().unwrap_or_default(),
                    date: ex.date,
                    target: Some(ex.target_uri),
                    extra,
                    content_type: "application/http;msgtype=request",
                    block: [block, &[]],
                    room: None,
                    head: None,
                    payload: Payload::Http,
                })?)
            }
            None => None,
        };
        let mut extra: Vec<_> = ip.into_iter().collect();
        if let Some(id) = req_id {
            extra.push(("WARC-Concurrent-To", id));
        }
        let (kind, payload) = match &ex.kind {
            ResponseKind::Response { truncated } => {
                if let Some(t) = truncated {
                    extra.push(("WARC-Truncated", t.as_str().to_owned()));
                }
                (RecordType::Response, Payload::Http)
            }
            ResponseKind::NotModified(r) | ResponseKind::IdenticalPayload(r) => {
                let identical = matches!(ex.kind, ResponseKind::IdenticalPayload(_));
                extra.push((
                    "WARC-Profile",
                    if identical {
                        PROFILE_IDENTICAL_PAYLOAD_DIGEST
                    } else {
                        PROFILE_SERVER_NOT_MODIFIED
                    }
                    .to_owned(),
                ));
                if identical {
                    extra.push(("WARC-Truncated", "length".to_owned()));
                }
                if let Some(u) = r.refers_to_uri {
                    extra.push(("WARC-Refers-To-Target-URI", u.to_owned()));
                }
                if let Some(d) = r.refers_to_date {
                    extra.push((
                        "WARC-Refers-To-Date",
                        warc_date(d, self.cfg.subsecond_dates),
                    ));
                }
                if let Some(id) = r.refers_to {
                    extra.push(("WARC-Refers-To", id.to_owned()));
                }
                let payload = r
                    .payload_digest
                    .map_or(Payload::None, |d| Payload::Given(d.to_owned()));
                (RecordType::Revisit, payload)
            }
        };
        let response = self.write(Rec {
            kind,
            id: resp_id,
            date: ex.date,
            target: Some(ex.target_uri),
            extra,
            content_type: "application/http;msgtype=response",
            block: match ex.kind {
                ResponseKind::IdenticalPayload(_) => [ex.response, &[]],
                _ => [ex.response, ex.response_rest],
            },
            room: ex
                .response_room
                .filter(|_| !matches!(ex.kind, ResponseKind::IdenticalPayload(_))),
            head: ex.response_head,
            payload,
        })?;
        self.maybe_rotate()?;
        Ok(ExchangeLocations { request, response })
    }

    /// Writes a `metadata` record about `target_uri` (`application/warc-fields`: one
    /// `name: value` line per field), pointing at `concurrent_to` (usually the response's ID).
    pub fn write_metadata(
        &mut self,
        target_uri: &str,
        date: SystemTime,
        concurrent_to: Option<&str>,
        fields: &[(&str, &str)],
    ) -> Result<RecordLocation> {
        self.ensure_open(date)?;
        let block = warc_fields(fields.iter().map(|(n, v)| (*n, *v)));
        let id = self.ids.next_id();
        let loc = self.write(Rec {
            kind: RecordType::Metadata,
            id,
            date,
            target: Some(target_uri),
            extra: concurrent_to
                .map(|c| ("WARC-Concurrent-To", c.to_owned()))
                .into_iter()
                .collect(),
            content_type: "application/warc-fields",
            block: [&block, &[]],
            room: None,
            head: None,
            payload: Payload::Block,
        })?;
        self.maybe_rotate()?;
        Ok(loc)
    }

    /// Writes a `conversion` record: `text` (UTF-8, `text/plain`), derived from the record
    /// `refers_to` (`WARC-Refers-To`) of `target_uri` captured at `date`, as Common Crawl's WET
    /// files hold the visible text of each page.
    pub fn write_conversion(
        &mut self,
        target_uri: &str,
        date: SystemTime,
        refers_to: Option<&str>,
        text: &str,
    ) -> Result<RecordLocation> {
        self.ensure_open(date)?;
        let id = self.ids.next_id();
        let loc = self.write(Rec {
            kind: RecordType::Conversion,
            id,
            date,
            target: Some(target_uri),
            extra: refers_to
                .map(|r| ("WARC-Refers-To", r.to_owned()))
                .into_iter()
                .collect(),
            content_type: "text/plain",
            block: [text.as_bytes(), &[]],
            room: None,
            head: None,
            payload: Payload::None,
        })?;
        self.maybe_rotate()?;
        Ok(loc)
    }

    /// The CDXJ lines of the records written so far, to be finished into an index (`None` if the
    /// writer does not index, or they were taken).
    pub fn take_index(&mut self) -> Option<CdxjSorter> {
        self.index.take()
    }

    /// Publishes the file being written (if any) and returns what was written.
    pub fn finish(mut self) -> Result<WriterSummary> {
        self.close()?;
        Ok(std::mem::take(&mut self.summary))
    }

    /// Publishes the file being written as it is, if it ends with a whole record (else it is
    /// removed, as on drop): what a fetch stopped by SIGINT or SIGTERM leaves, so that its next
    /// run reads when this one last asked each host from the file, as it does from the files a
    /// killed run published, instead of finding nothing.
    pub fn publish_unfinished(mut self) -> Result<()> {
        match &self.open {
            Some(o) if o.file.written() == o.whole => self.close(),
            _ => Ok(()),
        }
    }

    fn ensure_open(&mut self, date: SystemTime) -> Result<()> {
        if self.open.is_some() {
            return Ok(());
        }
        let mut name = file_name(&self.cfg.prefix, self.serial, self.cfg.compression);
        if self.cfg.wet {
            name = name.replacen(".warc", ".warc.wet", 1);
        }
        // Written once, read again only by a later stage from disk: kept out of the page cache.
        let mut file = AtomicFile::create(&self.cfg.dir.join(&name))?
            .drop_behind()
            .summed();
        self.serial += 1;
        // The warc-zstd dictionary frame comes first; the records' offsets count it.
        if let (Compression::Zstd, Some(d)) = (self.cfg.compression, &self.cfg.dictionary) {
            file.write_all_bytes(d.frame())?;
            self.summary.bytes += d.frame().len() as u64;
        }
        let warcinfo_id = self.ids.next_id();
        let whole = file.written();
        let index_name = match &self.cfg.index {
            Some(ix) => [ix.filename_prefix.as_str(), &name].concat(),
            None => String::new(),
        };
        self.open = Some(OpenFile {
            file,
            name: name.clone(),
            index_name,
            warcinfo_id: warcinfo_id.clone(),
            whole,
        });
        let version = concat!("dragnet/", env!("CARGO_PKG_VERSION"));
        let mut fields = vec![
            ("software", version),
            ("format", "WARC File Format 1.1"),
            (
                "conformsTo",
                "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            ),
        ];
        fields.extend(
            self.cfg
                .warcinfo
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str())),
        );
        let block = warc_fields(fields.into_iter());
        self.write(Rec {
            kind: RecordType::Warcinfo,
            id: warcinfo_id,
            date,
            target: None,
            extra: vec![("WARC-Filename", name)],
            content_type: "application/warc-fields",
            block: [&block, &[]],
            room: None,
            head: None,
            payload: Payload::None,
        })?;
        Ok(())
    }

    fn maybe_rotate(&mut self) -> Result<()> {
        match &self.open {
            Some(o) if o.file.written() >= self.cfg.rotate_bytes => self.close(),
            _ => Ok(()),
        }
    }

    fn close(&mut self) -> Result<()> {
        if let Some(o) = self.open.take() {
            let path = o.file.path().to_path_buf();
            let sum = o.file.commit_summed()?;
            self.summary.files.push(path);
            self.summary.sums.push(sum);
        }
        Ok(())
    }

    fn write(&mut self, mut rec: Rec<'_>) -> Result<RecordLocation> {
        let Some(open) = self.open.as_mut() else {
            return Err(Error::Internal("WARC writer has no open file".into()));
        };
        // The header is written straight into a buffer the writer keeps: a record's dozen
        // fields cost no string each (two records per fetched page).
        let mut head = std::mem::take(&mut self.head);
        head.clear();
        head.extend_from_slice(WARC_VERSION.as_bytes());
        head.extend_from_slice(b"\r\n");
        let date = warc_date(rec.date, self.cfg.subsecond_dates);
        put_field(&mut head, "WARC-Type", rec.kind.as_str());
        put_field(&mut head, "WARC-Record-ID", &rec.id);
        put_field(&mut head, "WARC-Date", &date);
        if let Some(t) = rec.target {
            put_field(&mut head, "WARC-Target-URI", t);
        }
        let block_len: usize = rec.pieces().iter().map(|p| p.len()).sum();
        for (n, v) in &rec.extra {
            put_field(&mut head, n, v);
        }
        if rec.kind != RecordType::Warcinfo {
            put_field(&mut head, "WARC-Warcinfo-ID", &open.warcinfo_id);
        }
        let (block_digest, computed) =
            digest::block_and_payload(&rec.pieces(), matches!(rec.payload, Payload::Http));
        let payload_digest = match std::mem::replace(&mut rec.payload, Payload::None) {
            Payload::None => None,
            Payload::Http | Payload::Block => computed,
            Payload::Given(d) => Some(d),
        };
        if let Some(d) = &payload_digest {
            put_field(&mut head, "WARC-Payload-Digest", d);
        }
        put_field(&mut head, "WARC-Block-Digest", &block_digest);
        put_field(&mut head, "Content-Type", rec.content_type);
        // A number: nothing to clean, and written in place.
        head.extend_from_slice(b"Content-Length: ");
        head.extend_from_slice(itoa::Buffer::new().format(block_len).as_bytes());
        head.extend_from_slice(b"\r\n\r\n");
        let offset = open.file.written();
        let packers = (self.gzip.as_mut(), self.zstd.as_mut(), &mut self.packed);
        packing::put(
            &mut open.file,
            self.cfg.compression,
            packers,
            &head,
            &mut rec,
        )?;
        self.head = head;
        let length = open.file.written() - offset;
        open.whole = open.file.written();
        if let (Some(sorter), Some(_)) = (self.index.as_mut(), self.cfg.index.as_ref()) {
            if cdxj::is_indexed(&rec.kind) {
                let parsed;
                let head = match rec.head {
                    Some(head) => Some(head),
                    None if rec.kind != RecordType::Resource => {
                        let [a, b, c] = rec.pieces();
                        let mut block = std::io::Read::chain(std::io::Read::chain(a, b), c);
                        parsed = super::http::read_head(&mut block, super::http::DEFAULT_MAX_HEAD);
                        parsed.as_ref().ok()
                    }
                    None => None,
                };
                // The values as the header holds them, read as a reader of the file would.
                let url = rec.target.map(clean_str);
                let content_type = clean_str(rec.content_type);
                let digest = payload_digest.as_deref().map(clean_str);
                let fields = cdxj::LineFields {
                    kind: rec.kind.clone(),
                    url: url.as_deref().map(super::unbracket),
                    date: Some(&date),
                    content_type: Some(&content_type),
                    payload_digest: digest.as_deref(),
                };
                if let Some(line) =
                    cdxj::fields_line(&fields, head, offset, length, &open.index_name)
                {
                    sorter.push(line)?;
                }
            }
        }
        self.summary.records += 1;
        self.summary.bytes += length;
        Ok(RecordLocation {
            file: open.name.clone(),
            offset,
            length,
            record_id: rec.id,
            payload_digest,
        })
    }
}
