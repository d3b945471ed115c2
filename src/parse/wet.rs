//! WET files (`[parse] text = true`, `dragnet reparse --text`): the visible text of every HTML
//! page ([`super::text::visible_text`]) as a WARC `conversion` record, in the layout of Common
//! Crawl's WET files: a `warcinfo` record, then per page `WARC-Target-URI` (the page),
//! `WARC-Date` (its capture's), `WARC-Refers-To` (the `response` record it was read from),
//! `Content-Type: text/plain` and the text in UTF-8 as the block. A crawl's are
//! `cycles/CCCCCC/warc/pNNNN-SSSSSS.warc.wet.zst`, beside the partition's WARC files, written by
//! the parse (the fetch's inline parse, or `dragnet parse`) and listed in its `.done` marker.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::crawl::Config;
use crate::error::Result;
use crate::warc::writer::{WarcWriter, WriterConfig};
use crate::warc::Compression;

/// The most characters of text kept per page (a longer page's text is cut there).
pub const MAX_CHARS: usize = 1 << 20;

/// A WET file being written.
pub(crate) struct Wet {
    w: WarcWriter,
}

impl Wet {
    /// WET files `<prefix>-SSSSSS.warc.wet.*` in `dir`, compressed as the crawl's WARC files.
    pub(crate) fn new(cfg: &Config, dir: &Path, prefix: &str, about: String) -> Result<Wet> {
        let compression =
            Compression::parse(&cfg.fetch.warc_compression).unwrap_or(Compression::Zstd);
        let mut wcfg = WriterConfig::new(dir, prefix, compression);
        wcfg.wet = true;
        wcfg.rotate_bytes = cfg.fetch.warc_rotate.0;
        wcfg.level = cfg.fetch.warc_level();
        wcfg.warcinfo = vec![
            ("isPartOf".into(), cfg.crawl.name.clone()),
            ("description".into(), about),
        ];
        Ok(Wet {
            w: WarcWriter::new(wcfg)?,
        })
    }

    /// Writes the text of the HTML `body` (as received, decoded of its content coding) of
    /// `url`, captured at `date_us` (Unix microseconds; 0: unknown, now) in the record
    /// `refers_to`.
    pub(crate) fn page(
        &mut self,
        url: &str,
        date_us: u64,
        refers_to: &str,
        body: &[u8],
        content_type: Option<&str>,
    ) -> Result<()> {
        let text = super::text::visible_text(body, content_type, MAX_CHARS);
        let date = if date_us == 0 {
            SystemTime::now()
        } else {
            UNIX_EPOCH + Duration::from_micros(date_us)
        };
        let refers = (!refers_to.is_empty()).then_some(refers_to);
        self.w.write_conversion(url, date, refers, &text)?;
        Ok(())
    }

    /// Publishes the last file; returns every file written.
    pub(crate) fn finish(self) -> Result<Vec<PathBuf>> {
        Ok(self.w.finish()?.files)
    }
}

/// Removes the WET files of partition `prefix` in `dir` (an earlier attempt's).
pub(crate) fn remove_wet(dir: &Path, prefix: &str) -> Result<()> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mine = format!("{prefix}-");
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&mine) && name.contains(".warc.wet") {
            let path = e.path();
            std::fs::remove_file(&path)
                .map_err(|err| crate::error::Error::io("remove", &path, err))?;
        }
    }
    Ok(())
}
