//! Records the commit the binary is built from, for `--version`: from git
//! where the source is a checkout, else "unknown" (a source archive).

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=LINERATE_COMMIT={commit}");
    // A new commit moves HEAD or the branch it points at. Cargo counts a
    // watched file that does not exist as changed, which rebuilt this crate
    // and every test of it at each cargo command in a checkout without
    // packed refs: only what exists is watched (packing the refs later
    // changes refs/heads, which is).
    for path in [
        "../../.git/HEAD",
        "../../.git/refs/heads",
        "../../.git/packed-refs",
    ] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
