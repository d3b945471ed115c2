//! Link resolution with the extractor's caches: a page's targets against its base URL
//! ([`Extractor::resolve_all`]), the resolved targets by base prefix ([`Extractor::joins`]), the
//! absolute URLs met and their canonical forms ([`Extractor::interned`]), and the bounds that
//! clear them.

use std::borrow::Cow;

use url::Url;

use super::Extractor;
use crate::error::Result;
use crate::keys::{self, FastBase};
use crate::parse::cache::Hash;
use crate::parse::html;

/// What a link target resolves to against a base URL.
#[derive(Clone, Copy)]
pub(super) enum Resolved {
    /// It does not parse.
    Invalid,
    /// A scheme other than http(s).
    OtherScheme,
    /// An absolute http(s) URL: its index in [`Extractor::urls`].
    Url(u32),
}

impl Resolved {
    /// As a value of [`Extractor::joins`].
    fn to_u32(self) -> u32 {
        match self {
            Resolved::Invalid => 0,
            Resolved::OtherScheme => 1,
            Resolved::Url(id) => id.saturating_add(2),
        }
    }

    fn from_u32(v: u32) -> Resolved {
        match v {
            0 => Resolved::Invalid,
            1 => Resolved::OtherScheme,
            id => Resolved::Url(id - 2),
        }
    }
}

/// A distinct target of a page not found in [`Extractor::joins`]: its index in the page's
/// distinct targets, and where its URL is in [`Extractor::joined`] with the URL's hash in
/// [`Extractor::interned`], or what it resolved to if it is not an http(s) URL.
pub(super) type Missed = (usize, std::result::Result<(usize, usize, Hash), Resolved>);

/// What the extractor knows of a URL it interns ([`Extractor::intern_hashed`]).
enum Known {
    /// Only its text.
    Text,
    /// Its text parsed (which is its serialization).
    Parsed(Url),
    /// That it is canonical, with its host key: written so by [`FastBase::join`].
    Canonical(u64),
}

/// An absolute URL the extractor has met, and its canonical form.
pub(super) struct Interned {
    /// As joined (fragment removed) or as given: where it is in `interned`'s keys, or the URL
    /// itself if the map could not take it.
    pub(super) url: Result<(u32, u32), Box<str>>,
    /// Canonical URL (where it is in [`Extractor::canon_text`]), fingerprint and host key;
    /// `None` if it cannot be crawled.
    pub(super) canon: Option<(usize, usize, u64, u64)>,
}

/// Entries of [`Extractor::urls`] before all caches are cleared (~150 bytes each with the
/// URL, its canonical form and 32 bytes of table). On the 200 x 250 websim corpus a parse meets
/// 52k distinct URLs.
pub(super) const URL_CACHE: usize = 1 << 16;

/// Bytes of URLs (as joined) in [`Extractor::interned`] before all caches are cleared.
pub(super) const URL_BYTES: usize = 16 << 20;

/// Entries of [`Extractor::joins`] before it is cleared (~90 bytes each: key and 32 bytes of
/// table). The same corpus has 213k distinct (base prefix, target) pairs (a site's relative
/// links are written from several directories), which this cap holds without clearing; at 2^16
/// it was cleared six times a run and missed 430k times instead of 213k (a URL parse and a
/// lookup in `interned` each).
pub(super) const JOIN_CACHE: usize = 1 << 18;

/// Bytes of keys in [`Extractor::joins`] before it is cleared.
pub(super) const JOIN_BYTES: usize = 32 << 20;

/// Keys longer than this (a `data:` URL, say) are not added to [`Extractor::joins`].
const JOIN_KEY_MAX: usize = 4096;

