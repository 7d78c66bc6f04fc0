//! A DSCP code point, by number or by name: the one parser for `--dscp`,
//! a fabric's `--class dscp=...` and whatever marks a connection.

use std::fmt;
use std::str::FromStr;

/// A DSCP code point (0-63): the upper six bits of the TOS byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dscp(u8);

/// Text that names no DSCP code point.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a DSCP code point (0-63, ef, af11-af43 or cs0-cs7)")]
pub struct DscpError(pub String);

impl Dscp {
    /// The code point, 0 to 63.
    pub fn value(self) -> u8 {
        self.0
    }

    /// The TOS byte that carries it, its two ECN bits clear.
    pub fn tos(self) -> u8 {
        self.0 << 2
    }
}

impl FromStr for Dscp {
    type Err = DscpError;

    /// A number (0-63) or an RFC 2474/2597/3246 name: `ef`, `af11`-`af43`,
    /// `cs0`-`cs7`, in any case.
    fn from_str(s: &str) -> Result<Dscp, DscpError> {
        let bad = || DscpError(s.to_string());
        let name = s.trim().to_ascii_lowercase();
        if name == "ef" {
            return Ok(Dscp(46));
        }
        if let Some(n) = name.strip_prefix("cs") {
            return match n.parse::<u8>() {
                Ok(c) if c <= 7 => Ok(Dscp(c << 3)),
                _ => Err(bad()),
            };
        }
        if let Some(n) = name.strip_prefix("af") {
            return match n.as_bytes() {
                [c @ b'1'..=b'4', d @ b'1'..=b'3'] => {
                    Ok(Dscp(((c - b'0') << 3) | ((d - b'0') << 1)))
                }
                _ => Err(bad()),
            };
        }
        match name.parse::<u8>() {
            Ok(v) if v <= 63 => Ok(Dscp(v)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Dscp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dscp(s: &str) -> Result<u8, DscpError> {
        s.parse::<Dscp>().map(Dscp::value)
    }

    #[test]
    fn names_and_numbers_are_code_points() {
        assert_eq!(dscp("ef"), Ok(46));
        assert_eq!(dscp("AF41"), Ok(34));
        assert_eq!(dscp("af11"), Ok(10));
        assert_eq!(dscp("cs1"), Ok(8));
        assert_eq!(dscp("cs7"), Ok(56));
        assert_eq!(dscp("63"), Ok(63));
        assert_eq!("ef".parse::<Dscp>().map(Dscp::tos), Ok(184));
        for bad in ["64", "af44", "af5", "cs8", "x", "", "-1"] {
            let e = dscp(bad).expect_err(bad);
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }
}
