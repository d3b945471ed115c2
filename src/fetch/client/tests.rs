//! Tests of the request's pieces as the client sends them.

use super::*;

/// The request's `Host` header and URI are what `format!` made of them before
/// they were pushed piece by piece: default and other ports, queries, user info and
/// fragments (left off the wire), IP literals, upper-case hosts.
#[test]
fn request_pieces_are_the_formatted_ones() {
    for u in [
        "http://example.com/",
        "http://example.com:8081/p/0001.html?a=1&b=2#frag",
        "https://user:pw@EXAMPLE.org:443/x",
        "https://example.org:8443/",
        "http://127.0.1.1:8081/robots.txt",
        "http://[::1]:8080/a/b?",
        "http://xn--bcher-kva.example/",
    ] {
        let url = Url::parse(u).unwrap();
        let r = Request::of(&url).unwrap();
        let host = url.host_str().unwrap();
        let want_host = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        assert_eq!(r.host_header, want_host, "{u}");
        let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
        let want_uri = format!("{}://{want_host}{}{query}", url.scheme(), url.path());
        assert_eq!(
            r.uri.to_string(),
            want_uri.parse::<Uri>().unwrap().to_string()
        );
    }
}
