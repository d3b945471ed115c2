//! `.done` markers: the commit record of one stage for one partition.
//!
//! A stage publishes its outputs first (each atomically, see [`crate::storage`]) and its marker
//! last; the marker's presence is what makes the stage "done", so a re-run skips it, and its
//! absence means "redo from the inputs". The marker records what the stage read and wrote (with
//! checksums, so `status` and operators can tell which inputs produced which outputs), its
//! counts and its timings.
//!
//! Like every file dragnet writes, a marker carries a magic, a version and a checksum: the xxh3-64
//! of its compact JSON serialization with `checksum` empty. [`DoneMarker::read`] refuses a marker
//! whose checksum does not match.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use super::layout::{CrawlDir, Stage};
use crate::error::{Error, IoContext, Result};
use crate::run::RunReader;
use crate::storage::Sum;

const MAGIC: &str = "dragnet-done";
const VERSION: u32 = 1;

/// A file a stage read or wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// Path relative to the crawl root (absolute if outside it).
    pub path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// xxh3-64 in hex: the trailer checksum for run files, the whole content otherwise.
    pub xxh3: String,
    /// Records, for run files.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub records: Option<u64>,
}

impl FileDigest {
    /// Digest of a run file, from its trailer (cheap: the trailer already holds the checksum).
    pub fn of_run(dir: &CrawlDir, path: &Path) -> Result<FileDigest> {
        let r = RunReader::open(path)?;
        let bytes = std::fs::metadata(path).ctx("stat", path)?.len();
        Ok(FileDigest {
            path: dir.relative(path),
            bytes,
            xxh3: format!("{:016x}", r.checksum()),
            records: Some(r.len()),
        })
    }

    /// Digest of any file, by reading it whole.
    pub fn of_file(dir: &CrawlDir, path: &Path) -> Result<FileDigest> {
        let (xxh3, bytes) = crate::util::file_digest(path)?;
        Ok(FileDigest::of_sum(dir, path, Sum { xxh3, bytes }))
    }

    /// Digest of a file from the sum its writer took as it wrote it
    /// ([`crate::storage::AtomicFile::commit_summed`]): the same as [`FileDigest::of_file`]
    /// without reading the file again.
    pub fn of_sum(dir: &CrawlDir, path: &Path, sum: Sum) -> FileDigest {
        FileDigest {
            path: dir.relative(path),
            bytes: sum.bytes,
            xxh3: format!("{:016x}", sum.xxh3),
            records: None,
        }
    }
}

/// The contents of a `.done` marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoneMarker {
    /// Always `dragnet-done`.
    pub magic: String,
    /// Marker format version.
    pub version: u32,
    /// Stage name.
    pub stage: Stage,
    /// Cycle number.
    pub cycle: u32,
    /// Partition number.
    pub partition: u32,
    /// Files read.
    pub inputs: Vec<FileDigest>,
    /// Files written.
    pub outputs: Vec<FileDigest>,
    /// Stage counters (records read, URLs accepted, cache hits, ...).
    pub counts: BTreeMap<String, u64>,
    /// Start, RFC 3339 UTC.
    pub started: String,
    /// End, RFC 3339 UTC.
    pub finished: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Host that ran the stage.
    pub host: String,
    /// Process id that ran the stage.
    pub pid: u32,
    /// dragnet version that ran the stage.
    pub dragnet: String,
    /// xxh3-64 (hex) of the compact JSON of this marker with an empty checksum.
    #[serde(default)]
    pub checksum: String,
}

impl<'de> Deserialize<'de> for Stage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Stage, D::Error> {
        let s = String::deserialize(d)?;
        [
            Stage::Init,
            Stage::Fetch,
            Stage::Parse,
            Stage::Split,
            Stage::Merge,
            Stage::Prioritize,
        ]
        .into_iter()
        .find(|st| st.name() == s)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown stage '{s}'")))
    }
}

impl DoneMarker {
    /// A marker for `stage` of `cycle` and `partition`, started at `started` (Unix seconds).
    pub fn new(
        stage: Stage,
        cycle: u32,
        partition: u32,
        started: std::time::SystemTime,
    ) -> DoneMarker {
        let secs = started
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        DoneMarker {
            magic: MAGIC.into(),
            version: VERSION,
            stage,
            cycle,
            partition,
            inputs: Vec::new(),
            outputs: Vec::new(),
            counts: BTreeMap::new(),
            started: crate::util::rfc3339(secs),
            finished: String::new(),
            seconds: started.elapsed().map_or(0.0, |d| d.as_secs_f64()),
            host: crate::util::hostname(),
            pid: std::process::id(),
            dragnet: env!("CARGO_PKG_VERSION").into(),
            checksum: String::new(),
        }
    }

    fn body_checksum(&self) -> String {
        let mut m = self.clone();
        m.checksum.clear();
        format!(
            "{:016x}",
            xxh3_64(
                serde_json::to_string(&m)
                    .expect("marker serializes")
                    .as_bytes()
            )
        )
    }

