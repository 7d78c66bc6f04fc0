//! The coordinator's side: a listener its agents connect to, one reader
//! thread per agent feeding a channel, and one loop that drives the
//! coordinator's state machine and sends what it queues.

/// The coordinator machine's plan, settings, events and outcome, named
/// here for whoever drives a run through this module.
pub use crate::session::coordinator::{Event, JobPlan, Outcome, PlannedStep, Settings};
/// A job step's application and bounds, for whoever plans one.
pub use linerate_wire::{JobKind, MAX_JOB_ITERATIONS, MAX_JOB_MESSAGE};
use std::collections::BTreeMap;
use std::net::{Shutdown, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::session::coordinator::{Conn, Coordinator, Now};
use linerate_wire::{Role, SessionKind};

use super::wall_ns;
use linerate_engine::session::control::{Control, Input, is_timeout, read_hello, send_refusal};
use linerate_engine::session::link::Link;
use linerate_engine::{EngineError, Result};

/// How long an agent has to send its hello once connected.
const HELLO_WITHIN: Duration = Duration::from_secs(5);
/// How often the loop looks at `stop` when nothing else happens.
const TICK: Duration = Duration::from_millis(100);

/// What the reader threads and the acceptor tell the loop.
enum Arrival {
    Connected(Conn, SocketAddr, Control),
    Input(Conn, Input),
}

/// The coordinator's listener, bound before any agent is launched so
/// that its address can be handed to them.
pub struct Rendezvous {
    listener: TcpListener,
}

impl Rendezvous {
    /// Listens for agents on `addr`.
    pub fn bind(addr: SocketAddr) -> Result<Rendezvous> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| EngineError::io_at("listening for agents on", addr, e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| EngineError::io("a non-blocking listener", e))?;
        Ok(Rendezvous { listener })
    }

    /// The address agents reach it at.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener
            .local_addr()
            .map_err(|e| EngineError::io("reading the listening address", e))
    }

    /// Runs the plan with the agents that join; ends when it is done, at
    /// `timeout` or when `stop` is set (what ran is kept either way).
    /// `launched` names, when asked, the ranks whose launch failed (and why).
    pub fn run(
        self,
        settings: Settings,
        plan: Vec<PlannedStep>,
        timeout: Duration,
        stop: &AtomicBool,
        hooks: Hooks,
    ) -> Result<Outcome> {
        let (tx, rx) = mpsc::channel();
        let accepting = Arc::new(AtomicBool::new(true));
        let host = linerate_probe::host::collect();
        let mut m = Coordinator::new(now(), settings, host, plan);
        let listener = self.listener;
        let acceptor = {
            let accepting = Arc::clone(&accepting);
            std::thread::spawn(move || accept_agents(&listener, &tx, &accepting))
        };
        let outcome = drive(&mut m, &rx, Instant::now() + timeout, stop, hooks);
        accepting.store(false, Relaxed);
        let _ = acceptor.join();
        outcome
    }
}

fn now() -> Now {
    Now {
        at: Instant::now(),
        wall_ns: wall_ns(),
    }
}

/// What the caller sees and tells as the run goes: each event, and ranks
/// whose launch failed.
pub struct Hooks<'a> {
    /// Sees each event of the run.
    pub on_event: &'a mut dyn FnMut(&Event),
    /// Tells the ranks whose launch failed since last asked, with why.
    pub launch_failures: &'a mut dyn FnMut() -> Vec<(u32, String)>,
}

