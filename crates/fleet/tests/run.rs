//! A whole many-host run in one process, on loopback: rank 0 coordinates
//! through `run::run` (with its own agent), and the other ranks are agents
//! on threads, started once the coordinator says where it listens. This is
//! the path `incast`, `mesh` and `job` take, without a launcher.
// A failed expectation is the test's failure, in helpers too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::thread::JoinHandle;
use std::time::Duration;

use linerate_fleet::agent::AgentSpec;
use linerate_fleet::agents::{AgentSource, Role};
use linerate_fleet::coordinator::Event;
use linerate_fleet::run::{self, Ended, Notice, RunSpec};
use linerate_fleet::{Launch, Launcher, plan};
use linerate_verdict::KnownPath;

const RANKS: u32 = 3;

fn spec() -> RunSpec {
    RunSpec {
        step_time: Duration::from_millis(300),
        interval_ms: 100,
        timeout: Some(Duration::from_secs(60)),
        socket: Default::default(),
        path: KnownPath::default(),
        name: "rank0".into(),
        program: PathBuf::from("unused: no agents are launched"),
    }
}

/// The other ranks' agents, on threads, joining the coordinator at `at`.
fn agents(at: SocketAddr, stop: &Arc<AtomicBool>) -> Vec<JoinHandle<()>> {
    (1..RANKS)
        .map(|rank| {
            let me = AgentSpec {
                listen: "127.0.0.1:0".parse().unwrap(),
                silence: Duration::from_secs(30),
                ..AgentSpec::joining(
                    SocketAddr::new("127.0.0.1".parse().unwrap(), at.port()),
                    rank,
                    RANKS,
                    format!("rank{rank}"),
                )
            };
            let stop = Arc::clone(stop);
            std::thread::spawn(move || {
                linerate_fleet::agent::run(&me, stop).expect("the agent ends well");
            })
        })
        .collect()
}

#[test]
fn rank_zero_coordinates_a_mesh_of_three_with_its_own_agent_and_two_others() {
    let role = Role::RankZero {
        launch: Launch {
            launcher: Launcher::Single,
            rank: 0,
            size: RANKS,
            hosts: Vec::new(),
        },
        // Port 0: the coordinator says where it listens once bound.
        coordinator: "127.0.0.1:0".parse().unwrap(),
    };
    assert_eq!(run::ranks_to_plan(&role), Some(RANKS));
    let ranks: Vec<u32> = (0..RANKS).collect();
    let plan: Vec<_> = plan::mesh(&ranks, 1, true)
        .iter()
        .map(|s| run::planned(s, false))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let mut others = Vec::new();
    let mut joined = Vec::new();
    let mut unguarded = false;
    let mut notice = |n: Notice| match n {
        Notice::Meeting { size, plan, at } => {
            assert_eq!(size, RANKS);
            assert_eq!(plan.len(), 1);
            others = agents(at, &stop);
        }
        Notice::Unguarded { .. } => unguarded = true,
        Notice::Event(Event::Joined { rank, .. }) => joined.push(*rank),
        Notice::Event(_) => {}
    };
    let ended = run::run(
        role,
        &AgentSource::default(),
        plan,
        &spec(),
        Arc::clone(&stop),
        &mut notice,
    )
    .expect("the run ends");
    for a in others {
        a.join().expect("no agent panicked");
    }
    joined.sort_unstable();
    assert_eq!(joined, ranks, "every rank joined, once");
    assert!(
        unguarded,
        "no run token: the caller is told anyone may join"
    );
    let Ended::Coordinated { outcome, launcher } = ended else {
        panic!("rank 0 coordinates");
    };
    assert_eq!(launcher, Launcher::Single.name());
    assert_eq!(outcome.stopped, None);
    assert!(outcome.hosts.iter().all(|h| h.failed.is_none()));
    let [step] = outcome.steps.as_slice() else {
        panic!("one step, all pairs at once: {:?}", outcome.steps.len());
    };
    // Every ordered pair of three ranks, each flow having moved data.
    assert_eq!(step.flows.len(), 6);
    let mut pairs: Vec<(u32, u32)> = step.flows.iter().map(|f| (f.from, f.to)).collect();
    pairs.sort_unstable();
    assert_eq!(pairs, [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]);
    for f in &step.flows {
        assert_eq!(f.error, None, "flow {} -> {}", f.from, f.to);
        assert!(f.bytes > 0, "flow {} -> {} moved nothing", f.from, f.to);
    }
    assert!(step.jain_index > 0.0 && step.jain_index <= 1.0);
}

#[test]
fn an_agent_of_someone_elses_run_plans_nothing_and_names_its_rank_when_no_coordinator_answers() {
    // A port nobody listens on any more: connecting is refused.
    let gone = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let role = Role::Agent {
        launch: Launch {
            launcher: Launcher::Single,
            rank: 1,
            size: 2,
            hosts: Vec::new(),
        },
        coordinator: gone,
    };
    assert_eq!(run::ranks_to_plan(&role), None);
    // Stopped from the start: the agent does not keep trying for a minute.
    let stop = Arc::new(AtomicBool::new(true));
    let e = run::run(
        role,
        &AgentSource::default(),
        Vec::new(),
        &spec(),
        stop,
        &mut |_| panic!("an agent has nothing to tell"),
    )
    .err()
    .expect("no coordinator: the agent fails");
    let said = e.to_string();
    assert!(said.starts_with("rank 1: "), "{said}");
    assert!(said.contains(&gone.to_string()), "{said}");
}
