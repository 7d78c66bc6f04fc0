//! A document as the archive stores it: deflated (result documents shrink
//! about tenfold), the same in every store.

use std::io::{Read, Write};

/// A document as stored: deflated (result documents shrink about tenfold).
pub(crate) fn compress(document: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(document);
    encoder.finish().unwrap_or_default()
}

/// A stored document, whole again.
pub(crate) fn decompress(packed: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(packed).read_to_end(&mut out)?;
    Ok(out)
}
