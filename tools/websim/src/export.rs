//! The synthetic web as static files plus an nginx configuration, so peer crawlers (wget2,
//! Heritrix, ...) can be benchmarked on exactly the web dragnet crawls, served by a server
//! nobody can suspect of favouring websim's own client.
//!
//! Why nginx and static files: a peer benchmark should not depend on websim's server being fast
//! or correct, and nginx's `return`, `add_header`, `limit_rate` and `types` cover everything a
//! normal host does with one `server` block per host. Bodies are written by the same renderer
//! the server uses ([`Web::render`], [`Web::render_robots`], [`Web::sitemap`]), so a file's bytes
//! are what websim serves for that URL (without content coding).
//!
//! Layout of `DIR` after [`export`]:
//!
//! - `sites/<host>/<path>`: one file per page (`/` is `index.html`, a calendar month
//!   `/calendar/2026/11/` is `calendar/2026/11/index.html`), `robots.txt`, sitemaps, and the
//!   `/static/` assets of requisite hosts ([`crate::model::WebConfig::requisites_every`]; then
//!   `types` also maps `css`, `js` and `woff2`); file times are the pages' `Last-Modified`.
//! - `nginx.conf`: `worker_processes 2;`, `gzip off`, `access_log off`, one `server` block per
//!   host (`listen 127.0.1.x:PORT`, `server_name`, `root sites/<host>`), `location = /path`
//!   blocks for redirects (`return 301 URL`), error statuses (`return 410`), `X-Robots-Tag`
//!   headers and mislabeled binaries (`default_type text/html`), plus a default server per
//!   address answering 404 to unknown hosts. Run it with
//!   `nginx -p DIR -c nginx.conf` (paths in it are relative to the prefix; `logs/` and `tmp/`
//!   are created, so it runs without root on a port above 1023).
//! - `hosts`: the hosts in `/etc/hosts` format ([`hosts_file`]).
//! - `EXPORT.md`: how to run it, and what differs from websim's own server, host by host.
//! - `bomb.gz` and `conf/huge_headers.conf` when a host needs them.
//!
//! What cannot be static is *tamed*, and listed in `EXPORT.md`:
//!
//! | personality | exported |
//! |---|---|
//! | slow drip | as-is, approximately: `limit_rate` of 1/`drip_interval` bytes per second |
//! | huge headers | as-is: the same 1100 filler headers via an `include` |
//! | gzip bomb | as-is for bodies: every page is a symlink to one `bomb.gz`, sent with `Content-Encoding: gzip` and status 200 (redirects and errors too) |
//! | endless body, reset mid-body, wrong Content-Length | tamed: `return 444` (nginx closes the connection without answering); still a failed fetch |
//! | trap | tamed: calendar months within 24 of the entry month are files, beyond them 404; session-id pages (a query string per visit) are not exported, so they 404 |
//! | robots.txt that never answers | tamed: `return 444` (closed at once instead of held 20 s); still "unreachable, disallow all" |
//!
//! So [`crate::truth`] holds for the export except on the trap host (its session pages and far
//! calendar months are 404 instead of HTML). Also different, and harmless to a correct crawler:
//! no content coding (gzip off, so no `Vary`), nginx's own `ETag` and error bodies, and
//! robots.txt 404/503 answered with nginx's bodies.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::model::{CharsetDecl, Hostile, PageKind, PageRef, Web};
use crate::robots::RobotsServe;

/// Calendar months exported either side of the trap's entry month.
pub const CALENDAR_WINDOW: i64 = 24;
/// The month the trap's home page links to (see [`crate::model`]).
const CALENDAR_ENTRY: i64 = 10;

/// What [`export`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExportStats {
    /// Hosts (server blocks).
    pub hosts: usize,
    /// Regular files written under `sites/`.
    pub files: usize,
    /// Bytes of those files.
    pub bytes: u64,
    /// Symlinks to `bomb.gz`.
    pub symlinks: usize,
    /// Behaviours exported tamed (hostile personalities and silent robots.txt; see the module
    /// doc).
    pub tamed: usize,
}

