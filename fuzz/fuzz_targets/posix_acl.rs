//! A sender's POSIX ACL attribute held within a umask, on arbitrary bytes:
//! never a panic; what is taken keeps its length, tags and ids, and no
//! entry gains a permission bit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_transfer::acl::masked;

fuzz_target!(|data: &[u8]| {
    let Some((&umask, value)) = data.split_first() else {
        return;
    };
    let umask = u32::from(umask) & 0o777;
    let Ok(out) = masked(value, umask) else {
        return;
    };
    assert_eq!(out.len(), value.len());
    assert_eq!(out[..4], value[..4]);
    for (a, b) in value[4..].chunks(8).zip(out[4..].chunks(8)) {
        assert_eq!((&a[..2], &a[4..]), (&b[..2], &b[4..]));
        let (pa, pb) = (
            u16::from_le_bytes([a[2], a[3]]),
            u16::from_le_bytes([b[2], b[3]]),
        );
        assert_eq!(pb & !pa, 0);
    }
});
