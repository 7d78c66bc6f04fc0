//! Well-formed values of every message a session takes, for the tests of
//! the machines and their fuzz targets (one place, so a new field is one
//! edit).

use linerate_result::HostFacts;
use linerate_wire::{
    Accept, BenchOptions, BenchParams, BenchPlan, Entry, LatencyParams, NeedFile, TransferRequest,
};

/// A one-shot receiver's token in its valid form.
pub const TOKEN: &str = "0123456789abcdef0123456789abcdef";

pub fn accept() -> Accept {
    Accept {
        server_version: "test".into(),
        capabilities: 0,
        host: HostFacts::default(),
    }
}

pub fn params() -> BenchParams {
    BenchParams {
        options: BenchOptions {
            streams: 2,
            duration_ms: 1000,
            interval_ms: 0,
            ..BenchOptions::default()
        },
        plan: BenchPlan::of_lengths(1 << 17, 1 << 17),
    }
}

pub fn latency_params() -> LatencyParams {
    LatencyParams {
        connections: 1,
        busy_poll: false,
        socket: linerate_wire::SocketParams::default(),
        idle_timeout_ms: 5000,
        pin_cores: false,
        busy_poll_yields: false,
        udp: false,
    }
}

pub fn request(token: Option<&str>, verify: bool) -> TransferRequest {
    TransferRequest {
        dest: String::new(),
        token: token.map(str::to_string),
        streams: 2,
        block_len: 1 << 20,
        existing: linerate_wire::Existing::Refuse,
        skip_writes: false,
        verify,
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
    }
}

pub fn file(path: &str) -> Entry {
    Entry::file(path, 3 << 20)
}

pub fn need(id: u32) -> NeedFile {
    NeedFile {
        id,
        ranges: vec![[0, 3]],
    }
}
