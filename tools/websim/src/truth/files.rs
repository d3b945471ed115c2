//! The truth's files: one format per file, all sorted by URL in byte order, LF line ends, no
//! timestamps, so two runs for the same web and policy give byte-identical directories (what
//! lets a test or a benchmark diff a crawl against them with `comm` or `diff`).
//!
//! | file | format |
//! |---|---|
//! | `fetch.txt` | one fetched URL a line |
//! | `fetch.tsv` | header, then `url depth status outcome via location` (`-` when empty); with [`Policy::requisites`] a last column `requisite` (`1`: first found as a requisite of `via`, at its depth; else `0`) |
//! | `never.txt` | one never-fetched URL a line |
//! | `never.tsv` | header, then `url reason` |
//! | `delays.tsv` | header, then `host delay_ms`, sorted by host |
//! | `links.jsonl` | one [`PageLinks`](super::PageLinks) object a line (with [`Policy::requisites`] also one per stylesheet read, and requisites flagged `"requisite":true`) |
//! | `summary.json` | the web's size and seed, the policy, counts by outcome and reason (with [`Policy::requisites`] also `requisites_fetched`) |
//!
//! Without [`Policy::requisites`] nothing here mentions requisites: the files are those of a
//! websim that never had them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde::Serialize;

use super::{Policy, Truth};
use crate::model::Web;

/// Counts written to `summary.json`.
#[derive(Debug, Serialize)]
struct Summary<'a> {
    seed: u64,
    hosts: u32,
    pages_per_host: u32,
    port: u16,
    policy: &'a Policy,
    fetched: usize,
    fetched_by_outcome: BTreeMap<&'static str, usize>,
    never: usize,
    never_by_reason: BTreeMap<&'static str, usize>,
    hosts_visited: usize,
    hosts_at_budget: &'a [String],
    max_depth_reached: u32,
    html_pages: usize,
    links: usize,
    links_followed: usize,
    /// Fetches first found as requisites (archive mode only).
    #[serde(skip_serializing_if = "Option::is_none")]
    requisites_fetched: Option<usize>,
}

impl Truth {
    /// Writes `fetch.txt`, `fetch.tsv`, `never.txt`, `never.tsv`, `delays.tsv`, `links.jsonl`
    /// and `summary.json` into `dir` (created if missing); see the module doc.
    pub fn write_files(&self, web: &Web, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let write = |name: &str, f: &dyn Fn(&mut dyn Write) -> io::Result<()>| {
            let mut w = BufWriter::new(std::fs::File::create(dir.join(name))?);
            f(&mut w)?;
            w.flush()
        };
        write("fetch.txt", &|w| {
            self.fetched
                .iter()
                .try_for_each(|f| writeln!(w, "{}", f.url))
        })?;
        let requisites = self.policy.requisites;
        write("fetch.tsv", &|w| {
            write!(w, "url\tdepth\tstatus\toutcome\tvia\tlocation")?;
            writeln!(w, "{}", if requisites { "\trequisite" } else { "" })?;
            self.fetched.iter().try_for_each(|f| {
                write!(
                    w,
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    f.url,
                    f.depth,
                    f.status,
                    f.outcome.name(),
                    f.via.as_deref().unwrap_or("-"),
                    f.location.as_deref().unwrap_or("-")
                )?;
                match requisites {
                    true => writeln!(w, "\t{}", u8::from(f.requisite)),
                    false => writeln!(w),
                }
            })
        })?;
        write("never.txt", &|w| {
            self.never.iter().try_for_each(|(u, _)| writeln!(w, "{u}"))
        })?;
        write("never.tsv", &|w| {
            writeln!(w, "url\treason")?;
            self.never
                .iter()
                .try_for_each(|(u, r)| writeln!(w, "{u}\t{}", r.name()))
        })?;
        write("delays.tsv", &|w| {
            writeln!(w, "host\tdelay_ms")?;
            self.delays
                .iter()
                .try_for_each(|(h, d)| writeln!(w, "{h}\t{}", d.as_millis()))
        })?;
        write("links.jsonl", &|w| {
            let mut line = String::new();
            for p in &self.pages {
                line.clear();
                line.push_str(&serde_json::to_string(p).map_err(io::Error::other)?);
                let _ = writeln!(line);
                w.write_all(line.as_bytes())?;
            }
            Ok(())
        })?;
        let mut by_outcome = BTreeMap::new();
        for f in &self.fetched {
            *by_outcome.entry(f.outcome.name()).or_insert(0) += 1;
        }
        let mut by_reason = BTreeMap::new();
        for (_, r) in &self.never {
            *by_reason.entry(r.name()).or_insert(0) += 1;
        }
        let summary = Summary {
            seed: web.config.seed,
            hosts: web.config.hosts,
            pages_per_host: web.config.pages,
            port: web.config.port,
            policy: &self.policy,
            fetched: self.fetched.len(),
            fetched_by_outcome: by_outcome,
            never: self.never.len(),
            never_by_reason: by_reason,
            hosts_visited: self.delays.len(),
            hosts_at_budget: &self.hosts_at_budget,
            max_depth_reached: self.fetched.iter().map(|f| f.depth).max().unwrap_or(0),
            html_pages: self.pages.len(),
            links: self.pages.iter().map(|p| p.links.len()).sum(),
            links_followed: self
                .pages
                .iter()
                .flat_map(|p| &p.links)
                .filter(|l| l.followed)
                .count(),
            requisites_fetched: requisites
                .then(|| self.fetched.iter().filter(|f| f.requisite).count()),
        };
        write("summary.json", &|w| {
            let s = serde_json::to_string_pretty(&summary).map_err(io::Error::other)?;
            writeln!(w, "{s}")
        })
    }
}
