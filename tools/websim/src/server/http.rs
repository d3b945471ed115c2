//! HTTP/1.1 request heads in, response heads out: the few parts of RFC 9112 a crawler's server
//! needs, written for speed (no allocation per request once a connection's buffers are warm).

use std::io::Write as _;

use crate::site::Request;

/// Why a request head could not be used; each maps to a status and closes the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// Malformed request line or header (400).
    Bad(&'static str),
    /// Request line longer than the limit (414).
    LineTooLong,
    /// Request head longer than the limit (431).
    HeadTooLarge,
    /// Unsupported HTTP version (505).
    Version,
}

impl HeadError {
    pub(crate) fn status(self) -> u16 {
        match self {
            HeadError::Bad(_) => 400,
            HeadError::LineTooLong => 414,
            HeadError::HeadTooLarge => 431,
            HeadError::Version => 505,
        }
    }

    pub(crate) fn message(self) -> &'static str {
        match self {
            HeadError::Bad(why) => why,
            HeadError::LineTooLong => "request line too long",
            HeadError::HeadTooLarge => "request header fields too large",
            HeadError::Version => "only HTTP/1.0 and HTTP/1.1 are supported",
        }
    }
}

/// Where the head in `buf` ends (the index just past its blank line), looking for lines from
/// `from` on (a line start already scanned); bounded by the request-line and head limits.
///
/// Returns `Ok(None)` if more bytes are needed, with `from` updated for the next call.
pub(crate) fn find_head_end(
    buf: &[u8],
    from: &mut usize,
    max_line: usize,
    max_head: usize,
) -> Result<Option<usize>, HeadError> {
    let mut start = *from;
    // A request line starts with a method token (after blank lines): anything else, such as a
    // TLS ClientHello sent to the plain-HTTP port, is answered 400 at once, as nginx does, not
    // left waiting for a line end that never comes.
    if start == 0 {
        if let Some(&b) = buf.iter().find(|&&b| b != b'\r' && b != b'\n') {
            if !b.is_ascii_graphic() {
                return Err(HeadError::Bad("not an HTTP request"));
            }
        }
    }
    while let Some(nl) = buf[start..].iter().position(|&b| b == b'\n') {
        let end = start + nl;
        if start == 0 && end > max_line {
            return Err(HeadError::LineTooLong);
        }
        let line = &buf[start..end];
        let blank = line.is_empty() || line == b"\r";
        start = end + 1;
        if start > max_head {
            return Err(HeadError::HeadTooLarge);
        }
        // Blank lines before the request line are tolerated (RFC 9112 2.2).
        if blank && *from > 0 {
            *from = start;
            return Ok(Some(start));
        }
        if blank {
            // Leading empty line: skip it, keep looking for the request line.
            continue;
        }
        *from = start;
    }
    if start == 0 && buf.len() > max_line {
        return Err(HeadError::LineTooLong);
    }
    if buf.len() > max_head {
        return Err(HeadError::HeadTooLarge);
    }
    Ok(None)
}

/// The framing facts of a parsed head.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Head {
    /// HTTP/1.1 (else 1.0).
    pub http11: bool,
    /// Whether the connection stays open after the response (version default and `Connection`).
    pub keep_alive: bool,
    /// Request body length (`Content-Length`), 0 if none.
    pub body_len: u64,
    /// `Transfer-Encoding` present (not supported for requests: 501).
    pub transfer_encoding: bool,
}

/// Overwrites `s` with `v`, keeping its allocation.
fn set(s: &mut String, v: &str) {
    s.clear();
    s.push_str(v);
}

/// Parses the head `buf` (as delimited by [`find_head_end`]) into `req`, reusing `req`'s strings.
/// `peer`, `local` and `conn` are left as they are.
pub(crate) fn parse_head(buf: &[u8], req: &mut Request) -> Result<Head, HeadError> {
    let text = std::str::from_utf8(buf).map_err(|_| HeadError::Bad("request head is not UTF-8"))?;
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .skip_while(|l| l.is_empty());
    let line = lines.next().ok_or(HeadError::Bad("empty request"))?;
    let (http11, authority) = request_line(line, req)?;
    let (head, host_header) = fields(lines, req, http11)?;
    let host = match (authority, host_header) {
        (Some(a), _) => a,
        (None, Some(i)) => req.headers[i].1.as_str(),
        (None, None) if http11 => {
            return Err(HeadError::Bad("HTTP/1.1 request without a Host header"))
        }
        (None, None) => "",
    };
    // Disjoint fields: `host` may borrow `req.headers` while `req.host` is written.
    set(&mut req.host, strip_port(host));
    req.host.make_ascii_lowercase();
    Ok(head)
}

