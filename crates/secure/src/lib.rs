//! TLS 1.3 for linerate's connections, with rustls and the aws-lc-rs
//! provider, and nothing of linerate's protocol in it.
//!
//! - [`identity`]: a certificate and key, made per session (the one-shot
//!   receiver) or kept on disk, named by its SHA-256 fingerprint.
//! - [`config`]: client and server configurations. A client trusts exactly
//!   one certificate, the one whose fingerprint it was given (in a URL, a
//!   flag or a known-servers file): no certificate authority is involved.
//! - [`keys`]: lists of fingerprints in files (a daemon's authorized
//!   client keys), one per line with a comment, as ssh's authorized_keys.
//! - [`stream`]: one TLS connection over a blocking socket that encrypts
//!   from the caller's buffer and decrypts in place in its own, with the
//!   rustls unbuffered API; the buffered API's copies cost two thirds of the
//!   throughput (docs/benchmarks/2026-11-25-tls-prototype.md).
//! - [`token`]: the secret a run or a one-shot receiver hands out.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod identity;
pub mod keys;
pub mod stream;
pub mod token;

use std::path::{Path, PathBuf};

pub use config::{
    Negotiated, ServerTrust, client_config, client_config_with, ktls_available, server_config,
    server_config_for_clients,
};
pub use identity::{Fingerprint, Identity};
pub use keys::{KeyFile, KeyList};
pub use rustls::{ClientConfig, ServerConfig};
pub use stream::TlsStream;
pub use token::Token;

/// What can go wrong making identities and configurations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecureError {
    /// rcgen could not make a certificate.
    #[error("making a certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
    /// Text that is not a SHA-256 fingerprint (the text as given).
    #[error("{0:?} is not a certificate fingerprint (64 hex digits of SHA-256)")]
    BadFingerprint(String),
    /// A key file that could not be read or written.
    #[error("{}: {error}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// An identity file that does not hold a certificate and its key.
    #[error("{} is not a linerate key file: no {lacks}", .path.display())]
    BadIdentity {
        /// The file.
        path: PathBuf,
        /// What it lacks: `certificate` or `private key`.
        lacks: &'static str,
    },
    /// A line of a key list that is not a fingerprint.
    #[error(
        "{list}, line {line}: {text:?} is not a certificate fingerprint (64 hex digits of SHA-256)"
    )]
    BadList {
        /// The list, as the caller names it (its path).
        list: String,
        /// The line, from 1.
        line: usize,
        /// The line's first word, as given.
        text: String,
    },
}

impl SecureError {
    pub(crate) fn file(path: &Path, error: std::io::Error) -> SecureError {
        SecureError::File {
            path: path.to_path_buf(),
            error,
        }
    }
}
