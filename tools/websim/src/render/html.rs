//! HTML pages: the head (charset, title, base, canonical, robots directives, refresh), the
//! requisite elements of a requisite host's pages, and the body of text paragraphs and links.

use std::io::Write;

use super::{dir_of, text, Rendered};
use crate::model::{CharsetDecl, LinkTag, PageRef, PageSpec, Requisite, Web};
use crate::rng::Rng;

impl Web {
    pub(super) fn render_html(&self, host: u32, spec: &PageSpec, r: &mut Rng) -> Rendered {
        let h = &self.hosts[host as usize];
        let page_path = self.path(spec.at);
        let base_path = spec
            .base
            .clone()
            .unwrap_or_else(|| dir_of(&page_path).to_string());
        let mut s: Vec<u8> = Vec::with_capacity(spec.bytes as usize + 1024);
        s.extend_from_slice(b"<!DOCTYPE html>\n<html><head>\n");
        if matches!(h.charset_decl, CharsetDecl::Meta | CharsetDecl::Both) {
            let _ = writeln!(s, "<meta charset=\"{}\">", h.charset.label());
        }
        let _ = writeln!(
            s,
            "<title>websim {} page {}</title>",
            h.name,
            page_path.replace('&', "&amp;")
        );
        if let Some(b) = &spec.base {
            let _ = writeln!(s, "<base href=\"{}{b}\">", self.origin(host));
        }
        if let Some(c) = spec.canonical {
            let _ = writeln!(s, "<link rel=\"canonical\" href=\"{}\">", self.url(c));
        }
        let robots: Vec<&str> = [(spec.noindex, "noindex"), (spec.meta_nofollow, "nofollow")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, w)| *w)
            .collect();
        if !robots.is_empty() {
            let _ = writeln!(
                s,
                "<meta name=\"robots\" content=\"{}\">",
                robots.join(", ")
            );
        }
        if let Some(t) = spec.refresh {
            let _ = writeln!(
                s,
                "<meta http-equiv=\"refresh\" content=\"0; url={}\">",
                self.url(t)
            );
        }
        for q in spec.requisites.iter().filter(|q| q.in_head()) {
            self.write_requisite(&mut s, q, host);
        }
        s.extend_from_slice(b"</head>\n<body>\n");
        let _ = writeln!(s, "<h1>{}</h1>", page_path.replace('&', "&amp;"));
        for q in spec.requisites.iter().filter(|q| !q.in_head()) {
            self.write_requisite(&mut s, q, host);
        }
        let per_link = (spec.bytes as usize / (spec.links.len() + 1)).clamp(40, 4000);
        for (i, l) in spec.links.iter().enumerate() {
            s.extend_from_slice(b"<p>");
            text(&mut s, per_link / 2, h.charset, r);
            s.extend_from_slice(b"</p>\n");
            let href = self.href(l, host, &base_path).replace('&', "&amp;");
            let rel = if l.nofollow { " rel=\"nofollow\"" } else { "" };
            let _ = match l.tag {
                LinkTag::A => writeln!(s, "<a href=\"{href}\"{rel}>link {i}</a>"),
                LinkTag::Area => writeln!(s, "<map name=\"m{i}\"><area shape=\"rect\" coords=\"0,0,1,1\" href=\"{href}\"{rel} alt=\"a{i}\"></map>"),
                LinkTag::Iframe => writeln!(s, "<iframe src=\"{href}\"></iframe>"),
                LinkTag::Link => writeln!(s, "<link rel=\"alternate{}\" href=\"{href}\">", if l.nofollow { " nofollow" } else { "" }),
            };
        }
        while s.len() + 20 < spec.bytes as usize {
            s.extend_from_slice(b"<p>");
            let want = (spec.bytes as usize - s.len()).min(2000);
            text(&mut s, want, h.charset, r);
            s.extend_from_slice(b"</p>\n");
        }
        s.extend_from_slice(b"</body></html>\n");
        let content_type = if matches!(h.charset_decl, CharsetDecl::Header | CharsetDecl::Both) {
            format!("text/html; charset={}", h.charset.label())
        } else {
            "text/html".into()
        };
        let mut headers = vec![];
        if spec.x_robots_nofollow {
            headers.push(("X-Robots-Tag".into(), "noindex, nofollow".into()));
        }
        Rendered {
            status: 200,
            content_type,
            headers,
            body: s,
        }
    }

    /// The href of a requisite on a page of `from_host`: root-relative on the same host,
    /// absolute elsewhere.
    fn requisite_href(&self, to: PageRef, from_host: u32) -> String {
        match to {
            PageRef::Asset { host, .. } if host == from_host => self.path(to),
            _ => self.url(to),
        }
    }

    /// One requisite element of an HTML page ([`Requisite`]), on a line of its own.
    fn write_requisite(&self, s: &mut Vec<u8>, q: &Requisite, host: u32) {
        let href = |to: &PageRef| self.requisite_href(*to, host).replace('&', "&amp;");
        let _ = match q {
            Requisite::Stylesheet(to) => {
                writeln!(s, "<link rel=\"stylesheet\" href=\"{}\">", href(to))
            }
            Requisite::Script(to) => writeln!(s, "<script src=\"{}\"></script>", href(to)),
            Requisite::Img { src, srcset } if srcset.is_empty() => {
                writeln!(s, "<img src=\"{}\" alt=\"\">", href(src))
            }
            Requisite::Img { src, srcset } => {
                let set: Vec<String> = srcset
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{} {}x", href(c), i + 2))
                    .collect();
                writeln!(
                    s,
                    "<img src=\"{}\" srcset=\"{}\" alt=\"\">",
                    href(src),
                    set.join(", ")
                )
            }
            Requisite::Picture(to) => {
                writeln!(s, "<picture><source srcset=\"{} 1x\"></picture>", href(to))
            }
            Requisite::Background(to) => writeln!(
                s,
                "<div class=\"hero\" style=\"background-image: url('{}')\"></div>",
                href(to)
            ),
            // Only in stylesheets.
            Requisite::Import(_) | Requisite::CssUrl(_) => Ok(()),
        };
    }
}
