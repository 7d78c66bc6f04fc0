//! What a transfer changes at the destination, in rsync's terms: each
//! path created or replaced, counted and (with `--itemize` or `--dry-run`)
//! listed; a dry run that looks and touches nothing; and `--delete`, which
//! removes what the transfer's directories hold and the source lacks.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use linerate_wire::{Action, Change, Entry, EntryKind, Existing, MAX_CHANGES, TOP_PATH};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::cleanup::{open_subdir, remove_tree};
use super::itemize::{Came, Differs, Itemized, Type};
use super::names::{is_staging, split, temp_name};
use super::{EntryFlaw, Item, Sink, SinkError, io_err, lock};
use crate::confine::ConfineError;
use crate::content_digest;
use crate::filter::Filter;

/// What becomes of a file of the manifest, by what its name holds at the
/// destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    /// Nothing is there.
    Create,
    /// A different file is there, and the policy replaces it.
    Replace,
    /// What an earlier, cut-short run of this transfer left in a stage.
    Partial,
    /// The same file is there: its attributes become the source's, as
    /// rsync -a sets them on a file it finds up to date.
    Unchanged,
    /// The policy keeps what is there (`--ignore-existing`, or `--update`
    /// with a newer file there), untouched.
    Kept,
    /// A file with the same contents is there under another time
    /// (`--checksum`): it is kept and given the source's time.
    SameContents,
    /// A different file is there and `--no-replace` refuses it.
    Refused,
}

/// What a name holds, as far as replacing it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Dir,
    Link,
    /// A file, or another non-directory a file's rename replaces.
    File,
}

fn held(mode: u32) -> Held {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => Held::Dir,
        libc::S_IFLNK => Held::Link,
        _ => Held::File,
    }
}

/// A stat's modification time, ns since the epoch.
fn mtime_ns_of(st: &Stat) -> i64 {
    st.st_mtime
        .saturating_mul(1_000_000_000)
        .saturating_add(st.st_mtime_nsec as i64)
}

fn wanted(kind: &EntryKind) -> Held {
    match kind {
        EntryKind::Dir => Held::Dir,
        EntryKind::Symlink { .. } => Held::Link,
        EntryKind::File { .. } | EntryKind::HardLink { .. } => Held::File,
    }
}