fn drive(
    m: &mut Coordinator,
    rx: &Receiver<Arrival>,
    give_up_at: Instant,
    stop: &AtomicBool,
    hooks: Hooks,
) -> Result<Outcome> {
    let mut controls: BTreeMap<Conn, Control> = BTreeMap::new();
    loop {
        send_queued(m, &mut controls);
        while let Some(e) = m.poll_event() {
            (hooks.on_event)(&e);
        }
        for (rank, why) in (hooks.launch_failures)() {
            m.give_up(now(), rank, why);
        }
        if m.is_over() {
            break;
        }
        if stop.load(Relaxed) {
            m.stop("interrupted".into());
            continue;
        }
        if Instant::now() >= give_up_at {
            m.stop("the run reached its --timeout".into());
            continue;
        }
        let wait = m
            .poll_timeout()
            .map_or(TICK, |d| d.saturating_duration_since(Instant::now()))
            .min(TICK)
            .min(give_up_at.saturating_duration_since(Instant::now()));
        match rx.recv_timeout(wait) {
            Ok(Arrival::Connected(conn, peer, ctl)) => {
                controls.insert(conn, ctl);
                m.connected(conn, peer.ip());
            }
            Ok(Arrival::Input(conn, input)) => match input {
                Input::Message(msg) => m.handle(now(), conn, msg),
                Input::Closed | Input::Quiet | Input::Failed(_) => m.handle_closed(now(), conn),
                Input::Malformed(e) => m.handle_malformed(now(), conn, e),
            },
            Err(RecvTimeoutError::Timeout) => m.handle_timeout(now()),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(EngineError::Internal("the agent listener stopped"));
            }
        }
    }
    send_queued(m, &mut controls);
    for ctl in controls.values() {
        let _ = ctl.stream.shutdown(Shutdown::Both);
    }
    m.outcome()
        .ok_or(EngineError::Internal("the run ended without an outcome"))
}

/// Sends what the machine queued; a connection that cannot take it is lost.
fn send_queued(m: &mut Coordinator, controls: &mut BTreeMap<Conn, Control>) {
    loop {
        while let Some((conn, msg)) = m.poll_transmit() {
            let sent = controls.get_mut(&conn).map(|c| c.send(&msg));
            if let Some(Err(_)) = sent {
                m.handle_closed(now(), conn);
            }
        }
        match m.poll_close() {
            Some(conn) => {
                if let Some(ctl) = controls.remove(&conn) {
                    let _ = ctl.stream.shutdown(Shutdown::Both);
                }
            }
            None => return,
        }
    }
}

/// Accepts agents until told to stop: each one's hello is read, then a
/// thread reads its messages into the loop's channel.
fn accept_agents(listener: &TcpListener, tx: &Sender<Arrival>, accepting: &AtomicBool) {
    let mut next: Conn = 0;
    while accepting.load(Relaxed) {
        let (stream, peer) = match listener.accept() {
            Ok(s) => s,
            Err(e) if is_timeout(&e) => {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(_) => continue,
        };
        let conn = next;
        next += 1;
        let tx = tx.clone();
        std::thread::spawn(move || {
            if let Some(ctl) = greet(stream) {
                read_agent(conn, peer, ctl, &tx);
            }
        });
    }
}

/// The agent's hello, checked; refused when it is not an agent's.
fn greet(mut stream: std::net::TcpStream) -> Option<Control> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let hello = read_hello(&mut stream, HELLO_WITHIN).ok()?;
    if hello.kind != SessionKind::Agent || hello.role != Role::Control || hello.tls() {
        send_refusal(
            &mut stream,
            linerate_wire::RefusalCode::UnknownSession,
            "this is a many-host run's coordinator: only its agents connect here",
        );
        return None;
    }
    Some(Control::from_link(Link { stream, tls: None }))
}

fn read_agent(conn: Conn, peer: SocketAddr, ctl: Control, tx: &Sender<Arrival>) {
    let Ok(mut reader) = ctl.try_clone() else {
        return;
    };
    if tx.send(Arrival::Connected(conn, peer, ctl)).is_err() {
        return;
    }
    loop {
        let input = reader.next_input(None);
        let last = !matches!(input, Input::Message(_));
        if tx.send(Arrival::Input(conn, input)).is_err() || last {
            return;
        }
    }
}
