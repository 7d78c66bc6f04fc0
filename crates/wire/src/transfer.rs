//! Control messages of a file transfer: the request, the manifest of entries,
//! the receiver's list of blocks it still needs, and the end-of-transfer
//! digests and summary. JSON inside frames like every control message, each
//! checked by `validate` after decoding.
//!
//! Order on the control connection: `TransferRequest`, `Ready`, then the
//! sender opens its data connections and sends `Start`. The manifest follows
//! as `Entries` frames, each answered by `Need` frames for the files among
//! them that miss blocks, while the streams already carry those blocks;
//! `EntriesEnd` is answered by `NeedEnd` for pass 0. After every later pass
//! (each stream's `RoundEnd` record) the receiver sends the `Need` list of what
//! is still missing and its `NeedEnd`; an empty list ends the transfer, the
//! sender sends `Finish`, and the receiver answers with `Digests` (with
//! `--verify`) and the `TransferReport`.

use serde::{Deserialize, Serialize};

use crate::{MAX_STREAMS, SocketParams, WireError};

/// Smallest and largest block a transfer may cut files into.
pub const MIN_BLOCK_LEN: u32 = 64 << 10;
/// The largest block a transfer may use.
pub const MAX_BLOCK_LEN: u32 = 64 << 20;
/// Entries per manifest frame: keeps frames far below the frame cap even
/// with the longest paths.
pub const ENTRIES_PER_FRAME: usize = 2048;
/// Largest file a transfer may announce: 1 PiB. A receiver's bookkeeping
/// grows with the blocks that arrive, not with this size, and a dense file
/// is further held to the destination's free space.
pub const MAX_FILE_SIZE: u64 = 1 << 50;
/// Most entries (files, directories, links) one transfer may announce.
pub const MAX_ENTRIES: u32 = 50_000_000;
/// Offsets and lengths of direct (O_DIRECT) I/O are multiples of this.
pub const DIRECT_ALIGN: u32 = 4096;
/// Token length in characters (hex of 128 random bits).
pub const TOKEN_LEN: usize = 32;

/// What the sender asks of the receiver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferRequest {
    /// Destination relative to the server's root; empty for the root itself.
    pub dest: String,
    /// The one-shot receiver's secret, from its URL.
    pub token: Option<String>,
    /// Data connections.
    pub streams: u16,
    /// Bytes per block.
    pub block_len: u32,
    /// What becomes of a file that exists at the destination and differs
    /// from the source (in size or modification time).
    #[serde(default)]
    pub existing: Existing,
    /// Receive, check and discard: no file is created.
    pub skip_writes: bool,
    /// Send whole-file BLAKE3 digests back at the end.
    pub verify: bool,
    /// Socket options of the data connections, applied at both ends as a
    /// bench's are (each where it means something).
    #[serde(flatten)]
    pub socket: SocketParams,
    /// Between interval samples; 0 for none.
    #[serde(default)]
    pub interval_ms: u64,
    /// Receivers poll before blocking (decided by the sender from both hosts' CPUs).
    #[serde(default)]
    pub rx_poll: bool,
    /// Write whole pages of the destination past the page cache (O_DIRECT).
    #[serde(default)]
    pub direct: bool,
    /// Drop written blocks from the page cache once they are on disk.
    #[serde(default)]
    pub evict: bool,
    /// Every block carries its XXH3-64 and the receiver checks it. When
    /// off, the trailer is 0 for a good block and anything else for one
    /// the sender could not read whole, which the receiver refuses.
    #[serde(default = "checksum_by_default")]
    pub checksum: bool,
    /// The receiver syncs data before journaling blocks and renaming
    /// files, and directories before it reports the end; off for scratch
    /// data (`--no-fsync`).
    #[serde(default = "fsync_by_default")]
    pub fsync: bool,
    /// Remove what the destination holds in the transfer's directories and
    /// the source lacks (`--delete`), once the transfer is complete.
    #[serde(default)]
    pub delete: bool,
    /// A non-empty directory where the source has a file or a link is
    /// removed to make way for it (`--force`; `delete` does it too).
    #[serde(default)]
    pub force: bool,
    /// The sender's include/exclude rules, as `+ PATTERN` and `- PATTERN`
    /// lines: what they leave out at the source is kept from `delete`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filter: Vec<String>,
    /// Change nothing: say what would be created, replaced and deleted.
    #[serde(default)]
    pub dry_run: bool,
    /// Send back the list of changes (`--itemize`; always with `dry_run`).
    #[serde(default)]
    pub itemize: bool,
    /// Owners by the numbers the sender sent, not by their names.
    #[serde(default)]
    pub numeric_ids: bool,
    /// Files are compared by the digests of their contents, which the
    /// manifest carries (`--checksum`); the receiver reads each file it
    /// holds of the same size before it answers.
    #[serde(default)]
    pub compare_contents: bool,
    /// The manifest carries each entry's user xattrs (`-X`): the receiver
    /// removes those a path holds that its entry lacks, as rsync -X does.
    #[serde(default)]
    pub xattrs: bool,
    /// The manifest carries each entry's ACLs (`-A`): an ACL its entry
    /// lacks is removed.
    #[serde(default)]
    pub acls: bool,
}

