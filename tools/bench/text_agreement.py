#!/usr/bin/env python3
"""Agreement of dragnet's visible text (src/parse/text.rs) with resiliparse's plain-text
extraction over the 150 conformance pages in tests/data/html (docs/parse.md, "Visible text
(WET)").

Our side: write our text of each page first,
    DRAGNET_TEXT_OUT=/tmp/ours cargo test --lib parse::text::tests::dump_pages -- --ignored
then
    pip install resiliparse==2.0.1 levenshtein
    python3 tools/bench/text_agreement.py /tmp/ours

The reference: resiliparse's `extract_plain_text(tree, preserve_formatting=True,
main_content=False, list_bullets=False, alt_texts=True, links=False, form_fields=False,
noscript=False)` on the page decoded with the charset html5lib settled on (the `encoding` of
expected_links.jsonl, which our dump passes as the Content-Type charset), after two changes to
the parsed tree so that it extracts what a browser shows:
  - elements hidden by the rule of text.rs are removed (a `hidden` attribute,
    `aria-hidden="true"`, an inline style with `display: none` or `visibility: hidden`):
    resiliparse applies that rule only in its main-content mode;
  - `alt` attributes are removed: `alt_texts=True` keeps the text of `<figure>`,
    `<figcaption>` and SVG (which `alt_texts=False` drops), and without `alt` it adds no image
    descriptions, which neither a browser's innerText nor Common Crawl's WET has;
  - `<button>` and `<label>` elements become `<span>`s: `form_fields=False` drops their text
    (with `form_fields=True` it adds input values, in brackets), which a browser shows and
    Common Crawl's WET keeps (`--drop-form-text` leaves them).
The document title (resiliparse's `tree.title`) is put first, as text.rs does. `--raw` skips
these changes (the options above on the unchanged tree).

Both texts are normalized the same way: every run of whitespace (Python's `str.split()`, which
includes no-break spaces) becomes one space. The similarity of a page is
1 - Levenshtein distance / length of the longer text (characters; `--metric difflib` uses
difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() instead, much slower).
Reports each page, the mean, the median and the worst pages.
"""

import argparse
import codecs
import gzip
import json
import os
import statistics
import sys

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree


codecs.register_error("whatwg-c1", lambda e: (chr(e.object[e.start]), e.start + 1))


def style_hides(css):
    """The rule of text.rs `style_hides`."""
    for decl in css.split(";"):
        if ":" not in decl:
            continue
        prop, value = decl.split(":", 1)
        value = value.strip()
        if value[-10:].lower() == "!important":
            value = value[:-10].rstrip()
        prop, value = prop.strip().lower(), value.lower()
        if prop == "display" and value == "none":
            return True
        if prop == "visibility" and value in ("hidden", "collapse"):
            return True
    return False


def hidden(el):
    if el.hasattr("hidden"):
        return True
    aria = el.getattr("aria-hidden")
    if aria is not None and aria.strip("\t\n\x0c\r ").lower() == "true":
        return True
    style = el.getattr("style")
    return style is not None and style_hides(style)


def reference(html, raw, drop_form_text):
    tree = HTMLTree.parse(html)
    if not raw and tree.document is not None:
        # A walk over the elements (iterating a query_selector_all collection is quadratic).
        doomed, unwrap, todo = [], [], [tree.document.first_element_child]
        while todo:
            el = todo.pop()
            if el is None:
                continue
            todo.append(el.next_element_sibling)
            if hidden(el):
                doomed.append(el)
                continue
            if el.hasattr("alt"):
                el.delattr("alt")
            if el.tag in ("button", "label"):
                unwrap.append(el)
            todo.append(el.first_element_child)
        for el in doomed:
            el.decompose()
        if not drop_form_text:
            for el in unwrap:
                span = tree.create_element("span")
                while el.first_child is not None:
                    span.append_child(el.first_child)
                el.parent.replace_child(span, el)
    text = extract_plain_text(
        tree,
        preserve_formatting=True,
        main_content=False,
        list_bullets=False,
        alt_texts=True,
        links=False,
        form_fields=False,
        noscript=False,
    )
    title = " ".join((tree.title or "").split())
    return f"{title}\n{text}" if title else text


