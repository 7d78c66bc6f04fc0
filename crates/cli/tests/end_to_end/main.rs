//! linerate's end-to-end tests: the real binary over real sockets, in real
//! namespaces, beside real daemons and the other tools. One test binary for
//! all of them, so the suite builds and links once (docs/guide.md#tests);
//! each module is one subject, run alone with `cargo test --release -p
//! linerate --test end_to_end MODULE::`.

mod common;

mod bench_e2e;
mod dashboard;
mod demo;
mod docs;
mod durability;
mod encryption;
mod fabric;
mod faults;
mod fleet;
mod flood;
mod habits;
mod history;
mod kill;
mod lab;
mod latency;
mod launchers;
mod netns;
mod report;
mod robustness;
mod rsync_habits;
mod rsync_reruns;
mod schedule;
mod strangers;
mod striping;
mod transfer_cache;
mod transfer_e2e;
mod transfer_hostile;
mod transfer_verdict;
mod tune;
mod udp;
mod verdict_faults;
mod verdict_matrix;
