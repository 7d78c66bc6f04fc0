//! The pieces every binary decoder is built from: a bounded cursor over
//! received bytes, and tables that map wire codes to enums. A decoder that
//! reads through [`Reader`] cannot index past its input; one that maps codes
//! through [`codes!`] cannot forget a value in one direction.

use crate::{Flaw, WireError};

/// A cursor over bytes from a peer. Every read checks what is left and
/// fails with a [`WireError::Malformed`] naming the thing being decoded.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    what: &'static str,
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A cursor over `buf`, which holds one `what` (named in errors).
    pub fn new(what: &'static str, buf: &'a [u8]) -> Reader<'a> {
        Reader { what, buf }
    }

    /// Bytes not read yet.
    pub fn left(&self) -> usize {
        self.buf.len()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if n > self.buf.len() {
            return Err(WireError::Malformed {
                what: self.what,
                flaw: Flaw::Short {
                    need: n,
                    has: self.buf.len(),
                },
            });
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    /// A cursor over the next `n` bytes, which this one skips.
    pub fn sub(&mut self, n: usize) -> Result<Reader<'a>, WireError> {
        Ok(Reader::new(self.what, self.take(n)?))
    }

    /// The next `N` bytes.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// The next byte.
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.array::<1>()?[0])
    }

    /// Big-endian, as every integer on the wire.
    pub fn u16(&mut self) -> Result<u16, WireError> {
        self.array().map(u16::from_be_bytes)
    }

    /// The next four bytes, big-endian.
    pub fn u32(&mut self) -> Result<u32, WireError> {
        self.array().map(u32::from_be_bytes)
    }

    /// The next eight bytes, big-endian.
    pub fn u64(&mut self) -> Result<u64, WireError> {
        self.array().map(u64::from_be_bytes)
    }

    /// Fails if anything is left: a fixed-size thing with trailing bytes
    /// was not made by this protocol.
    pub fn finish(self) -> Result<(), WireError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(WireError::Malformed {
                what: self.what,
                flaw: Flaw::Trailing(self.buf.len()),
            })
        }
    }
}

/// Declares an enum carried on the wire as one integer, with `code()` and
/// `from_code()` generated from one table, so a value cannot be added in
/// one direction and forgotten in the other. `from_code` fails with the
/// given error variant for a code outside the table.
macro_rules! codes {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $int:ident, unknown = $unknown:path {
            $( $(#[$vmeta:meta])* $variant:ident = $code:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr($int)]
        $vis enum $name { $( $(#[$vmeta])* $variant = $code ),+ }

        impl $name {
            /// The value's code on the wire.
            pub fn code(self) -> $int {
                self as $int
            }

            /// The value of wire code `code`; an unknown code is an error.
            pub fn from_code(code: $int) -> Result<$name, $crate::WireError> {
                match code {
                    $( $code => Ok($name::$variant), )+
                    other => Err($unknown(other)),
                }
            }
        }
    };
}
pub(crate) use codes;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_end_with_the_things_name() {
        let mut r = Reader::new("hello", &[0, 1, 2, 3, 4]);
        assert_eq!(r.u16(), Ok(1));
        let mut sub = r.sub(2).unwrap();
        assert_eq!(sub.u8(), Ok(2));
        assert_eq!(sub.u8(), Ok(3));
        assert!(sub.u8().is_err());
        assert_eq!(r.left(), 1);
        let err = r.u32().unwrap_err();
        assert_eq!(
            err,
            WireError::Malformed {
                what: "hello",
                flaw: Flaw::Short { need: 4, has: 1 }
            }
        );
        assert!(r.clone().finish().is_err());
        assert_eq!(r.u8(), Ok(4));
        assert!(r.finish().is_ok());
    }
}
