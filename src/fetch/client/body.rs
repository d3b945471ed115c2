//! Reading a response body under the limits of `[fetch]` (the client's module doc): up to
//! `max_body` (one byte more tells a longer body), ended once the total timeout is over or, after
//! the grace period, the rate falls below `min_rate`; a read error mid-body says how it ended.

use std::io::{self, Read};
use std::time::{Duration, Instant};

use super::{secs, Cut};
use crate::config::fetch::FetchSection;

/// Reads a body up to `max` bytes, checking the rate and the total time after each read.
///
/// The body is read straight into its own buffer (sized by the announced length), not
/// through a scratch buffer: one copy from the client's buffer, none zeroed.
pub(super) fn read_body(
    cfg: &FetchSection,
    r: impl Read,
    start: Instant,
    max: usize,
    hint: usize,
) -> (Vec<u8>, Option<Cut>) {
    let mut paced = Paced {
        inner: r,
        start,
        grace: secs(cfg.min_rate_grace_secs),
        total: secs(cfg.total_timeout_secs),
        min_rate: cfg.min_rate as f64,
        got: 0,
        stop: None,
    };
    // Without an announced length, room for a typical page: no run of small reads.
    let first = if hint > 0 { hint } else { BODY_CHUNK.min(max) };
    let mut body = Vec::with_capacity(first);
    // At the cap, one more byte tells a body of exactly `max` from a longer one.
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    let read = (&mut paced).take(limit).read_to_end(&mut body);
    if body.len() > max {
        body.truncate(max);
        return (body, Some(Cut::Length));
    }
    match (read, paced.stop) {
        (Ok(_), _) => (body, None),
        (Err(_), Some(cut)) => (body, Some(cut)),
        (Err(e), None) => (body, Some(read_error_cut(&e))),
    }
}

/// Bytes a body without an announced length is first given room for.
const BODY_CHUNK: usize = 16 << 10;

/// A body reader that ends the body once the total time is over or, after the grace period,
/// the average rate falls below `min_rate`: checked after each read that returned bytes; the
/// next read then fails, and `stop` says why.
struct Paced<R> {
    inner: R,
    start: Instant,
    grace: Duration,
    total: Duration,
    min_rate: f64,
    got: usize,
    stop: Option<Cut>,
}

impl<R: Read> Read for Paced<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(cut) = self.stop {
            return Err(io::Error::other(format!("body ended: {cut:?}")));
        }
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.got += n;
            let elapsed = self.start.elapsed();
            if elapsed >= self.total {
                self.stop = Some(Cut::Timeout);
            } else if elapsed > self.grace
                && (self.got as f64) < self.min_rate * elapsed.as_secs_f64()
            {
                self.stop = Some(Cut::TooSlow);
            }
        }
        Ok(n)
    }
}

/// How a read error mid-body ends the body.
fn read_error_cut(e: &io::Error) -> Cut {
    if e.kind() == io::ErrorKind::TimedOut {
        return Cut::Timeout;
    }
    if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<ureq::Error>()) {
        if matches!(inner, ureq::Error::Timeout(_)) {
            return Cut::Timeout;
        }
        if let ureq::Error::Io(io) = inner {
            if io.kind() == io::ErrorKind::TimedOut {
                return Cut::Timeout;
            }
        }
    }
    Cut::Disconnect
}