impl Sink {
    /// Where entry `e`'s name in `dir` holds another type (a directory
    /// where a file comes, a file where a link comes, ...), removes it as
    /// rsync does, so that the entry is made as if nothing were there: a
    /// non-empty directory only with `--force` or `--delete` (otherwise
    /// the run stops and names it), nothing under `--no-replace` (which
    /// names it) or `--ignore-existing` (which keeps it and the entry is
    /// skipped by its own rule). The removal is listed as a deletion.
    pub(super) fn clear_the_way(&self, e: &Entry, dir: &Arc<OwnedFd>) -> Result<(), SinkError> {
        let (parent, name) = split(&e.path);
        let st = match rustix::fs::statat(&**dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::NOENT) => return Ok(()),
            Err(x) => return Err(io_err("checking", &e.path, x)),
        };
        let was = held(st.st_mode);
        if was == wanted(&e.kind) {
            return Ok(());
        }
        match self.existing {
            Existing::Keep => return Ok(()),
            Existing::Refuse => return Err(ConfineError::Exists(PathBuf::from(&e.path)).into()),
            Existing::Replace | Existing::KeepNewer => {}
        }
        if was == Held::Dir {
            match rustix::fs::unlinkat(&**dir, name, AtFlags::REMOVEDIR) {
                Ok(()) => {}
                Err(Errno::NOTEMPTY | Errno::EXIST) if self.replace_dirs => {
                    if let Some(kept) = self.kept_inside(dir, name, &e.path)? {
                        return Err(SinkError::BadEntry {
                            id: 0,
                            flaw: EntryFlaw::KeptInside {
                                path: PathBuf::from(&e.path),
                                now: now(&e.kind),
                                kept: kept.into(),
                            },
                        });
                    }
                    remove_tree(dir, name).map_err(|x| io_err("removing", &e.path, x))?;
                }
                Err(Errno::NOTEMPTY | Errno::EXIST) => {
                    return Err(SinkError::BadEntry {
                        id: 0,
                        flaw: EntryFlaw::DirectoryNotEmpty {
                            path: PathBuf::from(&e.path),
                            now: now(&e.kind),
                        },
                    });
                }
                Err(x) => return Err(io_err("removing", &e.path, x)),
            }
        } else {
            rustix::fs::unlinkat(&**dir, name, AtFlags::empty())
                .map_err(|x| io_err("removing", &e.path, x))?;
        }
        self.note(Action::Delete, &e.path, was == Held::Dir, Itemized::deleted);
        self.dir_changed(parent, dir);
        Ok(())
    }

    /// The fate of file entry `e`, whose name holds `found` (None: nothing)
    /// in directory `dir`; `staged` when that directory is a stage of this
    /// transfer. With the source's digest (`--checksum`) a file of the
    /// same size is read and compared, whatever its time, as `rsync -c`
    /// does; otherwise size and time decide.
    pub(super) fn fate(
        &self,
        found: Option<&Stat>,
        e: &Entry,
        staged: bool,
        dir: Option<&OwnedFd>,
    ) -> Result<Fate, SinkError> {
        let Some(st) = found else {
            return Ok(Fate::Create);
        };
        let mtime_ns = mtime_ns_of(st);
        let same_size =
            (st.st_mode & libc::S_IFMT) == libc::S_IFREG && st.st_size as u64 == e.size();
        let same_time = mtime_ns == e.mtime_ns;
        if staged {
            // The earlier run finished a file only by giving it its time.
            return Ok(if same_size && same_time {
                Fate::Unchanged
            } else {
                Fate::Partial
            });
        }
        match self.existing {
            Existing::Keep => return Ok(Fate::Kept),
            Existing::KeepNewer if mtime_ns > e.mtime_ns => return Ok(Fate::Kept),
            _ => {}
        }
        let same = match (e.digest(), dir) {
            (Some(theirs), Some(dir)) if same_size => {
                let ours = digest_at(dir, &e.path).map_err(|x| io_err("comparing", &e.path, x))?;
                if ours != theirs {
                    None
                } else if same_time {
                    Some(Fate::Unchanged)
                } else {
                    Some(Fate::SameContents)
                }
            }
            (Some(_), _) => None,
            (None, _) => (same_size && same_time).then_some(Fate::Unchanged),
        };
        Ok(same.unwrap_or(match self.existing {
            Existing::Refuse => Fate::Refused,
            _ => Fate::Replace,
        }))
    }

    /// Counts a change, and lists it with its itemize code when asked to
    /// (up to [`MAX_CHANGES`]).
    pub(super) fn note(
        &self,
        action: Action,
        path: &str,
        is_dir: bool,
        item: impl FnOnce() -> Itemized,
    ) {
        let c = &self.counters;
        let count = match action {
            Action::Create => &c.created,
            Action::Replace => &c.replaced,
            Action::Delete => &c.deleted,
        };
        count.fetch_add(1, Relaxed);
        if !self.list_changes {
            return;
        }
        let mut list = lock(&self.changes);
        if list.len() < MAX_CHANGES {
            let path = if is_dir {
                format!("{path}/")
            } else {
                path.to_string()
            };
            let Itemized { code, to } = item();
            list.push(Change {
                action,
                path,
                item: code,
                to,
            });
        }
    }

    /// How what `st` describes at `name` in `dir` differs from entry `e`,
    /// of type `ty`, in rsync -i's letters.
    pub(super) fn differs(
        &self,
        st: &Stat,
        e: &Entry,
        ty: Type,
        dir: Option<&OwnedFd>,
        name: &str,
    ) -> Differs {
        let (owner, group) = self.ids.owner_differs(st, e);
        // rsync -i compares times to the second (docs/guide.md#itemize).
        let mut d = Differs {
            time: st.st_mtime != e.mtime_ns.div_euclid(1_000_000_000),
            owner,
            group,
            ..Differs::default()
        };
        if ty == Type::Link {
            d.checksum = true;
            return d;
        }
        d.checksum = e.digest().is_some();
        d.size = st.st_size as u64 != e.size();
        d.perms = st.st_mode & 0o7777 != self.mode_of(e);
        if let Some(fd) = dir.and_then(|dir| {
            rustix::fs::openat(
                dir,
                name,
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()
        }) {
            (d.acl, d.xattr) = self.ids.attrs_differ(&fd, e);
        }
        d
    }

    /// The listed changes, once, for the report.
    pub fn take_changes(&self) -> Vec<Change> {
        std::mem::take(&mut *lock(&self.changes))
    }

    /// The existing directory `rel` at the destination, opened without
    /// creating anything; None where it is missing or there is no
    /// destination.
    fn found_dir(&self, rel: &str) -> Result<Option<Arc<OwnedFd>>, SinkError> {
        let rel = if rel == TOP_PATH { "" } else { rel };
        if let Some(d) = lock(&self.dirs).get(rel) {
            return Ok(Some(Arc::clone(d)));
        }
        let Some(root) = &self.root else {
            return Ok(None);
        };
        let Some(d) = root.find_dir(rel)? else {
            return Ok(None);
        };
        let d = Arc::new(d);
        lock(&self.dirs).insert(rel.to_string(), Arc::clone(&d));
        Ok(Some(d))
    }

    /// A dry run's look at entry `id`: what the transfer would do to its
    /// path, noted; nothing is created or asked for.
    pub(super) fn preview(&self, id: usize) -> Result<(), SinkError> {
        let e = self.entry(id);
        let (parent, name) = split(&e.path);
        // Under a directory the run would create, everything is created.
        let dir = if lock(&self.fresh).contains(parent) {
            None
        } else {
            self.found_dir(parent)?
        };
        let found = match &dir {
            Some(d) => match rustix::fs::statat(&**d, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => Some(st),
                Err(Errno::NOENT) => None,
                Err(x) => return Err(io_err("checking", &e.path, x)),
            },
            None => None,
        };
        match &e.kind {
            EntryKind::Dir => {
                let is_dir = found
                    .as_ref()
                    .is_some_and(|st| (st.st_mode & libc::S_IFMT) == libc::S_IFDIR);
                if !is_dir {
                    lock(&self.fresh).insert(e.path.clone());
                    self.note(Action::Create, &e.path, true, Itemized::new_dir);
                }
            }
            EntryKind::Symlink { target } => {
                let same = dir
                    .as_ref()
                    .and_then(|d| rustix::fs::readlinkat(&**d, name, Vec::new()).ok())
                    .is_some_and(|t| t.as_bytes() == target.as_bytes());
                let to = || Some(target.clone());
                match (same, &found) {
                    (true, _) => {}
                    (false, None) => self.note(Action::Create, &e.path, false, || {
                        Itemized::created(Came::Made, Type::Link, to())
                    }),
                    (false, Some(st)) => self.note(Action::Replace, &e.path, false, || {
                        let d = self.differs(st, e, Type::Link, None, name);
                        Itemized::changed(Came::Made, Type::Link, d, to())
                    }),
                }
            }
            EntryKind::HardLink { to } if found.is_none() => {
                self.note(Action::Create, &e.path, false, || {
                    let first = self.items.get(*to as usize).map(|i| i.entry.path.clone());
                    Itemized::created(Came::Linked, Type::File, first)
                });
            }
            EntryKind::HardLink { .. } => {}
            EntryKind::File { .. } => match self.fate(found.as_ref(), e, false, dir.as_deref())? {
                Fate::Create | Fate::Partial => {
                    self.note(Action::Create, &e.path, false, Itemized::new_file)
                }
                Fate::Replace => self.note(Action::Replace, &e.path, false, || {
                    let Some(st) = found.as_ref() else {
                        return Itemized::new_file();
                    };
                    let d = self.differs(st, e, Type::File, dir.as_deref(), name);
                    Itemized::changed(Came::Received, Type::File, d, None)
                }),
                Fate::Refused => return Err(ConfineError::Exists(PathBuf::from(&e.path)).into()),
                Fate::Unchanged | Fate::SameContents | Fate::Kept => {}
            },
        }
        // Nothing is asked for.
        self.mark_all(id);
        Ok(())
    }

    /// `--delete`: removes (in a dry run, only notes) what the transfer's
    /// directories hold at the destination and the manifest lacks. Paths
    /// the sender's rules left out are kept, as are other transfers'
    /// staging files; directories this transfer created hold nothing else.
    pub(super) fn delete_extraneous(&self, filter: &Filter) -> Result<(), SinkError> {
        let listed: HashSet<&str> = self
            .items
            .iter()
            .map(|(_, i)| i.entry.path.as_str())
            .collect();
        let dirs: Vec<&str> = self
            .items
            .iter()
            .filter(|(_, i)| matches!(i.entry.kind, EntryKind::Dir))
            .map(|(_, i)| i.entry.path.as_str())
            .collect();
        for d in dirs {
            if lock(&self.fresh).contains(d) || lock(&self.staged).contains(d) {
                continue;
            }
            self.check_peer()?;
            let Some(fd) = self.found_dir(d)? else {
                continue;
            };
            for (name, is_dir) in names_in(&fd).map_err(|x| io_err("listing", d, x))? {
                let path = child_path(d, &name);
                if listed.contains(path.as_str())
                    || is_staging(&name)
                    || filter.excludes(&path, is_dir)
                {
                    continue;
                }
                if self.dry_run {
                    self.note(Action::Delete, &path, is_dir, Itemized::deleted);
                    continue;
                }
                if is_dir {
                    self.delete_all_but_kept(&fd, &name, &path, filter, 0)?;
                } else {
                    rustix::fs::unlinkat(&*fd, name.as_str(), AtFlags::empty())
                        .map_err(|x| io_err("deleting", &path, x))?;
                    self.note(Action::Delete, &path, false, Itemized::deleted);
                }
                self.dir_changed(d, &fd);
            }
        }
        Ok(())
    }
}

