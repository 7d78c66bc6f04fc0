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

/// What the row of a result's next entry keeps, given the rows recorded
/// before it: the first keeps the document, the others name the first's
/// row (a many-host run's pairs; docs/archive.md#series).
pub(crate) fn kept_by<'a>(rows: &[i64], packed: &'a [u8]) -> (&'a [u8], Option<i64>) {
    match rows.first() {
        None => (packed, None),
        Some(first) => (&[], Some(*first)),
    }
}
