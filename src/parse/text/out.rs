//! The text being written ([`Out`]): lines, the separators due before the next text (a line
//! break, a space, a table cell's tab), whitespace collapsed or kept (`<pre>`), and the bound
//! in characters.

use crate::parse::html::tokenizer::is_ws;

/// Whether `b` is all ASCII whitespace, 16 bytes at a time (most text runs are the
/// whitespace between tags).
pub(super) fn all_ws(b: &[u8]) -> bool {
    let mut chunks = b.chunks_exact(16);
    for c in &mut chunks {
        if c.iter().fold(false, |bad, &x| bad | !is_ws(x)) {
            return false;
        }
    }
    chunks.remainder().iter().all(|&x| is_ws(x))
}

/// The text being written: lines, pending separators, and the bound.
pub(super) struct Out {
    s: String,
    /// The bound, in characters.
    max: usize,
    /// Characters that may still be written, once `exact`.
    left: usize,
    /// Whether characters are counted: only once `s` has `max` bytes, since until then it has
    /// fewer than `max` characters.
    exact: bool,
    /// The bound is reached: the walker stops.
    pub(super) full: bool,
    /// The current line has text.
    pub(super) line: bool,
    /// A line break is due before the next text.
    brk: bool,
    /// A space is due before the next text on this line.
    pub(super) space: bool,
    /// A tab (table cell) is due before the next text on this line.
    tab: bool,
}

impl Out {
    /// Text of at most `max` characters, with room for `capacity` bytes.
    pub(super) fn new(max: usize, capacity: usize) -> Self {
        Out {
            s: String::with_capacity(capacity.min(max)),
            max,
            left: max,
            exact: false,
            full: max == 0,
            line: false,
            brk: false,
            space: false,
            tab: false,
        }
    }

    /// Ends the current line, if it has text.
    pub(super) fn block(&mut self) {
        self.brk |= self.line;
    }

    /// A table cell starts: a tab if the line has text already.
    pub(super) fn cell(&mut self) {
        self.tab |= self.line;
    }

    /// Writes what is due before text on the current line.
    fn flush(&mut self) {
        if self.brk {
            self.end_line();
        } else if self.line && (self.tab || self.space) {
            self.push(if self.tab { "\t" } else { " " });
        }
        self.tab = false;
        self.space = false;
    }

    /// Trims the current line's trailing whitespace and writes a line break.
    fn end_line(&mut self) {
        while let Some(c) = self
            .s
            .chars()
            .next_back()
            .filter(|c| c.is_whitespace() && *c != '\n')
        {
            self.s.truncate(self.s.len() - c.len_utf8());
            if self.exact {
                self.left += 1;
            }
        }
        if !self.s.is_empty() {
            self.push("\n");
        }
        self.line = false;
        self.brk = false;
        self.tab = false;
        self.space = false;
    }

    /// Appends `w` as far as the bound allows.
    fn push(&mut self, w: &str) {
        if self.full {
            return;
        }
        if !self.exact {
            self.s.push_str(w);
            if self.s.len() >= self.max {
                // From here on characters are counted.
                self.exact = true;
                match self.s.char_indices().nth(self.max) {
                    Some((cut, _)) => {
                        self.s.truncate(cut);
                        self.left = 0;
                    }
                    None => self.left = self.max - self.s.chars().count(),
                }
                self.full = self.left == 0;
            }
            return;
        }
        let n = if w.is_ascii() {
            w.len()
        } else {
            w.bytes().filter(|&b| b & 0xc0 != 0x80).count()
        };
        if n < self.left {
            self.s.push_str(w);
            self.left -= n;
        } else {
            let cut = w.char_indices().nth(self.left).map_or(w.len(), |(i, _)| i);
            self.s.push_str(&w[..cut]);
            self.left = 0;
            self.full = true;
        }
    }

    /// Text whose whitespace collapses: runs of ASCII whitespace are one space, and a line
    /// starts with no whitespace (nor a no-break space).
    pub(super) fn text(&mut self, s: &str) {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() && !self.full {
            if is_ws(b[i]) {
                self.space |= self.line;
                i += 1;
                continue;
            }
            // Words with single spaces between them are written as they are.
            let start = i;
            loop {
                while i < b.len() && !is_ws(b[i]) {
                    i += 1;
                }
                if b.get(i) == Some(&b' ') && b.get(i + 1).is_some_and(|&c| !is_ws(c)) {
                    i += 1;
                } else {
                    break;
                }
            }
            let mut w = &s[start..i];
            if (!self.line || self.brk) && b[start] >= 0x80 {
                w = w.trim_start_matches(char::is_whitespace);
                if w.is_empty() {
                    continue;
                }
            }
            if self.brk || self.space || self.tab {
                self.flush();
            }
            self.push(w);
            self.line = true;
        }
    }

    /// Text that keeps its whitespace (`<pre>`): line breaks as written, empty lines too.
    pub(super) fn pre(&mut self, s: &str) {
        for (k, part) in s.split('\n').enumerate() {
            if self.full {
                return;
            }
            if k > 0 {
                if self.brk {
                    self.end_line();
                }
                if !self.s.is_empty() {
                    self.push("\n");
                }
                self.line = false;
            }
            if !part.is_empty() {
                self.flush();
                self.push(part);
                self.line = true;
            }
        }
    }

    /// The text, trailing whitespace removed.
    pub(super) fn finish(mut self) -> String {
        let n = self.s.trim_end().len();
        self.s.truncate(n);
        self.s
    }
}