/// The part of `base` that resolving `target` against it depends on, for a target that is not
/// empty and starts with neither `?` nor `#` (see [`Extractor::join_key`]): nothing for an
/// absolute http(s) URL, the scheme and authority for a path starting with `/` (or `\`, its
/// equivalent in http URLs), else everything up to the last `/` of the path. `None` for bases
/// other than http(s).
pub(super) fn base_prefix<'b>(base: &'b Url, target: &str) -> Option<&'b str> {
    if !matches!(base.scheme(), "http" | "https") {
        return None;
    }
    if target.starts_with("http://") || target.starts_with("https://") {
        return Some("");
    }
    if target.starts_with(['/', '\\']) {
        return Some(&base[..url::Position::BeforePath]);
    }
    let s = &base[..url::Position::AfterPath];
    s.rfind('/').map(|i| &s[..=i])
}

impl Extractor {
    /// Empties the caches once they are full (between pages: a page's links hold indexes into
    /// `urls`), so their memory is bounded.
    pub(super) fn trim_caches(&mut self) {
        if self.urls.len() >= self.url_cache || self.interned.full() {
            self.joins.clear();
            self.interned.clear();
            self.urls.clear();
            self.canon_text.clear();
            self.slot.clear();
            self.cleared += 1;
        } else if self.joins.full() {
            self.joins.clear();
            self.cleared += 1;
        }
    }

    /// The index in `urls` of the absolute URL `url`, canonicalized when first met.
    pub(super) fn intern(&mut self, url: &str) -> u32 {
        self.intern_hashed(self.interned.hash(url), url, Known::Text)
    }

    /// [`Extractor::intern`] of `url`, whose hash in `interned` is `h`, with what the caller
    /// knows of it, so that a URL met for the first time is not parsed again to be
    /// canonicalized.
    fn intern_hashed(&mut self, h: Hash, url: &str, known: Known) -> u32 {
        if let Some(id) = self.interned.get(h, url) {
            return id;
        }
        let key = match known {
            Known::Canonical(host_key) => (url.len() <= self.canon.config().max_url_len)
                .then(|| (Cow::Borrowed(url), keys::fingerprint(url), host_key)),
            Known::Parsed(p) => {
                debug_assert_eq!(p.as_str(), url);
                let k = self.canon.canonicalize_parsed(p).ok();
                k.map(|k| (Cow::Owned(k.url), k.fingerprint, k.host_key))
            }
            Known::Text => {
                let k = self.canon.canonicalize(url, None).ok();
                k.map(|k| (Cow::Owned(k.url), k.fingerprint, k.host_key))
            }
        };
        let canon = key.map(|(text, fingerprint, host_key)| {
            let at = self.canon_text.len();
            self.canon_text.push_str(&text);
            (at, text.len(), fingerprint, host_key)
        });
        let id = u32::try_from(self.urls.len()).expect("caches are cleared long before");
        let url = self.interned.insert(h, url, id).ok_or_else(|| url.into());
        self.urls.push(Interned { url, canon });
        id
    }

    /// The URL of `urls[id]` as joined.
    pub(super) fn url_of(&self, id: u32) -> &str {
        match &self.urls[id as usize].url {
            Ok((at, len)) => self.interned.key(*at, *len),
            Err(url) => url,
        }
    }

    /// Appends the [`Extractor::joins`] key of `target` against `base` to `keys` and returns
    /// true, if the resolution can be cached. The result of resolving depends only on the
    /// target and its [`base_prefix`] unless the target is empty, starts with `?` or `#` (which
    /// keep the base's last path segment or query), or holds whitespace or control characters
    /// (which the URL parser strips or removes); keys longer than `JOIN_KEY_MAX` are not
    /// cached either.
    fn join_key(base: &Url, target: &str, keys: &mut String) -> bool {
        let cacheable = !target.is_empty()
            && !target.starts_with(['?', '#'])
            && target.bytes().all(|c| c > b' ');
        let Some(prefix) = cacheable.then(|| base_prefix(base, target)).flatten() else {
            return false;
        };
        if prefix.len() + 1 + target.len() > JOIN_KEY_MAX {
            return false;
        }
        keys.push_str(prefix);
        keys.push(' ');
        keys.push_str(target);
        true
    }