/// `ADDRESS<TAB>NAME` lines, `/etc/hosts` format, after a comment saying how to use them.
pub fn hosts_file<'a>(entries: impl IntoIterator<Item = (Ipv4Addr, &'a str)>) -> String {
    let mut s = String::from(
        "# websim hosts (/etc/hosts format). Do not install as /etc/hosts: give it to the crawler\n\
         # (dragnet: crawl.toml [resolve] hosts_files), or bind-mount it in a private namespace.\n",
    );
    for (addr, name) in entries {
        let _ = writeln!(s, "{addr}\t{name}");
    }
    s
}

/// The file a page path is stored in, relative to its host's root.
pub fn file_of(path: &str) -> String {
    let p = path.trim_start_matches('/');
    if p.is_empty() || p.ends_with('/') {
        format!("{p}index.html")
    } else {
        p.to_string()
    }
}

/// How a host's pages are exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Files and locations as websim serves them.
    Normal,
    /// Every page path is a symlink to `bomb.gz`.
    Bomb,
    /// Every page answers 444.
    Close,
}

/// Writes `web` into `dir` (see the module doc). `dir` may exist; files are overwritten.
pub fn export(web: &Web, dir: &Path) -> io::Result<ExportStats> {
    let port = web.config.port;
    if port == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "export needs the web's real port (its URLs carry it), not 0",
        ));
    }
    for sub in ["logs", "tmp", "conf", "sites"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    let mut x = Exporter {
        web,
        dir,
        conf: conf_head(web),
        notes: String::new(),
        stats: ExportStats {
            hosts: web.hosts.len(),
            ..ExportStats::default()
        },
        need_bomb: false,
        need_headers: false,
    };
    for h in 0..web.hosts.len() as u32 {
        x.host(h)?;
    }
    x.finish()
}

/// The `http` block's settings and the default server of every address, up to the hosts'
/// `server` blocks.
fn conf_head(web: &Web) -> String {
    let c = &web.config;
    let port = c.port;
    let mut conf = String::new();
    // Asset types only when there are assets, so a web without them exports as it always did.
    let asset_types = if web.requisite_hosts().is_empty() {
        ""
    } else {
        " text/css css; text/javascript js; font/woff2 woff2;"
    };
    let _ = write!(
        conf,
        "# websim export: seed {}, {} hosts x {} pages, port {port}.\n\
         # Run: nginx -p DIR -c nginx.conf   (add -g 'daemon off;' to keep it in the foreground)\n\
         worker_processes 2;\npid logs/nginx.pid;\nerror_log logs/error.log warn;\n\
         events {{ worker_connections 1024; }}\nhttp {{\n\
         \x20   types {{ text/html html; text/plain txt; application/pdf pdf; image/png png; application/xml xml; application/gzip gz; application/octet-stream bin;{asset_types} }}\n\
         \x20   default_type application/octet-stream;\n    access_log off;\n    gzip off;\n\
         \x20   server_tokens off;\n    sendfile on;\n    index index.html;\n\
         \x20   keepalive_requests 100000;\n    server_names_hash_max_size 131072;\n\
         \x20   server_names_hash_bucket_size 128;\n\
         \x20   client_body_temp_path tmp/client_body;\n    proxy_temp_path tmp/proxy;\n\
         \x20   fastcgi_temp_path tmp/fastcgi;\n    uwsgi_temp_path tmp/uwsgi;\n    scgi_temp_path tmp/scgi;\n",
        c.seed, c.hosts, c.pages
    );
    let mut addrs: Vec<Ipv4Addr> = web.hosts.iter().map(|h| h.addr).collect();
    addrs.sort_unstable();
    addrs.dedup();
    for a in &addrs {
        let _ = writeln!(
            conf,
            "    server {{ listen {a}:{port} default_server; server_name _; return 404; }}"
        );
    }
    conf
}

/// What [`export`] builds up while it writes the hosts.
struct Exporter<'a> {
    web: &'a Web,
    dir: &'a Path,
    /// `nginx.conf` so far.
    conf: String,
    /// The rows of `EXPORT.md`'s table of hosts not exported as websim serves them.
    notes: String,
    stats: ExportStats,
    /// A host serves the gzip bomb (`bomb.gz`).
    need_bomb: bool,
    /// A host sends huge headers (`conf/huge_headers.conf`).
    need_headers: bool,
}

