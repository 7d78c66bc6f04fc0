//! A many-host run's agent serves only its run's flows: a bench server
//! started with the run's token refuses a bench that does not show it (a
//! stranger's, during the run) and any latency session, and takes one
//! that does.

use linerate_daemon::{Running, Server};
use linerate_engine::bench;
use linerate_engine::spec::BenchOptions;
use linerate_engine::spec::BenchSpec;
use linerate_wire::RunToken;

#[test]
fn an_agents_server_takes_only_benches_that_show_the_runs_token() {
    let token = RunToken("0123456789abcdef0123456789abcdef".into());
    let server = Running::start(
        Server::bind("127.0.0.1:0".parse().unwrap())
            .unwrap()
            .with_run_token(Some(token.clone())),
    )
    .unwrap();
    let addr = server.addr();
    let spec = BenchSpec {
        options: BenchOptions {
            duration_ms: 300,
            ..BenchOptions::default()
        },
        ..BenchSpec::default()
    };
    let stranger = bench::run(addr, &spec, None, &mut |_, _| {});
    let e = stranger
        .err()
        .expect("a stranger's bench is refused")
        .to_string();
    assert!(e.contains("run's flows"), "{e}");
    let wrong = BenchSpec {
        options: BenchOptions {
            run_token: Some(RunToken("f".repeat(32))),
            ..BenchOptions::default()
        },
        ..spec.clone()
    };
    assert!(
        bench::run(addr, &wrong, None, &mut |_, _| {}).is_err(),
        "a wrong token"
    );
    let member = BenchSpec {
        options: BenchOptions {
            run_token: Some(token),
            ..BenchOptions::default()
        },
        ..spec
    };
    let run = bench::run(addr, &member, None, &mut |_, _| {}).expect("the run's flow");
    assert!(run.server.bytes_total(linerate_result::Side::Receiver) > 0);
    let text = format!("{:?}", member_debug());
    assert!(
        !text.contains("0123456789abcdef"),
        "a token's Debug hides it: {text}"
    );
    server.stop().unwrap();
}

fn member_debug() -> BenchSpec {
    BenchSpec {
        options: BenchOptions {
            run_token: Some(RunToken("0123456789abcdef0123456789abcdef".into())),
            ..BenchOptions::default()
        },
        ..BenchSpec::default()
    }
}
