#!/usr/bin/env python3
"""Latency and bandwidth against message size: linerate latency vs sockperf,
qperf and iperf2 --bounceback, side by side on loopback.

Each round runs every tool once, the order rotating each round; medians over
the rounds. Each peer is compared with linerate at the peer's own message
size: sockperf ping-pong at 14 B (its smallest, its header), qperf tcp_lat at
1 B, iperf2 --bounceback at 100 B (its smallest). What each peer reports:

  sockperf  percentiles of the round trip (--full-rtt): p50 and p99
  qperf     the mean one-way latency: doubled here to a round trip
  iperf2    the mean round trip (its histogram's bins are 100 us wide)

so the p50 bar is met against each peer's central figure, the p99 bar
against sockperf's p99. linerate runs with its defaults (the receive mode
chosen at run time), and once more with --busy-poll off, to show both.

Bandwidth against size: linerate latency --bandwidth at 64 B against qperf
tcp_bw -m 64 (messages per second), and at 4 MiB against linerate bench -P 1
(Gbit/s).

  bench/latency.py                       # 5 rounds, 3 s per measurement
  bench/latency.py --rounds 7 --seconds 5 --out bench/results/latency.json

Every server is started by this script on a free port and ended by PID.
"""

import argparse
import json
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import end, free_port

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"sockperf": "sockperf", "qperf": "qperf", "iperf2": "iperf"}


def run(cmd, timeout, stdout_only=False):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {p.stderr.strip()[-400:]}")
    return p.stdout if stdout_only else p.stdout + p.stderr


def result_doc(cmd, timeout):
    """The linerate.result/1 document a `--json -` run prints on stdout."""
    return json.loads(run(cmd, timeout, stdout_only=True))


