//! `dragnet warc convert`: WARC files from one record compression to another (`.warc.gz` <->
//! `.warc.zst`, with or without a warc-zstd dictionary, and `.warc` to either), streaming, in
//! bounded memory, every record byte for byte the same once decompressed.
//!
//! How one file is converted ([`convert_stream`], `stream.rs`): a [`WarcReader`] reads the
//! input record by record with digest verification on (a `WARC-Block-Digest` or
//! `WARC-Payload-Digest` that does not match stops the conversion, naming the file and the
//! record's offset), and tells where each record's gzip member or zstd frame lies (offset,
//! length). That member is then read again from a second handle, decompressed on its own (the
//! file's dictionary, if any) and streamed into one new member or frame of the output: the bytes
//! inside are exactly the record's, whatever its header spelling, and nothing is held but 64 KiB
//! buffers (a record of any size streams through). A zstd frame is written with
//! `Frame_Content_Size` (from the input frame's header, or a gzip member's ISIZE, or the plain
//! record's length) and a checksum, as the fetch's writer writes them; a gzip member with mtime
//! 0 and OS 255, level 6; with a dictionary, the file starts with the warc-zstd dictionary frame
//! (magic `0x184D2A5D`) and every frame uses it.
//!
//! [`WarcReader`]: crate::warc::WarcReader
//!
//! Two uses:
//!
//! - [`convert_files`]: anyone's files into an output directory that passed
//!   [`crate::storage::out`]'s rules, through a staging directory (nothing appears in it unless
//!   every file converted; the inputs are only read).
//! - [`convert_crawl`] (`crawl.rs`): a crawl's own WARC files in place, under the crawl lock,
//!   one (cycle, partition) at a time: the new WARC files, the fetch-results run (file names,
//!   offsets and lengths of its records), the partition's CDXJ index, its fetch marker (outputs
//!   and their checksums, `warc_bytes`) and the parse and merge markers that list the
//!   fetch-results run as an input are written beside the originals under staged names
//!   (`.NAME.convert`; those rewrites are `rewrite.rs`); a journal (`cycles/C/fetch/pNNNN.convert`,
//!   `journal.rs`) lists them, and once it is published the staged files are renamed over their
//!   final names. The cycle indexes and `indexes/index.cdxj` are then merged again, and only
//!   after that are the old WARC files removed and the journals with them. A kill before a
//!   journal leaves the originals as they were (the staged files are removed by the next run); a
//!   kill after it is finished by the next run (docs/formats.md, "Converting WARC files").

mod crawl;
mod journal;
mod rewrite;
mod stream;

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::error::{Error, IoContext, Result};
use crate::storage::AtomicFile;
use crate::warc::Compression;

pub use crate::warc::Dictionary;
pub use crawl::convert_crawl;
pub use stream::{convert_stream, Moved};

/// What to convert to.
#[derive(Clone)]
pub struct Options {
    /// The output compression (gzip or zstd; `None` writes plain `.warc`).
    pub to: Compression,
    /// Compression level; `None` for the fetch writer's (gzip 6, zstd 3).
    pub level: Option<i32>,
    /// With `to` zstd: the dictionary frame at the start of each file, used by every frame
    /// ([`Dictionary::load`] reads the file `--dictionary` names).
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
        z.dictionary = Some(
            Dictionary::from_bytes(
                vec![0x37, 0xa4, 0x30, 0xec, 1, 0, 0, 0],
                std::path::Path::new("d"),
            )
            .unwrap(),
        );
        assert!(!z.keeps(Compression::Zstd, false));
        assert!(z.keeps(Compression::Zstd, true));
        assert_eq!(z.dictionary.as_ref().unwrap().id(), 1);
    }
}