/// The request line: method and target into `req`; whether it is HTTP/1.1, and the authority of
/// an absolute-form target.
fn request_line<'a>(
    line: &'a str,
    req: &mut Request,
) -> Result<(bool, Option<&'a str>), HeadError> {
    let mut parts = line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) if !m.is_empty() && !t.is_empty() => (m, t, v),
        _ => return Err(HeadError::Bad("malformed request line")),
    };
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        v if v.starts_with("HTTP/") => return Err(HeadError::Version),
        _ => return Err(HeadError::Bad("malformed request line")),
    };
    if !method
        .bytes()
        .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_')
    {
        return Err(HeadError::Bad("malformed method"));
    }
    set(&mut req.method, method);

    // Absolute form (`GET http://host/path`): the authority is the host (RFC 9112 3.2.2).
    let mut authority = None;
    let mut path = target;
    for scheme in ["http://", "https://"] {
        if target.len() > scheme.len() && target[..scheme.len()].eq_ignore_ascii_case(scheme) {
            let rest = &target[scheme.len()..];
            let slash = rest.find(['/', '?']).unwrap_or(rest.len());
            authority = Some(&rest[..slash]);
            path = if slash == rest.len() {
                "/"
            } else {
                &rest[slash..]
            };
        }
    }
    if !path.starts_with('/') && path != "*" {
        return Err(HeadError::Bad("request target must be a path"));
    }
    if path.starts_with('?') {
        req.target.clear();
        req.target.push('/');
        req.target.push_str(path);
    } else {
        set(&mut req.target, path);
    }
    Ok((http11, authority))
}

/// The header fields into `req.headers` (names lower-cased, reusing its strings), and the framing
/// facts they give, with the index of the `Host` header.
fn fields<'a>(
    lines: impl Iterator<Item = &'a str>,
    req: &mut Request,
    http11: bool,
) -> Result<(Head, Option<usize>), HeadError> {
    let mut head = Head {
        http11,
        keep_alive: http11,
        ..Head::default()
    };
    let mut n = 0;
    let mut host_header = None;
    let mut saw_length = false;
    for line in lines {
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            return Err(HeadError::Bad("obsolete header line folding"));
        }
        let (name, value) = line
            .split_once(':')
            .ok_or(HeadError::Bad("header line without a colon"))?;
        if name.is_empty() || name.ends_with([' ', '\t']) {
            return Err(HeadError::Bad("malformed header name"));
        }
        let value = value.trim_matches([' ', '\t']);
        if n < req.headers.len() {
            let (hn, hv) = &mut req.headers[n];
            set(hn, name);
            set(hv, value);
        } else {
            req.headers.push((name.to_string(), value.to_string()));
        }
        let hn = &mut req.headers[n].0;
        hn.make_ascii_lowercase();
        match hn.as_str() {
            "host" => {
                if host_header.is_some() {
                    return Err(HeadError::Bad("more than one Host header"));
                }
                host_header = Some(n);
            }
            "connection" => {
                for token in value.split(',').map(str::trim) {
                    if token.eq_ignore_ascii_case("close") {
                        head.keep_alive = false;
                    } else if token.eq_ignore_ascii_case("keep-alive") && !http11 {
                        head.keep_alive = true;
                    }
                }
            }
            "content-length" => {
                let len: u64 = value
                    .parse()
                    .map_err(|_| HeadError::Bad("bad Content-Length"))?;
                if saw_length && len != head.body_len {
                    return Err(HeadError::Bad("conflicting Content-Length headers"));
                }
                saw_length = true;
                head.body_len = len;
            }
            "transfer-encoding" => head.transfer_encoding = true,
            _ => {}
        }
        n += 1;
    }
    req.headers.truncate(n);
    // Any "close" wins over a keep-alive seen earlier or later.
    if req.headers.iter().any(|(k, v)| {
        k == "connection" && v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close"))
    }) {
        head.keep_alive = false;
    }
    Ok((head, host_header))
}

/// `host[:port]` or `[v6]:port` without the port.
fn strip_port(h: &str) -> &str {
    if h.starts_with('[') {
        return h.find(']').map_or(h, |i| &h[..=i]);
    }
    match h.rfind(':') {
        Some(i) if h[i + 1..].bytes().all(|b| b.is_ascii_digit()) => &h[..i],
        _ => h,
    }
}

/// The reason phrase of a status code.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        410 => "Gone",
        413 => "Content Too Large",
        414 => "URI Too Long",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// Whether a response with this status carries no body (RFC 9110 6.4.1).
pub(crate) fn bodiless(status: u16) -> bool {
    (100..200).contains(&status) || status == 204 || status == 304
}

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// `Content-Length: n`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// No body and no length header (1xx, 204, 304).
    None,
}

/// Headers the server owns: the site's copies are dropped.
fn server_owned(name: &str) -> bool {
    name.eq_ignore_ascii_case("content-length")
        || name.eq_ignore_ascii_case("transfer-encoding")
        || name.eq_ignore_ascii_case("connection")
}

