#!/usr/bin/env python3
"""The whole test suite, several times in a row, with every core kept busy.

Clones the repository at a commit into a scratch folder (so what is tested is
what was committed, not the working tree), builds the tests once with the
cores idle, then runs `CI=true cargo test --workspace --release
--no-fail-fast` (the README's test command, as CI runs it) `--runs` times,
stopping after a failed run unless --keep-going.
Before each run it starts one nice-0 busy loop a core (`bash -c 'while :; do
:; done'`) and ends them, by PID, after the run: the suite must hold on a host
that other work shares. Each run's time, test counts, failed test names and
the host's busy share over the run (/proc/stat) go to a JSON document,
written again after every run so an interrupted series keeps what it had.
SIGINT or SIGTERM ends the run in hand (its tests and busy loops) and
keeps the runs before it.

  bench/loaded_series.py                          # HEAD, 3 runs, a busy loop a core
  bench/loaded_series.py --commit 263db11 --runs 1 --spinners 0

Root is needed for the suite's namespace tests (as in CI). The scratch clone
is removed at the end unless --keep; its target folder can be shared with
--target-dir to skip rebuilding the dependencies (the workspace's own
artifacts are removed from it at the end: the test binaries name the
clone's fixture folders), or --in-place tests this
checkout itself, when it has nothing uncommitted, in its own target folder
(commit nothing there until the series ends, and add no branch or
worktree: the binary names its commit and watches .git/refs/heads, so
either rebuilds it inside the next loaded run, which the run then records
as `rebuilt`).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_CMD = ["cargo", "test", "--workspace", "--release", "--no-fail-fast"]
RESULT_LINE = re.compile(r"test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored")
FAILED_TEST = re.compile(r"^test (\S+) \.\.\. FAILED$")
BINARY = re.compile(r"^\s*(?:Running|Doc-tests) (\S+)")
SPINNER = ["bash", "-c", "while :; do :; done"]
# A few of the programs .ci/run installs before its tests: without them a
# series measures a machine that cannot pass, not the suite.
NEEDED = ["iperf", "iperf3", "nuttcp", "sockperf", "rsync", "chromium", "sshd", "mpirun", "srun"]


def host_ticks():
    """(busy, total) clock ticks of all CPUs so far, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def busy_since(start):
    """The host's busy share since `start`, a host_ticks() sample."""
    busy, total = host_ticks()
    return (busy - start[0]) / max(1, total - start[1])


def busy_share(seconds=3.0):
    """The host's busy share over the next `seconds`."""
    start = host_ticks()
    time.sleep(seconds)
    return busy_since(start)


# Work left running beside a series (a forgotten busy loop) makes its runs
# something other than "beside N loops":
# docs/benchmarks/2026-12-03-loaded-series.md#three-loops-1374de0
IDLE_AT_MOST = 0.25


def require_idle(doc, what):
    """Stop the series when the host is busy before `what`, with no loop of its own."""
    share = busy_share()
    doc.setdefault("busy_before", {})[what] = round(share, 3)
    if share > IDLE_AT_MOST:
        sys.exit(f"the host is {share:.0%} busy before {what}, with no busy loop of the series "
                 f"running: end what runs there first (top shows it)")


def parse_test_output(text):
    """Passed, failed and ignored counts summed over every test binary, and
    the tests that failed, each named after its binary's source."""
    passed = failed = ignored = 0
    for m in RESULT_LINE.finditer(text):
        passed += int(m.group(2))
        failed += int(m.group(3))
        ignored += int(m.group(4))
    names, binary = set(), "?"
    for line in text.splitlines():
        if m := BINARY.match(line):
            binary = m.group(1)
        elif m := FAILED_TEST.match(line):
            names.add(f"{binary}::{m.group(1)}")
    names = sorted(names)
    return {"passed": passed, "failed": failed, "ignored": ignored, "failed_tests": names}


def start_spinners(count):
    return [
        subprocess.Popen(SPINNER, stdin=subprocess.DEVNULL, start_new_session=True)
        for _ in range(count)
    ]


