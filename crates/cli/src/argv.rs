//! Hides a receiver URL's token in this process's command line, which
//! every local user can read (`ps`, /proc/PID/cmdline). The documented way
//! keeps it out of argv altogether (a pipe, `-`, or `--url-file`); this
//! narrows the window of a URL given as an argument to the first
//! milliseconds of the process (docs/security.md#secrets-never-in-argv).

/// This process's command line as a result records it: each word as
/// UTF-8, lossily (`std::env::args` panics on a word that is not, such as
/// a file name given to `send`).
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// Overwrites the value of every `token=` in the command line with `x`;
/// whether one was found.
pub fn hide_tokens() -> bool {
    let Some((start, end)) = argument_block() else {
        return false;
    };
    // SAFETY: [arg_start, arg_end) is this process's own argument block,
    // laid out by the kernel on the initial stack, mapped readable and
    // writable for the life of the process; the standard library copied
    // the arguments it needed when they were parsed, and nothing else
    // holds a reference into the block. Only bytes inside it are written.
    let block = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
    let key = b"token=";
    let mut found = false;
    let mut i = 0;
    while i + key.len() <= block.len() {
        if &block[i..i + key.len()] == key {
            found = true;
            i += key.len();
            while i < block.len() && block[i] != 0 && block[i] != b'&' {
                block[i] = b'x';
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    found
}

/// The argument block's bounds: fields 48 and 49 of /proc/self/stat
/// (counted after the command name, which may hold spaces).
fn argument_block() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // Field 3 (the state) is the first after the name.
    let start: usize = fields.get(48 - 3)?.parse().ok()?;
    let end: usize = fields.get(49 - 3)?.parse().ok()?;
    (start != 0 && end > start).then_some((start, end))
}