/// Most changes a receiver lists in its report; the counts go on beyond.
pub const MAX_CHANGES: usize = 100_000;
/// Most include/exclude rules a request carries.
pub const MAX_FILTER_RULES: usize = 10_000;
/// Most bytes of filter patterns a request carries, all rules together:
/// ten thousand file names of a hundred bytes, not ten thousand 4 KiB
/// globs (docs/security.md#filter-rules).
pub const MAX_FILTER_BYTES: usize = 1 << 20;

/// What a transfer did, or would do with `--dry-run`, to one path at the
/// destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// It was missing.
    Create,
    /// It existed and differed.
    Replace,
    /// The source lacks it (`--delete`).
    Delete,
}

/// One path the transfer changed, or would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// What was done to it.
    pub action: Action,
    /// Relative to the destination; a directory ends in '/'.
    pub path: String,
    /// rsync's itemize code for it (`>f.st......`, `cL+++++++++`,
    /// `*deleting`): what kind of path it is and which attributes of what
    /// was there differed (docs/guide.md#itemize). Empty from a receiver
    /// that does not say.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub item: String,
    /// What rsync prints after the path: a link's target (` -> t`) for a
    /// link, the name a hard link shares (` => first`) for a hard link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

impl Change {
    fn is_well_formed(&self) -> bool {
        let path_ok = |p: &str| !p.is_empty() && p.len() <= 4097 && !p.contains('\0');
        path_ok(&self.path)
            && self.to.as_deref().is_none_or(path_ok)
            && self.item.len() <= ITEM_CODE_LEN
            && self.item.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
    }
}

/// The longest itemize code: rsync's eleven letters.
pub const ITEM_CODE_LEN: usize = 11;

/// What the receiver does with a file that exists at the destination and
/// differs from the source in size or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Existing {
    /// Refuse the transfer (`--no-replace`).
    #[default]
    Refuse,
    /// Replace it atomically: the new file is renamed over it once complete.
    Replace,
    /// Leave it as it is (`--ignore-existing`).
    Keep,
    /// Replace it unless it is newer than the source (`--update`).
    KeepNewer,
}

impl Existing {
    /// Whether a complete new file may be renamed over an existing one.
    pub fn replaces(self) -> bool {
        matches!(self, Existing::Replace | Existing::KeepNewer)
    }
}

fn checksum_by_default() -> bool {
    true
}

fn fsync_by_default() -> bool {
    true
}

