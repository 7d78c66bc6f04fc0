//! The secret a run or a one-shot receiver hands out: whoever shows it
//! may join (a fleet's agents, a transfer's sender).

use std::fmt;

/// A 128-bit secret, compared in constant time.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(pub String);

impl Token {
    /// A fresh token from the system's randomness.
    pub fn random() -> std::io::Result<Token> {
        let mut b = [0u8; 16];
        getrandom::fill(&mut b).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Token(hex::encode(b)))
    }

    /// Equal without a timing side channel on where the first difference is
    /// (aws-lc's CRYPTO_memcmp; the length is not secret).
    pub fn matches(&self, other: &str) -> bool {
        aws_lc_rs::constant_time::verify_slices_are_equal(self.0.as_bytes(), other.as_bytes())
            .is_ok()
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(..)")
    }
}
