//! A certificate and its key, and the fingerprint that names it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::SecureError;

/// SHA-256 of a certificate's DER encoding: what a client pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// The SHA-256 of a DER certificate.
    pub fn of(cert_der: &[u8]) -> Fingerprint {
        let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, cert_der);
        let mut out = [0u8; 32];
        out.copy_from_slice(d.as_ref());
        Fingerprint(out)
    }

    /// 64 lower-case hex digits.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Parses 64 hex digits (either case, colons between bytes allowed, as
    /// openssl prints them).
    pub fn parse(text: &str) -> Result<Fingerprint, SecureError> {
        let bad = || SecureError::BadFingerprint(text.to_string());
        let digits: String = text.chars().filter(|c| *c != ':').collect();
        let mut out = [0u8; 32];
        hex::decode_to_slice(digits, &mut out).map_err(|_| bad())?;
        Ok(Fingerprint(out))
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// A self-signed certificate (ECDSA P-256) and its private key.
pub struct Identity {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl Identity {
    /// A fresh identity, e.g. for one session of a one-shot receiver.
    pub fn generate() -> Result<Identity, SecureError> {
        let made = rcgen::generate_simple_self_signed(vec!["linerate".to_string()])?;
        Ok(Identity {
            cert: made.cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()),
        })
    }

    /// Makes an identity and writes it to `path` (certificate and key in
    /// PEM, readable by its owner only); fails if `path` exists.
    pub fn create_file(path: &Path) -> Result<Identity, SecureError> {
        let made = rcgen::generate_simple_self_signed(vec!["linerate".to_string()])?;
        let pem = format!("{}{}", made.cert.pem(), made.key_pair.serialize_pem());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| SecureError::file(path, e))?;
        }
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .and_then(|mut f| f.write_all(pem.as_bytes()).and_then(|()| f.sync_all()))
            .map_err(|e| SecureError::file(path, e))?;
        Ok(Identity {
            cert: made.cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()),
        })
    }

    /// Reads an identity written by [`Identity::create_file`].
    pub fn load(path: &Path) -> Result<Identity, SecureError> {
        let pem = std::fs::read(path).map_err(|e| SecureError::file(path, e))?;
        let bad = |lacks| SecureError::BadIdentity {
            path: path.to_path_buf(),
            lacks,
        };
        Ok(Identity {
            cert: CertificateDer::from_pem_slice(&pem).map_err(|_| bad("certificate"))?,
            key: PrivatePkcs8KeyDer::from_pem_slice(&pem).map_err(|_| bad("private key"))?,
        })
    }

    /// The identity at `path`, made there first if there is none; says
    /// whether it was made.
    pub fn load_or_create(path: &Path) -> Result<(Identity, bool), SecureError> {
        match path.exists() {
            true => Ok((Identity::load(path)?, false)),
            false => Ok((Identity::create_file(path)?, true)),
        }
    }

    /// The fingerprint peers pin this identity by.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of(&self.cert)
    }

    pub(crate) fn cert(&self) -> CertificateDer<'static> {
        self.cert.clone()
    }

    pub(crate) fn key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(self.key.clone_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_reads_back_as_written_and_as_openssl_prints_it() {
        let id = Identity::generate().unwrap();
        let fp = id.fingerprint();
        assert_eq!(Fingerprint::parse(&fp.to_hex()).unwrap(), fp);
        let colons: Vec<String> = fp.0.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(Fingerprint::parse(&colons.join(":")).unwrap(), fp);
        assert!(Fingerprint::parse("abc").is_err());
        assert!(Fingerprint::parse(&"zz".repeat(32)).is_err());
        assert_ne!(
            Identity::generate().unwrap().fingerprint(),
            fp,
            "fresh each time"
        );
    }

    #[test]
    fn an_identity_on_disk_reads_back_and_only_its_owner_can_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("lr-id-{}", std::process::id()));
        let path = dir.join("sub/key.pem");
        let (made, created) = Identity::load_or_create(&path).unwrap();
        assert!(created);
        let (again, created) = Identity::load_or_create(&path).unwrap();
        assert!(!created);
        assert_eq!(made.fingerprint(), again.fingerprint());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(Identity::create_file(&path).is_err(), "never overwritten");
        std::fs::write(&path, "junk").unwrap();
        assert!(Identity::load(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
