//! `dragnet check ...`: the operator's inspection commands (part of the binary, not the library:
//! argument handling and printing over library calls).

use std::io::Write;
use std::path::PathBuf;

use dragnet::config::Config;
use dragnet::error::{EXIT_IO, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE};
use dragnet::keys::{self, Canonicalizer};
use dragnet::robots::Robots;
use dragnet::util::lines::LineReader;
use dragnet::{run, warc, Error};

use super::args::Check;
use super::report;

/// `dragnet check ...`: the one command of `cmd`.
pub(crate) fn run(cmd: Check) -> Result<i32, Error> {
    match cmd {
        Check::Url {
            partitions,
            config,
            urls,
        } => check_url(partitions, config, &urls),
        Check::Run { json, files } => check_run(json, &files),
        Check::Robots => check_robots(),
        Check::Links { url, file } => check_links(&url, &file),
        Check::Warc { json, files } => check_warc(json, &files),
        Check::Crawl { json, dir } => check_crawl(json, &dir),
    }
}

fn check_crawl(json: bool, dir: &std::path::Path) -> Result<i32, Error> {
    let crawl = dragnet::crawl::CrawlDir::new(dir);
    if !crawl.config_path().is_file() {
        return Err(crawl.not_a_crawl());
    }
    // The configuration is checked like any file; a damaged one only loses the cache capacity.
    let cfg = Config::load(&crawl.config_path()).ok();
    let r = dragnet::ops::check::check_crawl(&crawl, cfg.as_ref())?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&r).expect("check report serializes")
        );
    } else {
        let total: u64 = r.files.values().sum();
        let kinds: Vec<String> = r.files.iter().map(|(k, n)| format!("{k} {n}")).collect();
        outln!(
            "{}: {total} files checked ({})",
            dir.display(),
            kinds.join(", ")
        );
        for (path, why) in &r.damaged {
            outln!("DAMAGED {}: {why}", path.display());
        }
        for path in &r.temporaries {
            outln!(
                "temporary {} (left by a writer that died; the next stage there sweeps it)",
                path.display()
            );
        }
        for path in &r.unknown {
            outln!(
                "unknown {} (not a file dragnet writes; not checked)",
                path.display()
            );
        }
        if r.ok() {
            outln!("no damaged file");
        } else {
            outln!(
                "{} damaged",
                dragnet::util::plural(r.damaged.len() as u64, "file", "files")
            );
        }
    }
    Ok(if r.ok() { EXIT_OK } else { EXIT_IO })
}

fn check_links(url: &str, file: &std::path::Path) -> Result<i32, Error> {
    use std::io::Read;
    let doc_url = url::Url::parse(url)
        .map_err(|e| Error::Usage(format!("--url {url:?} does not parse: {e}")))?;
    let raw = std::fs::read(file).map_err(|e| Error::io("read", file, e))?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|e| Error::io("gunzip", file, e))?;
        out
    } else {
        raw
    };
    let page = dragnet::parse::html::extract_links(&bytes, &doc_url, None);
    let links: Vec<serde_json::Value> = page
        .links
        .iter()
        .map(|l| serde_json::json!({"url": l.url, "tag": l.tag, "nofollow": l.nofollow, "rel": l.rel}))
        .collect();
    let obj = serde_json::json!({
        "url": url,
        "encoding": page.charset.to_ascii_lowercase(),
        "base": page.base,
        "canonical": page.canonical,
        "meta_robots": page.meta_robots,
        "links": links,
        "skipped": {"invalid": page.skipped_invalid, "other_scheme": page.skipped_schemes},
    });
    outln!("{obj}");
    Ok(EXIT_OK)
}

fn check_url(
    partitions: Option<u32>,
    config: Option<PathBuf>,
    urls: &[String],
) -> Result<i32, Error> {
    let mut cfg = match &config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    if let Some(m) = partitions {
        cfg.crawl.partitions = m;
        cfg.validate(std::path::Path::new("--partitions"))?;
    }
    let canon = Canonicalizer::new(&cfg.canon);
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    for u in urls {
        let line = match canon.canonicalize(u, None) {
            Ok(k) => serde_json::json!({
                "input": u,
                "url": k.url,
                "surt": keys::surt(&k.url),
                "fingerprint": format!("{:016x}", k.fingerprint),
                "host": k.host,
                "host_key": format!("{:016x}", k.host_key),
                "partition": keys::partition_of(k.host_key, cfg.crawl.partitions),
                "partitions": cfg.crawl.partitions,
            }),
            Err(e) => {
                failed = true;
                serde_json::json!({ "input": u, "error": e.to_string() })
            }
        };
        if writeln!(out, "{line}").is_err() {
            return Ok(EXIT_OK); // broken pipe: the reader has what it wanted
        }
    }
    Ok(if failed { EXIT_PARTIAL } else { EXIT_OK })
}

