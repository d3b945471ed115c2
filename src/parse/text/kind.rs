//! What the walker knows of an element by its tag name: which element it is ([`T`]) and the
//! flags that drive the simplified tree construction and the text layout (void, special,
//! block, closes a `<p>`, scope boundary, hidden content, keeps whitespace, formatting, root,
//! raw text, table part), as one table ([`KINDS`]) looked up by [`kind`].

// What the walker needs to know about an element (flags of [`Kind`]).
/// A void element: never on the stack.
pub(super) const VOID: u16 = 1;
/// The standard's "special" category: the end tag of an ordinary element stops at one.
pub(super) const SPECIAL: u16 = 1 << 1;
/// Starts and ends a line.
pub(super) const BLOCK: u16 = 1 << 2;
/// Its start tag closes an open `<p>`.
pub(super) const CLOSES_P: u16 = 1 << 3;
/// A boundary of the standard's "has an element in scope".
pub(super) const SCOPE: u16 = 1 << 4;
/// Its content is never rendered.
pub(super) const HIDE: u16 = 1 << 5;
/// Keeps its whitespace.
pub(super) const PRE: u16 = 1 << 6;
/// A formatting element (`a`, `b`, ...): its end tag looks through special elements.
pub(super) const FMT: u16 = 1 << 7;
/// `html`, `head`, `body`: implied, never on the stack.
pub(super) const ROOT: u16 = 1 << 8;
/// Its content is skipped by the tokenizer (RAWTEXT, RCDATA, script data); its end tag is
/// consumed there.
pub(super) const RAW: u16 = 1 << 9;
/// A part of a table whose end tag looks up to the table (`td`, `tr`, `tbody`, ...).
pub(super) const TABLE_PART: u16 = 1 << 10;

/// A tag name's role: `t` says which known element it is (`Other` for the others, `Void` for
/// most void elements), `id` is its lower-case name (empty for `Other`).
#[derive(Clone, Copy)]
pub(super) struct Kind {
    pub(super) t: T,
    pub(super) id: &'static str,
    f: u16,
}

/// The elements the walker knows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum T {
    A,
    B,
    I,
    U,
    S,
    P,
    Other,
    Em,
    Tt,
    Li,
    Dd,
    Dt,
    Dl,
    Ul,
    Ol,
    H1,
    H2,
    H3,
    H4,
    H5,
    H6,
    Hr,
    Br,
    Tr,
    Td,
    Th,
    Rp,
    Big,
    Div,
    Dir,
    Nav,
    Pre,
    Col,
    Svg,
    Xmp,
    Void,
    Code,
    Font,
    Nobr,
    Menu,
    Main,
    Form,
    Html,
    Math,
    Small,
    Aside,
    Table,
    Tbody,
    Thead,
    Tfoot,
    Audio,
    Video,
    Style,
    Title,
    Strike,
    Strong,
    Center,
    Header,
    Footer,
    Hgroup,
    Search,
    Figure,
    Dialog,
    Legend,
    Applet,
    Object,
    Button,
    Option,
    Select,
    Script,
    Iframe,
    Address,
    Article,
    Details,
    Summary,
    Section,
    Listing,
    Caption,
    Marquee,
    Noembed,
    Fieldset,
    Colgroup,
    Frameset,
    Optgroup,
    Template,
    Datalist,
    Noframes,
    Noscript,
    Textarea,
    Plaintext,
    Figcaption,
    Blockquote,
}

impl Kind {
    /// Whether it has any of the flags `f`.
    pub(super) fn has(self, f: u16) -> bool {
        self.f & f != 0
    }
}

/// The flags of most block elements: they start and end lines, are special and close a `<p>`.
const B: u16 = BLOCK | SPECIAL | CLOSES_P;

