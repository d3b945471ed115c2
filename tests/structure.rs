//! The shape of `src/`: the library's layers, and no circle of imports between its modules.
//!
//! Each file of `src/` is a module (`config/fetch.rs` is `config::fetch`, `crawl/mod.rs` is
//! `crawl`). A module depends on another when its code names it: every `crate::...` path, in
//! `use` lines or inline, and every `super::...` path (in the binary's files, `src/cli/`, every
//! `dragnet::...` path). A path that ends at a name a `mod.rs` re-exports (`pub use
//! fetch::FetchSection`) is followed to the module that defines it, so `use
//! crate::config::FetchSection` depends on `config::fetch`, not on all of `config`. Unit tests
//! (from the first `#[cfg(test)]` line of a file, and `tests.rs` modules) and comments are left
//! out: a test may use anything, and a doc link is not an import.
//!
//! Two checks: no circle between modules (files), and the layer order of docs/architecture.md
//! ("Layers"): a top-level module imports only the modules listed below it there. Each fails
//! naming the lines at fault.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module: its path (`crawl::config`), its code (tests cut off) and its re-exports.
struct Module {
    file: PathBuf,
    code: Vec<(usize, String)>,
    /// Name -> the module path it is re-exported from (`Config` -> `crawl::config`).
    reexports: BTreeMap<String, String>,
}

fn module_path(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code lines of a file, comments dropped, cut where an inline `#[cfg(test)] mod ... {`
/// starts (a `#[cfg(test)] mod tests;` declaration only skips itself).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            let next = lines.get(i + 1).map_or("", |l| l.trim());
            if next.contains("mod ") && next.ends_with('{') {
                break;
            }
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        let code = match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        out.push((i + 1, code.to_owned()));
    }
    out
}

/// `use` statements joined onto one line each (they may span lines), with their first line.
fn use_statements(code: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(usize, String)> = None;
    for (n, line) in code {
        let t = line.trim();
        if cur.is_none()
            && (t.starts_with("use ")
                || t.starts_with("pub use ")
                || t.starts_with("pub(crate) use "))
        {
            cur = Some((*n, String::new()));
        }
        if let Some((_, s)) = cur.as_mut() {
            s.push_str(t);
            s.push(' ');
            if t.ends_with(';') {
                out.push(cur.take().unwrap());
            }
        }
    }
    out
}

/// Expands `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e` (aliases and globs dropped).
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap().trim();
        return vec![path.trim_end_matches("::*").to_owned()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| {
            if p == "self" {
                prefix.trim_end_matches("::").to_owned()
            } else {
                format!("{prefix}{p}")
            }
        })
        .collect()
}

/// Absolute module-relative path (`crawl::config::ByteSize`) of a path written in module `at`.
fn absolute(at: &str, path: &str) -> Option<String> {
    if let Some(rest) = path.strip_prefix("crate::") {
        return Some(rest.to_owned());
    }
    // `super` of a `mod.rs` (or of a file) is the parent of the module itself.
    let mut base: Vec<&str> = if at.is_empty() {
        vec![]
    } else {
        at.split("::").collect()
    };
    let mut rest = path;
    if let Some(r) = rest.strip_prefix("self::") {
        return Some(join(&base, r));
    }
    let mut any = false;
    while let Some(r) = rest.strip_prefix("super::") {
        base.pop();
        rest = r;
        any = true;
    }
    any.then(|| join(&base, rest))
}

fn join(base: &[&str], rest: &str) -> String {
    if base.is_empty() {
        rest.to_owned()
    } else {
        format!("{}::{rest}", base.join("::"))
    }
}

/// The module a path names: its longest module prefix, then followed through re-exports.
fn resolve(mods: &BTreeMap<String, Module>, path: &str) -> Option<String> {
    let segs: Vec<&str> = path.split("::").collect();
    for n in (1..=segs.len()).rev() {
        let m = segs[..n].join("::");
        if let Some(module) = mods.get(&m) {
            if let Some(next) = segs.get(n) {
                if let Some(origin) = module.reexports.get(*next) {
                    if origin != &m {
                        let rest = segs[n..].join("::");
                        return resolve(mods, &format!("{origin}::{rest}")).or(Some(m));
                    }
                }
            }
            return Some(m);
        }
    }
    // A name the crate root re-exports (`crate::Error`).
    let origin = mods.get("")?.reexports.get(segs[0])?;
    let rest = segs.join("::");
    resolve(mods, &format!("{origin}::{rest}"))
}

/// Paths written in a line: `crate::a::b` and `super::...::c` tokens.
fn inline_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = line[from..].find(start) {
            let at = from + i;
            let before = line[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                from = at + start.len();
                continue;
            }
            let tail = &line[at..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            out.push(tail[..end].trim_end_matches(':').to_owned());
            from = at + end.max(1);
        }
    }
    out
}

