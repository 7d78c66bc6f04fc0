//! Throwaway measurement behind docs/benchmarks/2026-11-25-tls-prototype.md:
//! aws-lc-rs AEAD throughput on one core, 16 KiB records sealed in place.
//! Build: a cargo project with `cargo add aws-lc-rs`; this file as src/main.rs.
use aws_lc_rs::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, CHACHA20_POLY1305};
use std::time::Instant;
fn main() {
    for (name, alg) in [("AES-128-GCM", &AES_128_GCM), ("AES-256-GCM", &AES_256_GCM), ("CHACHA20", &CHACHA20_POLY1305)] {
        let key = LessSafeKey::new(UnboundKey::new(alg, &vec![7u8; alg.key_len()]).unwrap());
        let mut buf = vec![1u8; 16384];
        let t = Instant::now();
        let n = 65536u64;
        for i in 0..n {
            let mut nb = [0u8; 12]; nb[4..].copy_from_slice(&i.to_be_bytes());
            let _tag = key.seal_in_place_separate_tag(Nonce::assume_unique_for_key(nb), Aad::empty(), &mut buf).unwrap();
        }
        let s = t.elapsed().as_secs_f64();
        println!("{name}: {:.1} Gbit/s one core (16 KiB records, in place)", (n * 16384 * 8) as f64 / s / 1e9);
    }
}
