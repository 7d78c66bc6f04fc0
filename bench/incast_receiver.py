#!/usr/bin/env python3
"""What an incast costs its receiving host: threads and CPU per GB, two
builds side by side.

A 64-flow incast by default: `linerate incast --local 5 --senders 16
--sizes 1M`, four sending agents of 16 flows each into rank 0, every agent a
process on its own loopback address. While it runs, the receiving agent's
process (rank 0, the one listening on 127.77.0.1) is read from /proc every
50 ms: its thread count (the peak is kept) and its CPU time (user + system,
the last reading before it exits). CPU seconds per GB is that CPU over the
bytes the incast's result counts. Builds alternate each round (A, B, B, A,
...); medians per build and the ratio B / A.

  bench/incast_receiver.py --a /tmp/linerate-before --b target/release/linerate
  bench/incast_receiver.py --b target/release/linerate --rounds 5 --senders 32

Needs no root. The agents are children of the linerate this script starts,
which ends them; the script ends linerate by PID if it outlives its limit.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import end

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
RECEIVER_LISTEN = "127.77.0.1:0"


def receiver_pid(root_pid):
    """The receiving agent among linerate's children, by its --listen."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat[1]) == root_pid and RECEIVER_LISTEN.encode() in cmd:
            return int(entry.name)
    return None


def read_proc(pid):
    """(threads, CPU seconds) of a live process, or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    threads = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("Threads:"))
    return threads, (int(stat[11]) + int(stat[12])) / TICK


def pin_agents(root_pid, receiver, pinned):
    """Pins the receiving agent to CPU 0 and every other agent to the rest,
    each process once, all its threads (those it starts later inherit it)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in pinned:
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat[1]) != root_pid:
            continue
        pid = int(entry.name)
        cpus = {0} if pid == receiver else set(range(1, os.cpu_count()))
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                os.sched_setaffinity(int(task.name), cpus)
            except OSError:
                pass
        pinned.add(pid)


def one_run(lr, senders, seconds, split):
    """One incast; the receiver's peak threads, CPU, and the result's bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "incast.json"
        cmd = [lr, "incast", "--local", "5", "--senders", str(senders), "--sizes", "1M",
               "-t", str(seconds), "--json", str(path)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        limit = time.monotonic() + seconds + 120
        pid, peak, cpu, pinned = None, 0, 0.0, set()
        try:
            while proc.poll() is None:
                if time.monotonic() > limit:
                    raise SystemExit(f"{cmd} did not end")
                pid = pid or receiver_pid(proc.pid)
                if split and pid:
                    pin_agents(proc.pid, pid, pinned)
                seen = read_proc(pid) if pid else None
                if seen:
                    peak, cpu = max(peak, seen[0]), seen[1]
                time.sleep(0.01 if split and len(pinned) < 5 else 0.05)
        finally:
            end(proc)
        err = proc.stderr.read()
        if proc.returncode != 0 or not path.exists():
            raise SystemExit(f"{cmd} failed: {err}")
        summary = json.loads(path.read_text())["summary"]
    if pid is None:
        raise SystemExit("the receiving agent was never seen")
    gb = summary["bytes"] / 1e9
    return {
        "receiver_peak_threads": peak,
        "receiver_cpu_seconds": cpu,
        "receiver_cpu_seconds_per_gb": cpu / gb if gb else None,
        "gbit_per_s": summary["bits_per_second"] / 1e9,
        "bytes": summary["bytes"],
        "retransmits": summary["retransmits"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", help="the build to compare against (default: none, B alone)")
    ap.add_argument("--b", default=str(ROOT / "target/release/linerate"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--senders", type=int, default=16, help="flows from each of the 4 senders")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--split-cores", action="store_true",
                    help="the receiving agent on CPU 0, the senders on the others: the receiver's "
                    "cost alone, not its share of cores it contends for with 64 sending threads")
    ap.add_argument("--out", default=str(ROOT / "bench/results/incast-receiver.json"))
    a = ap.parse_args()

    builds = {"b": a.b} | ({"a": a.a} if a.a else {})
    runs = {k: [] for k in builds}
    for r in range(a.rounds):
        order = sorted(builds) if r % 2 else sorted(builds, reverse=True)
        for k in order:
            fig = one_run(builds[k], a.senders, a.seconds, a.split_cores)
            runs[k].append(fig)
            print(f"round {r + 1} {k}: {fig['receiver_peak_threads']} threads, "
                  f"{fig['receiver_cpu_seconds_per_gb']:.3f} CPU s/GB, {fig['gbit_per_s']:.2f} Gbit/s",
                  flush=True)

    keys = ["receiver_peak_threads", "receiver_cpu_seconds_per_gb", "gbit_per_s", "retransmits"]
    medians = {k: {f: statistics.median(x[f] for x in runs[k]) for f in keys} for k in runs}
    doc = {
        "what": "incast --local 5 (4 senders x %d flows into rank 0), receiver's threads and CPU" % a.senders,
        "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "host": {"cpus": os.cpu_count(), "kernel": platform.release()},
        "builds": builds,
        "rounds": a.rounds,
        "split_cores": a.split_cores,
        "seconds": a.seconds,
        "runs": runs,
        "medians": medians,
    }
    if "a" in medians:
        doc["ratio_b_over_a"] = {f: medians["b"][f] / medians["a"][f] if medians["a"][f] else None
                                 for f in keys}
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    for k in sorted(medians):
        m = medians[k]
        print(f"{k}: {m['receiver_peak_threads']:.0f} threads, {m['receiver_cpu_seconds_per_gb']:.3f} "
              f"CPU s/GB, {m['gbit_per_s']:.2f} Gbit/s ({builds[k]})")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
