//! Which destination paths are being written, server-wide: a session claims
//! every file, link and new directory of its manifest before it touches
//! them, so a second session that names the same path is refused at once
//! instead of both writing through one temporary file. Paths are held as
//! 128-bit hashes of their place under the root.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

/// Keys that are already hashes need no hashing again: the table takes
/// their low 64 bits as they are.
#[derive(Debug, Default)]
pub struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only u128 keys are hashed with this; bytes are folded in for any other.
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.0 ^= u64::from_le_bytes(b);
        }
    }

    fn write_u128(&mut self, k: u128) {
        self.0 = k as u64;
    }
}

/// A set of 128-bit path hashes.
pub type HashKeys = HashSet<u128, BuildHasherDefault<PreHashed>>;

/// The destination paths a server's running transfers hold, so no two write the same file.
#[derive(Debug, Default)]
pub struct Claims {
    held: Mutex<HashKeys>,
}

impl Claims {
    fn lock(&self) -> MutexGuard<'_, HashKeys> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any session holds `path` (relative to the root) now.
    pub fn is_held(&self, path: &str) -> bool {
        self.lock().contains(&key(path))
    }
}

fn key(path: &str) -> u128 {
    twox_hash::XxHash3_128::oneshot(path.as_bytes())
}

/// The paths one session holds; released when it drops.
#[derive(Debug)]
pub struct ClaimSet {
    claims: Arc<Claims>,
    /// The session's destination under the root, with a trailing '/', or "".
    prefix: String,
    held: Vec<u128>,
    /// Reused to build each full path without allocating.
    scratch: String,
}

/// Bytes one held claim costs the session (its key, in two tables).
pub const CLAIM_BYTES: u64 = 48;

impl ClaimSet {
    /// A session's claims under destination `dest`, in the server's `claims`.
    pub fn new(claims: Arc<Claims>, dest: &str) -> ClaimSet {
        let prefix = if dest.is_empty() {
            String::new()
        } else {
            format!("{}/", dest.trim_end_matches('/'))
        };
        ClaimSet {
            claims,
            prefix,
            held: Vec::new(),
            scratch: String::new(),
        }
    }

    /// The path under the root of `rel` under the session's destination.
    pub fn full(&self, rel: &str) -> String {
        format!("{}{rel}", self.prefix)
    }

    /// Claims `rel`; false if another session holds it.
    pub fn claim(&mut self, rel: &str) -> bool {
        self.scratch.clear();
        self.scratch.push_str(&self.prefix);
        self.scratch.push_str(rel);
        let k = key(&self.scratch);
        if !self.claims.lock().insert(k) {
            return self.held.contains(&k);
        }
        self.held.push(k);
        true
    }
}

impl Drop for ClaimSet {
    fn drop(&mut self) {
        let mut held = self.claims.lock();
        for k in &self.held {
            held.remove(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_held_by_one_session_until_it_ends() {
        let claims = Arc::new(Claims::default());
        let mut a = ClaimSet::new(Arc::clone(&claims), "x");
        assert!(a.claim("y/f"));
        assert!(a.claim("y/f"), "a session may name its own claim again");
        // The same place reached through another destination.
        let mut b = ClaimSet::new(Arc::clone(&claims), "x/y");
        assert!(!b.claim("f"));
        assert!(b.claim("g"));
        assert!(claims.is_held("x/y/f"));
        drop(a);
        assert!(!claims.is_held("x/y/f"));
        assert!(b.claim("f"));
    }
}
