//! A bounded cache of whole answers, for sites whose answers are pure functions of the request
//! ([`Site::cache_key_headers`](crate::site::Site::cache_key_headers)).
//!
//! Why: rendering a synthetic page (tens of KB of generated text) costs far more than serving
//! it, so a benchmark that fetches the same URLs over and over measured the renderer, not the
//! server or the crawler. With the cache, a repeated request costs a hash, a lookup under a
//! short lock and an `Arc` clone; the body is never copied. A crawl that fetches each URL once
//! gains nothing and pays one key copy per response.
//!
//! The key is the method, host, target and the values of the headers the site names, encoded
//! into a buffer the connection reuses (no allocation on a hit). The cache is split into shards
//! with their own locks; a shard over its share of the byte budget drops entries in the map's
//! (arbitrary) iteration order until it is at half its share: random eviction, no bookkeeping.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, PoisonError};

use crate::site::{Body, Request, Response};

const SHARDS: usize = 16;
/// Bookkeeping bytes counted per entry besides its key and answer.
const ENTRY_OVERHEAD: usize = 96;

struct Entry {
    key: Box<[u8]>,
    response: Arc<Response>,
    size: usize,
}

#[derive(Default)]
struct Shard {
    map: HashMap<u64, Entry>,
    used: usize,
}

/// Answers by request key.
pub(super) struct Cache {
    shards: Box<[Mutex<Shard>]>,
    shard_budget: usize,
    headers: &'static [&'static str],
    hasher: RandomState,
}

impl Cache {
    /// A cache of at most about `budget` bytes keyed on `headers` besides method, host, target.
    pub(super) fn new(budget: usize, headers: &'static [&'static str]) -> Cache {
        Cache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            shard_budget: budget / SHARDS,
            headers,
            hasher: RandomState::new(),
        }
    }

    /// Writes the key of `req` into `key` (cleared first) and returns its hash.
    pub(super) fn key(&self, req: &Request, key: &mut Vec<u8>) -> u64 {
        key.clear();
        // Fields are length-prefixed, so no two requests share a key.
        let mut field = |bytes: Option<&[u8]>| match bytes {
            None => key.push(0),
            Some(b) => {
                key.push(1);
                key.extend_from_slice(&(b.len() as u64).to_le_bytes());
                key.extend_from_slice(b);
            }
        };
        field(Some(req.method.as_bytes()));
        field(Some(req.host.as_bytes()));
        field(Some(req.target.as_bytes()));
        field(Some(&[u8::from(req.tls)]));
        for name in self.headers {
            field(req.header(name).map(str::as_bytes));
        }
        self.hasher.hash_one(&key[..])
    }

    fn shard(&self, hash: u64) -> std::sync::MutexGuard<'_, Shard> {
        self.shards[(hash >> 59) as usize % SHARDS]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached answer for the key made by [`Cache::key`].
    pub(super) fn get(&self, hash: u64, key: &[u8]) -> Option<Arc<Response>> {
        let shard = self.shard(hash);
        shard
            .map
            .get(&hash)
            .filter(|e| *e.key == *key)
            .map(|e| e.response.clone())
    }

    /// Remembers an answer (unless it is too big to be worth a share of the budget).
    pub(super) fn put(&self, hash: u64, key: &[u8], response: &Arc<Response>) {
        let size = key.len() + ENTRY_OVERHEAD + size_of(response);
        if size > self.shard_budget / 4 {
            return;
        }
        let mut shard = self.shard(hash);
        let shard = &mut *shard;
        if shard.used + size > self.shard_budget {
            let target = self.shard_budget / 2;
            let mut used = shard.used;
            shard.map.retain(|_, e| {
                if used <= target {
                    return true;
                }
                used -= e.size;
                false
            });
            shard.used = used;
        }
        let entry = Entry {
            key: key.into(),
            response: response.clone(),
            size,
        };
        if let Some(old) = shard.map.insert(hash, entry) {
            shard.used -= old.size;
        }
        shard.used += size;
    }
}

/// Approximate heap bytes of a response.
fn size_of(r: &Response) -> usize {
    let headers: usize = r.headers.iter().map(|(n, v)| n.len() + v.len() + 48).sum();
    let body = match &r.body {
        Body::Full(b) | Body::Drip { bytes: b, .. } | Body::ResetAfter { bytes: b, .. } => b.len(),
        Body::WrongLength { bytes, .. } => bytes.len(),
        Body::Endless | Body::Stall { .. } => 0,
    };
    headers + body
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn req(target: &str, inm: Option<&str>) -> Request {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let mut headers = vec![("host".to_string(), "a.test".to_string())];
        if let Some(v) = inm {
            headers.push(("if-none-match".into(), v.into()));
        }
        Request {
            method: "GET".into(),
            target: target.into(),
            host: "a.test".into(),
            headers,
            peer: a,
            local: a,
            conn: 1,
            tls: false,
        }
    }

    #[test]
    fn keys_tell_requests_apart_and_the_budget_holds() {
        let c = Cache::new(SHARDS * 40_000, &["if-none-match"]);
        let mut k = Vec::new();
        let r = Arc::new(Response::new(200, "text/plain", vec![b'x'; 1000]));
        let h = c.key(&req("/a", None), &mut k);
        c.put(h, &k, &r);
        assert!(c.get(h, &k).is_some());
        for (t, inm) in [("/b", None), ("/a", Some("\"e\"")), ("/a", Some(""))] {
            let h2 = c.key(&req(t, inm), &mut k);
            assert!(c.get(h2, &k).is_none(), "{t} {inm:?}");
        }
        for i in 0..10_000 {
            let h = c.key(&req(&format!("/p{i}"), None), &mut k);
            c.put(h, &k, &r);
        }
        let used: usize = c.shards.iter().map(|s| s.lock().unwrap().used).sum();
        assert!(used <= SHARDS * 40_000, "{used}");
    }
}