/// The elements the walker knows, by the length of their names (index 0 is empty): a lookup
/// compares a name only with the names of its length.
static KINDS: [&[(&str, T, u16)]; 11] = [
    // 0
    &[],
    // 1
    &[
        ("a", T::A, FMT),
        ("b", T::B, FMT),
        ("i", T::I, FMT),
        ("u", T::U, FMT),
        ("s", T::S, FMT),
        ("p", T::P, B),
    ],
    // 2
    &[
        ("em", T::Em, FMT),
        ("tt", T::Tt, FMT),
        ("li", T::Li, B),
        ("dd", T::Dd, B),
        ("dt", T::Dt, B),
        ("dl", T::Dl, B),
        ("ul", T::Ul, B),
        ("ol", T::Ol, B),
        ("h1", T::H1, B),
        ("h2", T::H2, B),
        ("h3", T::H3, B),
        ("h4", T::H4, B),
        ("h5", T::H5, B),
        ("h6", T::H6, B),
        ("hr", T::Hr, B | VOID),
        ("br", T::Br, SPECIAL | VOID),
        ("tr", T::Tr, BLOCK | SPECIAL | TABLE_PART),
        ("td", T::Td, SPECIAL | SCOPE | TABLE_PART),
        ("th", T::Th, SPECIAL | SCOPE | TABLE_PART),
        ("rp", T::Rp, HIDE),
    ],
    // 3
    &[
        ("big", T::Big, FMT),
        ("div", T::Div, B),
        ("dir", T::Dir, B),
        ("nav", T::Nav, B),
        ("pre", T::Pre, B | PRE),
        ("col", T::Col, SPECIAL | VOID),
        ("svg", T::Svg, 0),
        ("xmp", T::Xmp, B | RAW),
        ("img", T::Void, SPECIAL | VOID),
        ("wbr", T::Void, SPECIAL | VOID),
    ],
    // 4
    &[
        ("code", T::Code, FMT),
        ("font", T::Font, FMT),
        ("nobr", T::Nobr, FMT),
        ("menu", T::Menu, B),
        ("main", T::Main, B),
        ("form", T::Form, B),
        ("html", T::Html, ROOT),
        ("head", T::Html, ROOT),
        ("body", T::Html, ROOT),
        ("math", T::Math, 0),
        ("area", T::Void, SPECIAL | VOID),
        ("base", T::Void, SPECIAL | VOID),
        ("link", T::Void, SPECIAL | VOID),
        ("meta", T::Void, SPECIAL | VOID),
    ],
    // 5
    &[
        ("small", T::Small, FMT),
        ("aside", T::Aside, B),
        ("table", T::Table, B | SCOPE | TABLE_PART),
        ("tbody", T::Tbody, SPECIAL | TABLE_PART),
        ("thead", T::Thead, SPECIAL | TABLE_PART),
        ("tfoot", T::Tfoot, SPECIAL | TABLE_PART),
        ("audio", T::Audio, HIDE),
        ("video", T::Video, HIDE),
        ("style", T::Style, SPECIAL | RAW),
        ("title", T::Title, SPECIAL | RAW),
        ("embed", T::Void, SPECIAL | VOID),
        ("input", T::Void, SPECIAL | VOID),
        ("param", T::Void, SPECIAL | VOID),
        ("track", T::Void, SPECIAL | VOID),
        ("frame", T::Void, SPECIAL | VOID),
        ("image", T::Void, SPECIAL | VOID),
    ],
    // 6
    &[
        ("strike", T::Strike, FMT),
        ("strong", T::Strong, FMT),
        ("center", T::Center, B),
        ("header", T::Header, B),
        ("footer", T::Footer, B),
        ("hgroup", T::Hgroup, B),
        ("search", T::Search, B),
        ("figure", T::Figure, B),
        ("dialog", T::Dialog, B),
        ("legend", T::Legend, BLOCK),
        ("applet", T::Applet, SPECIAL | SCOPE),
        ("object", T::Object, SPECIAL | SCOPE),
        ("button", T::Button, SPECIAL),
        ("option", T::Option, 0),
        ("select", T::Select, SPECIAL),
        ("script", T::Script, SPECIAL | RAW),
        ("iframe", T::Iframe, SPECIAL | RAW),
        ("keygen", T::Void, SPECIAL | VOID),
        ("source", T::Void, SPECIAL | VOID),
    ],
    // 7
    &[
        ("address", T::Address, B),
        ("article", T::Article, B),
        ("details", T::Details, B),
        ("summary", T::Summary, B),
        ("section", T::Section, B),
        ("listing", T::Listing, B | PRE),
        ("caption", T::Caption, BLOCK | SPECIAL | SCOPE | TABLE_PART),
        ("marquee", T::Marquee, SPECIAL | SCOPE),
        ("noembed", T::Noembed, SPECIAL | RAW),
        ("bgsound", T::Void, SPECIAL | VOID),
    ],
    // 8
    &[
        ("fieldset", T::Fieldset, B),
        ("colgroup", T::Colgroup, SPECIAL | TABLE_PART),
        ("frameset", T::Frameset, SPECIAL),
        ("optgroup", T::Optgroup, 0),
        ("template", T::Template, SPECIAL),
        ("datalist", T::Datalist, HIDE),
        ("noframes", T::Noframes, SPECIAL | RAW),
        ("noscript", T::Noscript, SPECIAL | RAW),
        ("textarea", T::Textarea, SPECIAL | RAW),
        ("basefont", T::Void, SPECIAL | VOID),
    ],
    // 9
    &[("plaintext", T::Plaintext, B)],
    // 10
    &[
        ("figcaption", T::Figcaption, B),
        ("blockquote", T::Blockquote, B),
    ],
];

/// The [`Kind`] of a tag name (ASCII case-insensitive).
pub(super) fn kind(name: &str) -> Kind {
    const OTHER: Kind = Kind {
        t: T::Other,
        id: "",
        f: 0,
    };
    let b = name.as_bytes();
    let mut buf = [0u8; 10];
    let Some(known) = KINDS.get(b.len()) else {
        return OTHER;
    };
    // Most names are lower case already.
    let low = if b.iter().any(u8::is_ascii_uppercase) {
        for (d, s) in buf.iter_mut().zip(b) {
            *d = s.to_ascii_lowercase();
        }
        &buf[..b.len()]
    } else {
        b
    };
    known
        .iter()
        .find(|e| e.0.as_bytes() == low)
        .map_or(OTHER, |&(id, t, f)| Kind { t, id, f })
}
