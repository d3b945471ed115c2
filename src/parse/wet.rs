//! WET files (`[parse] text = true`, `dragnet reparse --text`): the visible text of every HTML
//! page ([`super::text::visible_text`]) as a WARC `conversion` record, in the layout of Common
//! Crawl's WET files: a `warcinfo` record, then per page `WARC-Target-URI` (the page),
//! `WARC-Date` (its capture's), `WARC-Refers-To` (the `response` record it was read from),
//! `Content-Type: text/plain` and the text in UTF-8 as the block. A crawl's are
//! `cycles/CCCCCC/warc/pNNNN-SSSSSS.warc.wet.zst`, beside the partition's WARC files, written by
//! the parse (the fetch's inline parse, or `dragnet parse`) and listed in its `.done` marker.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::config::Config;
use crate::error::Result;
use crate::warc::writer::{WarcWriter, WriterConfig};
use crate::warc::Compression;

/// The most characters of text kept per page (a longer page's text is cut there).
pub const MAX_CHARS: usize = 1 << 20;

/// A WET file being written. The text extraction and the writing (SHA-1 block digests, zstd)
/// run on a thread of their own, fed through a bounded queue, so on a machine with a core to
/// spare they add little to the parse's time (docs/BENCHMARKS.md).
pub(crate) struct Wet {
    tx: Option<std::sync::mpsc::SyncSender<Job>>,
    handle: Option<std::thread::JoinHandle<Result<Vec<PathBuf>>>>,
}

/// One page for the writer thread.
struct Job {
    url: String,
    date_us: u64,
    refers_to: String,
    body: Vec<u8>,
    content_type: Option<String>,
}

/// Pages queued for the writer thread at most (each holds its body).
const QUEUE: usize = 32;

impl Wet {
    /// WET files `<prefix>-SSSSSS.warc.wet.zst` in `dir`: zstd at level 1 whatever the WARC
    /// files use (text compresses well at any level, and gzip at its usual level 6 cost five
    /// times the parse itself on a 200 x 1,000 web: docs/BENCHMARKS.md).
    pub(crate) fn new(cfg: &Config, dir: &Path, prefix: &str, about: String) -> Result<Wet> {
        let mut wcfg = WriterConfig::new(dir, prefix, Compression::Zstd);
        wcfg.wet = true;
        wcfg.rotate_bytes = cfg.fetch.warc_rotate.0;
        wcfg.level = Some(1);
        wcfg.warcinfo = vec![
            ("isPartOf".into(), cfg.crawl.name.clone()),
            ("description".into(), about),
        ];
        let mut w = WarcWriter::new(wcfg)?;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
        let handle = std::thread::Builder::new()
            .name("wet".into())
            .spawn(move || -> Result<Vec<PathBuf>> {
                for job in rx {
                    let text = super::text::visible_text(
                        &job.body,
                        job.content_type.as_deref(),
                        MAX_CHARS,
                    );
                    let date = if job.date_us == 0 {
                        SystemTime::now()
                    } else {
                        UNIX_EPOCH + Duration::from_micros(job.date_us)
                    };
                    let refers = (!job.refers_to.is_empty()).then_some(job.refers_to.as_str());
                    w.write_conversion(&job.url, date, refers, &text)?;
                }
                Ok(w.finish()?.files)
            })
            .map_err(|e| {
                crate::error::Error::Internal(format!("cannot start the WET writer: {e}"))
            })?;
        Ok(Wet {
            tx: Some(tx),
            handle: Some(handle),
        })
    }

    /// Queues the text of the HTML `body` (as received, decoded of its content coding) of
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
        let job = Job {
            url: url.to_owned(),
            date_us,
            refers_to: refers_to.to_owned(),
            body: body.to_vec(),
            content_type: content_type.map(str::to_owned),
        };
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(job).is_ok());
        if !sent {
            // The writer stopped: its error says why.
            self.tx = None;
            return match self.join() {
                Err(e) => Err(e),
                Ok(_) => Err(crate::error::Error::Internal(
                    "the WET writer stopped".into(),
                )),
            };
        }
        Ok(())
    }

    fn join(&mut self) -> Result<Vec<PathBuf>> {
        match self.handle.take() {
            Some(h) => h.join().unwrap_or_else(|_| {
                Err(crate::error::Error::Internal(
                    "the WET writer panicked".into(),
                ))
            }),
            None => Ok(Vec::new()),
        }
    }

    /// Writes what is queued and publishes the last file; returns every file written.
    pub(crate) fn finish(mut self) -> Result<Vec<PathBuf>> {
        self.tx = None;
        self.join()
    }
}

impl Drop for Wet {
    fn drop(&mut self) {
        // An abandoned writer (the parse failed): stop its thread; its temporary file is swept
        // by the next attempt.
        self.tx = None;
        let _ = self.join();
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
