//! The one-way delay probe beside a TCP bench's streams
//! (docs/verdict.md#return-path): the client's prober and the server's
//! echo, each a thread with a UDP socket. The datagrams are
//! [`linerate_wire::DelayProbe`]s and their echoes; what they show is
//! summed up by [`linerate_probe::one_way`].

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use linerate_probe::one_way::{self, Answered};
use linerate_result::one_way::OneWayDelay;
use linerate_wire::{DELAY_PROBE_LEN, DelayEcho, DelayProbe};

/// Between probes: 36-byte datagrams at 20 a second take under 15 kbit/s
/// with their headers, 7 % of a 200 kbit/s path (docs/verdict.md#return-path).
const PROBE_EVERY: Duration = Duration::from_millis(50);
/// The most echoes the server sends in a second: a client asking faster
/// than its probe does gets no more.
const MOST_ECHOES_A_SECOND: u32 = 100;
/// How long either thread blocks in one wait, so that it sees its stop.
const WAIT: Duration = Duration::from_millis(20);

/// Nanoseconds on this process's monotonic clock: both ends stamp with
/// their own, and only differences of one clock's stamps are used.
fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A thread that runs until its guard is dropped or finished.
struct Worker<T> {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<T>>,
}

impl<T: Send + 'static> Worker<T> {
    fn spawn(name: &str, run: impl FnOnce(&AtomicBool) -> T + Send + 'static) -> Option<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || run(&flag))
            .ok()?;
        Some(Worker {
            stop,
            thread: Some(thread),
        })
    }

    fn finish(mut self) -> Option<T> {
        self.stop.store(true, Relaxed);
        self.thread.take()?.join().ok()
    }
}

impl<T> Drop for Worker<T> {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The client's socket, bound before the request so that the request can
/// carry its port.
pub(crate) struct Prober {
    socket: UdpSocket,
}

impl Prober {
    /// A socket on `local`, the control connection's own address.
    pub(crate) fn bind(local: IpAddr) -> std::io::Result<Prober> {
        let socket = UdpSocket::bind(SocketAddr::new(local, 0))?;
        socket.set_read_timeout(Some(WAIT))?;
        Ok(Prober { socket })
    }

    pub(crate) fn port(&self) -> std::io::Result<u16> {
        Ok(self.socket.local_addr()?.port())
    }

    /// Probes `server` (its control address: the echo answers from its
    /// port) until [`Probing::finish`]. The first probe leaves at once,
    /// before the streams open, to see the path empty.
    pub(crate) fn start(self, server: SocketAddr) -> Option<Probing> {
        self.socket.connect(server).ok()?;
        let run_began = Arc::new(OnceLock::new());
        let began = Arc::clone(&run_began);
        let worker = Worker::spawn("delay-probe", move |stop| {
            probe_until(&self.socket, stop, &began)
        })?;
        Some(Probing { worker, run_began })
    }
}

/// A prober at work.
pub(crate) struct Probing {
    worker: Worker<(u32, Vec<Answered>)>,
    run_began: Arc<OnceLock<u64>>,
}

impl Probing {
    /// The streams begin now: probes from here on are the run's.
    pub(crate) fn run_begins(&self) {
        let _ = self.run_began.set(now_ns());
    }

