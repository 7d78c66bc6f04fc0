//! A crafted sender, built on the `wire` crate, tries what a real one never
//! would: paths out of the root, links to climb through, a wrong token,
//! garbage frames and blocks past the end of a file. Each is refused with a
//! clear message and nothing outside the root changes.

use crate::common;

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use common::Server;
use common::crafted::{Crafted, file, send_whole_file};
use common::tree::TempDir;
use linerate_wire::{
    Entries, Entry, EntryKind, FrameDecoder, Hello, Message, Record, Role, SessionId, SessionKind,
};

/// A daemon in the clear: the crafted senders speak no TLS.
fn root_server(root: &Path) -> Server {
    Server::with_root_and(root, &["--no-encrypt"])
}

/// A scratch directory with an empty root in it and a server on that root.
fn rooted_server() -> (TempDir, std::path::PathBuf, Server) {
    let base = TempDir::new("hostile");
    let root = base.join("root");
    fs::create_dir_all(&root).unwrap();
    let server = root_server(&root);
    (base, root, server)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn paths_that_leave_the_root_are_refused() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("hostile");
    let root = base.join("root");
    let outside = base.join("outside");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    let server = root_server(&root);
    for (i, (entries, expect)) in [
        (vec![file("../outside/x", 10)], "component"),
        (vec![file("/etc/linerate-x", 10)], "absolute"),
        (vec![file("a/../../outside/x", 10)], "component"),
        (
            vec![
                Entry {
                    path: "up".into(),
                    mode: 0o777,
                    mtime_ns: 0,
                    kind: EntryKind::Symlink {
                        target: outside.to_str().unwrap().into(),
                    },
                    owner: None,
                    xattrs: Vec::new(),
                },
                file("up/x", 10),
            ],
            "symbolic link",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = Crafted::connect(&server.addr(), SessionId([i as u8 + 1; 16]));
        c.request(None);
        c.manifest(entries);
        let msg = c.refusal();
        assert!(msg.contains(expect), "case {i}: {msg}");
    }
    assert!(
        listing(&outside).is_empty(),
        "something was written outside the root"
    );
    // The daemon is still serving.
    let mut c = Crafted::connect(&server.addr(), SessionId([99; 16]));
    c.request(None);
    assert!(matches!(c.recv(), Some(Message::Ready(_))));
}

#[test]
fn a_wrong_destination_is_refused() {
    let _traffic = common::beside_other_traffic();
    let (_base, _root, server) = rooted_server();
    let mut c = Crafted::connect(&server.addr(), SessionId([5; 16]));
    c.request_to("../../tmp", None);
    assert!(c.refusal().contains("destination"));
}

#[test]
fn garbage_frames_end_only_their_session() {
    let _traffic = common::beside_other_traffic();
    let (_base, _root, server) = rooted_server();
    let mut c = Crafted::connect(&server.addr(), SessionId([6; 16]));
    c.sock.write_all(&[0xee; 64]).unwrap();
    let msg = c.refusal();
    assert!(msg.contains("frame"), "{msg}");
    assert!(server.wait_log(Duration::from_secs(5), |l| {
        l.iter().any(|x| x.contains("failed"))
    }));
    let mut c = Crafted::connect(&server.addr(), SessionId([7; 16]));
    c.request(None);
    assert!(matches!(c.recv(), Some(Message::Ready(_))));
}

#[test]
fn a_block_past_the_end_of_its_file_is_refused() {
    let _traffic = common::beside_other_traffic();
    let (_base, root, server) = rooted_server();
    let session = SessionId([8; 16]);
    let mut c = Crafted::connect(&server.addr(), session);
    c.request(None);
    c.manifest(vec![file("small", 100)]);
    loop {
        match c.recv() {
            Some(Message::NeedEnd(_)) => break,
            Some(Message::Need(_)) => {}
            other => panic!("expected the need list, got {other:?}"),
        }
    }
    let mut data = c.data.take().unwrap();
    data.write_all(
        &Record::Block {
            file: 0,
            offset: 1 << 20,
            len: 100,
        }
        .encode(),
    )
    .unwrap();
    let _ = data.write_all(&[0u8; 108]);
    let msg = c.refusal();
    assert!(msg.contains("does not fit"), "{msg}");
    assert!(
        listing(&root).iter().all(|n| n != "small"),
        "{:?}",
        listing(&root)
    );
}

#[test]
fn a_one_shot_receiver_refuses_other_sessions_and_wrong_tokens() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("hostile");
    let dir = base.join("in");
    // In the clear: the crafted client speaks no TLS.
    let (_guard, url) = common::oneshot_clear(&dir);
    let rest = url.strip_prefix("linerate://").unwrap();
    let (addr, query) = rest.split_once("/?").unwrap();
    let session_hex = query
        .split('&')
        .find_map(|p| p.strip_prefix("session="))
        .unwrap();
    let session = SessionId::from_hex(session_hex).unwrap();

    // Another session id is turned away before any question.
    let mut sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock.write_all(
        &Hello::new(SessionId([1; 16]), Role::Control, SessionKind::Transfer, 0).encode(),
    )
    .unwrap();
    let mut dec = FrameDecoder::new();
    let mut buf = [0u8; 4096];
    let n = sock.read(&mut buf).unwrap();
    dec.push(&buf[..n]);
    let refused = Message::from_frame(&dec.next_frame().unwrap().unwrap()).unwrap();
    assert!(
        matches!(refused, Message::Refuse(ref r) if r.message.contains("no such session")),
        "{refused:?}"
    );

    // The right session with a wrong token is refused too.
    let mut c = Crafted::connect(addr, session);
    c.request(Some("0".repeat(32)));
    assert!(c.refusal().contains("token"));
    assert!(listing(&dir).is_empty());
}