/// The longest line `check robots` reads: room for a robots.txt's 500 KiB that count (RFC 9309
/// §2.5) written as a JSON string, escapes and all. A longer line is a bad line, skipped
/// without being held in memory; a larger file is given as `robots_file`.
const MAX_ROBOTS_JSON_LINE: usize = 4 << 20;

fn check_robots() -> Result<i32, Error> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // Lines usually come grouped by file: keep the last file parsed.
    let mut last: Option<(String, Robots)> = None;
    let (mut lines, mut bad) = (0usize, 0usize);
    let mut rd = LineReader::new(std::io::stdin().lock(), MAX_ROBOTS_JSON_LINE);
    while let Some(l) = rd
        .next_line()
        .map_err(|e| Error::io("read", "<stdin>", e))?
    {
        let (i, line) = (l.number as usize - 1, l.text);
        if l.endless {
            return Err(Error::Usage(format!(
                "check robots: standard input {}; give JSON lines",
                l.too_long_message(MAX_ROBOTS_JSON_LINE)
            )));
        }
        if !l.too_long() && line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        lines += 1;
        let result = if l.too_long() {
            Err((
                Default::default(),
                format!(
                    "{} bytes long, over the limit of {MAX_ROBOTS_JSON_LINE} bytes a line; give \
                     a larger robots.txt as \"robots_file\"",
                    l.len
                ),
            ))
        } else {
            match serde_json::from_slice::<serde_json::Value>(line) {
                Ok(serde_json::Value::Object(mut obj)) => match robots_verdict(&obj, &mut last) {
                    Ok(allowed) => {
                        obj.insert("allowed".into(), allowed.into());
                        Ok(obj)
                    }
                    Err(e) => Err((obj, e)),
                },
                Ok(_) => Err((Default::default(), "not a JSON object".to_owned())),
                Err(e) => Err((Default::default(), format!("not JSON: {e}"))),
            }
        };
        let obj = result.unwrap_or_else(|(mut obj, e)| {
            bad += 1;
            eprintln!("dragnet: check robots: line {}: {e}", i + 1);
            if obj.is_empty() {
                obj.insert("line".into(), (i + 1).into());
            }
            obj.insert("error".into(), e.into());
            obj
        });
        if writeln!(out, "{}", serde_json::Value::Object(obj)).is_err() {
            return Ok(EXIT_OK); // broken pipe: the reader has what it wanted
        }
    }
    if out.flush().is_err() {
        return Ok(EXIT_OK);
    }
    if bad > 0 {
        eprintln!("dragnet: check robots: {bad} of {lines} lines could not be checked");
        return Ok(EXIT_PARTIAL);
    }
    Ok(EXIT_OK)
}

/// The verdict for one `check robots` line, or what is wrong with it.
fn robots_verdict(
    obj: &serde_json::Map<String, serde_json::Value>,
    last: &mut Option<(String, Robots)>,
) -> Result<bool, String> {
    let field = |name: &str| match obj.get(name) {
        None => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(format!("\"{name}\" must be a string")),
    };
    let agent = field("agent")?.ok_or("missing \"agent\" (the crawler's user agent)")?;
    let url = field("url")?.ok_or("missing \"url\" (the URL or path to check)")?;
    match (field("robots")?, field("robots_file")?) {
        (Some(body), None) => Ok(Robots::parse(body.as_bytes()).allowed(agent, url)),
        (None, Some(path)) => {
            if last.as_ref().is_none_or(|(p, _)| p != path) {
                // Only the first 500 KiB count (RFC 9309 §2.5), so only they are read: a path
                // to a huge file (or /dev/zero) costs no more than a real robots.txt.
                let mut body = Vec::new();
                std::fs::File::open(path)
                    .and_then(|f| {
                        use std::io::Read;
                        f.take(dragnet::robots::MAX_ROBOTS_BYTES as u64)
                            .read_to_end(&mut body)
                    })
                    .map_err(|e| format!("read {path}: {e}"))?;
                *last = Some((path.to_owned(), Robots::parse(&body)));
            }
            let (_, robots) = last.as_ref().expect("set above");
            Ok(robots.allowed(agent, url))
        }
        (Some(_), Some(_)) => Err("give either \"robots\" or \"robots_file\", not both".into()),
        (None, None) => {
            Err("missing \"robots\" (the robots.txt text) or \"robots_file\" (a path)".into())
        }
    }
}

