//! [`FetchErrorKind`]: why a fetch result has no usable answer, the one definition of each
//! string a [`FetchResult`](super::FetchResult) records in `error`.
//!
//! The record keeps the string (run files stay byte for byte what earlier builds wrote, and a
//! kind written by another build still decodes); code reads it through
//! [`FetchResult::error_kind`](super::FetchResult::error_kind) and writes it with
//! [`FetchErrorKind::as_str`]. The fetch stage's counters are `error_<kind>`
//! (`crate::crawl::report::counter::error`).

use std::fmt;

/// Why a URL of a fetch list got no usable answer (`FetchResult::error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FetchErrorKind {
    // Not attempted this cycle: back to the frontier as it was.
    /// `deferred`: the deadline (or the closing of the cycle's window) came first.
    Deferred,
    /// `parked`: its host is parked (`[fetch] park_after_failed_runs`).
    Parked,
    // Refused without a request.
    /// `url`: the URL cannot be fetched (not http/https, no host, unparsable).
    Url,
    /// `out_of_scope`: the scope as configured now refuses it.
    OutOfScope,
    /// `robots`: robots.txt disallows it.
    Robots,
    /// `robots_unreachable`: its origin's robots.txt could not be fetched this run.
    RobotsUnreachable,
    /// `host_failing`: its host failed `max_host_failures` requests in a row this run.
    HostFailing,
    /// `ssrf`: every address of the host was refused by the SSRF guard.
    Ssrf,
    // The request failed (the HTTP client's errors).
    /// `dns`: the name did not resolve.
    Dns,
    /// `connect`: the connection could not be made or was lost before the response head.
    Connect,
    /// `timeout`: a timeout before the response head was complete, or one that cut the body.
    Timeout,
    /// `headers_too_large`: the response head exceeded `max_header_bytes`.
    HeadersTooLarge,
    /// `tls`: a TLS handshake failure other than the certificate reasons below.
    Tls,
    /// `tls_expired`: the server's certificate has expired (or is not yet valid).
    TlsExpired,
    /// `tls_wrong_name`: the server's certificate is for another name.
    TlsWrongName,
    /// `tls_untrusted`: the certificate does not lead to a trusted root (self-signed, unknown
    /// CA).
    TlsUntrusted,
    /// `protocol`: the server did not speak HTTP/1.x correctly.
    Protocol,
    // An answer cut short.
    /// `too_slow`: the transfer fell below `min_rate` after the grace period.
    TooSlow,
    /// `disconnect`: the connection was closed or reset before the body ended.
    Disconnect,
    // An answer kept, with a note.
    /// `decoded_too_large`: the payload decodes to more than `max_decoded`; the answer is
    /// still usable.
    DecodedTooLarge,
}

impl FetchErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [FetchErrorKind; 20] = [
        FetchErrorKind::Deferred,
        FetchErrorKind::Parked,
        FetchErrorKind::Url,
        FetchErrorKind::OutOfScope,
        FetchErrorKind::Robots,
        FetchErrorKind::RobotsUnreachable,
        FetchErrorKind::HostFailing,
        FetchErrorKind::Ssrf,
        FetchErrorKind::Dns,
        FetchErrorKind::Connect,
        FetchErrorKind::Timeout,
        FetchErrorKind::HeadersTooLarge,
        FetchErrorKind::Tls,
        FetchErrorKind::TlsExpired,
        FetchErrorKind::TlsWrongName,
        FetchErrorKind::TlsUntrusted,
        FetchErrorKind::Protocol,
        FetchErrorKind::TooSlow,
        FetchErrorKind::Disconnect,
        FetchErrorKind::DecodedTooLarge,
    ];

    /// The string recorded in `FetchResult::error` (and counted as `error_<kind>`).
    pub const fn as_str(self) -> &'static str {
        match self {
            FetchErrorKind::Deferred => "deferred",
            FetchErrorKind::Parked => "parked",
            FetchErrorKind::Url => "url",
            FetchErrorKind::OutOfScope => "out_of_scope",
            FetchErrorKind::Robots => "robots",
            FetchErrorKind::RobotsUnreachable => "robots_unreachable",
            FetchErrorKind::HostFailing => "host_failing",
            FetchErrorKind::Ssrf => "ssrf",
            FetchErrorKind::Dns => "dns",
            FetchErrorKind::Connect => "connect",
            FetchErrorKind::Timeout => "timeout",
            FetchErrorKind::HeadersTooLarge => "headers_too_large",
            FetchErrorKind::Tls => "tls",
            FetchErrorKind::TlsExpired => "tls_expired",
            FetchErrorKind::TlsWrongName => "tls_wrong_name",
            FetchErrorKind::TlsUntrusted => "tls_untrusted",
            FetchErrorKind::Protocol => "protocol",
            FetchErrorKind::TooSlow => "too_slow",
            FetchErrorKind::Disconnect => "disconnect",
            FetchErrorKind::DecodedTooLarge => "decoded_too_large",
        }
    }

    /// The kind recorded as `s`; `None` for the empty string and for a kind this build does
    /// not know (written by another build: callers treat it as an unnamed failure).
    pub fn parse(s: &str) -> Option<FetchErrorKind> {
        FetchErrorKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether it is a TLS failure (`tls`, `tls_expired`, ...): a certificate may be fixed, so
    /// such a URL is retried like one whose robots.txt was unreachable.
    pub fn is_tls(self) -> bool {
        matches!(
            self,
            FetchErrorKind::Tls
                | FetchErrorKind::TlsExpired
                | FetchErrorKind::TlsWrongName
                | FetchErrorKind::TlsUntrusted
        )
    }
}

impl fmt::Display for FetchErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind equals the string it is recorded as.
impl PartialEq<&str> for FetchErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_string_that_parses_back() {
        let mut seen = std::collections::HashSet::new();
        for k in FetchErrorKind::ALL {
            assert!(seen.insert(k.as_str()), "{k:?} repeats a string");
            assert_eq!(FetchErrorKind::parse(k.as_str()), Some(k));
            assert_eq!(k.to_string(), k.as_str());
            assert_eq!(
                k.is_tls(),
                k.as_str() == "tls" || k.as_str().starts_with("tls_")
            );
        }
        assert_eq!(FetchErrorKind::parse(""), None);
        assert_eq!(FetchErrorKind::parse("a_kind_of_another_build"), None);
    }
}