impl Exporter<'_> {
    /// Host `h`: its files and its `server` block.
    fn host(&mut self, h: u32) -> io::Result<()> {
        let (web, port) = (self.web, self.web.config.port);
        let spec = &web.hosts[h as usize];
        let root = self.dir.join("sites").join(&spec.name);
        std::fs::create_dir_all(&root)?;
        let (mode, extra, note) = self.mode(h);
        if let Some(n) = note {
            self.stats.tamed += usize::from(note_is_tamed(&n));
            let _ = writeln!(
                self.notes,
                "| {} | {:?} | {n} |",
                spec.name,
                spec.hostile.expect("hostile")
            );
        }
        let _ = write!(
            self.conf,
            "    server {{\n        listen {}:{port};\n        server_name {};\n        root sites/{};\n",
            spec.addr, spec.name, spec.name
        );
        if matches!(spec.charset_decl, CharsetDecl::Header | CharsetDecl::Both) {
            let _ = writeln!(self.conf, "        charset {};", spec.charset.label());
        }
        self.robots(h, &root)?;
        for p in web.sitemap_paths(h) {
            if let Some(r) = web.sitemap(h, p) {
                put(&root.join(file_of(p)), &r.body, None, &mut self.stats)?;
                let _ = writeln!(self.conf, "        location = {p} {{ }}");
            }
        }
        match mode {
            Mode::Close => self.conf.push_str("        location / { return 444; }\n"),
            Mode::Bomb => self.bomb_pages(h, &root, &extra)?,
            Mode::Normal => self.pages(h, &root, &extra)?,
        }
        self.conf.push_str("    }\n");
        Ok(())
    }

    /// How host `h`'s pages are exported, the directives every page location gets, and the
    /// `EXPORT.md` note of a hostile host.
    fn mode(&mut self, h: u32) -> (Mode, String, Option<String>) {
        let (web, c) = (self.web, &self.web.config);
        match web.hosts[h as usize].hostile {
            None => (Mode::Normal, String::new(), None),
            Some(Hostile::Trap) => (
                Mode::Normal,
                String::new(),
                Some(format!(
                    "tamed: calendar {} to {} only, session-id pages 404",
                    web.path(PageRef::Calendar {
                        host: h,
                        month: CALENDAR_ENTRY - CALENDAR_WINDOW
                    }),
                    web.path(PageRef::Calendar {
                        host: h,
                        month: CALENDAR_ENTRY + CALENDAR_WINDOW
                    }),
                )),
            ),
            Some(Hostile::SlowDrip) => {
                let rate = (1.0 / c.drip_interval.as_secs_f64().max(1e-9))
                    .round()
                    .max(1.0);
                (
                    Mode::Normal,
                    format!(" limit_rate {rate};"),
                    Some(format!("as-is (approximately): limit_rate {rate} bytes/s")),
                )
            }
            Some(Hostile::HugeHeaders) => {
                self.need_headers = true;
                (
                    Mode::Normal,
                    " include conf/huge_headers.conf;".to_string(),
                    Some("as-is: 1100 filler headers of 1000 bytes".into()),
                )
            }
            Some(Hostile::GzipBomb) => {
                self.need_bomb = true;
                (
                    Mode::Bomb,
                    " add_header Content-Encoding gzip;".to_string(),
                    Some("as-is for bodies: every page is bomb.gz with status 200".into()),
                )
            }
            Some(
                k @ (Hostile::EndlessBody | Hostile::ResetMidBody | Hostile::WrongContentLength),
            ) => (
                Mode::Close,
                String::new(),
                Some(format!(
                    "tamed: {k:?} pages answer 444 (connection closed, no response)"
                )),
            ),
        }
    }

    /// robots.txt, as served.
    fn robots(&mut self, h: u32, root: &Path) -> io::Result<()> {
        let spec = &self.web.hosts[h as usize];
        match (spec.robots_serve, self.web.render_robots(h)) {
            (RobotsServe::Text | RobotsServe::Huge, Some(r)) => {
                put(&root.join("robots.txt"), &r.body, None, &mut self.stats)?;
                self.conf
                    .push_str("        location = /robots.txt { charset off; }\n");
            }
            (RobotsServe::Html, Some(r)) => {
                put(&root.join("robots.txt"), &r.body, None, &mut self.stats)?;
                self.conf.push_str("        location = /robots.txt { charset off; types { } default_type text/html; }\n");
            }
            (RobotsServe::NotFound, _) => self
                .conf
                .push_str("        location = /robots.txt { return 404; }\n"),
            (RobotsServe::ServerError, _) => self
                .conf
                .push_str("        location = /robots.txt { return 503; }\n"),
            _ => {
                self.stats.tamed += 1;
                let _ = writeln!(
                    self.notes,
                    "| {} | robots.txt timeout | tamed: 444 at once instead of 20 s of silence |",
                    spec.name
                );
                self.conf
                    .push_str("        location = /robots.txt { return 444; }\n");
            }
        }
        Ok(())
    }

    /// The pages of a gzip-bomb host: every page path a symlink to `bomb.gz`.
    fn bomb_pages(&mut self, h: u32, root: &Path, extra: &str) -> io::Result<()> {
        let web = self.web;
        let _ = writeln!(self.conf, "        location / {{{extra} }}");
        let _ = writeln!(
            self.conf,
            "        location = / {{{extra} try_files /index.html =404; }}"
        );
        self.conf
            .push_str("        location = /index.html { return 404; }\n");
        for page in 0..web.config.pages {
            let file = root.join(file_of(&web.path(PageRef::Page { host: h, page })));
            link_bomb(self.dir, &file, &mut self.stats)?;
        }
        Ok(())
    }

    /// The pages of a host exported as served (and a trap host's calendar months near the entry),
    /// its assets, and their `location` blocks.
    fn pages(&mut self, h: u32, root: &Path, extra: &str) -> io::Result<()> {
        let web = self.web;
        let _ = writeln!(self.conf, "        location / {{{extra} }}");
        self.conf
            .push_str("        location = /index.html { return 404; }\n");
        let mut home = false;
        let mut refs: Vec<PageRef> = (0..web.config.pages)
            .map(|page| PageRef::Page { host: h, page })
            .collect();
        refs.extend(web.assets(h));
        if web.hosts[h as usize].hostile == Some(Hostile::Trap) {
            refs.extend(
                (CALENDAR_ENTRY - CALENDAR_WINDOW..=CALENDAR_ENTRY + CALENDAR_WINDOW)
                    .map(|month| PageRef::Calendar { host: h, month }),
            );
        }
        for at in refs {
            let path = web.path(at);
            let loc = page_location(web, at, &path, extra, root, &mut self.stats)?;
            home |= path == "/" && loc.is_some();
            if let Some(l) = loc {
                self.conf.push_str(&l);
            }
        }
        if !home {
            let _ = writeln!(
                self.conf,
                "        location = / {{{extra} try_files /index.html =404; }}"
            );
        }
        Ok(())
    }

    /// The files besides the hosts' (`bomb.gz`, `conf/huge_headers.conf` when needed,
    /// `nginx.conf`, `hosts`, `EXPORT.md`).
    fn finish(mut self) -> io::Result<ExportStats> {
        let (web, dir) = (self.web, self.dir);
        self.conf.push_str("}\n");
        if self.need_bomb {
            write_bomb(&dir.join("bomb.gz"), web.config.bomb_bytes)?;
        }
        if self.need_headers {
            let mut s = String::from("# the filler headers websim's HugeHeaders hosts send\n");
            let filler = "x".repeat(1000);
            for i in 0..1100 {
                let _ = writeln!(s, "add_header X-Filler-{i} \"{filler}\" always;");
            }
            std::fs::write(dir.join("conf/huge_headers.conf"), s)?;
        }
        std::fs::write(dir.join("nginx.conf"), &self.conf)?;
        std::fs::write(
            dir.join("hosts"),
            hosts_file(web.hosts.iter().map(|h| (h.addr, h.name.as_str()))),
        )?;
        std::fs::write(
            dir.join("EXPORT.md"),
            export_md(web, &self.stats, &self.notes),
        )?;
        Ok(self.stats)
    }
}