fn check_run(json: bool, files: &[PathBuf]) -> Result<i32, Error> {
    let mut worst = EXIT_OK;
    for f in files {
        match run::verify(f) {
            Ok(info) => {
                if json {
                    outln!("{}", serde_json::to_string(&info).expect("info serializes"));
                } else {
                    let known = run::Schema::KNOWN.iter().any(|s| s.id == info.schema_id);
                    outln!(
                        "{}: ok\n  format v{}  schema {} '{}'{}  key {} bytes ({}){}{}\n  {} records in {} blocks, {} bytes \
                         ({:.2} bytes/record), payloads {} bytes\n  keys {} .. {}\n  xxh3 {}",
                        f.display(),
                        info.version,
                        info.schema_id,
                        info.schema,
                        if known { "" } else { " (unknown to this build)" },
                        info.key_len,
                        info.sort_key,
                        if info.payload { ", payloads" } else { "" },
                        if info.unique { ", unique keys" } else { "" },
                        info.records,
                        info.blocks,
                        info.bytes,
                        if info.records > 0 { info.bytes as f64 / info.records as f64 } else { 0.0 },
                        info.payload_bytes,
                        info.first_key.as_deref().unwrap_or("-"),
                        info.last_key.as_deref().unwrap_or("-"),
                        info.checksum
                    );
                }
            }
            Err(e) => {
                report(&e);
                worst = worst.max(match e.exit_code() {
                    EXIT_USAGE => EXIT_USAGE,
                    _ => EXIT_IO,
                });
            }
        }
    }
    Ok(worst)
}

fn check_warc(json: bool, files: &[PathBuf]) -> Result<i32, Error> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut worst = EXIT_OK;
    for f in files {
        let mut broken_pipe = false;
        if !json {
            let _ = writeln!(out, "{}:", f.display());
        }
        let mut each = |r: &warc::check::RecordReport| {
            let line = if json {
                let mut v = serde_json::to_value(r).expect("report serializes");
                v["file"] = f.display().to_string().into();
                v.to_string()
            } else {
                format!(
                    "  {:>10} {:>8}  {:<9} {:>3}  block={:<9} payload={:<9} {}{}",
                    r.offset,
                    r.length,
                    r.warc_type,
                    r.status.map_or("-".to_owned(), |s| s.to_string()),
                    r.block_digest,
                    r.payload_digest,
                    r.uri.as_deref().unwrap_or("-"),
                    r.truncated
                        .as_deref()
                        .map_or(String::new(), |t| format!("  (truncated: {t})")),
                )
            };
            broken_pipe |= writeln!(out, "{line}").is_err();
            for m in &r.mismatches {
                eprintln!(
                    "dragnet: {}: record at offset {}: {m}",
                    f.display(),
                    r.offset
                );
            }
        };
        match warc::check::check_file(f, &mut each) {
            Ok(rep) => {
                if !json {
                    let _ = writeln!(
                        out,
                        "{}: {} ({}{}), {} records, {} verified, {} with bad digests",
                        f.display(),
                        if rep.bad_digests == 0 {
                            "ok"
                        } else {
                            "DIGEST MISMATCH"
                        },
                        rep.compression,
                        if rep.dictionary { ", dictionary" } else { "" },
                        rep.records,
                        rep.verified,
                        rep.bad_digests
                    );
                }
                if rep.bad_digests > 0 {
                    worst = EXIT_IO;
                }
            }
            Err(e) => {
                let _ = out.flush();
                report(&e);
                worst = worst.max(match e.exit_code() {
                    EXIT_USAGE => EXIT_USAGE,
                    _ => EXIT_IO,
                });
            }
        }
        if broken_pipe || out.flush().is_err() {
            return Ok(worst); // the reader has what it wanted
        }
    }
    Ok(worst)
}
