//! A POSIX ACL as the kernel stores it in `system.posix_acl_access` and
//! `system.posix_acl_default`, held within a receiver's umask: a daemon
//! taking files from several key holders gives no entry more than its
//! umask allows a mode (docs/security.md#acls).
//!
//! The value is a 4-byte version (2) and 8-byte entries of a tag, the
//! permission bits and an id, little-endian (linux/posix_acl_xattr.h).

use thiserror::Error;

const VERSION: u32 = 2;
const HEADER: usize = 4;
const ENTRY: usize = 8;

const USER_OBJ: u16 = 0x01;
const USER: u16 = 0x02;
const GROUP_OBJ: u16 = 0x04;
const GROUP: u16 = 0x08;
const MASK: u16 = 0x10;
const OTHER: u16 = 0x20;

/// Why an ACL attribute was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AclError {
    /// Not a version-2 header followed by whole entries.
    #[error("not a POSIX ACL: {0} bytes, not a version-2 header and whole 8-byte entries")]
    Malformed(usize),
    /// An entry of a kind POSIX ACLs do not have.
    #[error("not a POSIX ACL: entry tag {0:#x}")]
    UnknownTag(u16),
}

/// `value` with every entry's permissions held within `umask`: the owner's
/// entry by the umask's owner bits, named users, groups, the owning group
/// and the mask by its group bits, others by its other bits.
pub fn masked(value: &[u8], umask: u32) -> Result<Vec<u8>, AclError> {
    let body = value
        .get(HEADER..)
        .filter(|b| b.len() % ENTRY == 0)
        .ok_or(AclError::Malformed(value.len()))?;
    let version = u32::from_le_bytes(value[..HEADER].try_into().unwrap_or_default());
    if version != VERSION {
        return Err(AclError::Malformed(value.len()));
    }
    let allowed = |shift: u32| (!(umask >> shift) & 0o7) as u16;
    let mut out = value[..HEADER].to_vec();
    for e in body.chunks_exact(ENTRY) {
        let tag = u16::from_le_bytes([e[0], e[1]]);
        let perm = u16::from_le_bytes([e[2], e[3]]);
        let keep = match tag {
            USER_OBJ => allowed(6),
            USER | GROUP_OBJ | GROUP | MASK => allowed(3),
            OTHER => allowed(0),
            other => return Err(AclError::UnknownTag(other)),
        };
        out.extend_from_slice(&e[..2]);
        out.extend_from_slice(&(perm & keep).to_le_bytes());
        out.extend_from_slice(&e[4..]);
    }
    Ok(out)
}

/// The entries of access ACL `value` that a mode does not hold: the
/// owning group's, named users' and groups' (the owner's, the mask and
/// others' are the mode's bits, which rsync -i reports as `p`, not `a`).
/// None where `value` is no ACL.
pub fn beyond_mode(value: &[u8]) -> Option<Vec<[u8; ENTRY]>> {
    let body = value.get(HEADER..).filter(|b| b.len() % ENTRY == 0)?;
    Some(
        body.chunks_exact(ENTRY)
            .filter(|e| matches!(u16::from_le_bytes([e[0], e[1]]), USER | GROUP_OBJ | GROUP))
            .filter_map(|e| e.try_into().ok())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(entries: &[(u16, u16, u32)]) -> Vec<u8> {
        let mut v = VERSION.to_le_bytes().to_vec();
        for &(tag, perm, id) in entries {
            v.extend_from_slice(&tag.to_le_bytes());
            v.extend_from_slice(&perm.to_le_bytes());
            v.extend_from_slice(&id.to_le_bytes());
        }
        v
    }

    #[test]
    fn the_mask_and_the_modes_own_entries_are_not_beyond_the_mode() {
        let with = |mask: u16| {
            acl(&[
                (USER_OBJ, 6, 0),
                (USER, 4, 1001),
                (GROUP_OBJ, 4, 0),
                (MASK, mask, 0),
                (OTHER, 4, 0),
            ])
        };
        assert_eq!(beyond_mode(&with(4)), beyond_mode(&with(6)));
        let other_user = acl(&[(USER_OBJ, 6, 0), (USER, 4, 1002), (GROUP_OBJ, 4, 0)]);
        assert_ne!(beyond_mode(&with(4)), beyond_mode(&other_user));
        assert_eq!(beyond_mode(&[1, 2, 3]), None);
    }

    #[test]
    fn every_entry_keeps_only_what_the_umask_allows() {
        let none = u32::MAX;
        let sent = acl(&[
            (USER_OBJ, 7, none),
            (USER, 7, 1000),
            (GROUP_OBJ, 7, none),
            (GROUP, 6, 2000),
            (MASK, 7, none),
            (OTHER, 7, none),
        ]);
        let want = acl(&[
            (USER_OBJ, 7, none),
            (USER, 5, 1000),
            (GROUP_OBJ, 5, none),
            (GROUP, 4, 2000),
            (MASK, 5, none),
            (OTHER, 5, none),
        ]);
        assert_eq!(masked(&sent, 0o022), Ok(want));
        assert_eq!(masked(&sent, 0), Ok(sent.clone()));
        let strict = masked(&sent, 0o077).unwrap();
        assert_eq!(strict[HEADER + 2..HEADER + 4], [7, 0]);
        assert!(strict[HEADER + ENTRY..].chunks(ENTRY).all(|e| e[2] == 0));
    }

    #[test]
    fn what_is_no_acl_is_refused() {
        assert_eq!(masked(&[], 0o022), Err(AclError::Malformed(0)));
        assert_eq!(masked(&[2, 0, 0], 0o022), Err(AclError::Malformed(3)));
        let mut v = acl(&[(OTHER, 7, 0)]);
        v.push(0);
        assert_eq!(masked(&v, 0o022), Err(AclError::Malformed(13)));
        assert_eq!(
            masked(&acl(&[(0x40, 7, 0)]), 0o022),
            Err(AclError::UnknownTag(0x40))
        );
        let mut v1 = acl(&[(OTHER, 7, 0)]);
        v1[0] = 1;
        assert_eq!(masked(&v1, 0o022), Err(AclError::Malformed(12)));
    }

    proptest::proptest! {
        #[test]
        fn a_taken_acl_keeps_its_shape_and_gains_no_bit(
            entries in proptest::collection::vec(
                (proptest::sample::select(vec![USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER]),
                 0u16..8, proptest::num::u32::ANY), 0..32),
            umask in 0u32..0o1000,
        ) {
            let sent = acl(&entries);
            let out = masked(&sent, umask).unwrap();
            proptest::prop_assert_eq!(out.len(), sent.len());
            for (a, b) in sent[HEADER..].chunks(ENTRY).zip(out[HEADER..].chunks(ENTRY)) {
                proptest::prop_assert_eq!((&a[..2], &a[4..]), (&b[..2], &b[4..]));
                proptest::prop_assert_eq!(b[2] & !a[2], 0);
                let shift = match u16::from_le_bytes([a[0], a[1]]) {
                    USER_OBJ => 6,
                    OTHER => 0,
                    _ => 3,
                };
                proptest::prop_assert_eq!(u32::from(b[2]) & (umask >> shift) & 0o7, 0);
            }
        }
    }
}
