//! What rsync keeps beyond modes and times: owners (`-o -g`, by name
//! unless `--numeric-ids`), extended attributes (`-X`) and POSIX ACLs
//! (`-A`, which the kernel keeps as the attributes
//! `system.posix_acl_access` and `system.posix_acl_default`). Read at the
//! source while the tree is walked; given at the receiver before a file's
//! mode (a change of owner clears setuid bits), and owners only where the
//! receiver runs as root, as rsync does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

use linerate_wire::{Entry, MAX_XATTR_VALUE, MAX_XATTRS, Owner, Xattr};
use rustix::fs::{AtFlags, XattrFlags};
use rustix::io::Errno;
use rustix::process::{Gid, Uid};

use super::acl;
use linerate_engine::lock;

const ACLS: [&str; 2] = ["system.posix_acl_access", "system.posix_acl_default"];

/// Which extended attributes a sender reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wanted {
    /// `-X`: the `user.` namespace, and as root `trusted.` and `security.`.
    pub xattrs: bool,
    /// `-A`: the POSIX ACLs.
    pub acls: bool,
}

impl Wanted {
    fn takes(self, name: &str, root: bool) -> bool {
        if ACLS.contains(&name) {
            return self.acls;
        }
        self.xattrs
            && (name.starts_with("user.")
                || (root && (name.starts_with("trusted.") || name.starts_with("security."))))
    }

    /// Whether any attribute is read.
    pub fn any(self) -> bool {
        self.xattrs || self.acls
    }
}

/// The sender's names of user and group ids, each looked up once.
#[derive(Default)]
pub struct Names {
    users: HashMap<u32, Option<String>>,
    groups: HashMap<u32, Option<String>>,
}

impl Names {
    /// The owner of a file with metadata `meta`.
    pub fn owner(&mut self, meta: &std::fs::Metadata) -> Owner {
        let (uid, gid) = (meta.uid(), meta.gid());
        let user = looked_up(&mut self.users, &uid, |&id| {
            nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(id)).map(|u| u.map(|u| u.name))
        });
        let group = looked_up(&mut self.groups, &gid, |&id| {
            nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(id)).map(|g| g.map(|g| g.name))
        });
        Owner {
            uid,
            gid,
            user,
            group,
        }
    }
}

/// What `key` (a user or group, by number or by name) stands for, looked
/// up once for `cache`.
fn looked_up<K: std::hash::Hash + Eq + Clone, V: Clone>(
    cache: &mut HashMap<K, Option<V>>,
    key: &K,
    look_up: impl FnOnce(&K) -> nix::Result<Option<V>>,
) -> Option<V> {
    if let Some(v) = cache.get(key) {
        return v.clone();
    }
    let v = look_up(key).ok().flatten();
    cache.insert(key.clone(), v.clone());
    v
}

/// The extended attributes of `path` (not followed if a link) that `wanted`
/// takes; none where the file system has none.
pub fn xattrs_of(path: &Path, wanted: Wanted) -> Result<Vec<Xattr>, Errno> {
    if !wanted.any() {
        return Ok(Vec::new());
    }
    let size = match rustix::fs::llistxattr_query(path) {
        Ok(n) => n,
        Err(Errno::NOTSUP) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    if size == 0 {
        return Ok(Vec::new());
    }
    let mut list = vec![0u8; size];
    let n = rustix::fs::llistxattr(path, &mut list[..])?;
    list.truncate(n);
    let root = rustix::process::geteuid().is_root();
    let mut out = Vec::new();
    for name in list.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        if !wanted.takes(name, root) || out.len() >= MAX_XATTRS {
            continue;
        }
        let len = match rustix::fs::lgetxattr_query(path, name) {
            Ok(len) => len.min(MAX_XATTR_VALUE),
            // Gone since it was listed.
            Err(Errno::NODATA) => continue,
            Err(e) => return Err(e),
        };
        let mut value = vec![0u8; len];
        let n = rustix::fs::lgetxattr(path, name, &mut value[..])?;
        value.truncate(n);
        out.push(Xattr {
            name: name.to_string(),
            value,
        });
    }
    Ok(out)
}

/// The receiver's numbers for the owners senders name.
pub struct Ids {
    /// Use the sender's numbers as they are (`--numeric-ids`).
    numeric: bool,
    /// This process may give files away (it runs as root).
    root: bool,
    /// `security.` and `trusted.` attributes are applied: a file capability
    /// (`security.capability`) is a setuid bit by another name, taken from
    /// trusted senders only (`--keep-special-bits`).
    privileged: bool,
    /// The receiver's umask, which ACL entries are held within (a
    /// daemon's default, docs/security.md#acls); None keeps them as sent.
    acl_umask: Option<u32>,
    /// The attributes the manifest carries: others of theirs a path holds
    /// are removed.
    carried: Wanted,
    users: Mutex<HashMap<String, Option<u32>>>,
    groups: Mutex<HashMap<String, Option<u32>>>,
}

