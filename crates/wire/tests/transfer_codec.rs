//! Property tests of the transfer codec: records and manifest messages
//! round-trip, and hostile records are refused without a panic.

use linerate_wire::{
    Action, BLOCK_TRAILER_LEN, Change, Entries, Entry, EntryKind, Existing, MAX_BLOCK_LEN,
    MAX_CHANGES, MAX_FILE_SIZE, MAX_FILTER_RULES, MAX_XATTR_VALUE, MAX_XATTRS, Message, Need,
    NeedFile, Owner, RECORD_HEADER_LEN, Record, TransferRequest, TransferTotals, Xattr,
};
use proptest::prelude::*;

fn record() -> impl Strategy<Value = Record> {
    prop_oneof![
        (any::<u32>(), 0u64..(1 << 50), 1u32..=MAX_BLOCK_LEN)
            .prop_map(|(file, offset, len)| Record::Block { file, offset, len }),
        (any::<u32>(), 0u64..(1 << 50), 1u32..=MAX_BLOCK_LEN)
            .prop_map(|(file, offset, len)| Record::Hole { file, offset, len }),
        Just(Record::RoundEnd),
    ]
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        "[a-zA-Z0-9 _\\-\\n\u{e9}\u{540d}]{1,40}(/[a-z]{1,8}){0,3}",
        0u32..0o7777,
        any::<i64>(),
        prop_oneof![
            Just(EntryKind::Dir),
            (
                0..=MAX_FILE_SIZE,
                any::<bool>(),
                proptest::option::of("[0-9a-f]{64}")
            )
                .prop_map(|(size, sparse, digest)| EntryKind::File {
                    size,
                    sparse,
                    digest
                }),
            "[a-z/.]{1,30}".prop_map(|target| EntryKind::Symlink { target }),
            (0u32..100).prop_map(|to| EntryKind::HardLink { to }),
        ],
    )
        .prop_map(|(path, mode, mtime_ns, kind)| Entry {
            path,
            mode,
            mtime_ns,
            kind,
            // Owners and attributes on some entries, by the mode's bits.
            owner: (mode % 2 == 0).then(|| Owner {
                uid: mode,
                gid: mode + 1,
                user: Some("user".into()),
                group: None,
            }),
            xattrs: if mode % 3 == 0 {
                vec![Xattr {
                    name: "user.note".into(),
                    value: vec![0, 1, 255],
                }]
            } else {
                Vec::new()
            },
        })
}

proptest! {
    #[test]
    fn records_round_trip(r in record()) {
        let bytes = r.encode();
        prop_assert_eq!(bytes.len(), RECORD_HEADER_LEN);
        prop_assert_eq!(Record::decode(&bytes).unwrap(), r);
    }

    #[test]
    fn record_decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        if let Ok(Record::Block { len, offset, .. }) = Record::decode(&bytes) {
            prop_assert!((1..=MAX_BLOCK_LEN).contains(&len));
            prop_assert!(offset.checked_add(u64::from(len)).is_some());
        }
    }

    #[test]
    fn manifest_and_need_round_trip(entries in proptest::collection::vec(entry(), 0..20),
                                    ranges in proptest::collection::vec((0u64..1000, 1u64..100), 1..10)) {
        let m = Message::Entries(Entries { entries });
        prop_assert_eq!(Message::from_frame(&m.to_frame()).unwrap(), m);
        let need = Message::Need(Need { files: vec![NeedFile { id: 3, ranges: ranges.iter().map(|&(a, n)| [a, a + n]).collect() }] });
        prop_assert_eq!(Message::from_frame(&need.to_frame()).unwrap(), need);
    }

    #[test]
    fn a_file_over_the_largest_size_is_refused(size in (MAX_FILE_SIZE + 1)..=u64::MAX) {
        let e = Entry { path: "f".into(), mode: 0o644, mtime_ns: 0, kind: EntryKind::File { size, sparse: true, digest: None }, owner: None, xattrs: Vec::new() };
        let m = Message::Entries(Entries { entries: vec![e] });
        let err = Message::from_frame(&m.to_frame()).unwrap_err();
        prop_assert!(err.to_string().contains("size"), "{}", err);
    }

    #[test]
    fn valid_requests_round_trip(streams in 1u16..=1024, pages in 16u32..=16384,
                                 flags in any::<[bool; 8]>(), interval_ms in prop_oneof![Just(0u64), 10u64..100_000],
                                 existing in prop_oneof![Just(Existing::Refuse), Just(Existing::Replace), Just(Existing::Keep), Just(Existing::KeepNewer)]) {
        let [contents, skip_writes, verify, rx_poll, direct, evict, checksum, fsync] = flags;
        let req = TransferRequest {
            dest: "in/run 7".into(),
            token: None,
            streams,
            block_len: pages * 4096,
            existing,
            skip_writes,
            verify,
            socket: linerate_wire::SocketParams {
                rcvbuf: Some(4 << 20),
                ..Default::default()
            },
            interval_ms,
            rx_poll,
            direct,
            evict,
            checksum,
            fsync,
            delete: skip_writes,
            filter: if verify { vec!["- *.o".into(), "+ keep/".into()] } else { Vec::new() },
            dry_run: direct,
            itemize: evict,
            numeric_ids: rx_poll,
            compare_contents: contents,
            xattrs: false,
            acls: false,
            force: checksum,
        };
        let m = Message::TransferRequest(req);
        prop_assert_eq!(Message::from_frame(&m.to_frame()).unwrap(), m);
    }
}

