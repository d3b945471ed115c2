//! The SSRF guard: which resolved addresses a crawl may connect to.
//!
//! A crawler follows links written by strangers. Without a guard, a page linking to
//! `http://127.0.0.1:6379/` or `http://169.254.169.254/latest/meta-data/` turns the crawler into a
//! client of the machine's own services or the cloud's metadata endpoint. The check runs on the
//! addresses a host name *resolves to* (after the crawl's own `[resolve]` table and DNS), not on
//! the name, so `localtest.me` or a DNS record pointing at 10.0.0.1 is refused too; the fetcher
//! connects to the checked address itself, so the name cannot resolve differently a second time
//! (DNS rebinding).
//!
//! Refused unless `fetch.allow_private_addresses` is set (tests and the demo set it to crawl
//! websim on 127.0.1.x): unspecified, loopback, private (RFC 1918, IPv6 ULA), shared
//! (100.64/10, RFC 6598), link-local, multicast, broadcast, documentation and benchmarking
//! ranges, 0/8 and 240/4, and every IPv6 form that carries one of these IPv4 addresses inside it:
//! IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96, RFC 2765 and RFC 6052 §2.1)
//! and IPv4-compatible, NAT64 (the well-known 64:ff9b::/96 and the local-use 64:ff9b:1::/48 of
//! RFC 8215, read as a /96), 6to4 (2002::/16, RFC 3056) and Teredo (2001::/32, RFC 4380: the
//! server's address, and the client's, stored inverted).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// 0.0.0.0, ::.
    Unspecified,
    /// 127/8, ::1.
    Loopback,
    /// RFC 1918, RFC 6598 shared space, IPv6 unique local.
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// Multicast and broadcast.
    Multicast,
    /// Documentation, benchmarking, reserved (0/8, 240/4) ranges.
    Reserved,
}

impl Refusal {
    /// A phrase for error records and logs.
    pub fn describe(self) -> &'static str {
        match self {
            Refusal::Unspecified => "unspecified address",
            Refusal::Loopback => "loopback address",
            Refusal::Private => "private address",
            Refusal::LinkLocal => "link-local address",
            Refusal::Multicast => "multicast or broadcast address",
            Refusal::Reserved => "reserved address",
        }
    }
}

/// Why `addr` must not be fetched from, or `None` if it is a public address.
pub fn classify(addr: IpAddr) -> Option<Refusal> {
    match addr {
        IpAddr::V4(a) => classify_v4(a),
        IpAddr::V6(a) => classify_v6(a),
    }
}

/// Whether a crawl with `allow_private` may connect to `addr`.
pub fn check(addr: IpAddr, allow_private: bool) -> Result<(), Refusal> {
    match classify(addr) {
        Some(r) if !allow_private => Err(r),
        _ => Ok(()),
    }
}

fn classify_v4(a: Ipv4Addr) -> Option<Refusal> {
    let o = a.octets();
    Some(if a.is_unspecified() {
        Refusal::Unspecified
    } else if a.is_loopback() {
        Refusal::Loopback
    } else if a.is_private() || (o[0] == 100 && (o[1] & 0xc0) == 64) {
        Refusal::Private
    } else if a.is_link_local() {
        Refusal::LinkLocal
    } else if a.is_multicast() || a.is_broadcast() {
        Refusal::Multicast
    } else if o[0] == 0
        || o[0] >= 240
        || a.is_documentation()
        || (o[0] == 198 && (o[1] & 0xfe) == 18)
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
    {
        Refusal::Reserved
    } else {
        return None;
    })
}

