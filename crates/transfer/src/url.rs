//! The one-shot receiver's address:
//! `linerate://HOST:PORT/?session=HEX&token=HEX&fp=HEX[&stripe=A,B,...]`,
//! printed by `recv` and pasted into `send`; `stripe` lists the receiver's
//! addresses a sender spreads its streams over (`recv --stripe`). `fp` is the SHA-256 fingerprint of the
//! receiver's certificate, made for this session: the sender trusts no
//! other. A receiver started with `--no-encrypt` prints no `fp`.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use linerate_secure::{Fingerprint, Token};
use linerate_wire::SessionId;

/// Where a one-shot receiver waits and how to prove the right to send to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneShot {
    /// The receiver's host, as the URL names it.
    pub host: String,
    /// Its port.
    pub port: u16,
    /// The session it waits for.
    pub session: SessionId,
    /// The secret a sender must show.
    pub token: Token,
    /// The receiver's certificate; None when it does not encrypt.
    pub fingerprint: Option<Fingerprint>,
    /// The receiver's addresses to stripe the streams over, where it
    /// offers several (`recv --stripe`).
    pub stripe: Vec<IpAddr>,
}

/// Most addresses a URL's `stripe=` lists.
pub const MAX_STRIPE: usize = 64;

impl fmt::Display for OneShot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(
            f,
            "linerate://{host}:{}/?session={}&token={}",
            self.port,
            self.session.to_hex(),
            self.token.0
        )?;
        if let Some(fp) = &self.fingerprint {
            write!(f, "&fp={}", fp.to_hex())?;
        }
        if !self.stripe.is_empty() {
            let list: Vec<String> = self.stripe.iter().map(|a| a.to_string()).collect();
            write!(f, "&stripe={}", list.join(","))?;
        }
        Ok(())
    }
}

impl OneShot {
    /// A receiver at `addr`, named `host` in its URL.
    pub fn new(
        addr: SocketAddr,
        host: String,
        session: SessionId,
        token: Token,
        fingerprint: Option<Fingerprint>,
    ) -> OneShot {
        OneShot {
            host,
            port: addr.port(),
            session,
            token,
            fingerprint,
            stripe: Vec::new(),
        }
    }

    /// Parses a URL printed by `linerate recv`.
    pub fn parse(url: &str) -> Result<OneShot, UrlError> {
        let rest = url.strip_prefix("linerate://").ok_or(UrlError::Scheme)?;
        let (authority, query) = rest.split_once("/?").ok_or(UrlError::NoQuery)?;
        let (host, port) = authority.rsplit_once(':').ok_or(UrlError::NoPort)?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(UrlError::EmptyHost);
        }
        let port: u16 = port
            .parse()
            .map_err(|_| UrlError::BadPort(port.chars().take(16).collect()))?;
        let (mut session, mut token, mut fingerprint) = (None, None, None);
        let mut stripe = Vec::new();
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some(("fp", v)) => {
                    fingerprint = Some(Fingerprint::parse(v).map_err(|_| UrlError::Fingerprint)?)
                }
                Some(("session", v)) => session = SessionId::from_hex(v),
                Some(("stripe", v)) => {
                    stripe = v
                        .split(',')
                        .take(MAX_STRIPE + 1)
                        .map(|a| a.parse::<IpAddr>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| UrlError::Stripe)?;
                    if stripe.len() > MAX_STRIPE {
                        return Err(UrlError::LongStripe);
                    }
                }
                Some(("token", v)) if v.len() == 32 && v.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    token = Some(Token(v.to_ascii_lowercase()))
                }
                _ => {}
            }
        }
        Ok(OneShot {
            host: host.to_string(),
            port,
            session: session.ok_or(UrlError::NoSession)?,
            token: token.ok_or(UrlError::NoToken)?,
            fingerprint,
            stripe,
        })
    }
}

/// What is wrong with a receiver's URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Another scheme.
    #[error("a receiver URL starts with linerate://")]
    Scheme,
    /// No query.
    #[error("the URL has no ?session=...&token=... part")]
    NoQuery,
    /// No port.
    #[error("the URL has no :PORT after the host")]
    NoPort,
    /// No host.
    #[error("the URL has an empty host")]
    EmptyHost,
    /// A port that is not a number up to 65535 (its first characters).
    #[error("bad port {0:?} in the URL")]
    BadPort(String),
    /// An `fp=` that is not a fingerprint.
    #[error("the URL's fp= is not 64 hex digits")]
    Fingerprint,
    /// A `stripe=` that is not a list of addresses.
    #[error("the URL's stripe= is not a list of addresses")]
    Stripe,
    /// A `stripe=` longer than any receiver prints.
    #[error("the URL's stripe= lists more than {MAX_STRIPE} addresses")]
    LongStripe,
    /// No valid `session=`.
    #[error("the URL has no valid session=")]
    NoSession,
    /// No valid `token=`.
    #[error("the URL has no valid token=")]
    NoToken,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_round_trips_and_rejects_junk() {
        let one = OneShot {
            host: "::1".into(),
            port: 4000,
            session: SessionId([7; 16]),
            token: Token("ab".repeat(16)),
            fingerprint: Some(Fingerprint([0xc3; 32])),
            stripe: Vec::new(),
        };
        let text = one.to_string();
        assert!(text.starts_with("linerate://[::1]:4000/?session="));
        assert!(
            text.ends_with(&format!("&fp={}", "c3".repeat(32))),
            "{text}"
        );
        assert_eq!(OneShot::parse(&text).unwrap(), one);
        let clear = OneShot {
            fingerprint: None,
            ..one
        };
        assert_eq!(OneShot::parse(&clear.to_string()).unwrap(), clear);
        let striped = OneShot {
            stripe: vec!["10.0.1.2".parse().unwrap(), "fd00::2".parse().unwrap()],
            ..clear.clone()
        };
        let text = striped.to_string();
        assert!(text.ends_with("&stripe=10.0.1.2,fd00::2"), "{text}");
        assert_eq!(OneShot::parse(&text).unwrap(), striped);
        let many = vec!["10.0.0.1"; MAX_STRIPE + 1].join(",");
        for bad in [
            "http://x:1/?session=00&token=00",
            "linerate://x/?session=00",
            "linerate://x:99999/?session=00&token=00",
            "linerate://x:1/?token=abab",
            &format!(
                "linerate://x:1/?session={}&token={}&fp=zz",
                "00".repeat(16),
                "ab".repeat(16)
            ),
            &format!("{}&stripe=10.0.0.1,nope", clear),
            &format!("{}&stripe={many}", clear),
        ] {
            assert!(OneShot::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn token_compare() {
        let t = Token("0".repeat(32));
        assert!(t.matches(&"0".repeat(32)));
        assert!(!t.matches(&"1".repeat(32)));
        assert!(!t.matches("0"));
    }
}
