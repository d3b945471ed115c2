//! How a partition writes its WARC files in a cycle: the configured compression, and for
//! `.warc.zst` with a dictionary, the dictionary trained from the partition's own records of the
//! cycle before (docs/formats.md, "WARC files").

use crate::config::FetchSection;
use crate::crawl::CrawlDir;
use crate::error::{Error, Result};
use crate::warc::{Codec, Compression};

/// How partition `p` writes its WARC files in `cycle` of `crawl`: the compression, and for
/// `.warc.zst` with `warc_dictionary` a dictionary trained from the partition's own records
/// of the cycle before (its WARC files there, read up to
/// [`crate::warc::dictionary::SAMPLE_BUDGET`]). Per partition and cycle: a partition holds
/// the same hosts every cycle, so its last records are the closest sample of what it will
/// fetch; no two fetches share a file to train or write, so partitions fetched at once (or
/// on other machines) need no coordination; and training is deterministic, so a fetch redone
/// after a kill writes the same dictionary. None when there is no cycle before or it left
/// too few records.
pub(crate) fn warc_codec(f: &FetchSection, crawl: &CrawlDir, cycle: u32, p: u32) -> Result<Codec> {
    // Parsed as crawl.toml was read; only a section that skipped `validate` names none.
    let compression = f.warc_compression.compression().ok_or_else(|| {
        Error::config(
            crawl.config_path(),
            format!(
                "fetch.warc_compression: {:?} is not zstd, gzip or none",
                f.warc_compression.as_str()
            ),
        )
    })?;
    let Some(before) = cycle.checked_sub(1) else {
        return Ok(compression.into());
    };
    if compression != Compression::Zstd || !f.warc_dictionary {
        return Ok(compression.into());
    }
    let dir = crawl.warc_dir(before);
    let mine = format!("{}-", CrawlDir::partition_name(p));
    let mut files: Vec<std::path::PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with(&mine)
                    && !name.contains(crate::storage::TEMP_MARK)
                    && Compression::from_name(&name).is_some()
            })
            .map(|e| e.path())
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let dictionary = crate::warc::train::from_warcs(&files)?.map(std::sync::Arc::new);
    Ok(Codec {
        compression,
        dictionary,
    })
}
