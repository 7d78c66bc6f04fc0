//! `linerate keys`: this user's client key for daemons (`serve --root`),
//! the daemons it has met (known servers), and where they live: the
//! config directory, `$LINERATE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/linerate`,
//! else `~/.config/linerate`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};
use clap::Subcommand;
use linerate_secure::{Fingerprint, Identity, ServerTrust};

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Make this user's client key (a certificate and its private key,
    /// readable by the user only) and print its fingerprint, to add to a
    /// daemon's --authorized-keys file.
    New {
        /// Replace an existing key (daemons that list the old one refuse
        /// this user until they list the new one).
        #[arg(long)]
        force: bool,
    },
    /// Print this user's client key fingerprint, as a line for a daemon's
    /// --authorized-keys file, and the daemons this user has met.
    List,
}

/// linerate's config directory for this user.
pub fn config_dir() -> anyhow::Result<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("LINERATE_CONFIG_DIR") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(d).join("linerate"));
    }
    let home = var("HOME").context("no HOME: set LINERATE_CONFIG_DIR")?;
    Ok(PathBuf::from(home).join(".config/linerate"))
}

pub fn client_key_path() -> anyhow::Result<PathBuf> {
    Ok(config_dir()?.join("client.pem"))
}

pub fn known_servers_path() -> anyhow::Result<PathBuf> {
    Ok(config_dir()?.join("known_servers"))
}

/// A line of an authorized-keys file naming `fp`, with who it is.
fn key_line(fp: &Fingerprint) -> String {
    let user = std::env::var("USER").unwrap_or_else(|_| "user".into());
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    format!("{fp} {user}@{host}")
}

pub fn run(cmd: KeysCommand) -> anyhow::Result<()> {
    let path = client_key_path()?;
    match cmd {
        KeysCommand::New { force } => {
            if path.exists() && !force {
                bail!(
                    "{} exists; `linerate keys list` prints its fingerprint (--force replaces it)",
                    path.display()
                );
            }
            if force {
                let _ = std::fs::remove_file(&path);
            }
            let id = Identity::create_file(&path)?;
            eprintln!("made {} (private: keep it to this user)", path.display());
            eprintln!("add this line to the daemon's --authorized-keys file:");
            println!("{}", key_line(&id.fingerprint()));
        }
        KeysCommand::List => {
            match path.exists() {
                true => println!("{}", key_line(&Identity::load(&path)?.fingerprint())),
                false => eprintln!("no client key yet: `linerate keys new` makes one"),
            }
            if let Ok(text) = std::fs::read_to_string(known_servers_path()?) {
                eprintln!("known servers ({}):", known_servers_path()?.display());
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    eprintln!("  {line}");
                }
            }
        }
    }
    Ok(())
}

/// How a sender trusts the daemon at `server` (as the user typed it,
/// HOST[:PORT]): the fingerprint given, else the one recorded at the first
/// contact, else the first one it sees, recorded after the run.
pub struct DaemonTrust {
    pub trust: ServerTrust,
    seen: Option<Arc<Mutex<Option<Fingerprint>>>>,
    server: String,
}

impl DaemonTrust {
    pub fn new(server: &str, given: Option<&str>) -> anyhow::Result<DaemonTrust> {
        if let Some(fp) = given {
            let fp = Fingerprint::parse(fp).context("--server-fingerprint")?;
            return Ok(DaemonTrust {
                trust: ServerTrust::Exactly(fp),
                seen: None,
                server: server.into(),
            });
        }
        if let Some(fp) = known(&known_servers_path()?, server)? {
            return Ok(DaemonTrust {
                trust: ServerTrust::Exactly(fp),
                seen: None,
                server: server.into(),
            });
        }
        let seen = Arc::new(Mutex::new(None));
        Ok(DaemonTrust {
            trust: ServerTrust::FirstUse(Arc::clone(&seen)),
            seen: Some(seen),
            server: server.into(),
        })
    }

    /// Records a server met for the first time; says so on standard error.
    pub fn remember(&self) -> anyhow::Result<()> {
        let Some(seen) = &self.seen else {
            return Ok(());
        };
        let Some(fp) = *seen.lock().unwrap_or_else(|p| p.into_inner()) else {
            return Ok(());
        };
        let path = known_servers_path()?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{} {fp}", self.server))
            .with_context(|| format!("recording the server in {}", path.display()))?;
        eprintln!(
            "first contact with {}: its certificate {fp} is now trusted ({}); check it \
             against the fingerprint `linerate serve` printed there",
            self.server,
            path.display()
        );
        Ok(())
    }
}

/// A client configuration trusting a daemon as `trust` says, showing this
/// user's client key when there is one.
pub fn client_config(trust: &DaemonTrust) -> anyhow::Result<Arc<linerate_secure::ClientConfig>> {
    let key_path = client_key_path()?;
    let me = match key_path.exists() {
        true => Some(Identity::load(&key_path)?),
        false => None,
    };
    Ok(linerate_secure::client_config_with(
        trust.trust.clone(),
        me.as_ref(),
    )?)
}

/// The fingerprint recorded for `server` in a known-servers file.
fn known(path: &Path, server: &str) -> anyhow::Result<Option<Fingerprint>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(None);
    };
    for (i, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        if words.next() == Some(server) {
            let fp = words.next().unwrap_or_default();
            let fp = Fingerprint::parse(fp)
                .with_context(|| format!("{}, line {}", path.display(), i + 1))?;
            return Ok(Some(fp));
        }
    }
    Ok(None)
}
