//! Payloads of the parse stage's run files: [`LinkRecord`] (links runs, sorted by the target's
//! host key and fingerprint, so the split stage routes contiguous ranges to owner partitions)
//! and [`PageRecord`] (pages runs, sorted by the page's fingerprint). Byte layouts are listed in
//! `docs/formats.md`; like every payload they start with a record-version byte.

use super::{check_version, Dec, DecodeError, Enc};

/// Where a link came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum LinkKind {
    /// `<a href>`.
    A = 0,
    /// `<area href>`.
    Area = 1,
    /// `<link href>` (any rel but canonical).
    Link = 2,
    /// `<iframe src>`.
    Iframe = 3,
    /// `<frame src>`.
    Frame = 4,
    /// `<meta http-equiv=refresh>` target.
    Refresh = 5,
    /// The `Location` of a redirect.
    Redirect = 6,
    /// A `<loc>` of a sitemap or an item link of an RSS/Atom feed.
    Sitemap = 7,
    /// A `Sitemap:` line of robots.txt.
    RobotsSitemap = 8,
    /// `rel=canonical`.
    Canonical = 9,
    /// What a page loads to show itself (archive mode, `[parse] requisites`): an image, a
    /// script, a stylesheet, media, a CSS `url()` or `@import`. At the page's own depth.
    Requisite = 10,
}

impl LinkKind {
    /// The kind of an HTML link by its tag name (`a`, `area`, `link`, `iframe`, `frame`,
    /// `meta`).
    pub fn of_tag(tag: &str) -> LinkKind {
        match tag {
            "a" => LinkKind::A,
            "area" => LinkKind::Area,
            "iframe" => LinkKind::Iframe,
            "frame" => LinkKind::Frame,
            "meta" => LinkKind::Refresh,
            _ => LinkKind::Link,
        }
    }

    fn from_u8(v: u8) -> Result<LinkKind, DecodeError> {
        Ok(match v {
            0 => LinkKind::A,
            1 => LinkKind::Area,
            2 => LinkKind::Link,
            3 => LinkKind::Iframe,
            4 => LinkKind::Frame,
            5 => LinkKind::Refresh,
            6 => LinkKind::Redirect,
            7 => LinkKind::Sitemap,
            8 => LinkKind::RobotsSitemap,
            9 => LinkKind::Canonical,
            10 => LinkKind::Requisite,
            _ => return Err(DecodeError(format!("unknown link kind {v}"))),
        })
    }
}

/// One link: the payload of a links run ([`crate::run::Schema::LINKS`]), keyed by the target's
/// host key and fingerprint. A page's repeated links to one target are one record (cash summed,
/// followed if any occurrence is).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRecord {
    /// The target, canonical.
    pub url: String,
    /// The page it was found on (empty for robots.txt sitemaps).
    pub source: String,
    /// Where in the page.
    pub kind: LinkKind,
    /// `rel=nofollow`, or the page's meta robots / X-Robots-Tag said nofollow: recorded, carries
    /// no cash, not followed by default.
    pub nofollow: bool,
    /// The target's share of the source's OPIC cash.
    pub cash: f64,
    /// Link distance of the target from the seeds (the source's depth + 1).
    pub depth: u32,
}

impl LinkRecord {
    const VERSION: u8 = 1;

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        LinkRecord::encode_parts(
            &mut b,
            &self.url,
            &self.source,
            self.kind,
            self.nofollow,
            self.cash,
            self.depth,
        );
        b
    }

    /// Encodes a link from its parts into `buf` (cleared first): the parse stage's hot path,
    /// without building a record.
    pub fn encode_parts(
        buf: &mut Vec<u8>,
        url: &str,
        source: &str,
        kind: LinkKind,
        nofollow: bool,
        cash: f64,
        depth: u32,
    ) {
        buf.clear();
        let mut e = Enc(std::mem::take(buf));
        e.u8(LinkRecord::VERSION)
            .str(url)
            .str(source)
            .u8(kind as u8)
            .u8(u8::from(nofollow))
            .f64(cash)
            .u64(u64::from(depth));
        *buf = e.0;
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> Result<LinkRecord, DecodeError> {
        LinkRecord::view(b).map(|v| v.to_owned())
    }

    /// Decodes a payload without copying its strings: the split reads every link of a
    /// partition, and most are further occurrences of a target whose URL it already holds.
    pub fn view(b: &[u8]) -> Result<LinkView<'_>, DecodeError> {
        let mut d = Dec(b);
        check_version(&mut d, "link", LinkRecord::VERSION)?;
        let r = LinkView {
            url: d.str("url")?,
            source: d.str("source")?,
            kind: LinkKind::from_u8(d.u8("kind")?)?,
            nofollow: flag(d.u8("nofollow")?, "nofollow")?,
            cash: d.f64("cash")?,
            depth: u32::try_from(d.u64("depth")?)
                .map_err(|_| DecodeError("depth out of range".into()))?,
        };
        d.end()?;
        Ok(r)
    }
}

