//! Generated files for the demo and for files mode: content
//! that differs per file and per block, so neither dedup nor compression
//! makes a tool look faster than it is.

use std::io::Write;
use std::path::Path;

/// Writes `count` files of `len` bytes, named 00000.bin..., into `dir`;
/// returns the bytes written.
pub fn write_files(dir: &Path, count: u64, len: u64, seed: u64) -> std::io::Result<u64> {
    std::fs::create_dir_all(dir)?;
    let mut x = 0x2545_f491_4f6c_dd1d ^ seed ^ len;
    let mut block = vec![0u8; len.min(1 << 20) as usize];
    for i in 0..count {
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(dir.join(format!("{i:05}.bin")))?);
        let mut left = len;
        while left > 0 {
            for c in block.chunks_mut(8) {
                // xorshift64: cheap, and different for every 8 bytes.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                c.copy_from_slice(&x.to_le_bytes()[..c.len()]);
            }
            let n = left.min(block.len() as u64) as usize;
            f.write_all(&block[..n])?;
            left -= n as u64;
        }
        f.flush()?;
    }
    Ok(count * len)
}

#[cfg(test)]
mod tests {
    #[test]
    fn files_have_the_asked_size_and_differ() {
        let dir = std::env::temp_dir().join(format!("lr-dataset-{}", std::process::id()));
        assert_eq!(
            super::write_files(&dir, 3, 1_500_000, 7).unwrap(),
            4_500_000
        );
        let a = std::fs::read(dir.join("00000.bin")).unwrap();
        let b = std::fs::read(dir.join("00001.bin")).unwrap();
        assert_eq!(a.len(), 1_500_000);
        assert_ne!(a, b);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