impl TransferRequest {
    /// Whether the request is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        let bad = WireError::invalid;
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return bad("streams", "must be between 1 and 1024");
        }
        if !(MIN_BLOCK_LEN..=MAX_BLOCK_LEN).contains(&self.block_len) {
            return bad("block_len", "must be between 64 KiB and 64 MiB");
        }
        self.socket.validate()?;
        if self.dest.len() > 4096 || self.dest.contains('\0') {
            return bad("dest", "must be a path of at most 4096 bytes without NUL");
        }
        if let Some(t) = &self.token
            && (t.len() != TOKEN_LEN || !t.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return bad("token", "must be 32 hex digits");
        }
        if self.direct && !self.block_len.is_multiple_of(DIRECT_ALIGN) {
            return bad("block_len", "must be a multiple of 4 KiB with direct I/O");
        }
        if self.interval_ms != 0 && self.interval_ms < 10 {
            return bad("interval_ms", "must be 0 (off) or at least 10 ms");
        }
        if self.filter.len() > MAX_FILTER_RULES
            || self.filter.iter().map(String::len).sum::<usize>() > MAX_FILTER_BYTES
            || self
                .filter
                .iter()
                .any(|r| r.len() > 4096 || !(r.starts_with("+ ") || r.starts_with("- ")))
        {
            return bad(
                "filter",
                "must be at most 10000 rules and 1 MiB together, each '+ PATTERN' or \
                 '- PATTERN' of at most 4096 bytes",
            );
        }
        Ok(())
    }
}

/// The path of the destination itself in a manifest: the top of a source
/// given with a trailing slash, whose contents land in the destination
/// and whose mode, time and attributes the destination takes (rsync's
/// rule for `SRC/`).
pub const TOP_PATH: &str = ".";

/// One thing in the manifest. Its position in the manifest is its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Relative, '/'-separated; checked again by the receiver before use.
    pub path: String,
    /// Permission bits (0o7777).
    pub mode: u32,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Directory, file or symlink.
    pub kind: EntryKind,
    /// Who owns it at the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Its extended attributes, when asked for (`-X`, `-A`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub xattrs: Vec<Xattr>,
}

/// Who owns an entry at the source: the numbers, and the names where the
/// sender's host has them (a receiver maps names to its own numbers unless
/// `--numeric-ids`, as rsync does).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The owner's user id.
    pub uid: u32,
    /// The group id.
    pub gid: u32,
    /// The owner's user name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The group's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// One extended attribute of an entry; a POSIX ACL is one too
/// (`system.posix_acl_access`, `system.posix_acl_default`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Xattr {
    /// Its name, with its namespace (`user.`, `system.`, ...).
    pub name: String,
    /// Its value.
    pub value: Vec<u8>,
}

/// Hex digits of a file's BLAKE3 digest.
pub const DIGEST_HEX_LEN: usize = 64;

/// Most extended attributes one entry carries.
pub const MAX_XATTRS: usize = 128;

/// What an entry's extended attributes must be, in an error's words (the
/// limits above, checked by a test).
const XATTRS_RULE: &str =
    "at most 128, each named by 1 to 255 bytes without NUL, its value at most 64 KiB";
/// What a digest must be, in an error's words.
const DIGEST_RULE: &str = "must be 64 lowercase hex digits";
/// What a receiver's list of changes must be, in an error's words.
const CHANGES_RULE: &str = "must be at most 100000 paths of 1 to 4097 bytes without NUL, each \
     with a code of at most 11 printable ASCII letters";
/// Largest value of one extended attribute (the kernel's own limit).
pub const MAX_XATTR_VALUE: usize = 64 << 10;

/// What a manifest entry is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// `sparse`: the source has holes; the receiver keeps them as holes.
    File {
        /// Its size.
        size: u64,
        /// It has holes.
        #[serde(default)]
        sparse: bool,
        /// BLAKE3 of its contents, 64 lowercase hex digits (`--checksum`):
        /// a receiver compares it with a file of the same size it holds,
        /// whatever the two files' times say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
    },
    /// A symbolic link, never followed at the receiver.
    Symlink {
        /// Where it points.
        target: String,
    },
    /// Another name of the file an earlier entry is (a hard link, as
    /// `rsync -H` keeps it): made once that file is in place; no data.
    HardLink {
        /// The earlier file entry's id.
        to: u32,
    },
}

