//! The receive path behind the decoders: arbitrary manifests and block
//! records fed into the receiver's sink over a scratch directory, as a
//! hostile sender would. Run with libFuzzer's allocation limits
//! (-rss_limit_mb, -malloc_limit_mb): an allocation sized from an
//! announced size, or bookkeeping that grows with it, is a finding. Every
//! run ends by abandoning the transfer; nothing may stay outside the root
//! and nothing may panic.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use linerate_transfer::confine::DestRoot;
use linerate_engine::limits::SessionLimits;
use linerate_transfer::sink::{Accepted, Sink, SinkOptions, remove_tree};
use linerate_transfer::{CachePolicy, block_span};
use linerate_wire::{Entry, EntryKind, Existing};

/// A scratch root under LINERATE_FUZZ_DIR (best a small tmpfs, as CI
/// mounts: reserved space is then bounded and cheap), else the temp dir.
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::var_os("LINERATE_FUZZ_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let d = base.join(format!("linerate-fuzz-sink-{}", std::process::id()));
        let _ = std::fs::create_dir_all(d.join("root"));
        d
    })
}

const NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "..",
    ".",
    "",
    ".a.lrpart",
    ".a.lrjournal",
    ".b.lrstage",
    "a b",
    "\u{e9}",
];

fn path(u: &mut Unstructured) -> Result<String> {
    if u.ratio(1, 8)? {
        return u.arbitrary();
    }
    let depth = u.int_in_range(1..=3)?;
    let parts: Result<Vec<&str>> = (0..depth).map(|_| u.choose(NAMES).copied()).collect();
    Ok(parts?.join("/"))
}

fn size(u: &mut Unstructured) -> Result<u64> {
    const SIZES: &[u64] = &[
        0,
        1,
        100,
        (64 << 10) - 1,
        64 << 10,
        (64 << 10) + 1,
        200 << 10,
        1 << 30,
        1 << 48,
        1 << 50,
        (1 << 50) + 1,
        1 << 62,
        u64::MAX,
    ];
    if u.ratio(1, 4)? {
        u.arbitrary()
    } else {
        u.choose(SIZES).copied()
    }
}

fn entry(u: &mut Unstructured) -> Result<Entry> {
    let kind = match u.int_in_range(0..=3)? {
        0 => EntryKind::Dir,
        1 => EntryKind::File {
            size: size(u)?,
            sparse: u.arbitrary()?,
            // --checksum: the receiver reads what it holds to compare.
            digest: u
                .arbitrary::<Option<[u8; 32]>>()?
                .map(|d| d.iter().map(|b| format!("{b:02x}")).collect()),
        },
        // A second name of any entry, earlier, later or none.
        2 => EntryKind::HardLink {
            to: u.int_in_range(0..=8)?,
        },
        _ => EntryKind::Symlink {
            target: u.choose(&["a", "../x", "/etc/passwd", "b/c"])?.to_string(),
        },
    };
    Ok(Entry {
        path: path(u)?,
        mode: u.arbitrary()?,
        mtime_ns: u.arbitrary()?,
        kind,
        owner: None,
        xattrs: Vec::new(),
    })
}

/// One block or hole record for a file of the manifest, as a stream would
/// take it: checked, then written in pieces and committed.
fn record(u: &mut Unstructured, sink: &Sink, block_len: u32) -> Result<bool> {
    let count = sink.len() as u32;
    let file = if count > 0 && u.ratio(7, 8)? {
        u.int_in_range(0..=count - 1)?
    } else {
        u.arbitrary()?
    };
    let index: u64 = if u.ratio(3, 4)? {
        u.int_in_range(0..=4)?
    } else {
        u.arbitrary()?
    };
    let size = sink.size(file);
    let (offset, len) = match block_span(size, block_len, index) {
        Some(span) if u.ratio(7, 8)? => span,
        _ => (
            index.wrapping_mul(u64::from(block_len)),
            u.int_in_range(1..=block_len)?,
        ),
    };
    let hole = u.ratio(1, 4)?;
    let take = match sink.accept(file, offset, len, hole) {
        Ok(Accepted::Take) => true,
        Ok(Accepted::Duplicate) => false,
        Err(_) => return Ok(false),
    };
    if !take {
        return Ok(true);
    }
    if !hole {
        let body = u.bytes((len as usize).min(4096).min(u.len()))?.to_vec();
        if sink.is_whole_file(file, offset, len) && body.len() == len as usize {
            return Ok(sink.write_whole(file, &body).is_ok());
        }
        if sink.write_piece(file, offset, &body).is_err() {
            return Ok(false);
        }
    }
    Ok(sink.commit(file, offset).is_ok())
}

fn run(u: &mut Unstructured, sink: &Sink, block_len: u32) -> Result<()> {
    for _ in 0..64 {
        match u.int_in_range(0..=9)? {
            0..=2 => {
                let n = u.int_in_range(1..=6)?;
                let list: Result<Vec<Entry>> = (0..n).map(|_| entry(u)).collect();
                if sink.add(list?).is_err() {
                    return Ok(());
                }
            }
            3..=7 => {
                if !record(u, sink, block_len)? {
                    return Ok(());
                }
            }
            8 => {
                let need = sink.missing();
                assert!(need.iter().all(|f| f.ranges.iter().all(|[a, b]| a < b)));
            }
            _ => {
                // With --delete at times: it must never leave the root.
                let kept = linerate_transfer::filter::Filter::default();
                let _ = sink.finish_dirs(u.arbitrary::<bool>()?.then_some(&kept));
                return Ok(());
            }
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    let root_path = dir.join("root");
    let Ok(root) = DestRoot::open(&root_path) else {
        return;
    };
    let mut u = Unstructured::new(data);
    let block_len = if u.ratio(1, 2).unwrap_or(true) {
        64 << 10
    } else {
        1 << 20
    };
    let sink = Sink::new(
        Some(root),
        SinkOptions {
            block_len,
            peer: None,
            existing: match u.arbitrary::<u8>().unwrap_or(0) % 4 {
                0 => Existing::Refuse,
                1 => Existing::Replace,
                2 => Existing::Keep,
                _ => Existing::KeepNewer,
            },
            cache: CachePolicy::default(),
            keep_special_bits: u.arbitrary().unwrap_or(false),
            carried: Default::default(),
            keep_top: u.arbitrary().unwrap_or(false),
            acls_as_sent: false,
            limits: SessionLimits {
                entries: 10_000,
                memory: 16 << 20,
            },
            claims: None,
            durable: u.arbitrary().unwrap_or(false),
            dry_run: u.arbitrary().unwrap_or(false),
            list_changes: u.arbitrary().unwrap_or(false),
            numeric_ids: u.arbitrary().unwrap_or(false),
            replace_dirs: u.arbitrary().unwrap_or(false),
            protected: Default::default(),
        },
    );
    let _ = run(&mut u, &sink, block_len);
    let _ = sink.take_changes();
    let resumable = u.arbitrary().unwrap_or(false);
    drop(sink.abandon(resumable));
    drop(sink);
    // Everything the run made goes: the next run starts from an empty root.
    let made_something = std::fs::read_dir(&root_path).map_or(true, |mut r| r.next().is_some());
    if made_something {
        if let Ok(d) = rustix::fs::open(
            dir,
            rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        ) {
            let _ = remove_tree(&d, "root");
        }
        let _ = std::fs::create_dir_all(&root_path);
    }
    // Nothing was written beside the root.
    let beside = std::fs::read_dir(dir).map(|r| r.count()).unwrap_or(1);
    assert_eq!(beside, 1, "something was written outside the root");
});