def end_all(procs):
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def forget_workspace(checkout, env):
    """Removes the workspace's own artifacts from a shared target folder.

    The tests find their fixtures through CARGO_MANIFEST_DIR, compiled in.
    Cargo counts a build fresh in another checkout of the same files, so
    after the scratch clone is gone a checkout sharing the folder would run
    test binaries that look for fixtures in the deleted clone (on
    2026-12-03 an --in-place series after a --target-dir one failed every
    fixture test of crates/compare and crates/tune)."""
    meta = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1"],
                          cwd=checkout, env=env, capture_output=True, text=True)
    if meta.returncode != 0:
        print(f"could not list the workspace to clean it: {meta.stderr.strip()}", flush=True)
        return
    names = [p["name"] for p in json.loads(meta.stdout)["packages"]]
    specs = [arg for name in names for arg in ("-p", name)]
    subprocess.run(["cargo", "clean", "--release", *specs], cwd=checkout, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_group(cmd, timeout, **popen):
    """`cmd`'s exit code, or None past `timeout` seconds. It runs in a
    process group of its own, ended whole on a timeout or an interrupt:
    cargo's compilers and test binaries with it."""
    child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True, **popen)
    try:
        return child.wait(timeout)
    except subprocess.TimeoutExpired:
        return None
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def run_suite(checkout, env, log_path, timeout, spinners):
    """One run of the test command beside `spinners` busy loops."""
    busy = start_spinners(spinners)
    ticks = host_ticks()
    started = time.monotonic()
    with open(log_path, "w") as log:
        try:
            code = run_group(TEST_CMD, timeout, cwd=checkout, env=env, stdout=log,
                             stderr=subprocess.STDOUT)
        finally:
            end_all(busy)
    seconds = time.monotonic() - started
    host_busy = busy_since(ticks)
    text = Path(log_path).read_text(errors="replace")
    run = parse_test_output(text)
    run.update(
        # Crates compiled inside the loaded run: the checkout changed after
        # the build, and the run's time includes that build.
        rebuilt=re.findall(r"^\s*Compiling (\S+)", text, re.M),
        exit_code=code,
        timed_out=code is None,
        seconds=round(seconds, 1),
        host_busy=round(host_busy, 3),
        log=str(log_path),
    )
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commit", default="HEAD", help="what to test (default HEAD)")
    ap.add_argument("--runs", type=int, default=3, help="runs in the series (default 3)")
    ap.add_argument("--spinners", type=int, default=os.cpu_count() or 2,
                    help="busy loops beside each run (default: one a core)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one run may take (default 3600)")
    ap.add_argument("--target-dir", help="cargo target folder to build in (default: the clone's own)")
    ap.add_argument("--out", default=None, help="JSON output (default bench/results/loaded-series-COMMIT.json)")
    ap.add_argument("--logs", default=None,
                    help="folder for each run's output (default: /tmp/linerate-series-COMMIT-logs)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch clone")
    ap.add_argument("--keep-going", action="store_true",
                    help="run every run even after one failed (default: stop there, the series cannot pass)")
    ap.add_argument("--in-place", action="store_true",
                    help="test this checkout as it is (it must have nothing uncommitted), building in its own target")
    args = ap.parse_args()
    if args.runs < 1 or args.spinners < 0:
        ap.error("--runs takes 1 or more, --spinners 0 or more")
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    missing = [p for p in NEEDED if shutil.which(p, path=path) is None]
    if missing:
        sys.exit(f"not installed: {' '.join(missing)}; install what .ci/run installs first")

    commit = subprocess.run(["git", "rev-parse", "--short", args.commit], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.strip()
    out = Path(args.out or ROOT / "bench" / "results" / f"loaded-series-{commit}.json")
    logs = Path(args.logs or Path(tempfile.gettempdir()) / f"linerate-series-{commit}-logs")
    if args.in_place:
        if args.commit != "HEAD":
            ap.error("--in-place tests HEAD; leave out --commit")
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout
        if dirty.strip():
            sys.exit(f"--in-place needs a checkout with nothing uncommitted:\n{dirty}")
    logs.mkdir(parents=True, exist_ok=True)
    scratch = None if args.in_place else Path(tempfile.mkdtemp(prefix="linerate-series-"))
    checkout = ROOT if scratch is None else scratch / "linerate"
    env = dict(os.environ, CI="true", CARGO_TERM_COLOR="never")
    if args.target_dir:
        env["CARGO_TARGET_DIR"] = args.target_dir
    doc = {
        "kind": "loaded_series",
        "commit": commit,
        "command": " ".join(["CI=true", *TEST_CMD]),
        "spinners": args.spinners,
        "cpus": os.cpu_count(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": [],
    }

    def save():
        out.write_text(json.dumps(doc, indent=2) + "\n")

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    # A series started in the background from a script ignores SIGINT, and
    # SIGTERM would skip the clean-up: both end the run in hand (its tests
    # and busy loops, by process group) and keep the runs so far.
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    try:
        if scratch is not None:
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(checkout)], check=True)
            subprocess.run(["git", "checkout", "--quiet", commit], cwd=checkout, check=True)
        require_idle(doc, "the build")
        print(f"building the tests at {commit}, cores idle", flush=True)
        build_log = logs / "build.log"
        with open(build_log, "w") as log:
            built = run_group([*TEST_CMD, "--no-run"], None, cwd=checkout, env=env,
                              stdout=subprocess.DEVNULL, stderr=log)
        if built != 0:
            sys.exit(f"the build failed:\n{build_log.read_text(errors='replace')[-4000:]}")
        for n in range(1, args.runs + 1):
            # The binary names its commit (crates/cli/build.rs): a commit made
            # in the checkout meanwhile would rebuild it inside the loaded run.
            now = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout,
                                 capture_output=True, text=True, check=True).stdout.strip()
            if now != commit:
                sys.exit(f"the checkout moved from {commit} to {now}: leave it as it is during a series")
            require_idle(doc, f"run {n}")
            print(f"run {n} of {args.runs} beside {args.spinners} busy loops", flush=True)
            run = run_suite(checkout, env, logs / f"run-{n}.log", args.timeout, args.spinners)
            run["run"] = n
            doc["runs"].append(run)
            save()
            verdict = "passed" if run["exit_code"] == 0 else f"FAILED {run['failed_tests']}"
            if run["rebuilt"]:
                verdict += f" (rebuilt {', '.join(run['rebuilt'])} inside the run)"
            print(f"  {run['passed']} passed, {run['failed']} failed in {run['seconds']} s, "
                  f"host {run['host_busy']:.0%} busy: {verdict}", flush=True)
            if run["exit_code"] != 0 and not args.keep_going:
                break
    except KeyboardInterrupt as stopped:
        doc["stopped"] = f"{stopped} after {len(doc['runs'])} runs"
        print(f"stopped: {stopped}", flush=True)
    finally:
        doc["in_a_row"] = next((i for i, r in enumerate(doc["runs"]) if r["exit_code"] != 0),
                               len(doc["runs"]))
        save()
        if scratch is not None and not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
            if args.target_dir:
                forget_workspace(ROOT, env)
    print(f"{doc['in_a_row']} of {len(doc['runs'])} runs passed in a row; {out}")
    sys.exit(0 if doc["in_a_row"] == args.runs else 1)


if __name__ == "__main__":
    main()