impl Entry {
    /// A plain file of `size` bytes at `path`: mode 0644, time 0, not
    /// sparse, no digest, owner or attributes (a generated source's file,
    /// and the start of a test's).
    pub fn file(path: impl Into<String>, size: u64) -> Entry {
        Entry {
            path: path.into(),
            mode: 0o644,
            mtime_ns: 0,
            kind: EntryKind::File {
                size,
                sparse: false,
                digest: None,
            },
            owner: None,
            xattrs: Vec::new(),
        }
    }

    /// A file's size; 0 for directories and symlinks.
    pub fn size(&self) -> u64 {
        match self.kind {
            EntryKind::File { size, .. } => size,
            _ => 0,
        }
    }

    /// The digest of a file's contents, when the sender listed it.
    pub fn digest(&self) -> Option<&str> {
        match &self.kind {
            EntryKind::File { digest, .. } => digest.as_deref(),
            _ => None,
        }
    }
}

/// A batch of manifest entries, ids counting on from the previous batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entries {
    /// The entries.
    pub entries: Vec<Entry>,
}

impl Entries {
    /// Whether the batch is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        if self.entries.len() > ENTRIES_PER_FRAME {
            return Err(WireError::OutOfRange {
                field: "entries in one frame",
                value: self.entries.len() as u64,
                range: 0..=ENTRIES_PER_FRAME as u64,
            });
        }
        for e in &self.entries {
            if e.path.is_empty() || e.path.len() > 4096 || e.path.contains('\0') {
                return Err(WireError::InvalidField {
                    field: "path",
                    reason: "must be 1 to 4096 bytes without NUL",
                });
            }
            if e.size() > MAX_FILE_SIZE {
                return Err(WireError::FileTooLarge { size: e.size() });
            }
            let bad_xattr = |x: &Xattr| {
                x.name.is_empty()
                    || x.name.len() > 255
                    || x.name.contains('\0')
                    || x.value.len() > MAX_XATTR_VALUE
            };
            if e.xattrs.len() > MAX_XATTRS || e.xattrs.iter().any(bad_xattr) {
                return Err(WireError::InvalidField {
                    field: "xattrs",
                    reason: XATTRS_RULE,
                });
            }
            if let Some(o) = &e.owner
                && [&o.user, &o.group]
                    .into_iter()
                    .flatten()
                    .any(|n| n.is_empty() || n.len() > 256 || n.contains('\0'))
            {
                return Err(WireError::InvalidField {
                    field: "owner",
                    reason: "names must be 1 to 256 bytes without NUL",
                });
            }
            if e.digest().is_some_and(|d| {
                d.len() != DIGEST_HEX_LEN
                    || !d
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            }) {
                return Err(WireError::InvalidField {
                    field: "digest",
                    reason: DIGEST_RULE,
                });
            }
            if let EntryKind::Symlink { target } = &e.kind
                && (target.is_empty() || target.len() > 4096 || target.contains('\0'))
            {
                return Err(WireError::InvalidField {
                    field: "target",
                    reason: "must be 1 to 4096 bytes without NUL",
                });
            }
        }
        Ok(())
    }
}

/// Blocks of one file the receiver still needs: half-open ranges of block
/// indices on the grid of the request's block length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeedFile {
    /// The file's id in the manifest.
    pub id: u32,
    /// Half-open ranges of block indices.
    pub ranges: Vec<[u64; 2]>,
}

/// Receiver to sender: files with blocks still missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Need {
    /// The files.
    pub files: Vec<NeedFile>,
}

