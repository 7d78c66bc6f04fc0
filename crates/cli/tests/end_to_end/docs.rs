//! The manual pages and shell completions in the repository are what the
//! binary generates now: regenerate them (`linerate man --out docs/man`,
//! `linerate completions SHELL > completions/linerate.SHELL`) when a
//! command or flag changes.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::tree::TempDir;
use common::{run, text};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

#[test]
fn the_manual_pages_are_current() {
    let out = TempDir::new("man");
    let made = run(&["man", "--out", &out.path().to_string_lossy()]);
    assert!(made.status.success(), "{}", text(&made));
    let now = files(out.path());
    let kept = files(&repo().join("docs/man"));
    assert_eq!(
        now.keys().collect::<Vec<_>>(),
        kept.keys().collect::<Vec<_>>(),
        "regenerate with `linerate man --out docs/man`"
    );
    for (name, page) in &now {
        assert!(
            kept[name] == *page,
            "docs/man/{name} is stale: regenerate with `linerate man --out docs/man`"
        );
    }
    assert!(now["linerate-bench.1"].contains("bitrate"));
    // Every page says how linerate exits, what it reads from the
    // environment, what it keeps, and where to read on.
    for (name, page) in &now {
        for section in [
            ".SH \"EXIT STATUS\"",
            ".SH ENVIRONMENT",
            "LINERATE_CONFIG_DIR",
            "LINERATE_RUN_TOKEN",
            ".SH FILES",
            ".SH \"SEE ALSO\"",
        ] {
            assert!(page.contains(section), "{name} lacks {section}");
        }
    }
    // A page sees its parent and its subcommands, by the command tree.
    let job = &now["linerate-job.1"];
    assert!(job.contains("linerate\\-job\\-all\\-to\\-all(1)"), "{job}");
    assert!(now["linerate-job-all-to-all.1"].contains("linerate\\-job(1)"));
}

#[test]
fn the_shell_completions_are_current() {
    for shell in ["bash", "zsh", "fish"] {
        let made = run(&["completions", shell]);
        assert!(made.status.success(), "{}", text(&made));
        let kept = std::fs::read(repo().join(format!("completions/linerate.{shell}"))).unwrap();
        assert!(
            made.stdout == kept,
            "completions/linerate.{shell} is stale: regenerate with \
             `linerate completions {shell} > completions/linerate.{shell}`"
        );
    }
}

/// The guide's verdict section has a row for every limit the result
/// schema allows, each with a sentence a run gave.
#[test]
fn the_guide_shows_every_limit_with_a_sentence() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("docs/result.schema.json")).unwrap(),
    )
    .unwrap();
    let guide = std::fs::read_to_string(repo().join("docs/guide.md")).unwrap();
    let limits = schema["$defs"]["summary"]["properties"]["verdict"]["properties"]["limit"]["enum"]
        .as_array()
        .expect("the schema's verdict.limit enum");
    assert!(limits.len() >= 11, "{limits:?}");
    for limit in limits {
        let limit = limit.as_str().unwrap();
        let row = guide
            .lines()
            .find(|l| l.starts_with(&format!("| `{limit}` |")))
            .unwrap_or_else(|| panic!("docs/guide.md has no row for limit {limit}"));
        let sentence = row.rsplit('|').nth(1).unwrap_or("").trim();
        assert!(sentence.len() > 40, "{limit}: {row}");
    }
}

/// A reader that stops after the first line (`completions bash | head -1`)
/// ends the write quietly: exit 0, no panic on stderr.
#[test]
fn completions_into_a_pipe_closed_early_end_quietly() {
    use std::io::Read;
    let mut child = std::process::Command::new(common::linerate())
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {err}", out.status);
    assert!(!err.contains("panicked"), "{err}");
}

/// What the guide and README list as "Not yet" is not in the binary: a
/// flag named there (`--checksum`) that any command takes means the list
/// fell behind the code.
#[test]
fn nothing_listed_as_not_yet_is_a_flag_the_binary_takes() {
    let manuals: String = files(&repo().join("docs/man"))
        .into_values()
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\-", "-");
    let mut checked = 0;
    for doc in ["docs/guide.md", "README.md"] {
        let text = std::fs::read_to_string(repo().join(doc)).unwrap();
        for paragraph in text.split("\n\n") {
            let Some(at) = paragraph.find("Not yet") else {
                continue;
            };
            for flag in paragraph[at..]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|code| code.starts_with("--"))
            {
                let name = flag.split([' ', '=']).next().unwrap_or(flag);
                checked += 1;
                assert!(
                    !manuals.contains(&format!("\\fB{name}\\fR")),
                    "{doc} lists {name} as not yet there, and a command takes it"
                );
            }
        }
    }
    // The guide keeps such lists; none found means this test reads the
    // wrong thing.
    let guide = std::fs::read_to_string(repo().join("docs/guide.md")).unwrap();
    assert!(
        guide.contains("Not yet"),
        "no 'Not yet' list in the guide ({checked} flags checked)"
    );
}