/// Writes `text` to `rel` under `src`, making its directories (the self-tests' module trees).
fn write_file(src: &Path, rel: &str, text: &str) {
    let p = src.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn no_import_circles_between_library_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let circles = import_circles(&src);
    assert!(
        circles.is_empty(),
        "import circles in src/:\n{}",
        circles.join("")
    );
}

/// The checker finds a circle that goes through a re-export, and none where the re-export
/// leads elsewhere or the use is in unit tests.
#[test]
fn the_circle_check_finds_a_circle_through_a_reexport() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path();
    let write = |rel: &str, text: &str| write_file(src, rel, text);
    write("lib.rs", "pub mod a;\npub mod b;\n");
    write("a/mod.rs", "mod x;\nmod y;\npub use x::X;\npub use y::Y;\n");
    write("a/x.rs", "use crate::b::B;\npub struct X(B);\n");
    write("a/y.rs", "pub struct Y;\n");
    write(
        "b.rs",
        "use crate::a::Y;\npub struct B(Y);\n#[cfg(test)]\nmod tests {\n    use crate::a::X;\n}\n",
    );
    assert!(import_circles(src).is_empty(), "{:?}", import_circles(src));
    write("b.rs", "pub struct B(crate::a::X);\n");
    let circles = import_circles(src);
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(
        circles[0].starts_with("circle: a::x, b\n") && circles[0].contains("src/b.rs:1"),
        "{}",
        circles[0]
    );
}

/// Each circle of modules in the tree at `src`, with the lines that close it.
fn import_circles(src: &Path) -> Vec<String> {
    let (names, edges) = module_graph(src);
    let mut out = Vec::new();
    for c in sccs(&names, &edges) {
        let mut report = format!(
            "circle: {}\n",
            c.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        for a in &c {
            for (b, why) in edges.get(a).into_iter().flatten() {
                if c.contains(b) {
                    report.push_str(&format!("  {a} -> {b}  ({why})\n"));
                }
            }
        }
        out.push(report);
    }
    out
}

/// Module -> the modules it names -> the first line naming each.
type Edges = BTreeMap<String, BTreeMap<String, String>>;

/// The modules of the tree at `src` and their dependencies, each with the line that makes it.
fn module_graph(src: &Path) -> (Vec<String>, Edges) {
    let mut mods = read_modules(src);
    let names: Vec<String> = mods.keys().cloned().collect();
    for name in &names {
        let re = reexports(name, &mods[name].code);
        mods.get_mut(name).unwrap().reexports = re;
    }
    // Edges, with the line that makes each.
    let mut edges: Edges = BTreeMap::new();
    for name in &names {
        let m = &mods[name];
        for (n, p) in paths_named(&m.code) {
            let Some(abs) = absolute(name, &p) else {
                continue;
            };
            let Some(target) = resolve(&mods, &abs) else {
                continue;
            };
            // A module's use of itself is nothing; the crate root only declares modules.
            if target == *name || name.is_empty() {
                continue;
            }
            let rel = m.file.strip_prefix(src).unwrap().display().to_string();
            edges
                .entry(name.clone())
                .or_default()
                .entry(target)
                .or_insert(format!("src/{rel}:{n}: {p}"));
        }
    }
    (names, edges)
}

/// Every module of the tree at `src` (tests modules aside) by its path, with its code lines
/// (no re-exports yet).
fn read_modules(src: &Path) -> BTreeMap<String, Module> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut mods: BTreeMap<String, Module> = BTreeMap::new();
    for f in files {
        let path = module_path(src, &f);
        if path.ends_with("tests") {
            continue;
        }
        let mut text = std::fs::read_to_string(&f).unwrap();
        // The binary (`src/cli/`) names the library `dragnet`, and `crate` is itself.
        if path.starts_with("cli") {
            text = text
                .replace("crate::", "bin::")
                .replace("dragnet::", "crate::");
        }
        mods.insert(
            path,
            Module {
                file: f,
                code: code_lines(&text),
                reexports: BTreeMap::new(),
            },
        );
    }
    mods
}

/// Re-exports of the module `name` (of `code`): `pub use sub::{A, B}` maps A and B to
/// `module::sub`.
fn reexports(name: &str, code: &[(usize, String)]) -> BTreeMap<String, String> {
    let mut re = BTreeMap::new();
    for (_, stmt) in use_statements(code) {
        let Some(tree) = stmt
            .strip_prefix("pub use ")
            .map(|s| s.trim().trim_end_matches(';'))
        else {
            continue;
        };
        for p in expand(tree) {
            let full = absolute(name, &p).unwrap_or_else(|| {
                join(
                    &name
                        .split("::")
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>(),
                    &p,
                )
            });
            if let Some((module, item)) = full.rsplit_once("::") {
                re.insert(item.to_owned(), module.to_owned());
            }
        }
    }
    re
}