impl Sink {
    /// Deletes directory `name` of `parent` (at `path`), which the source
    /// lacks, but for what the rules leave out inside it: as rsync does,
    /// those stay, with the directories that lead to them.
    fn delete_all_but_kept(
        &self,
        parent: &OwnedFd,
        name: &str,
        path: &str,
        filter: &Filter,
        depth: usize,
    ) -> Result<(), SinkError> {
        if filter.is_empty() || depth >= crate::confine::MAX_DEPTH {
            remove_tree(parent, name).map_err(|x| io_err("deleting", path, x))?;
            self.note(Action::Delete, path, true, Itemized::deleted);
            return Ok(());
        }
        let dir = open_subdir(parent, name).map_err(|x| io_err("opening", path, x))?;
        for (inner, is_dir) in names_in(&dir).map_err(|x| io_err("listing", path, x))? {
            let at = format!("{path}/{inner}");
            if filter.excludes(&at, is_dir) {
                continue;
            }
            if is_dir {
                self.delete_all_but_kept(&dir, &inner, &at, filter, depth + 1)?;
            } else {
                rustix::fs::unlinkat(&dir, inner.as_str(), AtFlags::empty())
                    .map_err(|x| io_err("deleting", &at, x))?;
                self.note(Action::Delete, &at, false, Itemized::deleted);
            }
        }
        match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
            Ok(()) => {
                self.note(Action::Delete, path, true, Itemized::deleted);
                Ok(())
            }
            // It holds what the rules keep: it stays.
            Err(Errno::NOTEMPTY | Errno::EXIST) => Ok(()),
            Err(x) => Err(io_err("deleting", path, x)),
        }
    }

    /// Gives each hard link of the manifest its name, once every file is
    /// in place: a second name of the file its first entry became. A name
    /// that is already that file is left; another file there is replaced
    /// (at once: linked beside it, then renamed over it) as the policy says.
    pub(super) fn make_hard_links(&self) -> Result<(), SinkError> {
        let kept = match self.existing.replaces() {
            true => self.keep_up_to_date_names()?,
            false => HashMap::new(),
        };
        // The name whose file a group's names share: the one it kept as up
        // to date, else its first.
        let data_name = |group: u32, first: &str| {
            kept.get(&group)
                .map_or_else(|| first.to_string(), |k| k.to_string())
        };
        for (_, item) in self.items.iter() {
            let Some(LinkPair {
                first,
                first_dir,
                first_name,
                dir,
                parent,
                name,
                path,
                to: group,
                ..
            }) = self.link_pair(item)?
            else {
                continue;
            };
            // A first name that did not arrive (kept by the policy, or
            // not a file there) leaves its second name alone.
            let Ok(file) = rustix::fs::statat(&*first_dir, first_name, AtFlags::SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            match rustix::fs::statat(&*dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if (st.st_dev, st.st_ino) == (file.st_dev, file.st_ino) => continue,
                Ok(st) if self.existing.replaces() => {
                    // Its contents are its first name's: rsync -c gives
                    // a name linked to it no `c`.
                    let d = self.list_changes.then(|| Differs {
                        checksum: false,
                        ..self.differs(
                            &self.as_found(st),
                            &first.entry,
                            Type::File,
                            Some(&dir),
                            name,
                        )
                    });
                    link_over((&first_dir, first_name), (&dir, name), path)?;
                    self.note(Action::Replace, path, false, || {
                        let to = Some(data_name(group, &first.entry.path));
                        Itemized::changed(Came::Linked, Type::File, d.unwrap_or_default(), to)
                    });
                }
                Ok(_) if self.existing == Existing::Refuse => {
                    return Err(ConfineError::Exists(path.into()).into());
                }
                Ok(_) => continue,
                Err(Errno::NOENT) => {
                    rustix::fs::linkat(&*first_dir, first_name, &*dir, name, AtFlags::empty())
                        .map_err(|x| io_err("linking", path, x))?;
                    self.note(Action::Create, path, false, || {
                        let to = Some(data_name(group, &first.entry.path));
                        Itemized::created(Came::Linked, Type::File, to)
                    });
                }
                Err(x) => return Err(io_err("checking", path, x)),
            }
            self.dir_changed(parent, &dir);
        }
        Ok(())
    }
}