    /// Stamps the end time and checksum and publishes the marker atomically at `path`.
    pub fn commit(mut self, path: &Path, started: std::time::SystemTime) -> Result<DoneMarker> {
        // The commit of a stage: never once SIGINT or SIGTERM asked the process to stop
        // (`crate::interrupt`); the next run redoes the stage.
        crate::interrupt::check()?;
        self.finished = crate::util::rfc3339(crate::util::unix_now());
        self.seconds = started.elapsed().map_or(0.0, |d| d.as_secs_f64());
        self.checksum = self.body_checksum();
        let mut text = serde_json::to_string_pretty(&self).expect("marker serializes");
        text.push('\n');
        crate::storage::write_atomic(path, text.as_bytes())?;
        Ok(self)
    }

    /// Publishes the marker atomically at `path` as it is, times kept, with its checksum
    /// computed: how `dragnet repartition` carries the markers of earlier cycles over.
    pub fn publish(mut self, path: &Path) -> Result<DoneMarker> {
        self.checksum = self.body_checksum();
        let mut text = serde_json::to_string_pretty(&self).expect("marker serializes");
        text.push('\n');
        crate::storage::write_atomic(path, text.as_bytes())?;
        Ok(self)
    }

    /// Reads and checks a marker; `Ok(None)` if there is none.
    pub fn read(path: &Path) -> Result<Option<DoneMarker>> {
        read_marker(path)
    }
}

/// Implements [`Marker`] for a marker type with `magic`, `version` and `checksum` fields and a
/// `body_checksum` method, with the `MAGIC` and `VERSION` constants of the calling module.
macro_rules! impl_marker {
    ($t:ty, $kind:literal) => {
        impl $crate::crawl::done::Marker for $t {
            const KIND: &'static str = $kind;
            const MAGIC: &'static str = MAGIC;
            const VERSION: u32 = VERSION;
            fn magic(&self) -> &str {
                &self.magic
            }
            fn version(&self) -> u32 {
                self.version
            }
            fn checksum(&self) -> &str {
                &self.checksum
            }
            fn body_checksum(&self) -> String {
                <$t>::body_checksum(self)
            }
        }
    };
}
pub(crate) use impl_marker;

impl_marker!(DoneMarker, "done");

/// What the stage markers (`.done`, `.failed`) share: a magic string, a version and a checksum
/// over the rest, checked the same way when read.
pub(crate) trait Marker: serde::de::DeserializeOwned {
    /// `done` or `failed`, for messages.
    const KIND: &'static str;
    /// The magic string a marker of this kind carries.
    const MAGIC: &'static str;
    /// The version this build reads and writes.
    const VERSION: u32;
    /// The magic it carries.
    fn magic(&self) -> &str;
    /// The version it carries.
    fn version(&self) -> u32;
    /// The checksum it carries.
    fn checksum(&self) -> &str;
    /// The checksum its other fields give.
    fn body_checksum(&self) -> String;
}

/// Reads and checks a marker of kind `M`; `Ok(None)` if there is none.
pub(crate) fn read_marker<M: Marker>(path: &Path) -> Result<Option<M>> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    let kind = M::KIND;
    let m: M = serde_json::from_slice(&text).map_err(|e| {
        Error::corrupt(
            path,
            e.column() as u64,
            format!("not a valid .{kind} marker: {e}"),
        )
    })?;
    if m.magic() != M::MAGIC {
        return Err(Error::corrupt(
            path,
            0,
            format!("not a .{kind} marker (bad magic)"),
        ));
    }
    if m.version() != M::VERSION {
        return Err(Error::Version {
            path: path.to_path_buf(),
            found: m.version(),
            oldest: M::VERSION,
            newest: M::VERSION,
        });
    }
    if m.checksum() != m.body_checksum() {
        return Err(Error::corrupt(
            path,
            0,
            format!(".{kind} marker checksum mismatch"),
        ));
    }
    Ok(Some(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: serde_json's default float parser is not exact, so a marker whose `seconds`
    /// did not survive the text round trip failed its own checksum when read back (seen as a
    /// flaky "checksum mismatch" on re-running a finished fetch). `float_roundtrip` fixes it.
    #[test]
    fn regression_seconds_survive_the_json_round_trip() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("p.done");
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let secs = (x >> 11) as f64 / (1u64 << 53) as f64 * 1000.0;
            let mut m = DoneMarker::new(Stage::Fetch, 0, 0, std::time::SystemTime::now());
            m.seconds = secs;
            m.checksum = m.body_checksum();
            let mut text = serde_json::to_string_pretty(&m).unwrap();
            text.push('\n');
            std::fs::write(&path, text).unwrap();
            let back = DoneMarker::read(&path).unwrap().unwrap();
            assert_eq!(back.seconds.to_bits(), secs.to_bits(), "{secs}");
        }
    }

    #[test]
    fn commit_read_and_tamper() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("p0000.done");
        let start = std::time::SystemTime::now();
        let mut m = DoneMarker::new(Stage::Init, 0, 0, start);
        m.counts.insert("seeds".into(), 3);
        let m = m.commit(&p, start).unwrap();
        assert_eq!(DoneMarker::read(&p).unwrap(), Some(m));
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("\"seeds\": 3", "\"seeds\": 4");
        std::fs::write(&p, text).unwrap();
        let err = DoneMarker::read(&p).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        assert_eq!(DoneMarker::read(&t.path().join("none.done")).unwrap(), None);
    }
}