fn note_is_tamed(note: &str) -> bool {
    note.starts_with("tamed")
}

/// Writes one page's file, and returns its `location` block if it needs one.
fn page_location(
    web: &Web,
    at: PageRef,
    path: &str,
    extra: &str,
    root: &Path,
    stats: &mut ExportStats,
) -> io::Result<Option<String>> {
    let spec = web.page(at);
    // `= /` serves index.html itself, so its own headers apply (an index redirect would not).
    let serve_home = if path == "/" {
        " try_files /index.html =404;"
    } else {
        ""
    };
    let loc = |body: &str| format!("        location = {path} {{{extra}{body}{serve_home} }}\n");
    match &spec.kind {
        PageKind::Redirect { status, to } => {
            return Ok(Some(loc(&format!(" return {status} {};", web.url(*to)))));
        }
        PageKind::Error { status } => {
            let retry = if *status == 503 {
                " add_header Retry-After 120 always;"
            } else {
                ""
            };
            return Ok(Some(loc(&format!("{retry} return {status};"))));
        }
        _ => {}
    }
    let r = web.render(at);
    put(
        &root.join(file_of(path)),
        &r.body,
        Some(spec.last_modified),
        stats,
    )?;
    let mut body = String::new();
    for (name, value) in &r.headers {
        let _ = write!(body, " add_header {name} \"{value}\";");
    }
    if spec.kind == PageKind::BinaryMislabeled {
        body.push_str(" types { } default_type text/html; charset off;");
    }
    Ok((!body.is_empty() || path == "/").then(|| loc(&body)))
}