impl Sink {
    /// Where a group's first name was written now and another of its
    /// names already holds the file, up to date, the group keeps that one,
    /// as rsync -H does: the first name becomes a name of it (before any
    /// other name is linked to the first), so that names the transfer does
    /// not list (left out by the rules) stay names of the same file.
    /// Returns, per group, the name kept.
    fn keep_up_to_date_names(&self) -> Result<HashMap<u32, &str>, SinkError> {
        // Per group, the name found up to date that rsync keeps: the first
        // in its order (docs/guide.md#reruns).
        let mut chosen: HashMap<u32, &Item> = HashMap::new();
        for (_, item) in self.items.iter() {
            let Some(pair) = self.link_pair(item)? else {
                continue;
            };
            let Some(slot) = pair.first.slot.as_ref() else {
                continue;
            };
            let (Ok(file), Ok(st)) = (
                rustix::fs::statat(&*pair.first_dir, pair.first_name, AtFlags::SYMLINK_NOFOLLOW),
                rustix::fs::statat(&*pair.dir, pair.name, AtFlags::SYMLINK_NOFOLLOW),
            ) else {
                continue;
            };
            let first = &pair.first.entry;
            if (st.st_dev, st.st_ino) == (file.st_dev, file.st_ino)
                || !self.up_to_date(&st, first, &pair.dir, pair.path)
            {
                continue;
            }
            // A first name up to date itself stays unless rsync's order
            // puts this one before it.
            if slot.up_to_date.load(Relaxed) && rsync_order(&first.path, pair.path).is_le() {
                continue;
            }
            if chosen
                .get(&pair.to)
                .is_none_or(|c| rsync_order(pair.path, &c.entry.path).is_lt())
            {
                chosen.insert(pair.to, item);
            }
        }
        let mut kept = HashMap::new();
        for item in chosen.into_values() {
            let Some(pair) = self.link_pair(item)? else {
                continue;
            };
            kept.insert(pair.to, pair.path);
            let first = &pair.first.entry;
            link_over(
                (&pair.dir, pair.name),
                (&pair.first_dir, pair.first_name),
                &first.path,
            )?;
            self.refresh(&pair.dir, pair.name, first)?;
            self.dir_changed(pair.first_parent, &pair.first_dir);
        }
        Ok(kept)
    }

