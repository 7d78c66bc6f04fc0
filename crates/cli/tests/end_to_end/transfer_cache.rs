//! Page-cache policy end to end, on a disk-backed directory: `--direct`
//! moves whole pages past the page cache at both ends, `--evict` leaves
//! neither end's files in it, and the contents arrive intact either way.
//! Residency is read with fincore (util-linux), the cache dropped with dd.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::tree::{TempDir, differences, random_file};
use common::{oneshot, run};

const MIB: usize = 1 << 20;

/// A directory on the disk the build lives on: eviction means nothing on tmpfs.
fn disk_dir(tag: &str) -> TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let fs_type = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(base)
        .output()
        .expect("run stat");
    let fs_type = String::from_utf8_lossy(&fs_type.stdout).trim().to_string();
    assert!(
        fs_type != "tmpfs" && fs_type != "ramfs",
        "these tests need CARGO_TARGET_TMPDIR on a disk, not {fs_type}"
    );
    TempDir::under(base, tag)
}

/// Files above 1 MiB travel block by block; the rest in batches.
fn tree(src: &Path) {
    fs::create_dir_all(src.join("sub")).unwrap();
    for (name, len, seed) in [
        ("empty", 0, 1),
        ("one", 1, 2),
        ("page-less-one", 4095, 3),
        ("page-plus-one", 4097, 4),
        ("sub/piece-plus", 300 * 1024 + 7, 5),
        ("sub/three", 3 * MIB + 5, 6),
        ("big", 20 * MIB + 123, 7),
    ] {
        random_file(&src.join(name), len, seed);
    }
}

fn each_file(dir: &Path, f: &mut dyn FnMut(&Path)) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            each_file(&e.path(), f);
        } else {
            f(&e.path());
        }
    }
}

fn drop_from_cache(dir: &Path) {
    each_file(dir, &mut |p| {
        let ok = Command::new("sync").arg(p).status().unwrap().success()
            && Command::new("dd")
                .arg(format!("if={}", p.display()))
                .args(["iflag=nocache", "count=0", "status=none"])
                .status()
                .unwrap()
                .success();
        assert!(ok, "could not drop {} from the page cache", p.display());
    });
}

fn resident(p: &Path) -> u64 {
    let out = Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "RES"])
        .arg(p)
        .output()
        .expect("run fincore (util-linux)");
    assert!(out.status.success(), "fincore {}", p.display());
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn sent(src: &Path, dst: &Path, flags: &[&str], json: &Path) -> serde_json::Value {
    let (_recv, url) = oneshot(dst);
    let mut args = vec!["send", "--block", "1M", "--json", json.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.extend([src.to_str().unwrap(), url.as_str()]);
    let out = run(&args);
    assert!(
        out.status.success(),
        "send {flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(json).unwrap()).unwrap();
    common::assert_matches_schema(&doc);
    doc
}

#[test]
fn direct_io_keeps_both_ends_out_of_the_page_cache() {
    let _traffic = common::beside_other_traffic();
    let t = disk_dir("direct");
    let (src, dst) = (t.join("src"), t.join("dst"));
    tree(&src);
    drop_from_cache(&src);
    let doc = sent(&src, &dst, &["--direct"], &t.join("r.json"));
    let p = &doc["parameters"];
    assert_eq!(p["direct"], true);
    // Every byte of the two block-by-block files is read directly; written
    // directly are all their whole pages (the last partial block of each
    // goes through the cache).
    let read_direct = p["bytes_read_direct"].as_u64().unwrap();
    let written_direct = p["bytes_written_direct"].as_u64().unwrap();
    assert_eq!(read_direct, (23 * MIB + 128) as u64, "{p}");
    assert!(written_direct >= (23 * MIB) as u64, "{p}");
    assert!(written_direct < p["bytes_total"].as_u64().unwrap(), "{p}");
    // Read before anything compares the trees (which reads them).
    assert_eq!(
        resident(&src.join("big")),
        0,
        "source read through the cache"
    );
    assert!(
        resident(&dst.join("src/big")) <= 4096,
        "destination written through the cache"
    );
    assert_eq!(differences(&src, &dst.join("src")), Vec::<String>::new());
}

#[test]
fn evicting_leaves_no_block_in_the_page_cache() {
    let _traffic = common::beside_other_traffic();
    let t = disk_dir("evict");
    let (src, dst) = (t.join("src"), t.join("dst"));
    tree(&src);
    // Sources on disk and in the cache, as after they were read once (dirty
    // pages are the kernel's writeback to drop, not the sender's).
    drop_from_cache(&src);
    each_file(&src, &mut |p| drop(fs::read(p).unwrap()));
    assert!(resident(&src.join("big")) > 0);
    sent(&src, &dst, &["--evict"], &t.join("r.json"));
    for rel in ["big", "sub/three", "sub/piece-plus", "page-plus-one"] {
        assert_eq!(resident(&src.join(rel)), 0, "source {rel} still cached");
        assert_eq!(
            resident(&dst.join("src").join(rel)),
            0,
            "destination {rel} still cached"
        );
    }
    assert_eq!(differences(&src, &dst.join("src")), Vec::<String>::new());
}

#[test]
fn direct_io_needs_whole_page_blocks() {
    let _traffic = common::beside_other_traffic();
    let t = disk_dir("direct-block");
    random_file(&t.join("f"), 1000, 1);
    let (_recv, url) = oneshot(&t.join("dst"));
    let out = run(&[
        "send",
        "--direct",
        "--block",
        "65537",
        t.join("f").to_str().unwrap(),
        &url,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("multiple of 4 KiB"), "{err}");
}

#[test]
fn synced_data_leaves_the_page_cache_by_default() {
    let _traffic = common::beside_other_traffic();
    // A file of several sync batches (64 MiB each), synced off the streams
    // by the syncer, and the tree's smaller files, synced before their rename.
    let t = disk_dir("synced");
    let (src, dst) = (t.join("src"), t.join("dst"));
    tree(&src);
    random_file(&src.join("batches"), 150 * MIB + 11, 8);
    let doc = sent(&src, &dst, &[], &t.join("r.json"));
    assert_eq!(doc["parameters"]["fsync"], true);
    for rel in ["batches", "big", "sub/three"] {
        assert_eq!(
            resident(&dst.join("src").join(rel)),
            0,
            "destination {rel} still cached after its sync"
        );
    }
    assert_eq!(differences(&src, &dst.join("src")), Vec::<String>::new());
    // Without syncs nothing waits for the disk: the last blocks written
    // stay in the cache, dirty or being written back.
    let scratch = t.join("scratch");
    sent(&src, &scratch, &["--no-fsync"], &t.join("r2.json"));
    assert!(
        resident(&scratch.join("src/batches")) > 0,
        "--no-fsync dropped data the kernel had not written"
    );
}
