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

/// An element of [`KINDS`]: its name as a [`key`], its lower-case name, which it is, its flags.
pub(super) struct Entry {
    key: u128,
    pub(super) name: &'static str,
    t: T,
    f: u16,
}

/// An entry of [`KINDS`].
const fn e(name: &'static str, t: T, f: u16) -> Entry {
    Entry {
        key: key(name.as_bytes()),
        name,
        t,
        f,
    }
}

/// The elements the walker knows, by family. [`kind`] finds a name through [`INDEX`].
pub(super) static KINDS: [Entry; 108] = [
    // Formatting elements: their end tags look through special elements.
    e("a", T::A, FMT),
    e("b", T::B, FMT),
    e("i", T::I, FMT),
    e("u", T::U, FMT),
    e("s", T::S, FMT),
    e("em", T::Em, FMT),
    e("tt", T::Tt, FMT),
    e("big", T::Big, FMT),
    e("code", T::Code, FMT),
    e("font", T::Font, FMT),
    e("nobr", T::Nobr, FMT),
    e("small", T::Small, FMT),
    e("strike", T::Strike, FMT),
    e("strong", T::Strong, FMT),
    // Blocks (`<legend>` closes no `<p>`).
    e("p", T::P, B),
    e("div", T::Div, B),
    e("li", T::Li, B),
    e("dd", T::Dd, B),
    e("dt", T::Dt, B),
    e("dl", T::Dl, B),
    e("ul", T::Ul, B),
    e("ol", T::Ol, B),
    e("h1", T::H1, B),
    e("h2", T::H2, B),
    e("h3", T::H3, B),
    e("h4", T::H4, B),
    e("h5", T::H5, B),
    e("h6", T::H6, B),
    e("dir", T::Dir, B),
    e("nav", T::Nav, B),
    e("menu", T::Menu, B),
    e("main", T::Main, B),
    e("form", T::Form, B),
    e("aside", T::Aside, B),
    e("center", T::Center, B),
    e("header", T::Header, B),
    e("footer", T::Footer, B),
    e("hgroup", T::Hgroup, B),
    e("search", T::Search, B),
    e("figure", T::Figure, B),
    e("dialog", T::Dialog, B),
    e("address", T::Address, B),
    e("article", T::Article, B),
    e("details", T::Details, B),
    e("summary", T::Summary, B),
    e("section", T::Section, B),
    e("fieldset", T::Fieldset, B),
    e("figcaption", T::Figcaption, B),
    e("blockquote", T::Blockquote, B),
    e("plaintext", T::Plaintext, B),
    e("legend", T::Legend, BLOCK),
    // Blocks that keep their whitespace or are raw text, and `<hr>`.
    e("pre", T::Pre, B | PRE),
    e("listing", T::Listing, B | PRE),
    e("xmp", T::Xmp, B | RAW),
    e("hr", T::Hr, B | VOID),
    // Tables.
    e("table", T::Table, B | SCOPE | TABLE_PART),
    e("caption", T::Caption, BLOCK | SPECIAL | SCOPE | TABLE_PART),
    e("colgroup", T::Colgroup, SPECIAL | TABLE_PART),
    e("tbody", T::Tbody, SPECIAL | TABLE_PART),
    e("thead", T::Thead, SPECIAL | TABLE_PART),
    e("tfoot", T::Tfoot, SPECIAL | TABLE_PART),
    e("tr", T::Tr, BLOCK | SPECIAL | TABLE_PART),
    e("td", T::Td, SPECIAL | SCOPE | TABLE_PART),
    e("th", T::Th, SPECIAL | SCOPE | TABLE_PART),
    e("col", T::Col, SPECIAL | VOID),
    // Never rendered.
    e("rp", T::Rp, HIDE),
    e("audio", T::Audio, HIDE),
    e("video", T::Video, HIDE),
    e("datalist", T::Datalist, HIDE),
    // Skipped by the tokenizer (raw text, RCDATA, script data).
    e("style", T::Style, SPECIAL | RAW),
    e("title", T::Title, SPECIAL | RAW),
    e("script", T::Script, SPECIAL | RAW),
    e("iframe", T::Iframe, SPECIAL | RAW),
    e("noembed", T::Noembed, SPECIAL | RAW),
    e("noframes", T::Noframes, SPECIAL | RAW),
    e("noscript", T::Noscript, SPECIAL | RAW),
    e("textarea", T::Textarea, SPECIAL | RAW),
    // Other elements the tree construction knows.
    e("br", T::Br, SPECIAL | VOID),
    e("applet", T::Applet, SPECIAL | SCOPE),
    e("object", T::Object, SPECIAL | SCOPE),
    e("marquee", T::Marquee, SPECIAL | SCOPE),
    e("button", T::Button, SPECIAL),
    e("select", T::Select, SPECIAL),
    e("option", T::Option, 0),
    e("optgroup", T::Optgroup, 0),
    e("frameset", T::Frameset, SPECIAL),
    e("template", T::Template, SPECIAL),
    // Void elements.
    e("img", T::Void, SPECIAL | VOID),
    e("wbr", T::Void, SPECIAL | VOID),
    e("area", T::Void, SPECIAL | VOID),
    e("base", T::Void, SPECIAL | VOID),
    e("link", T::Void, SPECIAL | VOID),
    e("meta", T::Void, SPECIAL | VOID),
    e("embed", T::Void, SPECIAL | VOID),
    e("input", T::Void, SPECIAL | VOID),
    e("param", T::Void, SPECIAL | VOID),
    e("track", T::Void, SPECIAL | VOID),
    e("frame", T::Void, SPECIAL | VOID),
    e("image", T::Void, SPECIAL | VOID),
    e("keygen", T::Void, SPECIAL | VOID),
    e("source", T::Void, SPECIAL | VOID),
    e("bgsound", T::Void, SPECIAL | VOID),
    e("basefont", T::Void, SPECIAL | VOID),
    // Implied.
    e("html", T::Html, ROOT),
    e("head", T::Html, ROOT),
    e("body", T::Html, ROOT),
    // Foreign content.
    e("svg", T::Svg, 0),
    e("math", T::Math, 0),
];

