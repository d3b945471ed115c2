//! The `/static/` assets of a requisite host: stylesheets naming their `@import`s and `url()`s,
//! a script, PNG images and a font ([`crate::model::requisites`]).

use std::io::Write;

use super::{file_name, random_bytes, Rendered, WORDS};
use crate::model::{
    asset_type, PageRef, PageSpec, Requisite, Web, ASSET_APP_JS, ASSET_FONT, ASSET_SITE_CSS,
    ASSET_THEME_CSS,
};
use crate::rng::Rng;

impl Web {
    /// Asset `n` of a requisite host: a stylesheet naming [`PageSpec::requisites`], a script,
    /// PNG images, a font; deterministic bytes.
    pub(super) fn render_asset(&self, host: u32, n: u32, spec: &PageSpec) -> Rendered {
        let mut r = Rng::new(self.config.seed, &[98, host.into(), n.into()]);
        let mut b = Vec::new();
        match n {
            ASSET_SITE_CSS | ASSET_THEME_CSS => {
                let name = &self.hosts[host as usize].name;
                let _ = writeln!(b, "/* websim {name}{} */", self.path(spec.at));
                for q in &spec.requisites {
                    // Spelled as a hand-written stylesheet would: imports and the font relative
                    // to the stylesheet or root-relative, images quoted or not.
                    let _ = match q {
                        Requisite::Import(to) if !self.import_as_url(host) => {
                            writeln!(b, "@import \"{}\";", file_name(&self.path(*to)))
                        }
                        Requisite::Import(to) => writeln!(b, "@import url({});", self.path(*to)),
                        Requisite::CssUrl(to @ PageRef::Asset { n: ASSET_FONT, .. }) => writeln!(
                            b,
                            "@font-face {{ font-family: \"Websim\"; src: url({}) format(\"woff2\"); }}\nh1 {{ font-family: \"Websim\", sans-serif; }}",
                            file_name(&self.path(*to))
                        ),
                        Requisite::CssUrl(to @ PageRef::Asset { n: crate::model::ASSET_BG, .. }) => {
                            writeln!(
                                b,
                                "body {{ margin: 0; background: #fff url({}) no-repeat; }}",
                                self.path(*to)
                            )
                        }
                        Requisite::CssUrl(to) => writeln!(
                            b,
                            ".logo {{ background-image: url(\"{}\"); width: 120px; }}",
                            file_name(&self.path(*to))
                        ),
                        _ => Ok(()),
                    };
                }
                b.extend_from_slice(b"p { line-height: 1.4; }\n");
            }
            ASSET_APP_JS => {
                b.extend_from_slice(b"/* websim app.js */\n(function () {\n  var words = [");
                while b.len() + 20 < spec.bytes as usize {
                    let _ = write!(b, "\"{}\", ", r.pick(WORDS));
                }
                b.extend_from_slice(b"\"\"];\n  document.title += \" \" + words.length;\n})();\n");
            }
            ASSET_FONT => {
                b.extend_from_slice(b"wOF2\x00\x01\x00\x00");
                random_bytes(&mut b, spec.bytes as usize, &mut r);
            }
            _ => {
                b.extend_from_slice(b"\x89PNG\r\n\x1a\n");
                random_bytes(&mut b, spec.bytes as usize, &mut r);
            }
        }
        Rendered {
            status: 200,
            content_type: asset_type(n).into(),
            headers: vec![],
            body: b,
        }
    }
}