impl Ids {
    /// Ids for a transfer that asked for `numeric` ones; `privileged`:
    /// the receiver trusts its senders with special bits; `acl_umask`:
    /// what ACL entries are held within, if anything.
    pub fn new(numeric: bool, privileged: bool, acl_umask: Option<u32>) -> Ids {
        Ids {
            numeric,
            root: rustix::process::geteuid().is_root(),
            privileged,
            acl_umask,
            carried: Wanted::default(),
            users: Mutex::default(),
            groups: Mutex::default(),
        }
    }

    /// The permission bits to give entry `e` after its attributes, of
    /// `masked` (its mode as the receiver allows it): an access ACL
    /// applied as sent is the mode as sent, which a mode narrowed after it
    /// would narrow (the kernel keeps the two as one).
    pub fn mode_after_acl(&self, e: &Entry, masked: u32, allowed: u32) -> u32 {
        if self.acl_umask.is_none() && e.xattrs.iter().any(|x| x.name == ACLS[0]) {
            e.mode & allowed
        } else {
            masked
        }
    }

    /// The attributes the manifest carries (`-X`, `-A`): a path's others
    /// of them go.
    pub fn carrying(mut self, carried: Wanted) -> Ids {
        self.carried = carried;
        self
    }

    /// Removes from `fd` the attributes of the carried kinds that entry
    /// `e` lacks (a path found up to date keeps none of its own).
    fn remove_stale(&self, fd: impl AsFd, e: &Entry) -> Result<(), Errno> {
        if !self.carried.any() {
            return Ok(());
        }
        let mut names = vec![0u8; 64 << 10];
        let held = match self.carried_held(&fd, &mut names) {
            Ok(held) => held,
            Err(Errno::NOTSUP) => return Ok(()),
            Err(x) => return Err(x),
        };
        for name in held {
            if !e.xattrs.iter().any(|x| x.name == name) {
                match rustix::fs::fremovexattr(&fd, name) {
                    Ok(()) | Err(Errno::NODATA) => {}
                    Err(x) => return Err(x),
                }
            }
        }
        Ok(())
    }

    /// Whether owners are given to what arrives.
    pub fn keeps_owners(&self) -> bool {
        self.root
    }

    /// The owner and group `o` names, in this host's numbers: by name where
    /// the name is known here (and not `--numeric-ids`), else as sent.
    fn of(&self, o: &Owner) -> (Uid, Gid) {
        let mut uid = o.uid;
        let mut gid = o.gid;
        if !self.numeric {
            if let Some(name) = &o.user
                && let Some(id) = looked_up(&mut lock(&self.users), name, |n| {
                    nix::unistd::User::from_name(n).map(|u| u.map(|u| u.uid.as_raw()))
                })
            {
                uid = id;
            }
            if let Some(name) = &o.group
                && let Some(id) = looked_up(&mut lock(&self.groups), name, |n| {
                    nix::unistd::Group::from_name(n).map(|g| g.map(|g| g.gid.as_raw()))
                })
            {
                gid = id;
            }
        }
        (Uid::from_raw(uid), Gid::from_raw(gid))
    }