/// Writes a response head into `out` (cleared first). `connection` is the value of a
/// `Connection` header to send, if any.
pub(crate) fn write_head(
    out: &mut Vec<u8>,
    status: u16,
    headers: &[(String, String)],
    framing: Framing,
    connection: Option<&str>,
) {
    out.clear();
    out.extend_from_slice(b"HTTP/1.1 ");
    push_u64(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in headers {
        if server_owned(name) {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    match framing {
        Framing::Length(n) => {
            out.extend_from_slice(b"Content-Length: ");
            push_u64(out, n);
            out.extend_from_slice(b"\r\n");
        }
        Framing::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        Framing::None => {}
    }
    if let Some(c) = connection {
        out.extend_from_slice(b"Connection: ");
        out.extend_from_slice(c.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends `n` in decimal.
fn push_u64(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// A small plain-text response the server itself makes (errors, the control address).
pub(crate) fn simple(out: &mut Vec<u8>, status: u16, content_type: &str, body: &[u8], close: bool) {
    let headers = [("Content-Type".to_string(), content_type.to_string())];
    write_head(
        out,
        status,
        &headers,
        Framing::Length(body.len() as u64),
        close.then_some("close"),
    );
    let _ = out.write_all(body);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn request() -> Request {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        Request {
            method: String::new(),
            target: String::new(),
            host: String::new(),
            headers: Vec::new(),
            peer: a,
            local: a,
            conn: 0,
            tls: false,
        }
    }

    fn parse(s: &str) -> Result<(Request, Head), HeadError> {
        let mut from = 0;
        let end = find_head_end(s.as_bytes(), &mut from, 8192, 65536)?.expect("complete head");
        let mut r = request();
        let h = parse_head(&s.as_bytes()[..end], &mut r)?;
        Ok((r, h))
    }

    #[test]
    fn parses_a_plain_get() {
        let (r, h) =
            parse("GET /a?b=1 HTTP/1.1\r\nHost: H1.Example:8080\r\nUser-Agent: x\r\n\r\n").unwrap();
        assert_eq!(
            (r.method.as_str(), r.target.as_str(), r.host.as_str()),
            ("GET", "/a?b=1", "h1.example")
        );
        assert_eq!(r.header("user-agent"), Some("x"));
        assert!(h.http11 && h.keep_alive);
    }

    #[test]
    fn connection_and_versions() {
        assert!(
            !parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                .unwrap()
                .1
                .keep_alive
        );
        assert!(!parse("GET / HTTP/1.0\r\n\r\n").unwrap().1.keep_alive);
        assert!(
            parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
                .unwrap()
                .1
                .keep_alive
        );
        assert_eq!(
            parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n").unwrap_err(),
            HeadError::Version
        );
        assert_eq!(parse("GET / HTTP/1.1\r\n\r\n").unwrap_err().status(), 400);
    }

    #[test]
    fn absolute_form_and_ports() {
        let (r, _) = parse("GET http://Example.test:81/x HTTP/1.1\r\nHost: other\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.target.as_str()), ("example.test", "/x"));
        let (r, _) = parse("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n").unwrap();
        assert_eq!(r.host, "[::1]");
    }

    #[test]
    fn bare_newlines_and_leading_blank_lines() {
        let (r, _) = parse("\r\nGET /x HTTP/1.1\nHost: a\n\n").unwrap();
        assert_eq!((r.target.as_str(), r.host.as_str()), ("/x", "a"));
    }

    #[test]
    fn limits() {
        let mut from = 0;
        let long = format!("GET /{} HTTP/1.1\r\n", "a".repeat(100));
        assert_eq!(
            find_head_end(long.as_bytes(), &mut from, 50, 1000),
            Err(HeadError::LineTooLong)
        );
        let mut from = 0;
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(2000));
        assert_eq!(
            find_head_end(big.as_bytes(), &mut from, 50, 1000),
            Err(HeadError::HeadTooLarge)
        );
        let mut from = 0;
        assert_eq!(
            find_head_end(b"GET / HTTP/1.1\r\nHost: a\r\n", &mut from, 50, 1000),
            Ok(None)
        );
        assert_eq!(from, 25); // where the next line starts
    }

    #[test]
    fn a_tls_client_hello_is_refused_at_once() {
        // The first bytes of a TLS record (handshake, TLS 1.0 record version), no line end.
        let mut from = 0;
        assert_eq!(
            find_head_end(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01], &mut from, 50, 1000),
            Err(HeadError::Bad("not an HTTP request"))
        );
        let mut from = 0;
        assert_eq!(find_head_end(b"\r\nGE", &mut from, 50, 1000), Ok(None));
    }

    #[test]
    fn head_bytes() {
        let mut out = Vec::new();
        write_head(
            &mut out,
            200,
            &[
                ("Content-Length".into(), "9".into()),
                ("X".into(), "y".into()),
            ],
            Framing::Length(12),
            None,
        );
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nX: y\r\nContent-Length: 12\r\n\r\n"
        );
    }
}
