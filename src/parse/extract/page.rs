//! What one answered page gives: its page record (media type, charset, title, meta robots and
//! `X-Robots-Tag`, canonical URL, count of outlinks) and its links, with the page's OPIC cash
//! shared among them; HTML pages, sitemaps and feeds, stylesheets (archive mode).

use url::Url;

use super::resolve::Resolved;
use super::{is_css, is_html, is_sitemap, media_type, Emit, Extractor, LinkMeta};
use crate::error::Result;
use crate::parse::html;
use crate::records::{LinkKind, PageRecord};
use crate::warc::http::HttpHead;

/// The document an HTML page is: its URL, its response's head (if any) and `Content-Type`
/// header, its decoded body.
#[derive(Clone, Copy)]
struct Doc<'d> {
    url: &'d Url,
    head: Option<&'d HttpHead>,
    content_type: Option<&'d str>,
    body: &'d [u8],
}

/// The facts an HTML page states about itself, into `page`: its title, its meta robots with the
/// `X-Robots-Tag` headers of `head` after it, and whether these say `noindex` or `nofollow`.
fn page_facts(page: &mut PageRecord, found: &html::Scan<'_>, head: Option<&HttpHead>) {
    let x_robots: Vec<&str> = head
        .map(|h| h.get_all("x-robots-tag").collect())
        .unwrap_or_default();
    let x_robots = (!x_robots.is_empty()).then(|| x_robots.join(", "));
    page.title = found.title.clone().unwrap_or_default();
    let meta_robots = found.meta_robots.as_deref();
    page.meta_robots = [meta_robots, x_robots.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
    let says =
        |d| html::has_directive(meta_robots, d) || html::has_directive(x_robots.as_deref(), d);
    page.noindex = says("noindex");
    page.nofollow = says("nofollow");
}

impl Extractor {
    /// Parses one answered page: `head` and the decoded `body` of its response. Emits its links
    /// through `out` and returns its page record.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::parse) fn page(
        &mut self,
        url: &str,
        status: u16,
        head: Option<&HttpHead>,
        body: &[u8],
        depth: u32,
        cash: f64,
        out: &mut Emit<'_>,
    ) -> Result<PageRecord> {
        let content_type_header = head.and_then(|h| h.get("content-type"));
        let content_type = content_type_header.map(media_type).unwrap_or_default();
        let mut page = PageRecord {
            url: url.to_owned(),
            status,
            content_type: content_type.clone(),
            length: body.len() as u64,
            ..PageRecord::default()
        };
        self.bump("bytes", body.len() as u64);
        let Ok(doc_url) = Url::parse(url) else {
            return Ok(page);
        };
        if !(200..300).contains(&status) {
            return Ok(page);
        }
        if is_sitemap(&content_type, url) {
            let locs = self.sitemap_locs(body);
            let depth = depth.saturating_add(1);
            self.shared_links(&mut page, &locs, LinkKind::Sitemap, depth, cash, out)?;
        } else if self.requisites && is_css(&content_type) {
            let urls = self.stylesheet_urls(body);
            // A stylesheet's imports and images are part of its pages: at its depth.
            self.shared_links(&mut page, &urls, LinkKind::Requisite, depth, cash, out)?;
        } else if is_html(&content_type) {
            let doc = Doc {
                url: &doc_url,
                head,
                content_type: content_type_header,
                body,
            };
            self.html_page(&mut page, doc, depth, cash, out)?;
        }
        Ok(page)
    }

    /// An HTML page: its facts into `page` ([`page_facts`]), and its links, resolved against
    /// its base as `html::extract_links` resolves them, through `out`.
    fn html_page(
        &mut self,
        page: &mut PageRecord,
        doc: Doc<'_>,
        depth: u32,
        cash: f64,
        out: &mut Emit<'_>,
    ) -> Result<()> {
        self.bump("html_pages", 1);
        self.trim_caches();
        let enc = html::detect_charset(doc.body, doc.content_type);
        let mut text = std::mem::take(&mut self.text);
        let (decoded, orig) = html::decode_text(doc.body, enc, &mut text);
        let mut found = html::scan_into(
            decoded,
            orig,
            html::recycle(std::mem::take(&mut self.raw)),
            self.requisites,
        );
        page.charset = enc.name().to_owned();
        page_facts(page, &found, doc.head);
        let base_url = found.base(doc.url);
        self.page_links(page, base_url.as_ref().unwrap_or(doc.url), &found.raw);
        self.raw = html::recycle(std::mem::take(&mut found.raw));
        drop(found);
        self.text = text;
        self.page_targets(page.nofollow, cash);
        self.emit_targets(&page.url, depth, out)
    }

    /// The links of a page, `raw` resolved against `base`, into `page_links`: (URL, kind,
    /// `rel=nofollow`) for each http(s) target, in order; the page's canonical URL and count of
    /// outlinks; the others counted.
    fn page_links(&mut self, page: &mut PageRecord, base: &Url, raw: &[html::RawLink<'_>]) {
        let mut list = std::mem::take(&mut self.page_links);
        list.clear();
        let (mut invalid, mut schemes, mut canonical_seen) = (0, 0, false);
        let mut resolved = std::mem::take(&mut self.resolved);
        self.resolve_all(base, raw, &mut resolved);
        for (l, &r) in raw.iter().zip(&resolved) {
            let canonical = !canonical_seen && l.canonical();
            canonical_seen |= canonical;
            let id = match r {
                Resolved::Invalid => {
                    invalid += 1;
                    continue;
                }
                Resolved::OtherScheme => {
                    schemes += 1;
                    continue;
                }
                Resolved::Url(id) => id,
            };
            if canonical {
                page.canonical = self.url_of(id).to_owned();
            }
            list.push((id, self.kind_of(l), l.nofollow()));
        }
        self.resolved = resolved;
        page.outlinks = u32::try_from(list.len()).unwrap_or(u32::MAX);
        self.page_links = list;
        self.bump("links_skipped_scheme", schemes);
        self.bump("links_unusable", invalid);
    }

    /// The kind of a page's link: a requisite in archive mode (by its tag, or a `<link>` by its
    /// `rel`), else by its tag.
    fn kind_of(&self, l: &html::RawLink<'_>) -> LinkKind {
        let requisite = self.requisites
            && (html::REQUISITE_TAGS.contains(&l.tag)
                || (l.tag == "link" && l.rel.as_deref().is_some_and(html::is_requisite_rel)));
        if requisite {
            LinkKind::Requisite
        } else {
            LinkKind::of_tag(l.tag)
        }
    }

    /// The page's links (`page_links`) as one record per target, in `targets`: its
    /// occurrences' cash summed (a page repeats ~30-40% of its links: menus, headers, "read
    /// more"), followed if any occurrence is. OPIC's total is unchanged, and the sort behind has
    /// that much less to do. The page's `cash` is shared among its followed links, none if the
    /// page is `nofollow`.
    fn page_targets(&mut self, nofollow: bool, cash: f64) {
        let n = self.page_links.iter().filter(|l| !l.2 && !nofollow).count();
        let share = if n > 0 { cash / n as f64 } else { 0.0 };
        self.slot.resize(self.urls.len(), 0);
        let targets = &mut self.targets;
        targets.clear();
        for &(id, kind, rel_nofollow) in &self.page_links {
            let follow = !rel_nofollow && !nofollow;
            let c = if follow { share } else { 0.0 };
            match self.slot[id as usize] {
                0 => {
                    targets.push((id, kind, follow, c));
                    self.slot[id as usize] = targets.len() as u32;
                }
                i => {
                    let t = &mut targets[i as usize - 1];
                    t.2 |= follow;
                    t.3 += c;
                    self.repeated += 1;
                }
            }
        }
        for t in targets.iter() {
            self.slot[t.0 as usize] = 0;
        }
    }

    /// Hands the link records of `targets`, links of the page `source` at `depth`, to `out`.
    fn emit_targets(&mut self, source: &str, depth: u32, out: &mut Emit<'_>) -> Result<()> {
        self.warm(self.targets.iter().map(|t| t.0));
        let targets = std::mem::take(&mut self.targets);
        for &(id, kind, follow, c) in &targets {
            let meta = LinkMeta {
                source,
                kind,
                nofollow: !follow,
                cash: c,
                // A requisite is part of its page: at its depth (depth limits do not cut a page
                // from its images and stylesheets).
                depth: if kind == LinkKind::Requisite {
                    depth
                } else {
                    depth.saturating_add(1)
                },
            };
            if self.emit(id, meta, out)? {
                if follow {
                    self.followed += 1;
                } else {
                    self.nofollow += 1;
                }
            }
        }
        self.targets = targets;
        Ok(())
    }

    /// The requisites of a stylesheet (archive mode): every `url()` and `@import`. Decoded as
    /// UTF-8 (a URL rarely needs more).
    fn stylesheet_urls(&mut self, body: &[u8]) -> Vec<String> {
        self.bump("stylesheets", 1);
        let css = String::from_utf8_lossy(body);
        let mut targets = Vec::new();
        crate::parse::css::css_urls(&css, &mut |u| targets.push(u.into_owned()));
        targets
    }

    /// Links of `page` to `targets` (resolved against it), of `kind` at `depth`, sharing the
    /// page's `cash` equally, all followed: a sitemap's `<loc>`s (which share the document's
    /// cash, a level deeper), a stylesheet's URLs (at its own depth).
    fn shared_links(
        &mut self,
        page: &mut PageRecord,
        targets: &[String],
        kind: LinkKind,
        depth: u32,
        cash: f64,
        out: &mut Emit<'_>,
    ) -> Result<()> {
        page.outlinks = u32::try_from(targets.len()).unwrap_or(u32::MAX);
        let share = if targets.is_empty() {
            0.0
        } else {
            cash / targets.len() as f64
        };
        let base = Url::parse(&page.url).ok();
        let source = page.url.clone();
        for t in targets {
            let meta = LinkMeta {
                source: &source,
                kind,
                nofollow: false,
                cash: share,
                depth,
            };
            if self.link(t, base.as_ref(), meta, out)? {
                self.followed += 1;
            }
        }
        Ok(())
    }

    /// The links of a sitemap, sitemap index or RSS/Atom feed: every `<loc>` (capped at 50,000
    /// URLs and 50 MB decoded, as sitemaps.org says, so a sitemap flood cannot swamp a host).
    fn sitemap_locs(&mut self, body: &[u8]) -> Vec<String> {
        let sm = crate::parse::sitemap::parse(body, &crate::parse::sitemap::Limits::default());
        self.bump("sitemaps", 1);
        if sm.truncated {
            self.bump("sitemaps_truncated", 1);
        }
        if sm.error.is_some() {
            self.bump("sitemaps_malformed", 1);
        }
        let sitemaps = sm.sitemaps.into_iter().map(|s| s.loc);
        sm.urls.into_iter().map(|u| u.loc).chain(sitemaps).collect()
    }
}
