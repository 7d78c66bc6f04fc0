//! Client and server configurations: TLS 1.3 only, the aws-lc-rs
//! provider, AES-128-GCM first where the CPU has AES instructions (as
//! WDT), ChaCha20-Poly1305 first where it does not, and a client that
//! trusts exactly the certificate it was told the fingerprint of.

use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, aws_lc_rs};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    CertificateError, CipherSuite, ClientConfig, DigitallySignedStruct, DistinguishedName,
    OtherError, ServerConfig, SignatureScheme,
};

use crate::keys::KeyFile;
use crate::{Fingerprint, Identity, SecureError};

/// The handshake-signature methods both verifiers share: TLS 1.2 is never
/// offered, TLS 1.3 signatures are checked with the provider's algorithms
/// (the peer must hold its certificate's key).
macro_rules! handshake_signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            _message: &[u8],
            _cert: &CertificateDer<'_>,
            _dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            Err(rustls::Error::General("TLS 1.2 is not offered".into()))
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.provider
                .signature_verification_algorithms
                .supported_schemes()
        }
    };
}

/// Which server certificate a client accepts.
#[derive(Debug, Clone)]
pub enum ServerTrust {
    /// Only the one with this fingerprint (from a URL, a flag or a
    /// known-servers file).
    Exactly(Fingerprint),
    /// The first one seen, recorded here, then only that one: trust on
    /// first use, as ssh with a host it has not met. The caller keeps what
    /// was seen for the next run.
    FirstUse(Arc<Mutex<Option<Fingerprint>>>),
}

/// The name every linerate certificate carries; connections are checked
/// by fingerprint, not by name.
pub const SERVER_NAME: &str = "linerate";

/// The provider with the cipher suites in this machine's order.
fn provider() -> Arc<CryptoProvider> {
    let mut p = aws_lc_rs::default_provider();
    let rank = |s: CipherSuite| match s {
        CipherSuite::TLS13_AES_128_GCM_SHA256 if has_aes() => 0,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 if !has_aes() => 0,
        CipherSuite::TLS13_AES_128_GCM_SHA256 => 1,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => 1,
        _ => 2,
    };
    p.cipher_suites.sort_by_key(|s| rank(s.suite()));
    Arc::new(p)
}

/// Whether the CPU has AES instructions (AES-GCM then runs at tens of
/// Gbit/s a core; without them ChaCha20 is faster).
pub fn has_aes() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// Whether the kernel offers TLS offload (TCP ULP "tls"); linerate records
/// it, and encrypts in user space where it is missing.
pub fn ktls_available() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_ulp")
        .is_ok_and(|ulps| ulps.split_whitespace().any(|u| u == "tls"))
}

/// A server presenting `identity`, to any client.
pub fn server_config(identity: &Identity) -> Result<Arc<ServerConfig>, SecureError> {
    server_with(identity, provider(), None)
}

/// A server presenting `identity` that asks clients for a certificate
/// when given a verifier. It sends no session tickets: every connection is
/// a full handshake, and nothing arrives after it but data.
fn server_with(
    identity: &Identity,
    provider: Arc<CryptoProvider>,
    clients: Option<Arc<dyn ClientCertVerifier>>,
) -> Result<Arc<ServerConfig>, SecureError> {
    let builder = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?;
    let builder = match clients {
        Some(verifier) => builder.with_client_cert_verifier(verifier),
        None => builder.with_no_client_auth(),
    };
    let mut c = builder.with_single_cert(vec![identity.cert()], identity.key())?;
    c.send_tls13_tickets = 0;
    // The client's order, which puts its fastest cipher first, decides.
    c.ignore_client_order = false;
    Ok(Arc::new(c))
}

/// A client that accepts only the certificate with fingerprint `server`.
pub fn client_config(server: Fingerprint) -> Result<Arc<ClientConfig>, SecureError> {
    client_config_with(ServerTrust::Exactly(server), None)
}

/// A client that trusts the server as `trust` says and, given `me`,
/// shows that identity to servers that ask for one (a daemon's clients).
pub fn client_config_with(
    trust: ServerTrust,
    me: Option<&Identity>,
) -> Result<Arc<ClientConfig>, SecureError> {
    let provider = provider();
    let c = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Pinned { trust, provider }));
    let c = match me {
        Some(id) => c.with_client_auth_cert(vec![id.cert()], id.key())?,
        None => c.with_no_client_auth(),
    };
    Ok(Arc::new(c))
}

/// A server presenting `identity` that takes only clients whose
/// certificate's fingerprint `clients` lists (read again at each
/// handshake): mutual TLS without a certificate authority.
pub fn server_config_for_clients(
    identity: &Identity,
    clients: KeyFile,
) -> Result<Arc<ServerConfig>, SecureError> {
    let provider = provider();
    let verifier = Arc::new(Listed {
        clients,
        provider: Arc::clone(&provider),
    });
    server_with(identity, provider, Some(verifier))
}

/// Takes the clients a key file lists, by certificate fingerprint.
#[derive(Debug)]
struct Listed {
    clients: KeyFile,
    provider: Arc<CryptoProvider>,
}

impl ClientCertVerifier for Listed {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let got = Fingerprint::of(end_entity);
        let refuse = |why: String| {
            rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
                std::io::Error::other(why),
            ))))
        };
        match self.clients.current() {
            Ok(list) if list.find(&got).is_some() => Ok(ClientCertVerified::assertion()),
            Ok(_) => Err(refuse(format!(
                "client key {got} is not in {}",
                self.clients.0.display()
            ))),
            Err(e) => Err(refuse(format!("cannot read the authorized keys: {e}"))),
        }
    }

    handshake_signatures!();
}

/// Trusts one certificate, named by its fingerprint (or the first one
/// seen). The handshake's signatures are still checked with the
/// provider's algorithms: the server must hold that certificate's key.
#[derive(Debug)]
struct Pinned {
    trust: ServerTrust,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let got = Fingerprint::of(end_entity);
        let want = match &self.trust {
            ServerTrust::Exactly(fp) => *fp,
            ServerTrust::FirstUse(seen) => *seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(got),
        };
        if got == want {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "the server's certificate has fingerprint {got}, not the {want} this client \
                 was given"
            )))
        }
    }

    handshake_signatures!();
}

/// What a connection agreed on, for the result document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// e.g. "TLS13_AES_128_GCM_SHA256".
    pub cipher: String,
    /// e.g. "X25519MLKEM768" or "X25519".
    pub key_exchange: String,
}
