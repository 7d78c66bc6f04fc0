//! A crafted client built on the `wire` crate: it speaks the protocol's
//! own framing but sends what a real sender never would.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use linerate_wire::{
    Entries, Entry, EntryKind, FrameDecoder, Hello, Message, Record, Role, SessionId, SessionKind,
    TransferRequest,
};

pub struct Crafted {
    pub sock: TcpStream,
    pub dec: FrameDecoder,
    pub session: SessionId,
    pub addr: String,
    /// The one data connection, opened once the receiver is ready.
    pub data: Option<TcpStream>,
}

impl Crafted {
    pub fn connect(addr: &str, session: SessionId) -> Crafted {
        let (c, first) = Crafted::hello(addr, session, SessionKind::Transfer);
        assert!(matches!(first, Some(Message::Accept(_))), "{first:?}");
        c
    }

    /// Opens a control connection of `kind`; returns it and the server's
    /// first answer (its acceptance or refusal).
    pub fn hello(addr: &str, session: SessionId, kind: SessionKind) -> (Crafted, Option<Message>) {
        let mut sock = TcpStream::connect(addr).expect("connect");
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        sock.write_all(&Hello::new(session, Role::Control, kind, 0).encode())
            .unwrap();
        let mut c = Crafted {
            sock,
            dec: FrameDecoder::new(),
            session,
            addr: addr.to_string(),
            data: None,
        };
        let first = c.recv();
        (c, first)
    }

    pub fn send(&mut self, m: &Message) {
        let _ = self.sock.write_all(&m.encode());
    }

    /// The next message, or None when the server closed the connection.
    pub fn recv(&mut self) -> Option<Message> {
        let mut buf = [0u8; 65536];
        loop {
            if let Ok(Some(f)) = self.dec.next_frame() {
                return Message::from_frame(&f).ok();
            }
            match self.sock.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.dec.push(&buf[..n]),
            }
        }
    }

    /// Reads until a refusal and returns its message.
    pub fn refusal(&mut self) -> String {
        while let Some(m) = self.recv() {
            if let Message::Refuse(r) = m {
                return r.message;
            }
        }
        panic!("the connection closed without a refusal");
    }

    pub fn request(&mut self, token: Option<String>) {
        self.request_to("", token);
    }

    pub fn request_to(&mut self, dest: &str, token: Option<String>) {
        self.send(&transfer_request(dest, token, 1 << 20, false));
    }

    pub fn start(&mut self) {
        assert!(matches!(self.recv(), Some(Message::Ready(_))), "ready");
        let mut data = TcpStream::connect(&self.addr).unwrap();
        data.write_all(&Hello::new(self.session, Role::Data, SessionKind::Transfer, 0).encode())
            .unwrap();
        self.data = Some(data);
        std::thread::sleep(Duration::from_millis(100));
        self.send(&Message::Start);
    }

    /// A session asked for without a token and started, with its data
    /// connection taken out for the test to write blocks on.
    pub fn started(addr: &str, session: SessionId) -> (Crafted, TcpStream) {
        let mut c = Crafted::connect(addr, session);
        c.request(None);
        c.start();
        let data = c.data.take().unwrap();
        (c, data)
    }

    pub fn manifest(&mut self, entries: Vec<Entry>) {
        self.start();
        self.send(&Message::Entries(Entries { entries }));
        self.send(&Message::EntriesEnd);
    }

    /// Reads the receiver's answer to one manifest frame: the files it needs.
    pub fn need(&mut self) -> Vec<u32> {
        match self.recv() {
            Some(Message::Need(n)) => n.files.iter().map(|f| f.id).collect(),
            other => panic!("expected a need list, got {other:?}"),
        }
    }
}

pub fn file(path: &str, size: u64) -> Entry {
    Entry::file(path, size)
}

/// Sends file `id` whole, as one block record with its checksum.
pub fn send_whole_file(data: &mut TcpStream, id: u32, body: &[u8]) {
    send_block(data, id, 0, body);
}

/// Sends `body` as the block of file `id` at `offset`, with its checksum.
pub fn send_block(data: &mut TcpStream, id: u32, offset: u64, body: &[u8]) {
    let len = u32::try_from(body.len()).unwrap();
    data.write_all(
        &Record::Block {
            file: id,
            offset,
            len,
        }
        .encode(),
    )
    .unwrap();
    data.write_all(body).unwrap();
    let sum = linerate_transfer::checksum(body);
    data.write_all(&sum.to_be_bytes()).unwrap();
}

/// An entry of any kind with the given mode.
pub fn entry(path: &str, mode: u32, kind: EntryKind) -> Entry {
    Entry {
        path: path.into(),
        mode,
        mtime_ns: 1_000_000_000,
        kind,
        owner: None,
        xattrs: Vec::new(),
    }
}

/// `Entries` of one frame.
pub fn entries(list: Vec<Entry>) -> Message {
    Message::Entries(Entries { entries: list })
}

/// A one-stream transfer request as a sender makes it.
pub fn transfer_request(
    dest: &str,
    token: Option<String>,
    block_len: u32,
    skip_writes: bool,
) -> Message {
    Message::TransferRequest(TransferRequest {
        dest: dest.into(),
        token,
        streams: 1,
        block_len,
        existing: linerate_wire::Existing::Refuse,
        skip_writes,
        verify: false,
        socket: linerate_wire::SocketParams::default(),
        interval_ms: 0,
        rx_poll: false,
        direct: false,
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
    })
}
