//! TLS 1.3 for linerate's connections, with rustls and the aws-lc-rs
//! provider, and nothing of linerate's protocol in it.
//!
//! - [`identity`]: a certificate and key, made per session (the one-shot
//!   receiver) or kept on disk, named by its SHA-256 fingerprint.
//! - [`config`]: client and server configurations. A client trusts exactly
//!   one certificate, the one whose fingerprint it was given (in a URL, a
//!   flag or a known-servers file): no certificate authority is involved.
//! - [`stream`]: one TLS connection over a blocking socket that encrypts
//!   from the caller's buffer and decrypts in place in its own, with the
//!   rustls unbuffered API; the buffered API's copies cost two thirds of the
//!   throughput (docs/benchmarks/2026-11-25-tls-prototype.md).

pub mod config;
pub mod identity;
pub mod stream;

pub use config::{Negotiated, client_config, ktls_available, server_config};
pub use identity::{Fingerprint, Identity};
pub use rustls::{ClientConfig, ServerConfig};
pub use stream::TlsStream;

/// What can go wrong making identities and configurations.
#[derive(Debug, thiserror::Error)]
pub enum SecureError {
    #[error("making a certificate: {0}")]
    Certificate(String),
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
    #[error("{0:?} is not a certificate fingerprint (64 hex digits of SHA-256)")]
    BadFingerprint(String),
}
