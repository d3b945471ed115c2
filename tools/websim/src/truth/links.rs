//! The links of the model as an HTML link extractor must find them ([`expected_links`],
//! [`expected_links_with`]), and the `<loc>`s of sitemaps ([`sitemap_locs`]): computed from the
//! model, never from the rendered bytes.

use super::ExpectedLink;
use crate::model::{LinkTag, PageKind, PageRef, PageSpec, Requisite, SitemapKind, Web};

/// A link of the model with the page it points at.
#[derive(Debug, Clone)]
pub struct ModelLink {
    /// The link as the extractor must find it.
    pub link: ExpectedLink,
    /// The model page it names (always `Some` for the model's own pages).
    pub target: Option<PageRef>,
}

/// The links an HTML link extractor finds on the page `spec` (document order: the canonical
/// `<link>`, the refresh `<meta>` and a `<link rel=stylesheet>` in the head, then the body's
/// links), with whether a crawler follows each. Empty for binary bytes served as HTML and for
/// non-HTML pages. [`expected_links_with`] with `requisites` false.
pub fn expected_links(web: &Web, spec: &PageSpec, follow_nofollow: bool) -> Vec<ModelLink> {
    expected_links_with(web, spec, follow_nofollow, false)
}

/// The links of `spec` as an extractor finds them, in archive mode (`requisites`) or not.
///
/// Without `requisites`: [`expected_links`]; a `<link rel=stylesheet href>` is a link (tag
/// `link`) like any `<link href>`, and images, scripts and `style` URLs are not links.
///
/// With `requisites`, an HTML page's list is, in document order: the canonical `<link>`, the
/// refresh `<meta>`, the head's requisites (`<link rel=stylesheet>` as tag `link`, `<script
/// src>`), the body's requisites (`img` src then srcset candidates, `source` srcset, `style`
/// attribute `url()`), then the body's links; the requisites flagged
/// [`ExpectedLink::requisite`]. A requisite is followed as a link of the page is: unless the page
/// says nofollow (meta robots or `X-Robots-Tag`; requisite elements carry no `rel=nofollow`),
/// or always with `follow_nofollow`. A stylesheet's list is its `@import`s and `url()`s (tag
/// `css`, always followed). Other assets and non-HTML pages: empty.
pub fn expected_links_with(
    web: &Web,
    spec: &PageSpec,
    follow_nofollow: bool,
    requisites: bool,
) -> Vec<ModelLink> {
    if spec.kind == PageKind::Asset {
        if !requisites {
            return Vec::new();
        }
        let mut out = Vec::new();
        for q in &spec.requisites {
            for (to, tag) in q.targets() {
                out.push(ModelLink {
                    link: ExpectedLink {
                        url: web.url(to),
                        tag,
                        nofollow: false,
                        followed: true,
                        requisite: true,
                    },
                    target: Some(to),
                });
            }
        }
        return out;
    }
    if spec.kind != PageKind::Html {
        return Vec::new();
    }
    let page_nofollow = spec.meta_nofollow || spec.x_robots_nofollow;
    let follows = |nofollow: bool| follow_nofollow || !(page_nofollow || nofollow);
    let mut out = Vec::with_capacity(spec.links.len() + spec.requisites.len() + 2);
    let mut push = |to: PageRef, tag: &'static str, nofollow: bool, requisite: bool| {
        out.push(ModelLink {
            link: ExpectedLink {
                url: web.url(to),
                tag,
                nofollow,
                followed: follows(nofollow),
                requisite,
            },
            target: Some(to),
        })
    };
    if let Some(c) = spec.canonical {
        push(c, "link", false, false);
    }
    if let Some(t) = spec.refresh {
        push(t, "meta", false, false);
    }
    // As rendered: the head's requisites, then (after the `<h1>`) the body's.
    let head = spec.requisites.iter().filter(|q| q.in_head());
    let body = spec.requisites.iter().filter(|q| !q.in_head());
    for q in head.chain(body) {
        for (to, tag) in q.targets() {
            if requisites {
                push(to, tag, false, true);
            } else if matches!(q, Requisite::Stylesheet(_)) {
                push(to, tag, false, false); // a `<link href>`, a link as ever
            }
        }
    }
    for l in &spec.links {
        let tag = match l.tag {
            LinkTag::A => "a",
            LinkTag::Area => "area",
            LinkTag::Iframe => "iframe",
            LinkTag::Link => "link",
        };
        push(l.to, tag, l.nofollow, false);
    }
    out
}

/// The `<loc>` URLs of sitemap document `path` of host `h`, as rendered by [`Web::sitemap`].
pub fn sitemap_locs(web: &Web, h: u32, path: &str) -> Option<Vec<String>> {
    let kind = web.hosts[h as usize].sitemap?;
    let pages = web.sitemap_pages(h);
    let half = pages.len() / 2;
    let urls = |ps: &[PageRef]| ps.iter().map(|&p| web.url(p)).collect::<Vec<_>>();
    match (kind, path) {
        (SitemapKind::Urlset, "/sitemap.xml") | (SitemapKind::Gzipped, "/sitemap.xml.gz") => {
            Some(urls(&pages))
        }
        (SitemapKind::Index, "/sitemap_index.xml") => {
            let o = web.origin(h);
            Some(vec![
                format!("{o}/sitemaps/s-0.xml.gz"),
                format!("{o}/sitemaps/s-1.xml.gz"),
            ])
        }
        (SitemapKind::Index, "/sitemaps/s-0.xml.gz") => Some(urls(&pages[..half])),
        (SitemapKind::Index, "/sitemaps/s-1.xml.gz") => Some(urls(&pages[half..])),
        _ => None,
    }
}