#[test]
fn the_receiver_answers_each_manifest_frame_and_takes_blocks_before_the_manifest_ends() {
    let _traffic = common::beside_other_traffic();
    let (_base, root, server) = rooted_server();
    let (mut c, mut data) = Crafted::started(&server.addr(), SessionId([9; 16]));
    // Two frames, each answered before the next is sent; the first file is
    // complete on disk while the manifest is still open.
    for (id, name) in [(0u32, "first"), (1, "second")] {
        let body = vec![id as u8 + 1; 100];
        c.send(&Message::Entries(Entries {
            entries: vec![file(name, 100)],
        }));
        assert_eq!(c.need(), vec![id], "need for {name}");
        send_whole_file(&mut data, id, &body);
        let path = root.join(name);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while fs::read(&path).ok() != Some(body.clone()) {
            assert!(std::time::Instant::now() < deadline, "{name} never arrived");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    c.send(&Message::EntriesEnd);
    match c.recv() {
        Some(Message::NeedEnd(end)) => assert_eq!((end.round, end.blocks, end.bytes), (0, 2, 200)),
        other => panic!("expected the end of the first list, got {other:?}"),
    }
}

#[test]
fn a_new_directory_appears_only_once_the_transfer_is_complete() {
    let _traffic = common::beside_other_traffic();
    let (_base, root, server) = rooted_server();
    let (mut c, mut data) = Crafted::started(&server.addr(), SessionId([7; 16]));
    let dir = Entry {
        path: "new".into(),
        mode: 0o750,
        mtime_ns: 1_000_000_000,
        kind: EntryKind::Dir,
        owner: None,
        xattrs: Vec::new(),
    };
    c.send(&Message::Entries(Entries {
        entries: vec![dir, file("new/a", 100)],
    }));
    assert_eq!(c.need(), vec![1]);
    let body = vec![5u8; 100];
    send_whole_file(&mut data, 1, &body);
    // Whole and under its own name, but in the stage: not at its final path.
    let staged = root.join(".new.lrstage/a");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fs::read(&staged).ok() != Some(body.clone()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the file never arrived"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!root.join("new").exists(), "the directory showed early");
    c.send(&Message::EntriesEnd);
    assert!(matches!(c.recv(), Some(Message::NeedEnd(_))));
    data.write_all(&Record::RoundEnd.encode()).unwrap();
    // The next pass finds nothing missing.
    match c.recv() {
        Some(Message::NeedEnd(end)) => assert_eq!(end.blocks, 0),
        other => panic!("expected an empty second list, got {other:?}"),
    }
    drop(data);
    c.send(&Message::Finish);
    assert!(matches!(c.recv(), Some(Message::TransferReport(_))));
    assert_eq!(fs::read(root.join("new/a")).unwrap(), body);
    assert_eq!(listing(&root), vec!["new"]);
    let meta = fs::metadata(root.join("new")).unwrap();
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    assert_eq!(meta.permissions().mode() & 0o7777, 0o750);
    assert_eq!(meta.mtime(), 1);
}
