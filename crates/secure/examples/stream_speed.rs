//! One TLS stream over loopback TCP for 5 s, 1 MiB writes: the throughput
//! of [`linerate_secure::TlsStream`] alone (docs/benchmarks/2026-11-25-tls-prototype.md).
//! `cargo run --release -p linerate-secure --example stream_speed`
// A measuring example: it prints its figure, and a failed setup ends it.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::print_stdout)]

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use linerate_secure::{Identity, TlsStream, client_config, server_config};

fn main() -> std::io::Result<()> {
    let id = Identity::generate().expect("identity");
    let server_cfg = server_config(&id).expect("server config");
    let client_cfg = client_config(id.fingerprint()).expect("client config");
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let receiver = std::thread::spawn(move || -> std::io::Result<(u64, Duration)> {
        let (mut sock, _) = listener.accept()?;
        let mut tls = TlsStream::server(server_cfg)?;
        tls.handshake(&mut sock)?;
        let t = Instant::now();
        let mut total = 0u64;
        loop {
            let n = tls.fill(&mut sock)?.len();
            if n == 0 {
                return Ok((total, t.elapsed()));
            }
            total += n as u64;
            tls.consume(n);
        }
    });
    let mut sock = TcpStream::connect(addr)?;
    let mut tls = TlsStream::client(client_cfg)?;
    tls.handshake(&mut sock)?;
    let cipher = tls.negotiated().map(|n| n.cipher).unwrap_or_default();
    let chunk = vec![7u8; 1 << 20];
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) {
        tls.write_all(&mut sock, &chunk)?;
    }
    tls.close(&mut sock)?;
    let (total, took) = receiver.join().expect("receiver")?;
    println!(
        "{cipher}: {:.2} Gbit/s",
        total as f64 * 8.0 / took.as_secs_f64() / 1e9
    );
    Ok(())
}
