//! `linerate man` and `linerate completions`: the manual pages and shell
//! completions, generated from the same clap definitions that parse the
//! command line, so they cannot drift from it. The checked-in copies
//! (`docs/man/`, `completions/`) are tested to be current.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use clap_mangen::roff::{Roff, bold, roman};

#[derive(Args)]
pub struct ManArgs {
    /// Folder for linerate.1 and a page per subcommand (linerate-bench.1, ...).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  linerate completions bash > /etc/bash_completion.d/linerate\n  linerate completions zsh > ~/.zfunc/_linerate"
)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: Shell,
}

/// The command as documented: the release version without the commit, so
/// the pages change only when the commands do.
fn documented() -> clap::Command {
    crate::Cli::command().version(env!("CARGO_PKG_VERSION"))
}

pub fn man(a: ManArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let mut root = documented().disable_help_subcommand(true);
    root.build();
    let mut commands = Vec::new();
    pages(root, None, &mut commands);
    let family: Vec<(String, Option<String>)> = commands
        .iter()
        .map(|(cmd, parent)| (page_name(cmd), parent.clone()))
        .collect();
    for (cmd, _) in commands {
        let name = page_name(&cmd);
        let man = clap_mangen::Man::new(cmd);
        let path = a.out.join(man.get_filename());
        let mut page = Vec::new();
        man.render(&mut page)
            .with_context(|| format!("rendering {}", path.display()))?;
        page.extend(common_sections(&name, &family).to_roff().into_bytes());
        std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("manual pages written to {}", a.out.display());
    Ok(())
}

/// Every documented command with its parent's page name, subcommands
/// first, as `clap_mangen::generate_to` walks them.
fn pages(
    cmd: clap::Command,
    parent: Option<String>,
    out: &mut Vec<(clap::Command, Option<String>)>,
) {
    let name = page_name(&cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        pages(sub, Some(name.clone()), out);
    }
    out.push((cmd, parent));
}

fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string()
}

/// What every page says the same way: how linerate exits, what it reads
/// from the environment, which files it keeps, and where to read on.
fn common_sections(name: &str, family: &[(String, Option<String>)]) -> Roff {
    let mut r = Roff::new();
    let item = |r: &mut Roff, term: &str, body: &str| {
        r.control("TP", []).text([bold(term)]).text([roman(body)]);
    };
    r.control("SH", ["EXIT STATUS"]);
    item(
        &mut r,
        "0",
        "Success: the measurement ran, or the transfer is complete.",
    );
    item(
        &mut r,
        "1",
        "Failure: the peer could not be reached or refused, the run failed, or a \
         transfer is incomplete (what arrived is kept for a rerun).",
    );
    item(
        &mut r,
        "2",
        "Bad flags or arguments (as clap reports them), with the flag named.",
    );
    item(
        &mut r,
        "130",
        "Interrupted (Ctrl-C or SIGTERM): partial results are written where asked \
         (--json), and a transfer can be resumed by running the same command again.",
    );
    r.control("SH", ["ENVIRONMENT"]);
    item(
        &mut r,
        "LINERATE_CONFIG_DIR",
        "The directory of this user for linerate: the client key (client.pem) and the \
         daemons met (known_servers). Default: $XDG_CONFIG_HOME/linerate, else \
         ~/.config/linerate.",
    );
    item(
        &mut r,
        "LINERATE_RUN_TOKEN",
        "The secret a many-host run (incast, mesh, job) shares with its agents when they \
         are launched by srun or mpirun; agents whose token differs are refused.",
    );
    item(
        &mut r,
        "LINERATE_TUNE_DIR",
        "Where tune apply keeps what it changed, for tune revert. Default: /var/lib/linerate/tune.",
    );
    item(
        &mut r,
        "LINERATE_LAB_DIR",
        "Where lab up records the labs it built, for lab status and lab down. Default: /run/linerate/lab.",
    );
    r.control("SH", ["FILES"]);
    item(
        &mut r,
        "~/.config/linerate/client.pem",
        "The client key and certificate of this user (linerate keys new), readable by the user only.",
    );
    item(
        &mut r,
        "~/.config/linerate/known_servers",
        "Fingerprints of the daemons this user has met, checked on every later connection.",
    );
    item(
        &mut r,
        "/var/lib/linerate/tune/SCOPE.json",
        "The settings tune apply changed and their earlier values.",
    );
    item(
        &mut r,
        "/run/linerate/lab/NAME.json",
        "A lab built by lab up.",
    );
    r.control("SH", ["SEE ALSO"]);
    let mut see: Vec<String> = family
        .iter()
        .filter(|(page, parent)| {
            page != name
                && (parent.is_none()
                    || parent.as_deref() == Some(name)
                    || is_parent(family, page, name))
        })
        .map(|(page, _)| format!("{page}(1)"))
        .collect();
    see.extend(
        [
            "iperf3(1)",
            "nuttcp(8)",
            "sockperf(1)",
            "rsync(1)",
            "ss(8)",
            "tc(8)",
            "ethtool(8)",
        ]
        .map(String::from),
    );
    r.text([roman(see.join(", "))]);
    r.text([roman(
        "The guide (docs/guide.md) explains each verdict and limit, the studies and the lab.",
    )]);
    r
}

/// Whether `page` is the parent of `child` in `family`.
fn is_parent(family: &[(String, Option<String>)], page: &str, child: &str) -> bool {
    family
        .iter()
        .any(|(p, parent)| p == child && parent.as_deref() == Some(page))
}

/// Writes the completion script to stdout. A reader that stops early
/// (`linerate completions bash | head`) is not an error: the script is
/// built first and its write ends quietly on a closed pipe, where
/// clap_complete would panic.
pub fn completions(a: CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = documented();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "linerate", &mut script);
    let mut out = std::io::stdout().lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("writing the completion script to stdout")
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::is_parent;

    #[test]
    fn a_page_knows_its_parent_by_the_tree_not_the_name() {
        let family = vec![
            (
                "linerate-job-all-to-all".to_string(),
                Some("linerate-job".to_string()),
            ),
            ("linerate-job".to_string(), Some("linerate".to_string())),
            ("linerate".to_string(), None),
        ];
        assert!(is_parent(
            &family,
            "linerate-job",
            "linerate-job-all-to-all"
        ));
        assert!(!is_parent(&family, "linerate", "linerate-job-all-to-all"));
    }
}