class Servers:
    """One server per tool, each on its own port, ended on exit."""

    def __init__(self, linerate):
        self.ports = {k: free_port() for k in ("linerate", "sockperf", "qperf", "iperf2")}
        cmds = {
            "linerate": [linerate, "serve", "--port", str(self.ports["linerate"])],
            "sockperf": ["sockperf", "server", "--tcp", "-i", "127.0.0.1", "-p", str(self.ports["sockperf"])],
            "qperf": ["qperf", "-lp", str(self.ports["qperf"])],
            "iperf2": ["iperf", "-s", "-p", str(self.ports["iperf2"])],
        }
        self.procs = []
        for name, cmd in cmds.items():
            if shutil.which(cmd[0]) is None:
                continue
            self.procs.append(
                subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        time.sleep(1.0)

    def close(self):
        for p in self.procs:
            end(p)


def linerate_latency(lr, port, seconds, extra):
    """p50 and p99 (us) of each size 1, 14 and 100 B, from one run."""
    doc = result_doc(
        [lr, "latency", f"127.0.0.1:{port}", "--sizes", "1,14,100", "-t", str(seconds),
         "--iterations", "100000000", "--json", "-"] + extra,
        timeout=seconds * 3 + 30,
    )
    steps = {s["request_bytes"]: s["round_trip_us"] for s in doc["latency"]["steps"]}
    return {
        "busy_poll": doc["latency"]["busy_poll"],
        **{f"p50_{n}": steps[n]["p50"] for n in (1, 14, 100)},
        **{f"p99_{n}": steps[n]["p99"] for n in (1, 14, 100)},
    }


def sockperf(port, seconds):
    out = run(
        ["sockperf", "ping-pong", "--tcp", "-i", "127.0.0.1", "-p", str(port), "-t", str(seconds),
         "-m", "14", "--full-rtt"],
        timeout=seconds + 30,
    )
    pct = lambda p: float(re.search(rf"percentile {p} =\s+([\d.]+)", out).group(1))
    return {"p50_14": pct("50.000"), "p99_14": pct("99.000")}


def qperf_lat(port, seconds):
    out = run(["qperf", "-lp", str(port), "127.0.0.1", "-t", str(seconds), "-m", "1", "tcp_lat"],
              timeout=seconds + 30)
    m = re.search(r"latency\s*=\s*([\d.]+)\s*(us|ms|ns)", out)
    one_way = float(m.group(1)) * {"us": 1, "ms": 1000, "ns": 0.001}[m.group(2)]
    return {"mean_rtt_1": 2 * one_way}


def iperf2_bounceback(port, seconds):
    out = run(["iperf", "-c", "127.0.0.1", "-p", str(port), "--bounceback", "--bounceback-period", "0",
               "-t", str(seconds)], timeout=seconds + 30)
    # The run's last summary row: cnt=avg/min/max/stdev ms
    rows = re.findall(r"\d+=([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", out)
    return {"mean_rtt_100": float(rows[-1][0]) * 1000}


def qperf_bw(port, seconds):
    out = run(["qperf", "-lp", str(port), "127.0.0.1", "-t", str(seconds), "-m", "64", "tcp_bw"],
              timeout=seconds + 30)
    m = re.search(r"bw\s*=\s*([\d.]+)\s*(KB|MB|GB)/sec", out)
    bytes_s = float(m.group(1)) * {"KB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]
    return {"msgs_64": bytes_s / 64}


def linerate_bandwidth(lr, port, seconds):
    doc = result_doc([lr, "latency", f"127.0.0.1:{port}", "--bandwidth", "--sizes", "64,4M", "-t", str(seconds),
                      "--iterations", "100000000", "--json", "-"], timeout=seconds * 3 + 30)
    steps = {s["request_bytes"]: s for s in doc["latency"]["steps"]}
    return {"msgs_64": steps[64]["messages_per_second"], "gbps_4m": steps[4 << 20]["bits_per_second"] / 1e9}


def linerate_bench(lr, port, seconds):
    doc = result_doc([lr, "bench", f"127.0.0.1:{port}", "-P", "1", "-t", str(seconds), "-i", "0", "--json", "-"],
                     timeout=seconds + 30)
    return {"gbps": doc["summary"]["bits_per_second"] / 1e9}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--linerate", default=str(ROOT / "target/release/linerate"))
    ap.add_argument("--out", default=str(ROOT / "bench/results/latency.json"))
    a = ap.parse_args()
    lr, s = a.linerate, a.seconds
    skipped = {k: f"not installed (Debian package {v})" for k, v in PACKAGES.items()
               if shutil.which("iperf" if k == "iperf2" else k) is None}
    servers = Servers(lr)
    ports = servers.ports
    tools = {
        "linerate": lambda: linerate_latency(lr, ports["linerate"], s, []),
        "linerate --busy-poll off": lambda: linerate_latency(lr, ports["linerate"], s, ["--busy-poll", "off"]),
        "sockperf": lambda: sockperf(ports["sockperf"], s),
        "qperf tcp_lat": lambda: qperf_lat(ports["qperf"], s),
        "iperf2 --bounceback": lambda: iperf2_bounceback(ports["iperf2"], s),
        "linerate --bandwidth": lambda: linerate_bandwidth(lr, ports["linerate"], s),
        "qperf tcp_bw": lambda: qperf_bw(ports["qperf"], s),
        "linerate bench -P 1": lambda: linerate_bench(lr, ports["linerate"], s),
    }
    needs = {"sockperf": "sockperf", "qperf tcp_lat": "qperf", "qperf tcp_bw": "qperf",
             "iperf2 --bounceback": "iperf2"}
    tools = {k: f for k, f in tools.items() if needs.get(k) not in skipped}
    runs = {k: [] for k in tools}
    order = list(tools)
    try:
        for r in range(a.rounds):
            for name in order[r % len(order):] + order[:r % len(order)]:
                runs[name].append(tools[name]())
                print(f"round {r + 1} {name}: {runs[name][-1]}", file=sys.stderr)
    finally:
        servers.close()

    med = {k: {m: statistics.median(x[m] for x in v) for m in v[0] if m != "busy_poll"}
           for k, v in runs.items() if v}
    checks = {}
    pairs = [("sockperf", "p50_14", 14), ("qperf tcp_lat", "mean_rtt_1", 1), ("iperf2 --bounceback", "mean_rtt_100", 100)]
    # linerate as it runs by default, and blocking as the peers do.
    for variant, tag in (("linerate", ""), ("linerate --busy-poll off", " (blocking)")):
        lr_med = med[variant]
        for peer, metric, size in pairs:
            if peer in med:
                checks[f"p50 at {size} B / {peer}{tag}"] = lr_med[f"p50_{size}"] / med[peer][metric]
        if "sockperf" in med:
            checks[f"p99 at 14 B / sockperf{tag}"] = lr_med["p99_14"] / med["sockperf"]["p99_14"]
    bw = med.get("linerate --bandwidth", {})
    if "qperf tcp_bw" in med and bw:
        checks["64 B messages/s / qperf tcp_bw"] = bw["msgs_64"] / med["qperf tcp_bw"]["msgs_64"]
    if "linerate bench -P 1" in med and bw:
        checks["4 MiB Gbit/s / bench -P 1"] = bw["gbps_4m"] / med["linerate bench -P 1"]["gbps"]
    bars = {
        "p50 at 14 B / sockperf": ("<=", 1.05), "p50 at 1 B / qperf tcp_lat": ("<=", 1.05),
        "p50 at 100 B / iperf2 --bounceback": ("<=", 1.05), "p99 at 14 B / sockperf": ("<=", 1.2),
        "64 B messages/s / qperf tcp_bw": (">=", 1.0), "4 MiB Gbit/s / bench -P 1": (">=", 0.9),
    }
    verdicts = {}
    for k, ratio in checks.items():
        op, bar = bars[k.replace(" (blocking)", "")]
        verdicts[k] = {"ratio": ratio, "bar": f"{op} {bar}", "met": ratio <= bar if op == "<=" else ratio >= bar}
    doc = {
        "script": "bench/latency.py",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": {"kernel": platform.release(), "cpus": len(__import__("os").sched_getaffinity(0))},
        "rounds": a.rounds,
        "seconds": s,
        "linerate_busy_poll": [x.get("busy_poll") for x in runs.get("linerate", [])],
        "skipped": skipped,
        "runs": runs,
        "medians": med,
        "ratios": verdicts,
        "units": "round trips in microseconds; msgs_* in messages per second; gbps in Gbit/s",
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=2) + "\n")
    for k, v in med.items():
        print(f"{k:28} " + "  ".join(f"{m}={x:.1f}" for m, x in v.items()))
    for k, v in verdicts.items():
        print(f"{k:40} {v['ratio']:.3f} (bar {v['bar']}): {'met' if v['met'] else 'NOT met'}")
    print(f"written to {a.out}")


if __name__ == "__main__":
    main()
