//! Throwaway measurement behind docs/benchmarks/2026-11-25-tls-prototype.md:
//! one TLS 1.3 stream over loopback with rustls (buffered API) and aws-lc-rs.
//! Build: cargo new tlstry; cargo add rustls@0.23 --no-default-features
//! --features aws_lc_rs,std,tls12; cargo add rcgen@0.13 --no-default-features
//! --features aws_lc_rs,pem; copy this file to src/main.rs; run `tlstry 128|256|chacha`
//! (BUFRD=1: the receiver reads the socket through a 1 MiB buffer).
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

#[derive(Debug)]
struct Any(Arc<rustls::crypto::CryptoProvider>);
impl ServerCertVerifier for Any {
    fn verify_server_cert(&self, _: &CertificateDer<'_>, _: &[CertificateDer<'_>], _: &ServerName<'_>, _: &[u8], _: UnixTime) -> Result<ServerCertVerified, rustls::Error> { Ok(ServerCertVerified::assertion()) }
    fn verify_tls12_signature(&self, m: &[u8], c: &CertificateDer<'_>, d: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> { rustls::crypto::verify_tls12_signature(m, c, d, &self.0.signature_verification_algorithms) }
    fn verify_tls13_signature(&self, m: &[u8], c: &CertificateDer<'_>, d: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> { rustls::crypto::verify_tls13_signature(m, c, d, &self.0.signature_verification_algorithms) }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> { self.0.signature_verification_algorithms.supported_schemes() }
}

fn main() {
    let suite = std::env::args().nth(1).unwrap_or("128".into());
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    provider.cipher_suites.retain(|s| format!("{:?}", s.suite()).contains(&format!("AES_{suite}")) || (suite=="chacha" && format!("{:?}", s.suite()).contains("CHACHA")));
    eprintln!("suites {:?}", provider.cipher_suites.iter().map(|s| s.suite()).collect::<Vec<_>>());
    let provider = Arc::new(provider);
    let ck = rcgen::generate_simple_self_signed(vec!["linerate".into()]).unwrap();
    let cert = CertificateDer::from(ck.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let scfg = Arc::new(rustls::ServerConfig::builder_with_provider(provider.clone()).with_protocol_versions(&[&rustls::version::TLS13]).unwrap().with_no_client_auth().with_single_cert(vec![cert], key).unwrap());
    let ccfg = Arc::new(rustls::ClientConfig::builder_with_provider(provider.clone()).with_protocol_versions(&[&rustls::version::TLS13]).unwrap().dangerous().with_custom_certificate_verifier(Arc::new(Any(provider.clone()))).with_no_client_auth());
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let srv = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let mut conn = rustls::ServerConnection::new(scfg).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        let t = Instant::now();
        if std::env::var("BUFRD").is_ok() {
            let mut s2 = s.try_clone().unwrap();
            let mut rd = std::io::BufReader::with_capacity(1 << 20, s);
            // handshake
            while conn.is_handshaking() { let mut rw = ReadWrite(&mut rd, &mut s2); conn.complete_io(&mut rw).unwrap(); }
            loop {
                while conn.wants_write() { conn.write_tls(&mut s2).unwrap(); }
                match conn.read_tls(&mut rd) { Ok(0) => break, Ok(_) => {}, Err(e) => { eprintln!("{e}"); break } }
                let st = match conn.process_new_packets() { Ok(st) => st, Err(e) => { eprintln!("{e}"); break } };
                let mut avail = st.plaintext_bytes_to_read();
                while avail > 0 { let n = conn.reader().read(&mut buf[..avail.min(1<<20)]).unwrap(); total += n as u64; avail -= n; }
                if st.peer_has_closed() { break; }
            }
        } else {
        let mut tls = rustls::StreamOwned::new(conn, s);
        loop { match tls.read(&mut buf) { Ok(0) => break, Ok(n) => total += n as u64, Err(e) => { eprintln!("read {e}"); break } } }
        }
        (total, t.elapsed())
    });
    let s = TcpStream::connect(addr).unwrap();
    let conn = rustls::ClientConnection::new(ccfg, ServerName::try_from("linerate").unwrap()).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, s);
    let buf = vec![7u8; 1 << 20];
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(5) { tls.write_all(&buf).unwrap(); }
    tls.conn.send_close_notify(); let _ = tls.flush();
    drop(tls);
    let (total, el) = srv.join().unwrap();
    println!("{suite}: {:.2} Gbit/s", total as f64 * 8.0 / el.as_secs_f64() / 1e9);
}
struct ReadWrite<'a, R, W>(&'a mut R, &'a mut W);
impl<R: Read, W> Read for ReadWrite<'_, R, W> { fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> { self.0.read(b) } }
impl<R, W: Write> Write for ReadWrite<'_, R, W> { fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.1.write(b) } fn flush(&mut self) -> std::io::Result<()> { self.1.flush() } }
