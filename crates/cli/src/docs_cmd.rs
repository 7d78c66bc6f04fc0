//! `linerate man` and `linerate completions`: the manual pages and shell
//! completions, generated from the same clap definitions that parse the
//! command line, so they cannot drift from it. The checked-in copies
//! (`docs/man/`, `completions/`) are tested to be current.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

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
    clap_mangen::generate_to(documented(), &a.out)
        .with_context(|| format!("writing manual pages to {}", a.out.display()))?;
    println!("manual pages written to {}", a.out.display());
    Ok(())
}

pub fn completions(a: CompletionsArgs) -> anyhow::Result<()> {
    let mut cmd = documented();
    clap_complete::generate(a.shell, &mut cmd, "linerate", &mut std::io::stdout());
    Ok(())
}
