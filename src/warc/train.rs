//! Training a warc-zstd dictionary from WARC files (`[fetch] warc_dictionary`): apart from
//! [`super::dictionary`] because it reads records ([`super::reader`]), which read dictionary
//! frames ([`super::dictionary`]): one layer above both.

use std::io::Read;
use std::path::PathBuf;

use super::dictionary::{Dictionary, Samples, DICT_SIZE, SAMPLE_BUDGET, SAMPLE_PER_RECORD};
use super::reader::{ReaderOptions, WarcReader};
use crate::error::Result;

/// Trains a dictionary from the records of `files` (WARC files of any compression, read in
/// the order given, up to [`SAMPLE_BUDGET`]); `None` when they hold too few records. A file
/// that cannot be read to its end gives the records before the damage.
pub fn from_warcs(files: &[PathBuf]) -> Result<Option<Dictionary>> {
    let mut samples = Samples::new(SAMPLE_BUDGET);
    'files: for path in files {
        let Ok(mut rd) = WarcReader::open(path, ReaderOptions::default()) else {
            continue;
        };
        while let Ok(Some(mut rec)) = rd.next_record() {
            let mut sample = rec.header().to_bytes();
            let room = SAMPLE_PER_RECORD.saturating_sub(sample.len());
            if rec
                .by_ref()
                .take(room as u64)
                .read_to_end(&mut sample)
                .is_err()
            {
                break;
            }
            if !samples.add(&sample) {
                break 'files;
            }
        }
    }
    Ok(Dictionary::train(&samples, DICT_SIZE))
}
