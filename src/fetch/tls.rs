//! TLS for the fetch client: rustls, with one client configuration per crawl shared by every
//! connection (docs/design.md §7).
//!
//! **Roots.** `[fetch] tls_roots` picks the certificate authorities a server's chain must lead
//! to: `"webpki"` (the default) is Mozilla's root program compiled in (the `webpki-roots`
//! crate), so a crawl behaves the same on every machine; `"system"` reads the machine's CA bundle
//! (`SSL_CERT_FILE`, else the first of the usual paths: Debian's
//! `/etc/ssl/certs/ca-certificates.crt`, Red Hat's `/etc/pki/tls/certs/ca-bundle.crt`, ...), for
//! a network whose proxies or intranet sites use a local CA; `"both"` trusts either. Every PEM
//! file in `[fetch] extra_ca_files` (relative to the crawl directory) is trusted as well: a test
//! web's CA, a company CA. A file that cannot be read or holds no certificate is a
//! configuration error naming it, before anything is fetched.
//!
//! **Failures are answers, never accepted.** A certificate that is expired, for another name,
//! self-signed or from an unknown CA fails the handshake; the fetch records error kind `tls` with
//! rustls's reason ("invalid peer certificate: Expired", "... NotValidForName",
//! "... UnknownIssuer") for that URL, as any other fetch error. There is no switch to skip
//! verification: an archive that says a page came from `https://bank.example/` must mean it.
//!
//! **One configuration per stage.** Parsing a root store for each of a million hosts would cost
//! more than fetching their robots.txt: the stage makes one `Arc<ClientConfig>` when it starts
//! ([`client_config`], or [`default_config`], made once a process), and every connection's
//! handshake (`conn.rs`) shares it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

use crate::config::fetch::TlsRoots;
use crate::error::{Error, Result};

/// Where systems keep their CA bundle (the first that exists is read).
const SYSTEM_BUNDLES: [&str; 5] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/share/certs/ca-root-nss.crt",
];

/// Reads every certificate of a PEM file into `store`; errors name the file.
fn add_pem_file(store: &mut RootCertStore, path: &Path, config: &Path, key: &str) -> Result<()> {
    let bad =
        |why: String| Error::config(config, format!("fetch.{key}: {}: {why}", path.display()));
    let iter = CertificateDer::pem_file_iter(path).map_err(|e| {
        bad(format!(
            "cannot read it ({e}); name a PEM file of CA certificates"
        ))
    })?;
    let mut added = 0;
    for cert in iter {
        let cert = cert.map_err(|e| bad(format!("not valid PEM ({e})")))?;
        store
            .add(cert)
            .map_err(|e| bad(format!("a certificate rustls cannot use as a root ({e})")))?;
        added += 1;
    }
    if added == 0 {
        return Err(bad(
            "no certificate in it (expected -----BEGIN CERTIFICATE----- blocks)".into(),
        ));
    }
    Ok(())
}

/// The machine's CA bundle: `SSL_CERT_FILE`, else the first of [`SYSTEM_BUNDLES`] that exists.
fn system_bundle() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SSL_CERT_FILE") {
        return Some(PathBuf::from(p));
    }
    SYSTEM_BUNDLES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// The rustls configuration for `roots` plus the PEM files `extra` (relative to `base`);
/// `config` is the configuration file named in errors.
pub fn client_config(
    roots: TlsRoots,
    extra: &[PathBuf],
    base: &Path,
    config: &Path,
) -> Result<Arc<ClientConfig>> {
    if roots == TlsRoots::Webpki && extra.is_empty() {
        return Ok(default_config());
    }
    let mut store = RootCertStore::empty();
    if matches!(roots, TlsRoots::Webpki | TlsRoots::Both) {
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    if matches!(roots, TlsRoots::System | TlsRoots::Both) {
        let path = system_bundle().ok_or_else(|| {
            Error::config(
                config,
                format!(
                    "fetch.tls_roots = \"system\": no CA bundle on this machine (looked at \
                     SSL_CERT_FILE and {}); install the ca-certificates package or use \"webpki\"",
                    SYSTEM_BUNDLES.join(", ")
                ),
            )
        })?;
        add_pem_file(&mut store, &path, config, "tls_roots")?;
    }
    for f in extra {
        let path = if f.is_absolute() {
            f.clone()
        } else {
            base.join(f)
        };
        add_pem_file(&mut store, &path, config, "extra_ca_files")?;
    }
    Ok(build(store))
}

fn build(store: RootCertStore) -> Arc<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(store)
        .with_no_client_auth();
    Arc::new(config)
}

/// Mozilla's roots only, built once per process.
pub fn default_config() -> Arc<ClientConfig> {
    static DEFAULT: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            build(RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            })
        })
        .clone()
}