    /// A hard link entry's name and its group's first name, each with its
    /// directory; none for another entry or where a directory is missing.
    fn link_pair<'a>(&'a self, item: &'a Item) -> Result<Option<LinkPair<'a>>, SinkError> {
        let EntryKind::HardLink { to } = item.entry.kind else {
            return Ok(None);
        };
        let Some(first) = self.items.get(to as usize) else {
            return Ok(None);
        };
        let path = item.entry.path.as_str();
        let (first_parent, first_name) = split(&first.entry.path);
        let (parent, name) = split(path);
        let (Some(first_dir), Some(dir)) = (self.found_dir(first_parent)?, self.found_dir(parent)?)
        else {
            return Ok(None);
        };
        Ok(Some(LinkPair {
            to,
            first,
            first_dir,
            first_parent,
            first_name,
            dir,
            parent,
            name,
            path,
        }))
    }

    /// The first path inside directory `name` of `parent` (at `path`)
    /// that the sender's rules leave out, where one is: a directory that
    /// holds one is not removed.
    fn kept_inside(
        &self,
        parent: &OwnedFd,
        name: &str,
        path: &str,
    ) -> Result<Option<String>, SinkError> {
        if self.protected.is_empty() {
            return Ok(None);
        }
        let mut todo = vec![(
            open_subdir(parent, name).map_err(|x| io_err("opening", path, x))?,
            path.to_string(),
            0,
        )];
        while let Some((dir, at, depth)) = todo.pop() {
            for (n, is_dir) in names_in(&dir).map_err(|x| io_err("listing", &at, x))? {
                let inner = format!("{at}/{n}");
                if self.protected.excludes(&inner, is_dir) {
                    return Ok(Some(inner));
                }
                if is_dir && depth < crate::confine::MAX_DEPTH {
                    let sub =
                        open_subdir(&dir, n.as_str()).map_err(|x| io_err("opening", &inner, x))?;
                    todo.push((sub, inner, depth + 1));
                }
            }
        }
        Ok(None)
    }