/// Writes `bytes` to `path` (parents created), with modification time `mtime` (Unix seconds).
fn put(path: &Path, bytes: &[u8], mtime: Option<u64>, stats: &mut ExportStats) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    if let Some(t) = mtime {
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(t))?;
    }
    stats.files += 1;
    stats.bytes += bytes.len() as u64;
    Ok(())
}

/// Makes `file` a relative symlink to `DIR/bomb.gz`.
fn link_bomb(dir: &Path, file: &Path, stats: &mut ExportStats) -> io::Result<()> {
    let parent = file.parent().expect("a page file has a parent");
    std::fs::create_dir_all(parent)?;
    let depth = parent
        .strip_prefix(dir)
        .map_or(0, |p| p.components().count());
    let mut target = PathBuf::new();
    for _ in 0..depth {
        target.push("..");
    }
    target.push("bomb.gz");
    match std::fs::remove_file(file) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(&target, file)?;
    #[cfg(not(unix))]
    std::fs::copy(dir.join("bomb.gz"), file).map(|_| ())?;
    stats.symlinks += 1;
    Ok(())
}

/// gzip of `n` zero bytes, streamed (as websim's bomb, whose size is `bomb_bytes`).
fn write_bomb(path: &Path, n: u64) -> io::Result<()> {
    let f = io::BufWriter::new(std::fs::File::create(path)?);
    let mut e = flate2::write::GzEncoder::new(f, flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(zeros.len() as u64) as usize;
        e.write_all(&zeros[..k])?;
        left -= k as u64;
    }
    e.finish()?.flush()
}

fn export_md(web: &Web, stats: &ExportStats, notes: &str) -> String {
    let c = &web.config;
    let mut s = format!(
        "# websim export\n\nThe synthetic web of seed {}, {} hosts x {} pages, port {}, as static files for nginx.\n\
         {} files ({} bytes), {} symlinks, {} behaviours tamed.\n\n\
         ## Run\n\n```sh\nnginx -p \"$PWD\" -c nginx.conf -g 'daemon off;'\n```\n\n\
         Names resolve through `hosts` (/etc/hosts format), never the system's /etc/hosts: dragnet reads\n\
         it via `[resolve] hosts_files`; curl via `--resolve`; other programs in a private namespace:\n\n\
         ```sh\nunshare --user --map-root-user --mount sh -c 'mount --bind hosts /etc/hosts && exec wget2 ...'\n```\n\n\
         ## Differences from `websim serve`\n\n\
         - No content coding (`gzip off`), so no `Content-Encoding`/`Vary` on normal hosts.\n\
         - `ETag` and `Last-Modified` come from nginx and the files' times (set to the pages' dates).\n\
         - Error bodies, and robots.txt answered 404/503, use nginx's own bodies.\n\
         - The hostile personalities below: slow drip, huge headers and the gzip bomb are exported as-is\n\
         \x20 (approximately); endless bodies, resets and wrong lengths are tamed to 444; the trap's\n\
         \x20 session pages are not exported and its calendar stops at +-{} months.\n\
         - The ground truth (`websim truth`) holds for this export except on the trap host.\n\n\
         ## Hosts not exported as websim serves them\n\n| host | personality | exported |\n|---|---|---|\n",
        c.seed, c.hosts, c.pages, c.port, stats.files, stats.bytes, stats.symlinks, stats.tamed, CALENDAR_WINDOW
    );
    s.push_str(notes);
    s
}
