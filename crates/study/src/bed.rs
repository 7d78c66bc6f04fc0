//! A study's testbed: a lab and a bench server in its second host, both
//! gone when the bed is dropped, and one bench from the first host to the
//! second.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread::JoinHandle;

use linerate_daemon::server::Server;
use linerate_engine::bench;
use linerate_engine::spec::{BenchSpec, Stripe, TransferSpec};
use linerate_lab::{Backend, Lab, LabSpec, netns};
use linerate_result::{LabRecord, ResultDoc};
use linerate_transfer::receive::TransferPolicy;
use linerate_transfer::send::{self, Destination, Discovery};
use linerate_transfer::source::Manifest;
use linerate_tune::plan::Setting;
use linerate_verdict::KnownPath;

use crate::StudyError;

/// The port the bed's server listens on, inside its own namespace.
const PORT: u16 = 5201;

/// A lab and a server in its second host, both gone when this is dropped.
pub(crate) struct Bed {
    pub lab: Lab,
    stop: Arc<AtomicBool>,
    serving: Option<JoinHandle<()>>,
}

impl Bed {
    /// Brings up the lab `spec` (its emulator, if any, is `linerate`) and
    /// starts the server in its second host.
    pub fn up(spec: LabSpec, linerate: &Path) -> Result<Bed, StudyError> {
        Bed::up_receiving(spec, linerate, None)
    }

