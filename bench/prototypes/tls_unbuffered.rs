//! Throwaway measurement behind docs/benchmarks/2026-11-25-tls-prototype.md:
//! one TLS 1.3 stream over loopback with the rustls unbuffered API: the sender
//! encrypts 1 MiB chunks into its output buffer, the receiver decrypts in place
//! in a 4 MiB input buffer, compacted only when nearly full. Built as tls_stream.rs.
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::UnbufferedClientConnection;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{AppDataRecord, ConnectionState, UnbufferedStatus};
use rustls::{DigitallySignedStruct, SignatureScheme};

#[derive(Debug)]
struct Any(Arc<rustls::crypto::CryptoProvider>);
impl ServerCertVerifier for Any {
    fn verify_server_cert(&self, _: &CertificateDer<'_>, _: &[CertificateDer<'_>], _: &ServerName<'_>, _: &[u8], _: UnixTime) -> Result<ServerCertVerified, rustls::Error> { Ok(ServerCertVerified::assertion()) }
    fn verify_tls12_signature(&self, m: &[u8], c: &CertificateDer<'_>, d: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> { rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms) }
    fn verify_tls13_signature(&self, m: &[u8], c: &CertificateDer<'_>, d: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> { rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms) }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> { self.0.signature_verification_algorithms.supported_schemes() }
}

// Drives one end: sends `send` seconds of data if a sender, else counts.
macro_rules! drive {
    ($conn:ident, $sock:ident, $sender:expr) => {{
        let mut incoming = vec![0u8; 4 << 20];
        let mut used = 0usize; let mut start = 0usize;
        let mut out = vec![0u8; 2 << 20];
        let mut out_used = 0usize;
        let chunk = vec![7u8; 1 << 20];
        let mut total = 0u64;
        let t = Instant::now();
        let mut closing = false;
        loop {
            let UnbufferedStatus { mut discard, state, .. } = $conn.process_tls_records(&mut incoming[start..used]);
            match state.unwrap() {
                ConnectionState::ReadTraffic(mut st) => {
                    while let Some(r) = st.next_record() { let AppDataRecord { discard: d, payload, .. } = r.unwrap(); discard += d; total += payload.len() as u64; }
                }
                ConnectionState::EncodeTlsData(mut st) => { out_used += st.encode(&mut out[out_used..]).unwrap(); }
                ConnectionState::TransmitTlsData(st) => { $sock.write_all(&out[..out_used]).unwrap(); out_used = 0; st.done(); }
                ConnectionState::BlockedHandshake { .. } => { let n = $sock.read(&mut incoming[used..]).unwrap(); if n == 0 { break } used += n; }
                ConnectionState::WriteTraffic(mut wt) => {
                    if $sender {
                        if t.elapsed() > Duration::from_secs(5) {
                            if !closing { out_used += wt.queue_close_notify(&mut out[out_used..]).unwrap(); $sock.write_all(&out[..out_used]).unwrap(); out_used = 0; closing = true; let _ = $sock.shutdown(std::net::Shutdown::Write); }
                            break;
                        }
                        let n = wt.encrypt(&chunk, &mut out[out_used..]).unwrap(); out_used += n; total += chunk.len() as u64;
                        $sock.write_all(&out[..out_used]).unwrap(); out_used = 0;
                    } else {
                        if used == incoming.len() { panic!("full") }
                        let n = $sock.read(&mut incoming[used..]).unwrap(); if n == 0 { break } used += n;
                    }
                }
                ConnectionState::PeerClosed | ConnectionState::Closed => break,
                _ => unreachable!(),
            }
            start += discard; if start == used { start = 0; used = 0; } else if used > incoming.len() - (64 << 10) { incoming.copy_within(start..used, 0); used -= start; start = 0; }
        }
        (total, t.elapsed())
    }};
}

fn main() {
    let provider = Arc::new({ let mut p = rustls::crypto::aws_lc_rs::default_provider(); p.cipher_suites.retain(|s| format!("{:?}", s.suite()).contains("AES_128")); p });
    let ck = rcgen::generate_simple_self_signed(vec!["linerate".into()]).unwrap();
    let cert = CertificateDer::from(ck.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let scfg = Arc::new(rustls::ServerConfig::builder_with_provider(provider.clone()).with_protocol_versions(&[&rustls::version::TLS13]).unwrap().with_no_client_auth().with_single_cert(vec![cert], key).unwrap());
    let ccfg = Arc::new(rustls::ClientConfig::builder_with_provider(provider.clone()).with_protocol_versions(&[&rustls::version::TLS13]).unwrap().dangerous().with_custom_certificate_verifier(Arc::new(Any(provider.clone()))).with_no_client_auth());
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let srv = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut conn = UnbufferedServerConnection::new(scfg).unwrap();
        drive!(conn, s, false)
    });
    let mut s = TcpStream::connect(addr).unwrap();
    let mut conn = UnbufferedClientConnection::new(ccfg, ServerName::try_from("linerate").unwrap()).unwrap();
    let _ = drive!(conn, s, true);
    drop(s);
    let (total, el) = srv.join().unwrap();
    println!("unbuffered AES-128-GCM: {:.2} Gbit/s", total as f64 * 8.0 / el.as_secs_f64() / 1e9);
}
