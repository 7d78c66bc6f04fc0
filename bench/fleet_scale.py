#!/usr/bin/env python3
"""What one coordinator costs as a many-host run grows: linerate incast with
16, 32, 64 and 128 sending agents (8 flows each, so 128 to 1,024 flows) and
one receiver, every agent a `linerate agent` process on its own loopback
address (--local). For each size, over --rounds rounds (sizes rotating): the
coordinator's CPU seconds and peak memory (from the result), the result's
bytes, the flows that ran, the wall time; medians, then the cost per agent
and a least-squares line of the result's bytes against the ranks (slope and
R^2: linear growth shows as R^2 near 1 and a per-rank cost that does not
grow).

  bench/fleet_scale.py                      # 3 rounds
  bench/fleet_scale.py --rounds 1 --out bench/results/fleet-scale.json

Needs no root. Every agent is a child of the linerate this script starts,
which ends them; the script ends linerate by PID if it outlives its limit.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import end

ROOT = Path(__file__).resolve().parent.parent


def one_run(lr, senders_agents, seconds, size):
    """One incast; the figures of its result."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "incast.json"
        cmd = [lr, "incast", "--local", str(senders_agents + 1), "--senders", "8",
               "--sizes", size, "-t", str(seconds), "--json", str(path)]
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=seconds + 240)
        except subprocess.TimeoutExpired:
            end(proc)
            raise SystemExit(f"{cmd} did not end")
        wall = time.monotonic() - started
        if proc.returncode != 0 or not path.exists():
            raise SystemExit(f"{cmd} failed: {err}")
        raw = path.read_bytes()
    doc = json.loads(raw)
    fleet = doc["fleet"]
    step = fleet["steps"][0]
    flows = step["flows"]
    return {
        "ranks": len(fleet["hosts"]),
        "flows": len(flows),
        "flows_ran": sum(1 for f in flows if "error" not in f),
        "coordinator_cpu_seconds": fleet["coordinator"]["cpu_seconds"],
        "coordinator_peak_rss_bytes": fleet["coordinator"]["peak_rss_bytes"],
        "result_bytes": len(raw),
        "aggregate_bits_per_second": step["aggregate_bits_per_second"],
        "jain_index": step["jain_index"],
        "start_spread_ms": step.get("start_spread_ms"),
        "wall_seconds": wall,
    }


def fit(xs, ys):
    """Least squares y = a + b x: (a, b, R^2)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    b = sxy / sxx
    a = my - b * mx
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return a, b, 1 - ss_res / ss_tot if ss_tot else 1.0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=2)
    p.add_argument("--size", default="64K", help="message size of every flow")
    p.add_argument("--agents", default="16,32,64,128", help="sending agents, comma-separated")
    p.add_argument("--linerate", default=str(ROOT / "target/release/linerate"))
    p.add_argument("--out", default=str(ROOT / "bench/results/fleet-scale.json"))
    a = p.parse_args()
    sizes = [int(n) for n in a.agents.split(",")]
    runs = {n: [] for n in sizes}
    for r in range(a.rounds):
        order = sizes[r % len(sizes):] + sizes[: r % len(sizes)]
        for n in order:
            got = one_run(a.linerate, n, a.seconds, a.size)
            runs[n].append(got)
            print(f"round {r + 1} {n} agents: {got['flows_ran']}/{got['flows']} flows, "
                  f"coordinator {got['coordinator_cpu_seconds']:.3f} s CPU, "
                  f"{got['coordinator_peak_rss_bytes'] / 2**20:.1f} MiB, "
                  f"result {got['result_bytes'] / 1024:.0f} KiB", file=sys.stderr)
    med = {}
    for n in sizes:
        keys = [k for k in runs[n][0] if isinstance(runs[n][0][k], (int, float)) and runs[n][0][k] is not None]
        m = {k: statistics.median(x[k] for x in runs[n] if x[k] is not None) for k in keys}
        ranks = m["ranks"]
        m["coordinator_cpu_ms_per_rank"] = 1000 * m["coordinator_cpu_seconds"] / ranks
        m["coordinator_peak_rss_kib_per_rank"] = m["coordinator_peak_rss_bytes"] / 1024 / ranks
        m["result_bytes_per_rank"] = m["result_bytes"] / ranks
        med[str(n)] = m
    xs = [med[str(n)]["ranks"] for n in sizes]
    a0, slope, r2 = fit(xs, [med[str(n)]["result_bytes"] for n in sizes])
    c0, cslope, cr2 = fit(xs, [med[str(n)]["coordinator_cpu_seconds"] for n in sizes])
    m0, mslope, mr2 = fit(xs, [med[str(n)]["coordinator_peak_rss_bytes"] for n in sizes])
    out = {
        "what": "linerate incast --local N+1 --senders 8: one coordinator, N sending agents on loopback",
        "date": time.strftime("%Y-%m-%d"),
        "host": {"cpus": os.cpu_count(), "kernel": platform.release()},
        "rounds": a.rounds,
        "seconds_per_step": a.seconds,
        "message_size": a.size,
        "runs": {str(n): runs[n] for n in sizes},
        "medians": med,
        "findings": {
            "result_bytes_per_rank_fit": slope,
            "result_bytes_fit_r2": r2,
            "coordinator_cpu_seconds_per_rank_fit": cslope,
            "coordinator_cpu_fit_r2": cr2,
            "coordinator_rss_bytes_per_rank_fit": mslope,
            "coordinator_rss_fit_r2": mr2,
        },
    }
    Path(a.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out["findings"], indent=2))
    for n in sizes:
        m = med[str(n)]
        print(f"{n:4d} agents ({m['flows']:.0f} flows): coordinator {m['coordinator_cpu_ms_per_rank']:.2f} ms CPU "
              f"and {m['coordinator_peak_rss_kib_per_rank']:.0f} KiB per rank; result "
              f"{m['result_bytes_per_rank']:.0f} B per rank; spread {m['start_spread_ms']:.0f} ms")


if __name__ == "__main__":
    main()
