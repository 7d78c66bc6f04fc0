//! rsync's itemize codes for what the receiver does to a path
//! (docs/guide.md#itemize): `>f+++++++++` for a file created,
//! `>f.st......` for one replaced whose size and time differed,
//! `cL+++++++++` for a new link, `hf+++++++++` for a new name of a hard
//! link, `*deleting` for a path removed. The letters are rsync's: what kind
//! of path, and which attributes the path found there differed in.

/// How the path came to be, rsync's first letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Came {
    /// Its data was received: `>`.
    Received,
    /// Made at the receiver (a directory, a link): `c`.
    Made,
    /// A name of a file the run has: `h`.
    Linked,
}

/// What the path is, rsync's second letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Type {
    File,
    Dir,
    Link,
}

/// Which attributes of what was there differed from the source's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Differs {
    /// The contents (compared with `--checksum`), or a link's target.
    pub checksum: bool,
    pub size: bool,
    pub time: bool,
    pub perms: bool,
    pub owner: bool,
    pub group: bool,
    pub acl: bool,
    pub xattr: bool,
}

/// A change's code, and what rsync prints after its path: a link's target
/// (` -> t`) or the name a hard link shares (` => first`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Itemized {
    pub code: String,
    pub to: Option<String>,
}

/// The code of a path removed.
pub(super) const DELETING: &str = "*deleting";

fn letters(came: Came, ty: Type) -> [char; 2] {
    let came = match came {
        Came::Received => '>',
        Came::Made => 'c',
        Came::Linked => 'h',
    };
    let ty = match ty {
        Type::File => 'f',
        Type::Dir => 'd',
        Type::Link => 'L',
    };
    [came, ty]
}

impl Itemized {
    /// A file received that was not there.
    pub fn new_file() -> Itemized {
        Itemized::created(Came::Received, Type::File, None)
    }

    /// A directory made that was not there.
    pub fn new_dir() -> Itemized {
        Itemized::created(Came::Made, Type::Dir, None)
    }

    /// A path that was not there.
    pub fn created(came: Came, ty: Type, to: Option<String>) -> Itemized {
        let [a, b] = letters(came, ty);
        Itemized {
            code: format!("{a}{b}+++++++++"),
            to,
        }
    }

    /// A path that was there and differed in `d`.
    pub fn changed(came: Came, ty: Type, d: Differs, to: Option<String>) -> Itemized {
        let flag = |on: bool, c: char| if on { c } else { '.' };
        // A hard link's name the same in every attribute (a new name for
        // the file its old one was): spaces, as rsync prints it.
        let same = came == Came::Linked && d == Differs::default();
        let blank = |c: char| if same { ' ' } else { c };
        let code = letters(came, ty)
            .into_iter()
            .chain([
                flag(d.checksum, 'c'),
                flag(d.size, 's'),
                flag(d.time, 't'),
                flag(d.perms, 'p'),
                flag(d.owner, 'o'),
                flag(d.group, 'g'),
                // Access and creation times: never carried.
                '.',
                flag(d.acl, 'a'),
                flag(d.xattr, 'x'),
            ])
            .map(|c| if c == '.' { blank(c) } else { c })
            .collect();
        Itemized { code, to }
    }

    /// A path removed.
    pub fn deleted() -> Itemized {
        Itemized {
            code: DELETING.to_string(),
            to: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_rsyncs() {
        assert_eq!(
            Itemized::created(Came::Received, Type::File, None).code,
            ">f+++++++++"
        );
        assert_eq!(
            Itemized::created(Came::Made, Type::Dir, None).code,
            "cd+++++++++"
        );
        let d = Differs {
            size: true,
            time: true,
            xattr: true,
            ..Differs::default()
        };
        assert_eq!(
            Itemized::changed(Came::Received, Type::File, d, None).code,
            ">f.st.....x"
        );
        let link = Differs {
            checksum: true,
            time: true,
            ..Differs::default()
        };
        assert_eq!(
            Itemized::changed(Came::Made, Type::Link, link, None).code,
            "cLc.t......"
        );
        let all = Differs {
            checksum: true,
            size: true,
            time: true,
            perms: true,
            owner: true,
            group: true,
            acl: true,
            xattr: true,
        };
        assert_eq!(
            Itemized::changed(Came::Linked, Type::File, all, None).code,
            "hfcstpog.ax"
        );
        assert_eq!(Itemized::deleted().code, "*deleting");
        assert_eq!(
            Itemized::changed(Came::Linked, Type::File, Differs::default(), None).code,
            "hf         "
        );
    }
}
