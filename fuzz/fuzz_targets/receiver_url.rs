//! The one-shot receiver URL parser (`linerate://HOST:PORT/?session=..&token=..`,
//! pasted by users and scripts) on arbitrary text: never panics, and what it
//! accepts prints as a URL that parses back to the same receiver.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_transfer::OneShot;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(one) = OneShot::parse(text) {
        let again = OneShot::parse(&one.to_string()).expect("a printed URL parses");
        assert_eq!(again, one);
    }
});