    /// Whether `st`, what `path` in `dir` holds, is the file of entry `e`
    /// already: a regular file of its size and time (and contents, where
    /// the source sent its digest).
    fn up_to_date(&self, st: &Stat, e: &Entry, dir: &OwnedFd, path: &str) -> bool {
        (st.st_mode & libc::S_IFMT) == libc::S_IFREG
            && st.st_size as u64 == e.size()
            && mtime_ns_of(st) == e.mtime_ns
            && e.digest()
                .is_none_or(|d| digest_at(dir, path).is_ok_and(|ours| ours == d))
    }
}

/// A second name of a file (a hard link entry) and the group's first.
struct LinkPair<'a> {
    to: u32,
    first: &'a Item,
    first_dir: Arc<OwnedFd>,
    first_parent: &'a str,
    first_name: &'a str,
    dir: Arc<OwnedFd>,
    parent: &'a str,
    name: &'a str,
    path: &'a str,
}

/// rsync's order of two paths of a transfer: by name within a directory,
/// a directory's files before its subdirectories (its file list's order,
/// which decides a hard-link group's first name).
fn rsync_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.split('/').peekable(), b.split('/').peekable());
    loop {
        match (x.next(), y.next()) {
            (Some(p), Some(q)) if p == q => continue,
            (Some(p), Some(q)) => {
                // A name with nothing after it is a file of this directory.
                return match (x.peek().is_none(), y.peek().is_none()) {
                    (true, false) => std::cmp::Ordering::Less,
                    (false, true) => std::cmp::Ordering::Greater,
                    _ => p.cmp(q),
                };
            }
            (p, q) => return p.is_some().cmp(&q.is_some()),
        }
    }
}