    /// Stops probing; each direction's queueing while the streams ran.
    pub(crate) fn finish(self) -> Option<OneWayDelay> {
        let (sent, answered) = self.worker.finish()?;
        one_way::summarize(sent, &answered)
    }
}

/// Sends a probe every [`PROBE_EVERY`] and takes the echoes until `stop`;
/// the probes sent once the run began, and every answered one.
fn probe_until(
    socket: &UdpSocket,
    stop: &AtomicBool,
    run_began: &OnceLock<u64>,
) -> (u32, Vec<Answered>) {
    let mut sent_at: Vec<u64> = Vec::new();
    let mut answered = Vec::new();
    let mut next = Instant::now();
    let mut buf = [0u8; DELAY_PROBE_LEN + 1];
    while !stop.load(Relaxed) {
        if Instant::now() >= next {
            let probe = DelayProbe {
                seq: sent_at.len() as u64,
                client_sent_ns: now_ns(),
            };
            // A probe the kernel would not take is one not answered.
            let _ = socket.send(&probe.encode());
            sent_at.push(probe.client_sent_ns);
            next += PROBE_EVERY;
        }
        let Ok(n) = socket.recv(&mut buf) else {
            continue;
        };
        let client_received_ns = now_ns();
        let Ok(echo) = DelayEcho::decode(&buf[..n]) else {
            continue;
        };
        // Only an echo of a probe of ours, with its own departure, counts.
        let ours = usize::try_from(echo.seq)
            .ok()
            .and_then(|i| sent_at.get(i))
            .is_some_and(|&at| at == echo.client_sent_ns);
        if !ours {
            continue;
        }
        answered.push(Answered {
            client_sent_ns: echo.client_sent_ns,
            server_received_ns: echo.server_received_ns,
            server_sent_ns: echo.server_sent_ns,
            client_received_ns,
            during_run: run_began.get().is_some_and(|&t| echo.client_sent_ns >= t),
        });
    }
    let began = run_began.get().copied().unwrap_or(u64::MAX);
    let sent = sent_at.iter().filter(|&&t| t >= began).count() as u32;
    answered.dedup_by_key(|a| a.client_sent_ns);
    (sent, answered)
}

/// The server's echo for one session: answers the probes of the client at
/// `client` from `local`, the control connection's own address and port,
/// until dropped.
pub struct DelayEchoer {
    _worker: Worker<()>,
}

impl DelayEchoer {
    /// None where the socket cannot be had: the client then sees no echo,
    /// and its verdict goes without.
    pub fn start(local: SocketAddr, client: SocketAddr) -> Option<DelayEchoer> {
        let socket = socket2::Socket::new(
            socket2::Domain::for_address(local),
            socket2::Type::DGRAM,
            None,
        )
        .ok()?;
        // Beside a UDP bench's streams on the same port.
        socket.set_reuse_address(true).ok()?;
        socket.bind(&local.into()).ok()?;
        socket.connect(&client.into()).ok()?;
        let socket: UdpSocket = socket.into();
        socket.set_read_timeout(Some(WAIT)).ok()?;
        let worker = Worker::spawn("delay-echo", move |stop| echo_until(&socket, stop))?;
        Some(DelayEchoer { _worker: worker })
    }
}

/// Answers each probe with its echo, at most [`MOST_ECHOES_A_SECOND`] a
/// second, until `stop`.
fn echo_until(socket: &UdpSocket, stop: &AtomicBool) {
    let mut buf = [0u8; DELAY_PROBE_LEN + 1];
    let mut second = Instant::now();
    let mut this_second = 0u32;
    while !stop.load(Relaxed) {
        let Ok(n) = socket.recv(&mut buf) else {
            continue;
        };
        let server_received_ns = now_ns();
        let Ok(probe) = DelayProbe::decode(&buf[..n]) else {
            continue;
        };
        if second.elapsed() >= Duration::from_secs(1) {
            second = Instant::now();
            this_second = 0;
        }
        if this_second >= MOST_ECHOES_A_SECOND {
            continue;
        }
        this_second += 1;
        let echo = probe.echo(server_received_ns, now_ns());
        let _ = socket.send(&echo.encode());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prober_and_an_echo_on_loopback_see_no_queue_either_way() {
        let local: IpAddr = "127.0.0.1".parse().unwrap();
        let prober = Prober::bind(local).unwrap();
        // The echo answers from a port of its own, as a server's control port.
        let server = UdpSocket::bind((local, 0)).unwrap().local_addr().unwrap();
        let client = SocketAddr::new(local, prober.port().unwrap());
        let _echo = DelayEchoer::start(server, client).unwrap();
        let probing = prober.start(server).unwrap();
        probing.run_begins();
        let deadline = Instant::now() + Duration::from_secs(10);
        // Wait until enough probes had time to go (a condition, not a sleep
        // that assumes a speed): 8 intervals and then some.
        while Instant::now() < deadline
            && probing
                .run_began
                .get()
                .is_some_and(|&t| now_ns() - t < 8 * PROBE_EVERY.as_nanos() as u64)
        {
            std::thread::sleep(WAIT);
        }
        let d = probing.finish().expect("enough probes answered");
        assert!(d.probes_answered >= one_way::MIN_ANSWERED as u32, "{d:?}");
        assert!(d.probes_answered <= d.probes_sent, "{d:?}");
        // Nothing queues on an idle loopback for anything like a probe's interval.
        assert!(
            d.to_server.median_us < 50_000.0 && d.to_client.median_us < 50_000.0,
            "{d:?}"
        );
    }
}
