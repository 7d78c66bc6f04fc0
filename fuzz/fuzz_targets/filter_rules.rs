//! rsync-style include/exclude rules as a receiver reads them from a
//! sender's request, on arbitrary text: never panic, and rules that were
//! taken read back from their own lines to a filter that decides alike.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_transfer::filter::Filter;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut filter = Filter::default();
    if filter.add_lines(&text).is_err() {
        return;
    }
    let mut back = Filter::default();
    back.add_lines(&filter.lines().join("\n"))
        .expect("a filter's own lines read back");
    for (path, dir) in [("t", true), ("t/a.o", false), ("t/sub/cache", true), ("t/{a,b}", false)] {
        assert_eq!(filter.excludes(path, dir), back.excludes(path, dir), "{path}");
    }
});