    /// What every link target of a page resolves to against `base`, in `resolved` (one per
    /// target, in order). Each distinct target is resolved once, and looked up in `joins` and
    /// `interned` in passes, so that the cache misses of the lookups overlap (the tables are
    /// too large for the CPU's caches, and a lookup was mostly two misses, one after the
    /// other).
    ///
    /// A resolution depends only on the target and its [`base_prefix`] unless the target is
    /// empty, starts with `?` or `#` (which keep the base's last path segment or query), or
    /// holds whitespace or control characters (which the URL parser strips or removes); all
    /// other targets are looked up in, or added to, `joins`.
    pub(super) fn resolve_all(
        &mut self,
        base: &Url,
        raw: &[html::RawLink<'_>],
        resolved: &mut Vec<Resolved>,
    ) {
        self.find_distinct(raw);
        self.join_keys(base, raw);
        resolved.clear();
        resolved.resize(raw.len(), Resolved::Invalid);
        self.look_up(base, raw, resolved);
        self.intern_missed(resolved);
        for (j, &f) in self.first.iter().enumerate() {
            resolved[j] = resolved[f];
        }
    }

    /// Step 1 of [`Extractor::resolve_all`]: the page's distinct targets (in `distinct`, and
    /// per link the first link with its target in `first`). A target written again on the
    /// page (a third of them are) resolves as it did the first time. `seen` is an
    /// open-addressing table of (32 bits of a target's hash, its index in `raw`), small enough
    /// to stay in cache.
    fn find_distinct(&mut self, raw: &[html::RawLink<'_>]) {
        let mask = (2 * raw.len()).next_power_of_two().max(8) - 1;
        let seen = &mut self.seen;
        seen.clear();
        seen.resize(mask + 1, (0, usize::MAX));
        self.first.clear();
        self.distinct.clear();
        for (j, l) in raw.iter().enumerate() {
            let h = xxhash_rust::xxh3::xxh3_64_with_seed(l.target.as_bytes(), self.seed);
            let tag = (h >> 32) as u32;
            let mut i = h as usize & mask;
            let f = loop {
                match seen[i] {
                    (_, usize::MAX) => {
                        seen[i] = (tag, j);
                        self.distinct.push((j, 0, 0, None));
                        break j;
                    }
                    (t, k) if t == tag && raw[k].target == l.target => break k,
                    _ => i = (i + 1) & mask,
                }
            };
            self.first.push(f);
        }
    }

    /// Step 2: the distinct targets' `joins` keys (in `key`) and hashes; then the table's slots
    /// for them and the keys these point to, read in loops of loads that do not depend on one
    /// another (nor branch on what they read), so that their cache misses overlap.
    fn join_keys(&mut self, base: &Url, raw: &[html::RawLink<'_>]) {
        let keys = &mut self.key;
        keys.clear();
        for d in self.distinct.iter_mut() {
            let at = keys.len();
            if Extractor::join_key(base, &raw[d.0].target, keys) {
                *d = (d.0, at, keys.len(), Some(self.joins.hash(&keys[at..])));
            }
        }
        let mut sum = 0u32;
        for d in &self.distinct {
            sum = sum.wrapping_add(d.3.map_or(0, |h| self.joins.touch_slot(h)));
        }
        for d in &self.distinct {
            sum = sum.wrapping_add(d.3.map_or(0, |h| self.joins.touch_key(h)));
        }
        std::hint::black_box(sum);
    }

    /// Step 3: the distinct targets looked up in `joins` (into `resolved`); the others resolved
    /// (fragment removed) into `missed`, the http(s) URLs among them into `joined`: written
    /// canonical by [`FastBase::join`] if the base and target allow, else by the URL parser
    /// (as a browser does), and then also, parsed, into `parsed` (canonicalized from these
    /// rather than parsed again from `joined` when first met).
    fn look_up(&mut self, base: &Url, raw: &[html::RawLink<'_>], resolved: &mut [Resolved]) {
        self.joined.clear();
        self.missed.clear();
        self.parsed.clear();
        let mut fast: Option<Option<FastBase<'_>>> = None;
        for (n, &(j, at, end, h)) in self.distinct.iter().enumerate() {
            if let Some(r) = h.and_then(|h| self.joins.get(h, &self.key[at..end])) {
                resolved[j] = Resolved::from_u32(r);
                continue;
            }
            self.joined_urls += 1;
            let from = self.joined.len();
            let target = &raw[j].target;
            let fast =
                fast.get_or_insert_with(|| FastBase::new(&self.canon, base, &mut self.known_dirs));
            let written =
                if let Some(host_key) = fast.and_then(|f| f.join(target, &mut self.joined)) {
                    self.parsed.push(Err(host_key));
                    self.joined_simple += 1;
                    Ok(())
                } else {
                    match base.join(target) {
                        Err(_) => Err(Resolved::Invalid),
                        Ok(mut url) => {
                            url.set_fragment(None);
                            if matches!(url.scheme(), "http" | "https") {
                                self.joined.push_str(url.as_str());
                                self.parsed.push(Ok(url));
                                Ok(())
                            } else {
                                Err(Resolved::OtherScheme)
                            }
                        }
                    }
                };
            let to = self.joined.len();
            let r = written.map(|()| (from, to, self.interned.hash(&self.joined[from..to])));
            self.missed.push((n, r));
        }
    }

    /// Step 4: the URLs of `missed` interned, after loads of their slots in `interned` (as in
    /// step 2), and the results added to `joins`.
    fn intern_missed(&mut self, resolved: &mut [Resolved]) {
        let mut sum = 0u32;
        for (_, r) in &self.missed {
            sum = sum.wrapping_add(r.as_ref().map_or(0, |&(.., h)| self.interned.touch_slot(h)));
        }
        for (_, r) in &self.missed {
            sum = sum.wrapping_add(r.as_ref().map_or(0, |&(.., h)| self.interned.touch_key(h)));
        }
        std::hint::black_box(sum);
        let (mut parsed, missed, joined) = (
            std::mem::take(&mut self.parsed),
            std::mem::take(&mut self.missed),
            std::mem::take(&mut self.joined),
        );
        let mut urls = parsed.drain(..);
        for &(n, r) in &missed {
            let r = match r {
                Ok((from, to, h)) => {
                    let known = match urls.next().expect("one entry of parsed per URL") {
                        Ok(url) => Known::Parsed(url),
                        Err(host_key) => Known::Canonical(host_key),
                    };
                    Resolved::Url(self.intern_hashed(h, &joined[from..to], known))
                }
                Err(r) => r,
            };
            let (j, at, end, h) = self.distinct[n];
            resolved[j] = r;
            if let Some(h) = h {
                let _ = self.joins.insert(h, &self.key[at..end], r.to_u32());
            }
        }
        drop(urls);
        (self.parsed, self.missed, self.joined) = (parsed, missed, joined);
    }

    /// Reads the first byte of the canonical URL of every `urls[id]` given. Their entries were
    /// last used pages ago and are rarely in the CPU's caches; these loads do not depend on one
    /// another, so their cache misses overlap here rather than come one by one in
    /// [`Extractor::emit`] (they were most of its time).
    pub(super) fn warm(&self, ids: impl Iterator<Item = u32>) {
        let text = self.canon_text.as_bytes();
        let mut sum = 0u8;
        for id in ids {
            if let Some(&(at, ..)) = self.urls.get(id as usize).and_then(|u| u.canon.as_ref()) {
                sum = sum.wrapping_add(text.get(at).copied().unwrap_or(0));
            }
        }
        std::hint::black_box(sum);
    }
}
