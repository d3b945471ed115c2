//! TLS for the web's TLS hosts ([`crate::model::Tls`]): a certificate authority generated when
//! the server starts, and a certificate per host name chosen by SNI.
//!
//! Valid hosts get a certificate for their name signed by the CA; an expired host gets one that
//! ran out a month ago, a wrong-name host one for `wrong-name.invalid`, a self-signed host one it
//! signed itself. A client that trusts the CA ([`TlsSetup::ca_pem`], written beside the hosts
//! file by `websim serve` and by tests) completes the handshake with the valid hosts only. A name
//! that is not a TLS host of the web (or no SNI at all) gets no certificate: the handshake fails.
//!
//! Keys are ECDSA P-256, generated afresh at every start (nothing secret is stored; the CA is
//! good for one server's lifetime).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::model::{Tls, Web};

/// The name a wrong-name host's certificate is for.
pub const WRONG_NAME: &str = "wrong-name.invalid";

/// Why TLS could not be set up.
#[derive(Debug)]
pub struct TlsError(String);

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot set up TLS: {}", self.0)
    }
}

impl std::error::Error for TlsError {}

impl TlsError {
    pub(crate) fn new(why: &str) -> TlsError {
        TlsError(why.to_string())
    }
}

fn err(e: impl fmt::Display) -> TlsError {
    TlsError(e.to_string())
}

/// The CA and the server configuration of a web's TLS listeners.
pub struct TlsSetup {
    /// The CA certificate (PEM) a client must trust to reach the valid hosts.
    pub ca_pem: String,
    /// The rustls configuration of the TLS listeners.
    pub config: Arc<rustls::ServerConfig>,
}

impl fmt::Debug for TlsSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSetup").finish_non_exhaustive()
    }
}

/// Certificates by SNI name.
#[derive(Debug)]
struct BySni(HashMap<String, Arc<CertifiedKey>>);

impl ResolvesServerCert for BySni {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let name = hello.server_name()?.to_ascii_lowercase();
        self.0.get(name.trim_end_matches('.')).cloned()
    }
}

fn time_at(t: SystemTime) -> Result<time::OffsetDateTime, TlsError> {
    let secs = t.duration_since(UNIX_EPOCH).map_err(err)?.as_secs();
    time::OffsetDateTime::from_unix_timestamp(i64::try_from(secs).map_err(err)?).map_err(err)
}

fn certified(
    params: &CertificateParams,
    key: KeyPair,
    issuer: Option<&rcgen::Issuer<'_, KeyPair>>,
    ca: Option<&CertificateDer<'static>>,
) -> Result<Arc<CertifiedKey>, TlsError> {
    let cert = match issuer {
        Some(i) => params.signed_by(&key, i),
        None => params.self_signed(&key),
    }
    .map_err(err)?;
    let mut chain = vec![cert.der().clone()];
    chain.extend(ca.cloned());
    let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let signing = any_supported_type(&der).map_err(err)?;
    Ok(Arc::new(CertifiedKey::new(chain, signing)))
}

/// Generates the CA and every TLS host's certificate of `web` (none if it has no TLS host).
pub fn setup(web: &Web) -> Result<TlsSetup, TlsError> {
    let now = SystemTime::now();
    let day = Duration::from_secs(86_400);
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.distinguished_name.push(
        DnType::CommonName,
        "websim test CA (do not trust outside tests)",
    );
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.not_before = time_at(now - day)?;
    ca_params.not_after = time_at(now + 365 * day)?;
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(err)?).map_err(err)?;
    let ca_der = ca.der().clone();
    let mut by_name = HashMap::new();
    for h in &web.hosts {
        let Some(kind) = h.tls else { continue };
        let name = if kind == Tls::WrongName {
            WRONG_NAME.to_string()
        } else {
            h.name.clone()
        };
        let mut params = CertificateParams::new(vec![name.clone()]).map_err(err)?;
        params.distinguished_name.push(DnType::CommonName, name);
        let (from, to) = match kind {
            Tls::Expired => (now - 60 * day, now - 30 * day),
            _ => (now - day, now + 90 * day),
        };
        params.not_before = time_at(from)?;
        params.not_after = time_at(to)?;
        let key = KeyPair::generate().map_err(err)?;
        let ck = if kind == Tls::SelfSigned {
            certified(&params, key, None, None)?
        } else {
            certified(&params, key, Some(&ca), Some(&ca_der))?
        };
        by_name.insert(h.name.clone(), ck);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(err)?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(BySni(by_name)));
    Ok(TlsSetup {
        ca_pem: ca.pem(),
        config: Arc::new(config),
    })
}
