//! A certificate and its key, and the fingerprint that names it.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::SecureError;

/// SHA-256 of a certificate's DER encoding: what a client pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    pub fn of(cert_der: &[u8]) -> Fingerprint {
        let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, cert_der);
        let mut out = [0u8; 32];
        out.copy_from_slice(d.as_ref());
        Fingerprint(out)
    }

    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses 64 hex digits (either case, colons between bytes allowed, as
    /// openssl prints them).
    pub fn parse(text: &str) -> Result<Fingerprint, SecureError> {
        let bad = || SecureError::BadFingerprint(text.to_string());
        let digits: String = text.chars().filter(|c| *c != ':').collect();
        if digits.len() != 64 || !digits.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
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
        let made = rcgen::generate_simple_self_signed(vec!["linerate".to_string()])
            .map_err(|e| SecureError::Certificate(e.to_string()))?;
        Ok(Identity {
            cert: made.cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(made.key_pair.serialize_der()),
        })
    }

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
}