def norm(s):
    return " ".join(s.split())


def norm_lines(s):
    """Whitespace collapsed within lines, empty lines dropped: compares the line breaks too."""
    return "\n".join(" ".join(line.split()) for line in s.split("\n") if line.split())


def similarity(a, b, metric):
    if not a and not b:
        return 1.0
    if metric == "difflib":
        import difflib

        return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    import Levenshtein

    return 1.0 - Levenshtein.distance(a, b) / max(len(a), len(b))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ours", help="directory of NAME.txt, our visible text of each page")
    ap.add_argument(
        "--data",
        default=os.path.join(here, "..", "..", "tests", "data", "html"),
        help="tests/data/html (expected_links.jsonl and pages/)",
    )
    ap.add_argument("--metric", choices=["levenshtein", "difflib"], default="levenshtein")
    ap.add_argument("--raw", action="store_true", help="resiliparse on the unchanged tree")
    ap.add_argument(
        "--drop-form-text",
        action="store_true",
        help="leave <button> and <label> to resiliparse, which drops their text",
    )
    ap.add_argument("--worst", type=int, default=5, help="how many worst pages to list")
    ap.add_argument("--ref-out", help="also write the reference texts into this directory")
    ap.add_argument("--quiet", action="store_true", help="no line per page")
    args = ap.parse_args()

    rows = []
    with open(os.path.join(args.data, "expected_links.jsonl")) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    for rec in recs:
        name = rec["file"].removeprefix("pages/").removesuffix(".html.gz")
        with gzip.open(os.path.join(args.data, rec["file"])) as g:
            data = g.read()
        enc = rec.get("encoding") or "utf-8"
        if enc == "windows-1252":
            # The WHATWG windows-1252 maps the five bytes Python's cp1252 leaves undefined to
            # the C1 controls of the same value.
            html = data.decode("cp1252", errors="whatwg-c1")
        else:
            html = data.decode(enc, errors="replace")
        html = html.removeprefix("\ufeff")
        ref = reference(html, args.raw, args.drop_form_text)
        if args.ref_out:
            os.makedirs(args.ref_out, exist_ok=True)
            with open(os.path.join(args.ref_out, name + ".txt"), "w") as o:
                o.write(ref)
        try:
            with open(os.path.join(args.ours, name + ".txt"), encoding="utf-8") as o:
                ours = o.read()
        except FileNotFoundError:
            sys.exit(f"no {name}.txt in {args.ours}: run the dump first (see --help)")
        a, b = norm(ours), norm(ref)
        sim = similarity(a, b, args.metric)
        lines = similarity(norm_lines(ours), norm_lines(ref), args.metric)
        rows.append((sim, name, len(a), len(b), lines))
        if not args.quiet:
            print(f"{sim:.4f}  lines {lines:.4f}  ours {len(a):7d}  ref {len(b):7d}  {name}")

    sims = [r[0] for r in rows]
    lines = [r[4] for r in rows]
    variant = " (raw reference)" if args.raw else " (form text dropped)" if args.drop_form_text else ""
    print(
        f"\n{len(rows)} pages, {args.metric} similarity of whitespace-normalized text{variant}: "
        f"mean {statistics.mean(sims):.4f}, median {statistics.median(sims):.4f}, "
        f"min {min(sims):.4f}; characters ours {sum(r[2] for r in rows):,}, "
        f"reference {sum(r[3] for r in rows):,}"
    )
    print(
        f"with line breaks compared too (empty lines dropped): mean {statistics.mean(lines):.4f}, "
        f"median {statistics.median(lines):.4f}, min {min(lines):.4f}"
    )
    print(f"worst {args.worst}:")
    for sim, name, la, lb, _ in sorted(rows)[: args.worst]:
        print(f"  {sim:.4f}  ours {la:7d}  ref {lb:7d}  {name}")


if __name__ == "__main__":
    main()
