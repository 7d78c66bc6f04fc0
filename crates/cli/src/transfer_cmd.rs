//! `linerate send` and `linerate recv`: parallel file transfer with resume.

use std::io::{IsTerminal, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use linerate_daemon::server::{Server, ServerTls};
use linerate_engine::EngineError;
use linerate_engine::spec::{SocketParams, TransferSpec};

use crate::flags::{AddressFlags, BufferFlags, MarkFlags, StripeFlags};
use linerate_engine::spec::{Action, Change, Existing, SessionId, WireError};
use linerate_probe::units::{fmt_bytes, fmt_rate};
use linerate_result::Side;
use linerate_transfer::CachePolicy;
use linerate_transfer::filter::Filter;
use linerate_transfer::receive::TransferPolicy;
use linerate_transfer::send::{self, Destination, Discovery, TransferRun};
use linerate_transfer::source::{Manifest, check_roots};
use linerate_transfer::{OneShot, Token};

use crate::output::{self, Out};
use crate::progress::SendProgress;
use crate::{signals, units, usage};

#[derive(Args)]
#[command(after_help = "\
Examples:
  ssh dtn2 linerate recv /scratch/in | linerate send data/ -    one-shot, over ssh
  linerate send big.h5 dtn2:/projects/run7                    to `linerate serve --root` on dtn2
  linerate send --from-memory 100G -P 8 --skip-writes URL       network only: no disks
  linerate send data/ dtn2:/in --verify --json t.json           BLAKE3 end to end, result document
  ssh dtn2 linerate recv /in | linerate send data/ -            the URL on standard input, out of `ps`

Rerun the same command after any interruption: only missing blocks are sent.")]
pub struct SendArgs {
    /// Files and directories to send, then the target: a linerate:// URL
    /// printed by `linerate recv`, `-` to read that URL from standard input
    /// (so its secret stays out of `ps`), or HOST[:PORT]:/DEST for
    /// `serve --root`. With --url-file, only the sources. As with rsync, a
    /// directory given with a trailing slash (`data/`) sends what it holds
    /// into DEST, which takes its mode and time; without one (`data`), it
    /// lands as DEST/data. `--dry-run -i` lists where each path would land.
    #[arg(required_unless_present = "url_file", num_args = 0.., value_name = "SRC... TARGET")]
    pub args: Vec<String>,
    /// Read the target URL from this file (its first line) instead of the
    /// command line, so its secret stays out of `ps` and shell history.
    #[arg(long, value_name = "FILE")]
    pub url_file: Option<PathBuf>,
    /// Send SIZE bytes generated in memory instead of files (no source disk).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    pub from_memory: Option<u64>,
    /// Parallel streams, one thread and one socket each.
    #[arg(short = 'P', long, value_name = "N", default_value_t = 2, value_parser = units::parse_streams)]
    pub streams: u16,
    /// Block size: the unit of scheduling, checksums and resume.
    #[arg(long = "block", value_name = "BYTES", default_value = "8M", value_parser = units::parse_size_u32)]
    pub block_len: u32,
    /// The receiver checks and discards: measures the network and CPUs only.
    #[arg(long)]
    pub skip_writes: bool,
    /// Refuse the transfer when a file exists at the destination and
    /// differs from the source. By default such a file is replaced, at
    /// once (the new one is renamed over it when complete), as rsync does.
    #[arg(long, conflicts_with_all = ["ignore_existing", "update"])]
    pub no_replace: bool,
    /// Leave files that exist at the destination as they are, even where
    /// they differ (rsync's --ignore-existing).
    #[arg(long, conflicts_with = "update")]
    pub ignore_existing: bool,
    /// Leave files that are newer at the destination than at the source
    /// (rsync's -u, --update); replace the others that differ.
    #[arg(short = 'u', long)]
    pub update: bool,
    /// Delete what the destination's copies of the source directories
    /// hold and the sources lack, once the transfer is complete (rsync's
    /// --delete, done after the transfer). Only inside the destination;
    /// paths the --exclude rules leave out are kept. Try it with
    /// --dry-run first.
    #[arg(long)]
    pub delete: bool,
    /// Replace a non-empty directory at the destination where the source
    /// now has a file or a link (rsync's --force; --delete does it too).
    /// Without either such a run stops and names the directory; an empty
    /// one is always replaced.
    #[arg(long)]
    pub force: bool,
    /// Change nothing at the receiver: list what would be created,
    /// replaced and deleted, and send no data.
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// List every path created, replaced or deleted, in rsync -i's letters
    /// (`>f.st...... path`; docs/guide.md#itemize).
    #[arg(short = 'i', long)]
    pub itemize: bool,
    /// Send extended attributes (the user. namespace; as root also
    /// trusted. and security., which a receiver applies only with
    /// --keep-special-bits), as rsync's -X.
    #[arg(short = 'X', long)]
    pub xattrs: bool,
    /// Send POSIX ACLs (access and default), as rsync's -A.
    #[arg(short = 'A', long)]
    pub acls: bool,
    /// Give owners and groups by the numbers sent, not by their names. A
    /// receiver keeps owners only when it runs as root, as rsync does.
    #[arg(long)]
    pub numeric_ids: bool,
    /// Replace files that differ: the default now; kept for older scripts.
    #[arg(long, hide = true, conflicts_with_all = ["no_replace", "ignore_existing", "update"])]
    pub overwrite: bool,
    /// Compare a whole-file BLAKE3 of source and destination at the end.
    #[arg(long)]
    pub verify: bool,
    /// Decide by contents which files differ, as rsync's -c does: the
    /// sender reads every file for its BLAKE3, the receiver reads each
    /// file it holds of the same size and compares; files of the same
    /// contents are kept (their time set to the source's) whatever their
    /// times say, and files whose size and time match but whose contents
    /// differ are sent. Costs a read of both trees.
    #[arg(short = 'c', long)]
    pub checksum: bool,
    /// Send blocks without their XXH3 checksum: only TCP's own checksum
    /// (and --verify, if given) guards the data. Saves both ends one pass
    /// over every byte where the CPU is the limit.
    #[arg(long)]
    pub no_block_checksum: bool,
    /// Do not sync: the receiver normally syncs each file's data before
    /// it journals its blocks as done and before it renames the file into
    /// place, and each directory before it reports the transfer complete,
    /// so a crash after "complete" loses nothing. For scratch data.
    #[arg(long)]
    pub no_fsync: bool,
    /// Send in the clear, to a receiver started with --no-encrypt (its URL
    /// has no fp=). By default everything after each connection's greeting
    /// is encrypted (TLS 1.3, AES-128-GCM where the CPU has AES
    /// instructions) and the receiver must hold the certificate the URL
    /// names.
    #[arg(long)]
    pub no_encrypt: bool,
    /// The fingerprint of the daemon's certificate (`linerate serve --root`
    /// prints it at start). Without it, the one recorded in known_servers
    /// at the first contact is required, and a first contact records the
    /// one it sees, as ssh does.
    #[arg(long, value_name = "SHA256")]
    pub server_fingerprint: Option<String>,
    /// Follow symbolic links instead of recreating them.
    #[arg(long)]
    pub follow_links: bool,
    /// Leave out source paths matching PATTERN, by rsync's rules (a leading
    /// / anchors at the sources' names, a trailing / matches directories
    /// only, * stops at /, ** does not, dir/*** is a directory and all in
    /// it). Repeatable; with --include and --exclude-from, the first rule
    /// that matches a path decides, in the order given.
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<String>,
    /// Send source paths matching PATTERN even where a later --exclude
    /// matches them (rsync's rules, as --exclude).
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<String>,
    /// Read exclude patterns from FILE, one per line, as rsync does: blank
    /// lines and lines starting with ; or # skipped, "+ PATTERN" includes,
    /// "- PATTERN" excludes.
    #[arg(long, value_name = "FILE")]
    pub exclude_from: Vec<PathBuf>,
    /// Bypass the page cache at both ends (O_DIRECT), for cold disk-to-disk
    /// runs: the sender reads and the receiver writes whole pages of every
    /// file above 1 MiB directly. Smaller files and a file's last partial
    /// page go through the cache, as does everything on a file system that
    /// refuses O_DIRECT (the summary says how much went direct). --block
    /// must then be a multiple of 4 KiB.
    #[arg(long)]
    pub direct: bool,
    /// Drop each block from the page cache once it is sent and once it is
    /// written (flushed to disk first), so a transfer larger than memory
    /// does not push the host's other data out of the cache.
    #[arg(long)]
    pub evict: bool,
    /// Cap the whole transfer, in bits/s (e.g. 5G), paced per socket.
    #[arg(long, value_parser = units::parse_rate)]
    pub rate: Option<u64>,
    #[command(flatten)]
    pub buffers: BufferFlags,
    #[command(flatten)]
    pub mark: MarkFlags,
    #[command(flatten)]
    pub address: AddressFlags,
    #[command(flatten)]
    pub stripe: StripeFlags,
    #[command(flatten)]
    pub history: crate::archive_cmd::ArchiveFlags,
    /// Receivers poll before blocking (auto: off; polling measured slower when the receiver writes).
    #[arg(long, value_enum, default_value = "auto")]
    pub rx_poll: crate::bench_cmd::RxPollArg,
    /// Write the linerate.result/1 document to FILE ('-' for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print no progress.
    #[arg(short, long)]
    pub quiet: bool,
}

impl SendArgs {
    /// What becomes of a file that exists at the destination and differs.
    fn existing(&self) -> Existing {
        if self.no_replace {
            Existing::Refuse
        } else if self.ignore_existing {
            Existing::Keep
        } else if self.update {
            Existing::KeepNewer
        } else {
            Existing::Replace
        }
    }

    /// What the flags ask the engine for.
    pub fn spec(&self) -> TransferSpec {
        TransferSpec {
            streams: self.streams,
            block_len: self.block_len,
            existing: self.existing(),
            delete: self.delete,
            force: self.force,
            dry_run: self.dry_run,
            itemize: self.itemize,
            numeric_ids: self.numeric_ids,
            skip_writes: self.skip_writes,
            verify: self.verify,
            rate: self.rate.map(|bits| bits / 8),
            interval_ms: 1000,
            rx_poll: self.rx_poll.into(),
            cache: CachePolicy {
                direct: self.direct,
                evict: self.evict,
            },
            checksum: !self.no_block_checksum,
            fsync: !self.no_fsync,
            socket: {
                let mut socket = SocketParams::default();
                self.buffers.apply(&mut socket);
                self.mark.apply(&mut socket);
                socket
            },
            bind: self.address.bind.first().copied(),
            stripes: Vec::new(),
            count_members: true,
        }
    }
}

enum Target {
    OneShot(OneShot),
    Daemon { host: String, dest: String },
}

fn parse_target(t: &str) -> anyhow::Result<Target> {
    if t.starts_with("linerate://") {
        return OneShot::parse(t)
            .map(Target::OneShot)
            .map_err(|e| anyhow::anyhow!("bad receiver URL: {e}"));
    }
    let Some((host, dest)) = t.split_once(":/") else {
        bail!(
            "'{t}' is not a target: use a linerate:// URL from `linerate recv`, or HOST[:PORT]:/DEST"
        );
    };
    if host.is_empty() {
        bail!("'{t}' has no host before ':/'");
    }
    Ok(Target::Daemon {
        host: host.to_string(),
        dest: dest.trim_matches('/').to_string(),
    })
}

/// The target and the sources among the arguments: the target from
/// --url-file, standard input (`-`) or the last argument.
fn target_and_sources(a: &SendArgs) -> anyhow::Result<(Target, &[String])> {
    let first_line = |text: String, from: &str| -> anyhow::Result<String> {
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
            .with_context(|| format!("no URL in {from}"))
    };
    if let Some(file) = &a.url_file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("--url-file {}", file.display()))?;
        return Ok((
            parse_target(&first_line(text, &file.display().to_string())?)?,
            &a.args,
        ));
    }
    let (target, sources) = a.args.split_last().context("no target given")?;
    if target == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_line(&mut text)
            .context("reading the URL from standard input")?;
        return Ok((parse_target(&first_line(text, "standard input")?)?, sources));
    }
    let parsed = parse_target(target)?;
    if matches!(parsed, Target::OneShot(_)) && crate::argv::hide_tokens() {
        eprintln!(
            "note: the URL's token was on the command line, where other local users can read it \
             (ps, /proc) until now; hand it over with a pipe instead \
             (ssh HOST linerate recv DIR | linerate send SRC -) or with --url-file"
        );
    }
    Ok((parsed, sources))
}