#[test]
fn hostile_records_are_refused() {
    let mut too_long = Record::Block {
        file: 0,
        offset: 0,
        len: 1,
    }
    .encode();
    too_long[13..17].copy_from_slice(&(MAX_BLOCK_LEN + 1).to_be_bytes());
    assert!(Record::decode(&too_long).is_err());
    let mut overflow = Record::Block {
        file: 0,
        offset: u64::MAX,
        len: 1,
    }
    .encode();
    overflow[5..13].copy_from_slice(&u64::MAX.to_be_bytes());
    assert!(Record::decode(&overflow).is_err());
    let mut tag = Record::RoundEnd.encode();
    tag[0] = 9;
    assert!(Record::decode(&tag).is_err());
    assert!(Record::decode(&[1, 2, 3]).is_err());
    assert_eq!(BLOCK_TRAILER_LEN, 8);
}

/// A request that validates.
fn valid_request() -> TransferRequest {
    TransferRequest {
        dest: "a/b".into(),
        token: Some("ab".repeat(16)),
        streams: 2,
        block_len: 8 << 20,
        existing: Existing::Refuse,
        skip_writes: false,
        verify: true,
        socket: linerate_wire::SocketParams::default(),
        interval_ms: 1000,
        rx_poll: false,
        direct: true,
        evict: false,
        checksum: true,
        fsync: true,
        delete: false,
        filter: Vec::new(),
        dry_run: false,
        itemize: false,
        numeric_ids: false,
        compare_contents: false,
        xattrs: false,
        acls: false,
        force: false,
    }
}

#[test]
fn transfer_requests_are_checked() {
    let ok = valid_request();
    assert!(ok.validate().is_ok());
    for bad in [
        TransferRequest {
            streams: 0,
            ..ok.clone()
        },
        TransferRequest {
            block_len: 1,
            ..ok.clone()
        },
        TransferRequest {
            token: Some("xyz".into()),
            ..ok.clone()
        },
        TransferRequest {
            dest: "a\0b".into(),
            ..ok.clone()
        },
        // Direct I/O moves whole pages: a block of 64 KiB + 1 cannot be one.
        TransferRequest {
            block_len: (64 << 10) + 1,
            ..ok.clone()
        },
        // Rules travel as "+ PATTERN" or "- PATTERN", and not without end.
        TransferRequest {
            filter: vec!["*.o".into()],
            ..ok.clone()
        },
        TransferRequest {
            filter: vec!["- x".into(); MAX_FILTER_RULES + 1],
            ..ok.clone()
        },
    ] {
        let frame = Message::TransferRequest(bad).to_frame();
        assert!(Message::from_frame(&frame).is_err());
    }
}