/// Makes `to` a name of the file `from` names, at once: linked beside it
/// under a temporary name, then renamed over it.
fn link_over(
    (from_dir, from): (&OwnedFd, &str),
    (to_dir, to): (&OwnedFd, &str),
    path: &str,
) -> Result<(), SinkError> {
    let temp = temp_name(to);
    let _ = rustix::fs::unlinkat(to_dir, temp.as_str(), AtFlags::empty());
    rustix::fs::linkat(from_dir, from, to_dir, temp.as_str(), AtFlags::empty())
        .map_err(|x| io_err("linking", path, x))?;
    rustix::fs::renameat(to_dir, temp.as_str(), to_dir, to)
        .map_err(|x| io_err("replacing", path, x))
}

/// The names in directory `dir` (opened for listing from its path
/// handle), each with whether it is a directory (a link is not).
fn names_in(dir: &OwnedFd) -> Result<Vec<(String, bool)>, Errno> {
    let open = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(&open)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        // Names that are not UTF-8 cannot be in a manifest: they are the
        // destination's own, and stay.
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            FileType::Unknown => rustix::fs::statat(&open, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| (st.st_mode & libc::S_IFMT) == libc::S_IFDIR),
            _ => false,
        };
        out.push((name.to_string(), is_dir));
    }
    Ok(out)
}

/// The digest of the contents of regular file `path` (its last component)
/// in `dir`, opened without following a link.
fn digest_at(dir: &OwnedFd, path: &str) -> Result<String, Errno> {
    let (_, name) = split(path);
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    // Only a regular file is read: the name may have changed since it was
    // looked at.
    if rustix::fs::fstat(&fd)?.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(Errno::INVAL);
    }
    content_digest(std::fs::File::from(fd))
        .map_err(|x| Errno::from_io_error(&x).unwrap_or(Errno::IO))
}

/// The manifest's path of `name` in directory `dir` (the destination
/// itself being [`TOP_PATH`]).
fn child_path(dir: &str, name: &str) -> String {
    if dir == TOP_PATH {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// What the source has where a directory was: `link` or `file`, in words.
fn now(kind: &EntryKind) -> &'static str {
    if wanted(kind) == Held::Link {
        "link"
    } else {
        "file"
    }
}

#[cfg(test)]
mod tests {
    use super::rsync_order;
    use std::cmp::Ordering::*;

    #[test]
    fn a_directorys_files_come_before_its_subdirectories() {
        assert_eq!(rsync_order("c", "b/f/g.tmp/d.o"), Less);
        assert_eq!(rsync_order("b/f", "b/a/y"), Less);
        assert_eq!(rsync_order("b/f/x", "b/a/y"), Greater);
        assert_eq!(rsync_order("b/a/y", "b/f"), Greater);
        assert_eq!(rsync_order("a/x", "a/y"), Less);
        assert_eq!(rsync_order("a/x", "a/x"), Equal);
        assert_eq!(rsync_order("d/e", "d"), Greater);
    }
}