/// The --include, --exclude and --exclude-from rules in the order given on
/// the command line (`matches` knows it; without, excludes come last).
fn filter_of(a: &SendArgs, matches: Option<&clap::ArgMatches>) -> anyhow::Result<Filter> {
    enum Rule<'a> {
        Include(&'a str),
        Exclude(&'a str),
        From(&'a PathBuf),
    }
    let at = |id: &str, n: usize| -> Vec<usize> {
        matches.and_then(|m| m.indices_of(id)).map_or_else(
            || (0..n).map(|i| usize::MAX - n + i).collect(),
            Iterator::collect,
        )
    };
    let mut rules: Vec<(usize, Rule)> = Vec::new();
    rules.extend(
        at("include", a.include.len())
            .into_iter()
            .zip(a.include.iter().map(|p| Rule::Include(p))),
    );
    rules.extend(
        at("exclude", a.exclude.len())
            .into_iter()
            .zip(a.exclude.iter().map(|p| Rule::Exclude(p))),
    );
    rules.extend(
        at("exclude_from", a.exclude_from.len())
            .into_iter()
            .zip(a.exclude_from.iter().map(Rule::From)),
    );
    rules.sort_by_key(|r| r.0);
    let mut filter = Filter::default();
    for (_, rule) in rules {
        let added = match rule {
            Rule::Include(p) => filter.include(p).map_err(|e| format!("--include {e}")),
            Rule::Exclude(p) => filter.exclude(p).map_err(|e| format!("--exclude {e}")),
            Rule::From(file) => {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("--exclude-from {}", file.display()))?;
                filter
                    .add_lines(&text)
                    .map_err(|e| format!("--exclude-from {}: {e}", file.display()))
            }
        };
        added.map_err(usage::UsageError)?;
    }
    filter
        .compile()
        .map_err(|e| usage::UsageError(format!("--include/--exclude: {e}")))?;
    Ok(filter)
}

pub fn run_send(a: SendArgs, matches: Option<&clap::ArgMatches>) -> anyhow::Result<()> {
    let (target, sources) = target_and_sources(&a)?;
    if sources.is_empty() && a.from_memory.is_none() {
        bail!("nothing to send: give files or directories, or --from-memory SIZE");
    }
    if !sources.is_empty() && a.from_memory.is_some() {
        bail!("--from-memory sends generated data; it takes no source paths");
    }
    // Sources are walked while the transfer runs; only their roots are checked first.
    let (manifest, discovery) = match a.from_memory {
        Some(size) => (Manifest::from_memory(size), None),
        None => {
            let paths: Vec<PathBuf> = sources.iter().map(PathBuf::from).collect();
            check_roots(&paths, a.follow_links).context("cannot read the sources")?;
            let d = Discovery {
                paths,
                follow_links: a.follow_links,
                filter: filter_of(&a, matches)?,
                wanted: linerate_transfer::meta::Wanted {
                    xattrs: a.xattrs,
                    acls: a.acls,
                },
                digests: a.checksum,
            };
            (Manifest::default(), Some(d))
        }
    };
    let to_stderr = a.json.as_deref() == Some("-");
    let mut out = Out::new(to_stderr);
    let (server, session, token, dest) = match &target {
        Target::OneShot(o) => (
            a.address
                .resolve(&format!("{}:{}", bracket(&o.host), o.port))?,
            Some(o.session),
            Some(o.token.clone()),
            String::new(),
        ),
        Target::Daemon { host, dest } => (a.address.resolve(host)?, None, None, dest.clone()),
    };
    let to = Destination {
        server,
        session,
        token,
        dest,
        tls: None,
    };
    let (tls, daemon_trust) = client_tls(&target, &a)?;
    let to = Destination { tls, ..to };
    let mut progress = SendProgress::new(a.quiet, to_stderr);
    let interrupted = signals::interrupt_flag();
    let mut spec = a.spec();
    let offered = match &target {
        Target::OneShot(o) => o.stripe.clone(),
        Target::Daemon { .. } => Vec::new(),
    };
    (spec.stripes, spec.bind, spec.streams) = a
        .stripe
        .resolve(&a.address, spec.streams, &offered)
        .map_err(|e| crate::usage::UsageError(e.to_string()))?;
    let run = send::run(
        &to,
        &spec,
        Some(&interrupted),
        &manifest,
        discovery.as_ref(),
        &mut |batch, first| progress.update(batch, first, &manifest),
    );
    let sent = progress.sent;
    progress.finish();
    // A daemon met for the first time is recorded once a transfer to it
    // completed: a man in the middle that finishes TLS and then stalls or
    // fails the transfer is not trusted from then on.
    if let Some(t) = &daemon_trust
        && run.is_ok()
    {
        t.remember()?;
    }
    for s in manifest.skipped() {
        out.line(&format!("skipped {s}"));
    }
    let run = match run {
        Ok(run) => run,
        Err(e @ EngineError::Wire(WireError::InvalidField { .. })) => {
            return Err(usage::flag_error::<SendArgs>(e));
        }
        Err(EngineError::Interrupted) if a.from_memory.is_some() => {
            // Generated data is dated at each run's start: a rerun writes it anew.
            return Err(signals::Interrupted(format!(
                "interrupted after sending {} of {} of generated data",
                fmt_bytes(sent as f64),
                fmt_bytes(manifest.total_bytes() as f64)
            ))
            .into());
        }
        Err(EngineError::Interrupted) => {
            let waits = match &target {
                Target::OneShot(_) => {
                    " (the receiver waits for it as long as its --wait, 10 min by default)"
                }
                Target::Daemon { .. } => "",
            };
            return Err(signals::Interrupted(format!(
                "interrupted after sending {} of {}; what arrived is kept: rerun the same \
                 command to resume{waits}",
                fmt_bytes(sent as f64),
                fmt_bytes(manifest.total_bytes() as f64)
            ))
            .into());
        }
        Err(e) => {
            // Only a receiver that could not be reached may be this machine
            // by another name; a refusal or a full disk is not that.
            let unreached = matches!(
                e,
                EngineError::Io { .. }
                    | EngineError::Timeout { .. }
                    | EngineError::NotLinerate { .. }
            );
            let hint = match &target {
                Target::OneShot(o) if unreached => loopback_name_hint(&o.host, server.ip()),
                _ => String::new(),
            };
            return Err(anyhow::Error::new(e).context(format!("transfer to {server} failed{hint}")));
        }
    };
    let doc = send::to_result(&run, crate::argv::command_line());
    print_summary(&mut out, &run, &doc);
    if let Some(path) = &a.json {
        output::write_json(&doc, path)?;
    }
    a.history.record(&doc);
    if !run.mismatched.is_empty() {
        bail!(
            "{} file(s) differ from the source after the transfer: {}",
            run.mismatched.len(),
            run.mismatched
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

/// Whether the kernel could have taken the record layer over.
fn ktls_words() -> &'static str {
    if linerate_secure::ktls_available() {
        "encrypted in user space (this kernel offers TLS offload; linerate does not use it yet)"
    } else {
        "encrypted in user space (this kernel has no TLS offload, tcp ULP \"tls\")"
    }
}

type ClientTls = (
    Option<Arc<linerate_secure::ClientConfig>>,
    Option<crate::keys_cmd::DaemonTrust>,
);

/// The TLS to reach the receiver with: pinned to the certificate its URL
/// names; for a daemon, to the one given or known (or met now), with this
/// user's client key; none with --no-encrypt.
fn client_tls(target: &Target, a: &SendArgs) -> anyhow::Result<ClientTls> {
    if a.no_encrypt {
        return Ok((None, None));
    }
    match target {
        Target::OneShot(o) => match o.fingerprint {
            Some(fp) => Ok((Some(linerate_secure::client_config(fp)?), None)),
            None => bail!(
                "the receiver's URL has no fp= (certificate fingerprint): that receiver does \
                 not encrypt (started with --no-encrypt). Add --no-encrypt to send in the clear"
            ),
        },
        Target::Daemon { host, .. } => {
            let trust = crate::keys_cmd::DaemonTrust::new(host, a.server_fingerprint.as_deref())?;
            Ok((Some(crate::keys_cmd::client_config(&trust)?), Some(trust)))
        }
    }
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// The receiver's list of changes (`--itemize`, `--dry-run`), and their
/// counts; true when the run was a dry run, whose summary ends there.
fn print_changes(out: &mut Out, run: &TransferRun) -> bool {
    let t = &run.totals;
    if run.request.itemize || run.request.dry_run {
        for c in &t.changes {
            out.line(&itemized(c));
        }
        let all = t.created + t.replaced + t.deleted;
        let listed = t.changes.len() as u64;
        if all > listed {
            out.line(&format!(
                "... and {} more change(s), not listed",
                all - listed
            ));
        }
    }
    let counts = format!(
        "{} to create, {} to replace, {} to delete",
        t.created, t.replaced, t.deleted
    );
    if run.request.dry_run {
        out.line(&format!(
            "Dry run: {counts}; nothing was sent or changed (run without --dry-run to do it)"
        ));
        return true;
    }
    if !t.owners_kept {
        out.line("Owners: the receiver's own (it does not run as root; as with rsync, only a root receiver keeps them)");
    }
    if t.replaced + t.deleted > 0 {
        out.line(&format!(
            "Changed: {} created, {} replaced, {} deleted",
            t.created, t.replaced, t.deleted
        ));
    }
    false
}

/// A change as rsync -i prints it: its code, the path and a link's
/// target or the name a hard link shares; the receiver's words, escaped.
/// A receiver that sent no code gets rsync's for the action alone.
fn itemized(c: &Change) -> String {
    let code = match (c.item.is_empty(), c.action) {
        (false, _) => c.item.as_str(),
        (true, Action::Create) => "+++++++++",
        (true, Action::Replace) => "changed",
        (true, Action::Delete) => "*deleting",
    };
    let to = match (&c.to, code.as_bytes().first()) {
        (Some(t), Some(b'h')) => format!(" => {}", t.escape_debug()),
        (Some(t), _) => format!(" -> {}", t.escape_debug()),
        (None, _) => String::new(),
    };
    format!("{code:<11} {}{to}", c.path.escape_debug())
}

fn print_summary(out: &mut Out, run: &TransferRun, doc: &linerate_result::ResultDoc) {
    if print_changes(out, run) {
        return;
    }
    let s = &doc.summary;
    let t = &run.totals;
    if t.files_skipped > 0 {
        out.line(&format!(
            "Up to date: {} file(s) already at the receiver, not sent",
            t.files_skipped
        ));
    }
    if t.files_resumed > 0 {
        out.line(&format!(
            "Resumed: {} file(s) cut short by an earlier run went on from the blocks it had \
             written ({} of {} were at the receiver)",
            t.files_resumed,
            fmt_bytes(run.bytes_total.saturating_sub(run.bytes_needed) as f64),
            fmt_bytes(run.bytes_total as f64)
        ));
    }
    out.line(&format!(
        "Sent {} of {} in {} of {} file(s) over {} stream(s) in {:.2} s = {}{}",
        fmt_bytes(run.client.bytes_total(Side::Sender) as f64),
        fmt_bytes(run.bytes_total as f64),
        t.files_written,
        run.files,
        run.request.streams,
        s.seconds,
        fmt_rate(s.bits_per_second),
        if run.rounds > 1 {
            format!(", {} passes", run.rounds)
        } else {
            String::new()
        }
    ));
    match &run.encryption {
        Some(n) => out.line(&format!(
            "Encrypted: TLS 1.3, {}, key exchange {} (every record authenticated, so blocks \
             carry no checksum of their own); {}",
            n.cipher,
            n.key_exchange,
            ktls_words()
        )),
        None => out.line("Sent in the clear (--no-encrypt)"),
    }
    for (end, report) in [("sender", &run.client), ("receiver", &run.server)] {
        for failed in report.stream_failures() {
            out.line(&format!(
                "At the {end}, {failed}; its blocks were sent again on the other streams"
            ));
        }
    }
    if !run.request.checksum && run.encryption.is_none() {
        out.line(
            "Blocks carried no checksum (--no-block-checksum): TCP's checksum alone guarded them",
        );
    }
    if run.request.skip_writes {
        out.line("Receiver discarded the data (--skip-writes)");
    } else {
        out.line(&format!(
            "Receiver: {} file(s) written, {} already complete, {} dir(s), {} link(s); {} block(s) failed their checksum and were sent again",
            t.files_written, t.files_skipped, t.dirs, t.symlinks, t.blocks_rejected
        ));
    }
    if run.request.direct {
        out.line(&format!(
            "Direct I/O: {} of {} read past the page cache, {} of {} written past it",
            fmt_bytes(run.bytes_read_direct as f64),
            fmt_bytes(run.client.bytes_total(Side::Sender) as f64),
            fmt_bytes(t.bytes_written_direct as f64),
            fmt_bytes(t.bytes_written as f64),
        ));
    }
    if run.request.verify {
        out.line(&format!(
            "Verified: {} file(s) identical (BLAKE3), {} differ",
            run.verified,
            run.mismatched.len()
        ));
    }
    // Process start and handshakes are most of a small transfer's CPU time:
    // per GB they would read as thousands of seconds.
    if s.bytes >= send::MIN_JUDGED_BYTES {
        out.line(&format!(
            "CPU per GB moved: sender {:.3} s, receiver {:.3} s",
            s.cpu_seconds_per_gb.sender, s.cpu_seconds_per_gb.receiver
        ));
    }
    crate::output::print_links(out, doc);
    out.line(&format!("Verdict: {}", s.verdict.sentence));
}

#[derive(Args)]
#[command(after_help = "\
Examples:
  linerate recv /scratch/in                 prints a linerate:// URL, takes one transfer, exits
  ssh dtn2 linerate recv /scratch/in | linerate send data/ -

The URL carries a random session id and token: only its holder can send.
The process exits 0 once the transfer is complete, non-zero if it failed.")]
pub struct RecvArgs {
    /// Directory to receive into (created if missing).
    pub dir: PathBuf,
    /// Local address to listen on.
    #[arg(long, default_value = "::")]
    pub bind: IpAddr,
    /// Port to listen on (0: any free port).
    #[arg(short, long, default_value_t = 0)]
    pub port: u16,
    /// Host name the URL gives the sender. Default: the bind address if it is
    /// a specific one, else this host's name.
    #[arg(long)]
    pub advertise: Option<String>,
    /// This host's addresses to offer for striping (comma-separated, e.g. one
    /// per NIC): the URL lists them, and the sender spreads its streams over
    /// them, paired with its -B list, unless it gives its own --stripe.
    #[arg(long, value_name = "ADDR,...", value_delimiter = ',')]
    pub stripe: Vec<IpAddr>,
    /// Stay in the foreground after printing the URL. By default, when stdout
    /// is not a terminal (as in `ssh host linerate recv DIR | linerate send SRC -`), the
    /// receiver moves to the background so the command substitution returns.
    #[arg(long)]
    pub foreground: bool,
    /// Log file of a receiver in the background.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Take the transfer in the clear: the URL then has no fp= and the
    /// sender must pass --no-encrypt too. By default the receiver makes a
    /// certificate for this session, puts its fingerprint in the URL, and
    /// refuses senders that do not encrypt.
    #[arg(long)]
    pub no_encrypt: bool,
    /// Give up when no sender has connected this long after the URL was
    /// printed, or when a transfer cut short (the sender's Ctrl-C, a lost
    /// connection) has not been resumed this long after (s, or with
    /// ms/s/m/h; 0: wait for ever for the first, not at all after a cut).
    /// Until then the sender's "rerun the same command" resumes it. A
    /// receiver in the background whose sender never came would otherwise
    /// hold its port for ever.
    #[arg(long, value_name = "TIME", default_value = "10m", value_parser = units::parse_duration_ms)]
    pub wait: u64,
    #[command(flatten)]
    pub receiver: crate::serve_cmd::ReceiverArgs,
    #[command(flatten)]
    pub logging: crate::log::LogFlags,
}

pub fn run_recv(a: RecvArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.dir)
        .with_context(|| format!("cannot create {}", a.dir.display()))?;
    a.logging
        .init(tracing_subscriber::filter::LevelFilter::INFO);
    let server = Server::bind(SocketAddr::new(a.bind, a.port)).context("cannot listen")?;
    let addr = server.local_addr()?;
    let mut id = [0u8; 16];
    linerate_transfer::random_bytes(&mut id).context("no randomness for the session id")?;
    let session = SessionId(id);
    let token = Token::random().context("no randomness for the token")?;
    let host = a.advertise.clone().unwrap_or_else(|| {
        if a.bind.is_unspecified() {
            rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned()
        } else {
            a.bind.to_string()
        }
    });
    let mut policy = TransferPolicy::new(a.dir.clone());
    policy.token = Some(token.clone());
    policy.session = Some(session);
    // The rerun that resumes is the user's: nothing is removed behind it.
    policy.partial_ttl = None;
    a.receiver.apply(&mut policy);
    // The user's own receiver takes ACLs as sent, as rsync -A does.
    policy.acls_as_sent = true;
    // The URL is the only thing on stdout, so a pipe into `linerate send SRC -` takes it.
    let background = !a.foreground && !std::io::stdout().is_terminal();
    policy.progress = Some(crate::progress::receiver_report(!background, 1));
    let limits = linerate_engine::limits::ServerLimits {
        session: a.receiver.limits(),
        ..Default::default()
    };
    let mut server = server.with_limits(limits).with_transfers(policy);
    if a.wait > 0 {
        let wait = Duration::from_millis(a.wait);
        server = server.first_session_within(wait).resume_within(wait);
    }
    let mut fingerprint = None;
    if !a.no_encrypt {
        let identity = linerate_secure::Identity::generate()?;
        fingerprint = Some(identity.fingerprint());
        server = server.with_tls(ServerTls {
            config: linerate_secure::server_config(&identity)?,
            required: true,
        });
    }
    if !a.bind.is_unspecified() && a.stripe.iter().any(|s| *s != a.bind) {
        return Err(crate::usage::UsageError(format!(
            "--stripe offers addresses this receiver does not listen on (--bind {} listens on that \
             one only): leave --bind out to listen on all",
            a.bind
        ))
        .into());
    }
    let url = OneShot {
        stripe: a.stripe.clone(),
        ..OneShot::new(addr, host, session, token, fingerprint)
    };
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{url}").context("printing the URL")?;
    stdout.flush().context("printing the URL")?;
    if background {
        // Named by the process, not the session: $TMPDIR is world-readable,
        // and the session id is half of what a sender shows.
        let log = a.log.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("linerate-recv-{}.log", std::process::id()))
        });
        // Nothing but the listening socket exists yet: no threads to lose.
        crate::detach::into_background(&log).context("cannot move to the background")?;
    }
    match server.run(true, &AtomicBool::new(false)) {
        Err(EngineError::NoSession(wait)) => bail!(
            "no sender connected within {} s; nothing was received (--wait sets how long \
             to wait; start recv again for a new URL)",
            wait.as_secs_f64()
        ),
        Err(EngineError::NotResumed(why)) => bail!(
            "the transfer failed ({why}) and its sender did not rerun within {} s; what \
             arrived is kept in {}: start `linerate recv` there again and rerun the send \
             with its new URL to resume",
            a.wait as f64 / 1000.0,
            a.dir.display()
        ),
        other => other.context("the transfer failed (partial files are kept: rerun to resume)"),
    }
}

/// A receiver started without `--bind` or `--advertise` names itself by host
/// name; where that name means loopback to the sender (both in one machine's
/// /etc/hosts, as between lab namespaces), the sender dials itself. Says so.
fn loopback_name_hint(host: &str, resolved: std::net::IpAddr) -> String {
    let named = host
        .trim_matches(['[', ']'])
        .parse::<std::net::IpAddr>()
        .is_err();
    if named && resolved.is_loopback() {
        format!(
            " ({host} is {resolved}, this machine, here: if the receiver runs on another host \
             or in another network namespace, start it with --bind ADDR or --advertise NAME)"
        )
    } else {
        String::new()
    }
}