#[test]
fn a_report_lists_a_bounded_number_of_changes() {
    let change = |path: &str| Change {
        action: Action::Delete,
        path: path.into(),
        item: "*deleting".into(),
        to: None,
    };
    let ok = TransferTotals {
        deleted: 1,
        changes: vec![change("a/b")],
        ..TransferTotals::default()
    };
    assert!(ok.validate().is_ok());
    for changes in [
        vec![change("x"); MAX_CHANGES + 1],
        vec![change("")],
        vec![change("a\0b")],
        vec![Change {
            item: ">f+++++++++++".into(),
            ..change("a")
        }],
        vec![Change {
            item: ">f\n".into(),
            ..change("a")
        }],
        vec![Change {
            to: Some(String::new()),
            ..change("a")
        }],
    ] {
        let bad = TransferTotals {
            changes,
            ..TransferTotals::default()
        };
        assert!(bad.validate().is_err());
    }
}

#[test]
fn a_request_without_the_checksum_field_keeps_checksums_on() {
    let req = TransferRequest {
        checksum: false,
        ..valid_request()
    };
    let mut json = serde_json::to_value(&req).unwrap();
    json.as_object_mut().unwrap().remove("checksum");
    let back: TransferRequest = serde_json::from_value(json).unwrap();
    assert!(
        back.checksum,
        "a sender from before the option always checksummed"
    );
}

/// A one-byte file, with nothing beyond its stat.
fn one_byte_file() -> Entry {
    Entry::file("f", 1)
}

#[test]
fn hostile_owners_and_attributes_are_refused() {
    let entry = |owner: Option<Owner>, xattrs: Vec<Xattr>| Entry {
        owner,
        xattrs,
        ..one_byte_file()
    };
    let x = |name: &str, len: usize| Xattr {
        name: name.into(),
        value: vec![7; len],
    };
    let named = |user: &str| Owner {
        uid: 1,
        gid: 1,
        user: Some(user.into()),
        group: None,
    };
    let fine = entry(Some(named("ada")), vec![x("user.a", 10)]);
    let frame = Message::Entries(Entries {
        entries: vec![fine],
    })
    .to_frame();
    assert!(Message::from_frame(&frame).is_ok());
    for bad in [
        entry(None, vec![x("user.a", 1); MAX_XATTRS + 1]),
        entry(None, vec![x("user.a", MAX_XATTR_VALUE + 1)]),
        entry(None, vec![x("", 1)]),
        entry(None, vec![x("user.\0", 1)]),
        entry(Some(named("")), Vec::new()),
        entry(Some(named("a\0b")), Vec::new()),
    ] {
        let frame = Message::Entries(Entries { entries: vec![bad] }).to_frame();
        assert!(Message::from_frame(&frame).is_err());
    }
}

#[test]
fn a_digest_must_be_64_lowercase_hex_digits() {
    let with = |digest: &str| Entries {
        entries: vec![Entry {
            kind: EntryKind::File {
                size: 1,
                sparse: false,
                digest: Some(digest.into()),
            },
            ..one_byte_file()
        }],
    };
    assert!(with(&"a".repeat(64)).validate().is_ok());
    for bad in ["", "ab", &"A".repeat(64), &"g".repeat(64), &"a".repeat(65)] {
        let err = with(bad).validate().unwrap_err();
        assert!(err.to_string().contains("digest"), "{bad:?}: {err}");
    }
}

#[test]
fn a_report_with_negative_io_stall_is_refused() {
    let bad = TransferTotals {
        io_stalled_seconds: Some(-1.0),
        ..TransferTotals::default()
    };
    assert!(bad.validate().is_err());
    let ok = TransferTotals {
        io_stalled_seconds: Some(0.5),
        ..TransferTotals::default()
    };
    assert!(ok.validate().is_ok());
}
