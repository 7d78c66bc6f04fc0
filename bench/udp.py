#!/usr/bin/env python3
"""The highest UDP rate without loss on loopback: linerate bench --udp (with
GSO/GRO, its default, and without) against iperf2 -u, at the same datagram
size, side by side.

For each tool, a search over rates: each probe sends for --seconds at one
rate and passes when no datagram was lost and at least 95 % of the
rate arrived; the rate halves the gap between the highest pass and the
lowest failure, geometrically, --probes times, between --low and --high.
The figure is the highest received rate of a passing probe. Rounds run every tool once, the order rotating;
medians of the highest loss-free rate over the rounds, and the ratios.

  bench/udp.py                          # 3 rounds, 1472-byte datagrams
  bench/udp.py --rounds 5 --len 8972 --out bench/results/udp.json

Every server is started by this script on a free port and ended by PID.
"""

import argparse
import json
import math
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import end, free_port

ROOT = Path(__file__).resolve().parent.parent


def linerate_probe(lr, port, rate, seconds, length, extra):
    """Loss (lost datagrams) of one linerate run at `rate` bits/s."""
    out = subprocess.run(
        [lr, "bench", f"127.0.0.1:{port}", "--udp", "-b", str(int(rate)), "-l", str(length),
         "-t", str(seconds), "-i", "0", "--json", "-"] + extra,
        capture_output=True, text=True, timeout=seconds + 30)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-400:])
    doc = json.loads(out.stdout)
    ev = doc["summary"]["verdict"]["evidence"]
    return int(ev["datagrams_lost"]), doc["summary"]["bits_per_second"]


class Iperf2:
    """iperf2 -u probes, each against a fresh server whose CSV report is read
    when the client ends: a server overrun by one probe lost its closing
    datagrams and reported nonsense (0 bit/s, 1 lost) for every later one."""

    def __init__(self, server_args=()):
        self.server_args = list(server_args)

    def probe(self, rate, seconds, length):
        port = free_port()
        path = Path("/tmp") / f"iperf2-udp-{port}.csv"
        with open(path, "w") as out:
            # Unbuffered: to a file, iperf2 would hold its report until it exits.
            server = subprocess.Popen(
                ["stdbuf", "-o0", "iperf", "-s", "-u", "-p", str(port), "-y", "C", *self.server_args],
                stdout=out, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            subprocess.run(["iperf", "-c", "127.0.0.1", "-p", str(port), "-u", "-b", str(int(rate)),
                            "-l", str(length), "-t", str(seconds)],
                           capture_output=True, timeout=seconds + 30)
            for _ in range(30):
                rows = [l.split(",") for l in path.read_text().splitlines() if l.count(",") >= 12]
                if rows:
                    # ... bits_per_second, jitter_ms, lost, total, percent, out_of_order
                    return int(rows[0][10]), float(rows[0][8])
                time.sleep(0.1)
            # The closing datagrams were lost: no report, a failure at this rate.
            return 1 << 30, 0.0
        finally:
            end(server)
            path.unlink(missing_ok=True)

    def close(self):
        pass


# A run that lost at most this many datagrams passes, for every tool alike.
LOSS_FREE = 0


# A probe passes only when this share of the asked rate arrived: a sender
# that cannot keep the rate loses nothing and proves nothing.
RATE_KEPT = 0.95


def search(probe, low, high, probes):
    """The highest received rate of a passing probe over `probes` geometric
    bisections of the asked rate."""
    ok, bad, tried, best = low, high, [], 0.0
    for _ in range(probes):
        rate = math.sqrt(ok * bad)
        lost, got = probe(rate)
        passed = lost <= LOSS_FREE and got >= RATE_KEPT * rate
        tried.append({"rate": rate, "lost": lost, "received_bps": got, "passed": passed})
        if passed:
            ok, best = rate, max(best, got)
        else:
            bad = rate
    return best, tried


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--len", type=int, default=1472)
    ap.add_argument("--low", type=float, default=50e6)
    ap.add_argument("--high", type=float, default=40e9)
    ap.add_argument("--probes", type=int, default=8)
    ap.add_argument("--linerate", default=str(ROOT / "target/release/linerate"))
    ap.add_argument("--out", default=str(ROOT / "bench/results/udp.json"))
    a = ap.parse_args()
    lr_port = free_port()
    server = subprocess.Popen([a.linerate, "serve", "--port", str(lr_port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    iperf2 = Iperf2() if shutil.which("iperf") else None
    # The receive buffer linerate's receivers ask for by default (4 MiB).
    iperf2_w = Iperf2(("-w", "4M")) if iperf2 else None
    time.sleep(0.5)
    tools = {
        "linerate": lambda r: linerate_probe(a.linerate, lr_port, r, a.seconds, a.len, []),
        "linerate --no-gso --no-gro": lambda r: linerate_probe(
            a.linerate, lr_port, r, a.seconds, a.len, ["--no-gso", "--no-gro"]),
    }
    if iperf2:
        tools["iperf2 -u"] = lambda r: iperf2.probe(r, a.seconds, a.len)
        tools["iperf2 -u, server -w 4M"] = lambda r: iperf2_w.probe(r, a.seconds, a.len)
    runs = {k: [] for k in tools}
    order = list(tools)
    try:
        for r in range(a.rounds):
            for name in order[r % len(order):] + order[:r % len(order)]:
                best, tried = search(tools[name], a.low, a.high, a.probes)
                runs[name].append({"highest_loss_free_bps": best, "probes": tried})
                shown = " ".join(f"{p['rate'] / 1e9:.2f}:{p['lost']}/{p['received_bps'] / 1e9:.2f}" for p in tried)
                print(f"round {r + 1} {name}: {best / 1e9:.3f} Gbit/s (asked:lost/got {shown})", file=sys.stderr)
    finally:
        end(server)
        for i in (iperf2, iperf2_w):
            if i:
                i.close()
    med = {k: statistics.median(x["highest_loss_free_bps"] for x in v) for k, v in runs.items()}
    ratios = {}
    if "iperf2 -u" in med:
        best = max(med["iperf2 -u"], med["iperf2 -u, server -w 4M"])
        ratios["linerate / best iperf2 -u"] = med["linerate"] / best if best > 0 else None
    neither = med["linerate --no-gso --no-gro"]
    ratios["GSO+GRO / neither"] = med["linerate"] / neither if neither > 0 else None
    doc = {
        "script": "bench/udp.py",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": {"kernel": platform.release()},
        "datagram_len": a.len,
        "seconds_per_probe": a.seconds,
        "rounds": a.rounds,
        "skipped": {} if iperf2 else {"iperf2 -u": "not installed (Debian package iperf)"},
        "runs": runs,
        "median_highest_loss_free_bps": med,
        "ratios": ratios,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=2) + "\n")
    for k, v in med.items():
        print(f"{k:28} {v / 1e9:.3f} Gbit/s")
    for k, v in ratios.items():
        print(f"{k:28} {v if v is None else round(v, 2)}")
    print(f"written to {a.out}")


if __name__ == "__main__":
    main()
