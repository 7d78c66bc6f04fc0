//! A sparse source's data written with its holes: runs of zero pages in
//! what arrives are punched out of the file rather than written, as
//! `rsync -S` leaves them, so the destination allocates what the source
//! does, not whole blocks around a few bytes. Punched, not skipped: a
//! resumed file may hold an earlier run's bytes there.

use std::fs::File;
use std::os::unix::fs::FileExt;

use rustix::fs::FallocateFlags;

const PAGE: u64 = 4096;

/// Writes `data` at `at`, each run of whole or partial zero pages as a hole.
pub(super) fn write_keeping_holes(file: &File, at: u64, data: &[u8]) -> std::io::Result<()> {
    let mut i = 0;
    while i < data.len() {
        let zero = page_at(at, data, i).iter().all(|&b| b == 0);
        let mut j = i + page_at(at, data, i).len();
        while j < data.len() && page_at(at, data, j).iter().all(|&b| b == 0) == zero {
            j += page_at(at, data, j).len();
        }
        let offset = at + i as u64;
        if zero {
            rustix::fs::fallocate(
                file,
                FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
                offset,
                (j - i) as u64,
            )?;
        } else {
            file.write_all_at(&data[i..j], offset)?;
        }
        i = j;
    }
    Ok(())
}

/// The part of `data` from index `i` to the end of its page of the file.
fn page_at(at: u64, data: &[u8], i: usize) -> &[u8] {
    let offset = at + i as u64;
    let to_boundary = (PAGE - offset % PAGE) as usize;
    &data[i..(i + to_boundary).min(data.len())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn zero_pages_become_holes_and_data_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(8 << 20).unwrap();
        // An earlier run's bytes, to be punched out.
        file.write_all_at(&[9u8; 1 << 20], 1 << 20).unwrap();
        let mut data = vec![0u8; 4 << 20];
        data[5000] = 1;
        data[(3 << 20) + 10] = 2;
        write_keeping_holes(&file, 1 << 20, &data).unwrap();
        let mut back = vec![0u8; 4 << 20];
        file.read_exact_at(&mut back, 1 << 20).unwrap();
        assert!(back == data, "the data read back differs");
        // Two pages hold data; the rest are holes.
        let allocated = std::fs::metadata(&path).unwrap().blocks() * 512;
        assert!(allocated <= 4 * 4096, "{allocated} bytes allocated");
    }
}