fn classify_v6(a: Ipv6Addr) -> Option<Refusal> {
    if let Some(v4) = a.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let s = a.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    // IPv4-translated (SIIT, RFC 2765 §2.1): ::ffff:0:a.b.c.d, one segment further left than
    // IPv4-mapped; a stack or a translator may still deliver it to the embedded address.
    if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return classify_v4(v4(s[6], s[7]));
    }
    // NAT64: the well-known prefix 64:ff9b::/96 and the local-use 64:ff9b:1::/48 (as a /96)
    // embed an IPv4 address in the last 32 bits.
    if s[0] == 0x64 && s[1] == 0xff9b && (s[2..6] == [0, 0, 0, 0] || s[2] == 1) {
        return classify_v4(v4(s[6], s[7]));
    }
    // 6to4: 2002:AABB:CCDD::/48 routes to the IPv4 address AA.BB.CC.DD.
    if s[0] == 0x2002 {
        return classify_v4(v4(s[1], s[2]));
    }
    // Teredo: 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC, server S and client C (stored inverted);
    // either may be made to point inside.
    if s[0] == 0x2001 && s[1] == 0 {
        return classify_v4(v4(s[2], s[3])).or_else(|| classify_v4(v4(!s[6], !s[7])));
    }
    Some(if a.is_unspecified() {
        Refusal::Unspecified
    } else if a.is_loopback() {
        Refusal::Loopback
    } else if (s[0] & 0xfe00) == 0xfc00 {
        Refusal::Private
    } else if (s[0] & 0xffc0) == 0xfe80 {
        Refusal::LinkLocal
    } else if a.is_multicast() {
        Refusal::Multicast
    } else if s[0] == 0x2001 && s[1] == 0x0db8 || s[0] == 0x0100 && s[1..4] == [0, 0, 0] {
        Refusal::Reserved
    } else if s[..6] == [0, 0, 0, 0, 0, 0] {
        // IPv4-compatible (deprecated) ::a.b.c.d
        return classify_v4(v4(s[6], s[7]));
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Option<Refusal> {
        classify(s.parse().unwrap())
    }

    #[test]
    fn refuses_what_ssrf_uses() {
        for (addr, want) in [
            ("0.0.0.0", Refusal::Unspecified),
            ("127.0.0.1", Refusal::Loopback),
            ("127.0.1.7", Refusal::Loopback),
            ("10.1.2.3", Refusal::Private),
            ("172.16.0.1", Refusal::Private),
            ("192.168.1.1", Refusal::Private),
            ("100.64.0.1", Refusal::Private),
            ("169.254.169.254", Refusal::LinkLocal),
            ("224.0.0.1", Refusal::Multicast),
            ("255.255.255.255", Refusal::Multicast),
            ("0.1.2.3", Refusal::Reserved),
            ("240.0.0.1", Refusal::Reserved),
            ("192.0.2.1", Refusal::Reserved),
            ("198.18.0.1", Refusal::Reserved),
            ("::", Refusal::Unspecified),
            ("::1", Refusal::Loopback),
            ("fd00::1", Refusal::Private),
            ("fe80::1", Refusal::LinkLocal),
            ("ff02::1", Refusal::Multicast),
            ("2001:db8::1", Refusal::Reserved),
            ("::ffff:127.0.0.1", Refusal::Loopback),
            ("::ffff:10.0.0.1", Refusal::Private),
            ("64:ff9b::a9fe:a9fe", Refusal::LinkLocal),
            ("::127.0.0.1", Refusal::Loopback),
            // IPv4-translated (RFC 2765): ::ffff:0:a.b.c.d.
            ("::ffff:0:127.0.0.1", Refusal::Loopback),
            ("::ffff:0:10.0.0.1", Refusal::Private),
            ("::ffff:0:a9fe:a9fe", Refusal::LinkLocal),
            ("::ffff:0:0.0.0.0", Refusal::Unspecified),
            // NAT64 local-use, 6to4 and Teredo forms of inside addresses.
            ("64:ff9b:1::a9fe:a9fe", Refusal::LinkLocal),
            ("64:ff9b:1:2:3:4:7f00:1", Refusal::Loopback),
            ("2002:7f00:1::1", Refusal::Loopback),
            ("2002:a00:1:5::8", Refusal::Private),
            ("2002:a9fe:a9fe::", Refusal::LinkLocal),
            // Teredo, server 65.54.227.120, client 127.0.0.1 (stored as 0x80fffffe)
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", Refusal::Loopback),
            // Teredo, server 10.0.0.1, client 8.8.8.8
            ("2001:0:a00:1::f7f7:f7f7", Refusal::Private),
        ] {
            assert_eq!(c(addr), Some(want), "{addr}");
            assert_eq!(check(addr.parse().unwrap(), false), Err(want), "{addr}");
            assert_eq!(check(addr.parse().unwrap(), true), Ok(()), "{addr}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for addr in [
            "1.1.1.1",
            "8.8.8.8",
            "100.128.0.1",
            "172.32.0.1",
            "198.20.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "::ffff:0:8.8.8.8",
            "64:ff9b::808:808",
            "64:ff9b:1::808:808",
            "2002:808:808::1",
            // Teredo, server 65.54.227.120, client 8.8.8.8
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
        ] {
            assert_eq!(c(addr), None, "{addr}");
            assert_eq!(check(addr.parse().unwrap(), false), Ok(()));
        }
    }
}