impl Need {
    /// Whether every range is non-empty.
    pub fn validate(&self) -> Result<(), WireError> {
        for f in &self.files {
            if f.ranges.iter().any(|[a, b]| a >= b) {
                return Err(WireError::InvalidField {
                    field: "ranges",
                    reason: "every range must be non-empty",
                });
            }
        }
        Ok(())
    }
}

/// The end of a need list. `round` counts the passes over the data; an end
/// that follows no need at all says the transfer is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeedEnd {
    /// The pass it ends.
    pub round: u32,
    /// Blocks the pass needs.
    pub blocks: u64,
    /// Bytes the pass needs.
    pub bytes: u64,
}

/// Whole-file BLAKE3 digests computed by the receiver from what it wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digests {
    /// Each file's id with its digest, hex.
    pub files: Vec<(u32, String)>,
}

/// What the receiver did, sent at the end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TransferTotals {
    /// Files written.
    pub files_written: u64,
    /// Files already whole at the destination, not written.
    pub files_skipped: u64,
    /// Files an earlier, cut-short run left blocks of (journaled): this
    /// run went on from them.
    #[serde(default)]
    pub files_resumed: u64,
    /// Directories made.
    pub dirs: u64,
    /// Symlinks made.
    pub symlinks: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Blocks whose checksum did not match, asked for again.
    pub blocks_rejected: u64,
    /// Seconds the receiving threads spent writing to the destination.
    pub write_seconds: f64,
    /// Of `bytes_written`, those written past the page cache (O_DIRECT).
    #[serde(default)]
    pub bytes_written_direct: u64,
    /// The destination is a file system in memory (tmpfs, ramfs).
    #[serde(default)]
    pub dest_in_memory: bool,
    /// Seconds in which some task of the receiver's host waited on I/O
    /// over the transfer (PSI), where the kernel keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_stalled_seconds: Option<f64>,
    /// The most dirty and writeback bytes in the receiver's page cache
    /// when one of its writes blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_peak_bytes: Option<u64>,
    /// Writes (and syncs) of the receiver that blocked on the disk.
    #[serde(default)]
    pub blocked_writes: u64,
    /// Paths created, replaced and deleted (or, with `--dry-run`, that
    /// would be), whether listed or not.
    #[serde(default)]
    pub created: u64,
    /// Files and links replaced.
    #[serde(default)]
    pub replaced: u64,
    /// Paths deleted (`--delete`; a directory counts once).
    #[serde(default)]
    pub deleted: u64,
    /// The receiver gave entries the owners the sender sent (it runs as
    /// root; otherwise its files are its own, as rsync's are).
    #[serde(default)]
    pub owners_kept: bool,
    /// The changes themselves, with `--itemize` or `--dry-run`: at most
    /// [`MAX_CHANGES`] of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
}

impl TransferTotals {
    /// Checks what a receiver reported: a bounded list.
    pub fn validate(&self) -> Result<(), WireError> {
        if self.changes.len() > MAX_CHANGES || self.changes.iter().any(|c| !c.is_well_formed()) {
            return Err(WireError::InvalidField {
                field: "changes",
                reason: CHANGES_RULE,
            });
        }
        if self
            .io_stalled_seconds
            .is_some_and(|s| !s.is_finite() || s < 0.0)
        {
            return Err(WireError::InvalidField {
                field: "io_stalled_seconds",
                reason: "must be a finite number of seconds, 0 or more",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusals' words name the limits the checks apply.
    #[test]
    fn the_rules_in_words_name_the_limits_checked() {
        assert!(XATTRS_RULE.starts_with(&format!("at most {MAX_XATTRS},")));
        assert!(XATTRS_RULE.ends_with(&format!("at most {} KiB", MAX_XATTR_VALUE >> 10)));
        assert!(DIGEST_RULE.contains(&format!("be {DIGEST_HEX_LEN} lowercase")));
        assert!(CHANGES_RULE.contains(&format!("at most {MAX_CHANGES} paths")));
        assert!(CHANGES_RULE.contains(&format!("at most {ITEM_CODE_LEN} printable")));
    }
}