    /// Gives the open file or directory `fd` entry `e`'s owner (as root)
    /// and extended attributes; before its mode is set.
    pub fn apply(&self, fd: impl AsFd, e: &Entry) -> Result<(), Errno> {
        if self.root
            && let Some(o) = &e.owner
        {
            let (uid, gid) = self.of(o);
            rustix::fs::fchown(&fd, Some(uid), Some(gid))?;
        }
        self.remove_stale(&fd, e)?;
        for x in e.xattrs.iter().filter(|x| self.applies(&x.name)) {
            let value = self.value_of(x)?;
            match rustix::fs::fsetxattr(&fd, x.name.as_str(), &value, XattrFlags::empty()) {
                // A destination without them (as rsync, which warns): the
                // data still arrives.
                Ok(()) | Err(Errno::NOTSUP) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The names of the attributes of the carried kinds `fd` holds, read
    /// into `buf`.
    fn carried_held<'b>(&self, fd: impl AsFd, buf: &'b mut [u8]) -> Result<Vec<&'b str>, Errno> {
        let n = rustix::fs::flistxattr(&fd, &mut *buf)?;
        let root = self.root && self.privileged;
        Ok(buf[..n]
            .split(|&b| b == 0)
            .filter_map(|s| std::str::from_utf8(s).ok())
            .filter(|name| !name.is_empty() && self.carried.takes(name, root))
            .collect())
    }

    /// Whether attribute `name` of a sender's is given to what arrives.
    fn applies(&self, name: &str) -> bool {
        name.starts_with("user.")
            || ACLS.contains(&name)
            || (self.privileged && (name.starts_with("security.") || name.starts_with("trusted.")))
    }

    /// The value attribute `x` is given: an ACL held within the umask
    /// where the receiver holds them.
    fn value_of<'a>(&self, x: &'a Xattr) -> Result<Cow<'a, [u8]>, Errno> {
        Ok(match self.acl_umask {
            Some(umask) if ACLS.contains(&x.name.as_str()) => {
                Cow::Owned(acl::masked(&x.value, umask).map_err(|_| Errno::INVAL)?)
            }
            _ => Cow::Borrowed(&x.value),
        })
    }

    /// Whether the owner and the group of what `st` describes differ from
    /// those entry `e` would get (never where owners are not kept).
    pub fn owner_differs(&self, st: &rustix::fs::Stat, e: &Entry) -> (bool, bool) {
        match &e.owner {
            Some(o) if self.root => {
                let (uid, gid) = self.of(o);
                (st.st_uid != uid.as_raw(), st.st_gid != gid.as_raw())
            }
            _ => (false, false),
        }
    }

    /// Whether the open file `fd` differs from entry `e` in its ACLs and in
    /// its other carried attributes, as the receiver would give them
    /// (rsync -i's `a` and `x`); unreadable attributes differ in nothing.
    pub fn attrs_differ(&self, fd: impl AsFd, e: &Entry) -> (bool, bool) {
        let mut acl = false;
        let mut xattr = false;
        let mut flag = |name: &str| {
            if ACLS.contains(&name) {
                acl = true;
            } else {
                xattr = true;
            }
        };
        let mut names = vec![0u8; 64 << 10];
        let Ok(held) = self.carried_held(&fd, &mut names) else {
            return (false, false);
        };
        for name in &held {
            if !e.xattrs.iter().any(|x| x.name == *name) {
                flag(name);
            }
        }
        let mut value = vec![0u8; MAX_XATTR_VALUE];
        for x in e.xattrs.iter().filter(|x| self.applies(&x.name)) {
            let ours = match held.contains(&x.name.as_str()) {
                true => rustix::fs::fgetxattr(&fd, x.name.as_str(), &mut value)
                    .ok()
                    .map(|n| &value[..n]),
                false => None,
            };
            let theirs = self.value_of(x).ok();
            let same = if x.name == ACLS[0] {
                ours.and_then(acl::beyond_mode) == theirs.as_deref().and_then(acl::beyond_mode)
            } else {
                ours == theirs.as_deref()
            };
            if !same {
                flag(&x.name);
            }
        }
        (acl, xattr)
    }

    /// Gives the link `name` in `dir` entry `e`'s owner (as root), without
    /// following it.
    pub fn apply_to_link(&self, dir: impl AsFd, name: &str, e: &Entry) -> Result<(), Errno> {
        if self.root
            && let Some(o) = &e.owner
        {
            let (uid, gid) = self.of(o);
            rustix::fs::chownat(dir, name, Some(uid), Some(gid), AtFlags::SYMLINK_NOFOLLOW)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acls_come_with_a_and_the_rest_with_x_by_namespace() {
        let a = Wanted {
            xattrs: false,
            acls: true,
        };
        let x = Wanted {
            xattrs: true,
            acls: false,
        };
        assert!(a.takes("system.posix_acl_access", false));
        assert!(!a.takes("user.note", false));
        assert!(x.takes("user.note", false));
        assert!(!x.takes("system.posix_acl_default", true));
        assert!(!x.takes("trusted.x", false));
        assert!(x.takes("trusted.x", true));
        assert!(!Wanted::default().any());
    }

    #[test]
    fn owners_go_by_name_unless_numeric() {
        let root = Owner {
            uid: 4242,
            gid: 4343,
            user: Some("root".into()),
            group: Some("root".into()),
        };
        let (u, g) = Ids::new(false, false, None).of(&root);
        assert_eq!((u.as_raw(), g.as_raw()), (0, 0));
        let (u, g) = Ids::new(true, false, None).of(&root);
        assert_eq!((u.as_raw(), g.as_raw()), (4242, 4343));
        let unknown = Owner {
            user: Some("no-such-user-here".into()),
            group: None,
            ..root
        };
        let (u, g) = Ids::new(false, false, None).of(&unknown);
        assert_eq!((u.as_raw(), g.as_raw()), (4242, 4343));
    }
}