/// A [`LinkRecord`] borrowed from its payload ([`LinkRecord::view`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkView<'a> {
    /// The target, canonical.
    pub url: &'a str,
    /// The page it was found on.
    pub source: &'a str,
    /// Where in the page.
    pub kind: LinkKind,
    /// Not followed by default.
    pub nofollow: bool,
    /// The target's share of the source's cash.
    pub cash: f64,
    /// Link distance of the target from the seeds.
    pub depth: u32,
}

impl LinkView<'_> {
    /// The owned record.
    pub fn to_owned(&self) -> LinkRecord {
        LinkRecord {
            url: self.url.to_owned(),
            source: self.source.to_owned(),
            kind: self.kind,
            nofollow: self.nofollow,
            cash: self.cash,
            depth: self.depth,
        }
    }
}

fn flag(v: u8, what: &str) -> Result<bool, DecodeError> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(DecodeError(format!("{what} flag {v} is not 0 or 1"))),
    }
}

/// What the parse stage learned about one fetched page: the payload of a pages run
/// ([`crate::run::Schema::PAGES`]), keyed by the page's fingerprint.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PageRecord {
    /// The page's canonical URL.
    pub url: String,
    /// HTTP status.
    pub status: u16,
    /// Media type without parameters.
    pub content_type: String,
    /// The charset the document was decoded with (HTML only; empty otherwise).
    pub charset: String,
    /// `<title>`, whitespace collapsed, at most 1,024 bytes.
    pub title: String,
    /// `rel=canonical`, resolved (empty if none).
    pub canonical: String,
    /// `<meta name=robots>` content and the X-Robots-Tag header, joined with `, `.
    pub meta_robots: String,
    /// meta robots or X-Robots-Tag say `noindex`.
    pub noindex: bool,
    /// meta robots or X-Robots-Tag say `nofollow`.
    pub nofollow: bool,
    /// Links found (followed or not).
    pub outlinks: u32,
    /// xxh3-64 of the decoded payload (the fetch result's digest).
    pub digest: u64,
    /// Decoded payload bytes parsed.
    pub length: u64,
}

impl PageRecord {
    const VERSION: u8 = 1;

    /// Encodes the payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::sized(
            self.url.len()
                + self.content_type.len()
                + self.charset.len()
                + self.title.len()
                + self.canonical.len()
                + self.meta_robots.len(),
        );
        e.u8(PageRecord::VERSION)
            .str(&self.url)
            .u64(u64::from(self.status))
            .str(&self.content_type)
            .str(&self.charset)
            .str(&self.title)
            .str(&self.canonical)
            .str(&self.meta_robots)
            .u8(u8::from(self.noindex))
            .u8(u8::from(self.nofollow))
            .u64(u64::from(self.outlinks))
            .u64(self.digest)
            .u64(self.length);
        e.0
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> Result<PageRecord, DecodeError> {
        let mut d = Dec(b);
        check_version(&mut d, "page", PageRecord::VERSION)?;
        let r = PageRecord {
            url: d.str("url")?.to_owned(),
            status: u16::try_from(d.u64("status")?)
                .map_err(|_| DecodeError("status out of range".into()))?,
            content_type: d.str("content_type")?.to_owned(),
            charset: d.str("charset")?.to_owned(),
            title: d.str("title")?.to_owned(),
            canonical: d.str("canonical")?.to_owned(),
            meta_robots: d.str("meta_robots")?.to_owned(),
            noindex: flag(d.u8("noindex")?, "noindex")?,
            nofollow: flag(d.u8("nofollow")?, "nofollow")?,
            outlinks: u32::try_from(d.u64("outlinks")?)
                .map_err(|_| DecodeError("outlinks out of range".into()))?,
            digest: d.u64("digest")?,
            length: d.u64("length")?,
        };
        d.end()?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_pages_round_trip_and_refuse_prefixes() {
        let l = LinkRecord {
            url: "http://b.test/x".into(),
            source: "http://a.test/".into(),
            kind: LinkKind::Redirect,
            nofollow: true,
            cash: 0.25,
            depth: 3,
        };
        let b = l.encode();
        assert_eq!(LinkRecord::decode(&b).unwrap(), l);
        for n in 0..b.len() {
            assert!(LinkRecord::decode(&b[..n]).is_err());
        }
        let p = PageRecord {
            url: "http://a.test/".into(),
            status: 200,
            content_type: "text/html".into(),
            charset: "UTF-8".into(),
            title: "Höme".into(),
            canonical: "http://a.test/".into(),
            meta_robots: "noindex".into(),
            noindex: true,
            nofollow: false,
            outlinks: 12,
            digest: 7,
            length: 1000,
        };
        let b = p.encode();
        assert_eq!(PageRecord::decode(&b).unwrap(), p);
        for n in 0..b.len() {
            assert!(PageRecord::decode(&b[..n]).is_err());
        }
    }
}