/// Every path `code` names, with its line: in its `use` statements (not re-exports), and
/// inline elsewhere.
fn paths_named(code: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut paths: Vec<(usize, String)> = Vec::new();
    for (n, stmt) in use_statements(code) {
        if stmt.starts_with("pub use ") {
            continue; // a re-export is not a use
        }
        let tree = stmt
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("use ")
            .trim()
            .trim_end_matches(';');
        for p in expand(tree) {
            paths.push((n, p));
        }
    }
    for (n, line) in code {
        let t = line.trim_start();
        if t.starts_with("use ") || t.starts_with("pub use ") || t.starts_with("pub(crate) use ") {
            continue;
        }
        for p in inline_paths(line) {
            paths.push((*n, p));
        }
    }
    paths
}

/// The layer order: the top-level modules listed in the first ```text block after the heading
/// `## Layers` of `doc`, one per line (the first word), top layer first.
fn layer_order(doc: &str) -> Vec<String> {
    let at = doc
        .find("\n## Layers")
        .expect("docs/architecture.md has a '## Layers' section");
    let block = &doc[at..];
    let start = block
        .find("```text\n")
        .expect("a ```text block under '## Layers'")
        + 8;
    let end = start + block[start..].find("```").unwrap();
    block[start..end]
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Every import of a top-level module by one at or above it in `order` (top first), and every
/// top-level module of `src` that `order` does not list.
fn layer_violations(src: &Path, order: &[String]) -> Vec<String> {
    let (names, edges) = module_graph(src);
    let top = |m: &str| m.split("::").next().unwrap_or("").to_owned();
    let rank = |m: &str| order.iter().position(|o| *o == top(m));
    let mut out = Vec::new();
    let tops: BTreeSet<String> = names
        .iter()
        .map(|n| top(n))
        .filter(|t| !t.is_empty())
        .collect();
    for t in &tops {
        if rank(t).is_none() {
            out.push(format!("module {t} is not in the layer order\n"));
        }
    }
    for (a, targets) in &edges {
        for (b, why) in targets {
            if top(a) == top(b) {
                continue;
            }
            if let (Some(ra), Some(rb)) = (rank(a), rank(b)) {
                if rb <= ra {
                    out.push(format!(
                        "{} imports {}, a layer above it: {why}\n",
                        top(a),
                        top(b)
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn each_module_imports_only_the_layers_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let order = layer_order(&doc);
    assert!(
        order.len() >= 20,
        "the layer order lists every module: {order:?}"
    );
    let bad = layer_violations(&root.join("src"), &order);
    assert!(
        bad.is_empty(),
        "imports against docs/architecture.md's layer order (top first: {}):\n{}",
        order.join(", "),
        bad.join("")
    );
}

/// The layer check finds an import upward, through a re-export, and a module the order misses.
#[test]
fn the_layer_check_finds_an_import_of_a_layer_above() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path();
    let write = |rel: &str, text: &str| write_file(src, rel, text);
    write("lib.rs", "pub mod low;\npub mod high;\n");
    write("low/mod.rs", "mod x;\npub use x::X;\n");
    write("low/x.rs", "pub struct X;\n");
    write("high.rs", "use crate::low::X;\npub struct H(X);\n");
    let order: Vec<String> = ["high", "low"].map(String::from).to_vec();
    assert!(layer_violations(src, &order).is_empty());
    write("low/x.rs", "pub struct X(crate::high::H);\n");
    let bad = layer_violations(src, &order);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].starts_with("low imports high") && bad[0].contains("src/low/x.rs:1"),
        "{bad:?}"
    );
    let bad = layer_violations(src, &["low".to_owned()]);
    assert!(
        bad.iter()
            .any(|b| b.contains("module high is not in the layer order")),
        "{bad:?}"
    );
}

fn sccs(
    nodes: &[String],
    edges: &BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<BTreeSet<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        on: BTreeSet<String>,
        stack: Vec<String>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        t.index.insert(v.to_owned(), t.next);
        t.low.insert(v.to_owned(), t.next);
        t.next += 1;
        t.stack.push(v.to_owned());
        t.on.insert(v.to_owned());
        let succ: Vec<String> = t
            .edges
            .get(v)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for w in succ {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let l = t.low[v].min(t.low[&w]);
                t.low.insert(v.to_owned(), l);
            } else if t.on.contains(&w) {
                let l = t.low[v].min(t.index[&w]);
                t.low.insert(v.to_owned(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = BTreeSet::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                c.insert(w.clone());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}
