//! Ctrl-C and SIGTERM for commands that end gracefully: the first sets a
//! flag the run watches (it then ends as at its deadline, reports what ran
//! and writes what it has); a second ends the process at once.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use signal_hook::consts::{SIGINT, SIGTERM};

/// Exit status of a run the user ended early (128 + SIGINT, as shells report it).
pub const INTERRUPTED_STATUS: i32 = 130;

/// A flag set by the first SIGINT or SIGTERM from now on.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // The second signal exits: the flag is already set by the first.
        // Registration fails only for forbidden signals, which these are not.
        let _ = signal_hook::flag::register_conditional_shutdown(
            sig,
            INTERRUPTED_STATUS,
            Arc::clone(&flag),
        );
        let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
    }
    flag
}

/// A run the user ended early; `main` exits with [`INTERRUPTED_STATUS`].
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}