    /// As [`Bed::up`], the server also taking transfers (in the clear)
    /// under `root`, where one is given.
    pub fn up_receiving(
        spec: LabSpec,
        linerate: &Path,
        root: Option<PathBuf>,
    ) -> Result<Bed, StudyError> {
        let lab = Lab::up(spec, linerate)?;
        let mut bed = Bed {
            lab,
            stop: Arc::new(AtomicBool::new(false)),
            serving: None,
        };
        let ns = bed.lab.hosts[1].netns.clone();
        let stop = Arc::clone(&bed.stop);
        let (tx, rx) = std::sync::mpsc::channel();
        bed.serving = Some(std::thread::spawn(move || {
            // Threads inherit the namespace of the thread that starts them,
            // so the whole server lives in the second host.
            let bound = netns::enter(&ns).map_err(StudyError::from).and_then(|()| {
                let server = Server::bind(SocketAddr::from((Ipv6Addr::UNSPECIFIED, PORT)))?;
                Ok(match root {
                    Some(root) => server.with_transfers(TransferPolicy::new(root)),
                    None => server,
                })
            });
            match bound {
                Ok(server) => {
                    let _ = tx.send(Ok(()));
                    let _ = server.run(false, &stop);
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        }));
        rx.recv()
            .map_err(|_| StudyError::Panicked("the study's server thread"))??;
        Ok(bed)
    }

    /// The lab as a result records it.
    pub fn record(&self) -> LabRecord {
        lab_record(&self.lab)
    }

    /// Sets the tcp_rmem/tcp_wmem maxima in both hosts (per namespace,
    /// never the host's): `max` 0 puts back `defaults`.
    pub fn buffers(
        &self,
        max: u64,
        defaults: &(String, String),
    ) -> Result<(String, String), StudyError> {
        let (rmem, wmem) = if max == 0 {
            defaults.clone()
        } else {
            (format!("4096 131072 {max}"), format!("4096 16384 {max}"))
        };
        let settings = [
            Setting::new("net.ipv4.tcp_rmem", &rmem, "study buffers"),
            Setting::new("net.ipv4.tcp_wmem", &wmem, "study buffers"),
        ];
        for h in &self.lab.hosts {
            self.in_host(&h.netns, || {
                linerate_tune::apply::set(&settings, Path::new("/proc/sys"))?;
                Ok(())
            })?;
        }
        Ok((rmem, wmem))
    }

    /// Runs `f` in host namespace `ns`.
    pub fn in_host<T: Send>(
        &self,
        ns: &str,
        f: impl FnOnce() -> Result<T, StudyError> + Send,
    ) -> Result<T, StudyError> {
        netns::run_in(Some(ns), f)
    }

    /// One bench from the first host to the second (over IPv6 if `v6`),
    /// with congestion control `cc` where given; `command_line` is what
    /// the result records.
    pub fn bench(
        &self,
        mut spec: BenchSpec,
        cc: Option<&str>,
        v6: bool,
        command_line: &[String],
    ) -> Result<ResultDoc, StudyError> {
        let h2 = &self.lab.hosts[1];
        let addr: IpAddr = if v6 { h2.v6.into() } else { h2.v4.into() };
        if let Some(cc) = cc {
            spec.options.socket.congestion = Some(cc.into());
        }
        self.bench_to(addr, spec, command_line)
    }

    /// One bench from the first host to `addr` (an address of the second),
    /// its path's capacity that of the lab's links it goes over.
    pub fn bench_to(
        &self,
        addr: IpAddr,
        mut spec: BenchSpec,
        command_line: &[String],
    ) -> Result<ResultDoc, StudyError> {
        spec.path = self.known_path(addr, &spec.stripes);
        spec.count_members = true;
        let run = self.in_host(&self.lab.hosts[0].netns, || {
            Ok(bench::run(
                SocketAddr::new(addr, PORT),
                &spec,
                None,
                &mut |_, _| {},
            )?)
        })?;
        let mut doc = bench::to_result(&run, command_line.to_vec());
        doc.lab = Some(self.record());
        Ok(doc)
    }

    /// What the lab says of the path to `addr` (or over `stripes`): with
    /// several links, the summed rate of those it goes over.
    fn known_path(&self, addr: IpAddr, stripes: &[Stripe]) -> KnownPath {
        let c = &self.lab.spec.conditions;
        let mut path = KnownPath::of_lab_link(c.rate_bps, c.rtt_us, c.jitter_us);
        if self.lab.spec.links > 1 {
            let targets: Vec<IpAddr> = match stripes {
                [] => vec![addr],
                s => s.iter().map(|s| s.remote).collect(),
            };
            let rate = linerate_lab::links::rate_toward(&self.lab, &targets);
            path.capacity = KnownPath::of_lab_link(rate, 0, 0).capacity;
        }
        path.forwarder_pid = self.lab.forwarder_pid();
        path
    }

    /// One transfer of `paths` from the first host to `dest` under the
    /// second's receiving root, in the clear, to `addr`.
    pub fn send_to(
        &self,
        addr: IpAddr,
        spec: &TransferSpec,
        (paths, dest): (Vec<PathBuf>, &str),
        command_line: &[String],
    ) -> Result<ResultDoc, StudyError> {
        let to = Destination {
            server: SocketAddr::new(addr, PORT),
            session: None,
            token: None,
            dest: dest.to_string(),
            tls: None,
        };
        let discovery = Discovery {
            paths,
            follow_links: false,
            filter: Default::default(),
            wanted: Default::default(),
            digests: false,
        };
        let run = self.in_host(&self.lab.hosts[0].netns, || {
            Ok(send::run(
                &to,
                spec,
                None,
                &Manifest::default(),
                Some(&discovery),
                &mut |_, _| {},
            )?)
        })?;
        let mut doc = send::to_result(&run, command_line.to_vec());
        doc.lab = Some(self.record());
        Ok(doc)
    }
}

// A lab left up must not go unsaid, and a drop cannot return the error.
#[expect(clippy::print_stderr, reason = "the one report a drop can make")]
impl Drop for Bed {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.serving.take() {
            let _ = t.join();
        }
        if let Err(e) = self.lab.down() {
            let name = &self.lab.spec.name;
            eprintln!(
                "linerate: could not remove lab {name}: {e} (run `linerate lab down --name {name}`)"
            );
        }
    }
}

/// Lab `lab` as a result records it: a run made in it (a study's, or a
/// user's under `lab exec`) carries its conditions.
pub fn lab_record(lab: &Lab) -> LabRecord {
    let routed = lab.router.is_some() && lab.backend != Backend::Emulator;
    LabRecord {
        name: lab.spec.name.clone(),
        backend: lab.backend.as_str().into(),
        backend_reason: lab.backend_reason.clone(),
        topology: if routed { "router" } else { "direct" }.into(),
        mtu: lab.spec.mtu,
        conditions: serde_json::to_value(&lab.spec.conditions).unwrap_or_default(),
    }
}