/// A tag name of at most 15 bytes, lower-cased, as a number: its bytes, and its length in the
/// top byte.
const fn key(name: &[u8]) -> u128 {
    let mut k = (name.len() as u128) << 120;
    let mut i = 0;
    while i < name.len() {
        k |= (name[i].to_ascii_lowercase() as u128) << (8 * i);
        i += 1;
    }
    k
}

/// The slots of [`INDEX`].
const SLOTS: usize = 256;

/// Where a search of [`INDEX`] for `key` starts.
const fn slot(key: u128) -> usize {
    ((key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize
}

/// [`KINDS`] as an open-addressing hash table built at compile time: 1 + an index in `KINDS`,
/// or 0 for an empty slot. (As fast as the `match` on names by length it replaces, measured on
/// the tags of the conformance pages; a search of the table by length was 1.3 to 3 times
/// slower.)
static INDEX: [u8; SLOTS] = {
    assert!(KINDS.len() < SLOTS / 2);
    let mut index = [0u8; SLOTS];
    let mut n = 0;
    while n < KINDS.len() {
        let mut i = slot(KINDS[n].key);
        while index[i] != 0 {
            i = (i + 1) % SLOTS;
        }
        index[i] = n as u8 + 1;
        n += 1;
    }
    index
};

/// The [`Kind`] of a tag name (ASCII case-insensitive).
pub(super) fn kind(name: &str) -> Kind {
    const OTHER: Kind = Kind {
        t: T::Other,
        id: "",
        f: 0,
    };
    if name.len() > 15 {
        return OTHER;
    }
    let key = key(name.as_bytes());
    let mut i = slot(key);
    loop {
        let e = match INDEX[i] {
            0 => return OTHER,
            n => &KINDS[n as usize - 1],
        };
        if e.key == key {
            return Kind {
                t: e.t,
                id: e.name,
                f: e.f,
            };
        }
        i = (i + 1) % SLOTS;
    }
}
