#!/usr/bin/env python3
"""Memory-to-memory throughput: linerate bench vs iperf2, iperf3 and nuttcp.

Side by side in one run: for each stream count, rounds in which every tool
runs once, the order rotating each round, after one warm-up run of every tool
(recorded, not counted: the first run after idle pays for memory this VM
hands back slowly, and rotation starts with linerate); medians of Gbit/s and
of CPU seconds per GB (client + server processes, from the kernel's
accounting), and the ratio of linerate to the best peer. Written as JSON and
printed as a table.

  bench/mem_throughput.py                         # loopback, 1 2 4 8 streams
  bench/mem_throughput.py --netns                 # two namespaces joined by veth (root)
  bench/mem_throughput.py --streams 1,4 --pairs 5 --seconds 5

Peers run with their best documented flags for this test: iperf2 -l 128K,
nuttcp -l 1m (its 64K default is slower), iperf3 defaults. A peer that is not
installed is reported as skipped with the Debian package that provides it.
Every server is started by this script on a free port and ended by PID; the
namespaces are removed on exit, also on failure or Ctrl-C.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yardstick
from common import end, free_port, iperf2_bps

ROOT = Path(__file__).resolve().parent.parent
NS_A, NS_B = "lrbench-a", "lrbench-b"
ADDR_A, ADDR_B = "10.203.0.1", "10.203.0.2"
PACKAGES = {"iperf2": "iperf", "iperf3": "iperf3", "nuttcp": "nuttcp"}
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """CPU seconds of a process and its reaped children, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # After the command name: utime stime cutime cstime are fields 11-14.
    return sum(int(f) for f in fields[11:15]) / TICK


class Env:
    """Where servers and clients run: loopback, or two namespaces."""

    def __init__(self, netns):
        self.netns = netns
        self.server_addr = ADDR_B if netns else "127.0.0.1"

    def wrap(self, cmd, side):
        if not self.netns:
            return cmd
        return ["ip", "netns", "exec", NS_B if side == "server" else NS_A] + cmd

    def setup(self):
        if not self.netns:
            return
        self.teardown()
        run = lambda *a: subprocess.run(a, check=True)
        run("ip", "netns", "add", NS_A)
        run("ip", "netns", "add", NS_B)
        run("ip", "link", "add", "lrb0", "netns", NS_A, "type", "veth", "peer", "lrb1", "netns", NS_B)
        for ns, dev, addr in ((NS_A, "lrb0", ADDR_A), (NS_B, "lrb1", ADDR_B)):
            run("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            run("ip", "-n", ns, "link", "set", dev, "up")
            run("ip", "-n", ns, "link", "set", "lo", "up")

    def teardown(self):
        if not self.netns:
            return
        for ns in (NS_A, NS_B):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


class Tool:
    def __init__(self, name, env, linerate, extra=()):
        self.name, self.env, self.linerate = name, env, linerate
        self.extra = list(extra)  # flags of a linerate variant
        self.port = free_port()
        self.data_port = free_port()  # nuttcp's data port; its -P port is the control one
        self.server = None

    def server_cmd(self):
        p = str(self.port)
        if self.name.startswith("linerate"):
            return [self.linerate, "serve", "--port", p]
        return {
            "iperf2": ["iperf", "-s", "-p", p],
            "iperf3": ["iperf3", "-s", "-p", p],
            "nuttcp": ["nuttcp", "-S", "--nofork", "-P", p, "-p", str(self.data_port)],
        }[self.name]

    def client_cmd(self, streams, seconds):
        host, p, s, n = self.env.server_addr, str(self.port), str(seconds), str(streams)
        if self.name.startswith("linerate"):
            return [self.linerate, "bench", f"{host}:{p}", "-P", n, "-t", s, "-i", "0", "--json", "-"] + self.extra
        if self.name == "iperf2":
            return ["iperf", "-c", host, "-p", p, "-P", n, "-t", s, "-l", "128K", "-y", "C"]
        if self.name == "iperf3":
            return ["iperf3", "-c", host, "-p", p, "-P", n, "-t", s, "-J"]
        return ["nuttcp", "-P", p, "-p", str(self.data_port), "-T", s, "-l", "1m", "-N", n, "-fparse", host]

    def start(self):
        cmd = self.server_cmd()
        self.server = subprocess.Popen(
            self.env.wrap(cmd, "server"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(0.5)
        if self.server.poll() is not None:
            raise RuntimeError(f"{self.name} server exited at once: {' '.join(cmd)}")

    def stop(self):
        if self.server:
            end(self.server)

    def measure(self, streams, seconds):
        """One run: (Gbit/s, CPU seconds per GB of client + server)."""
        client = self.client_cmd(streams, seconds)
        srv0 = proc_cpu(self.server.pid)
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            self.env.wrap(client, "client"), capture_output=True, text=True, timeout=seconds + 60
        )
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        time.sleep(0.2)  # let the server finish accounting the session
        srv = proc_cpu(self.server.pid) - srv0
        cli = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        if out.returncode != 0:
            raise RuntimeError(f"{self.name} client failed: {out.stderr.strip()[-500:]}")
        bps = parse(self.name, out.stdout, streams)
        gb = bps * seconds / 8 / 1e9
        return bps / 1e9, (cli + srv) / gb if gb > 0 else None


def parse(tool, text, streams):
    """Bits per second from a client's output."""
    if tool.startswith("linerate"):
        return json.loads(text)["summary"]["bits_per_second"]
    if tool == "iperf3":
        return json.loads(text)["end"]["sum_received"]["bits_per_second"]
    if tool == "iperf2":
        return iperf2_bps(text)
    if tool == "nuttcp":
        kv = dict(f.split("=", 1) for f in text.split() if "=" in f)
        return float(kv["rate_Mbps"]) * 1e6
    raise ValueError(tool)


def host_facts():
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {"kernel": platform.release(), "cpu": cpu, "cpus": os.cpu_count()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streams", default="1,2,4,8", help="comma-separated stream counts")
    ap.add_argument("--seconds", type=int, default=5, help="duration of every run")
    ap.add_argument("--pairs", type=int, default=3, help="rounds per stream count (>= 3)")
    ap.add_argument("--warmup", type=int, default=1, help="uncounted runs of every tool before the rounds")
    ap.add_argument("--tools", default="linerate,iperf2,iperf3,nuttcp")
    ap.add_argument("--netns", action="store_true", help="between two namespaces joined by veth (root)")
    ap.add_argument("--linerate", default=str(ROOT / "target/release/linerate"))
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                    help="also run linerate with extra flags, e.g. lowat='--rcvlowat 128K'")
    ap.add_argument("--build", action="append", default=[], metavar="NAME=BINARY",
                    help="also run another linerate build, e.g. before=/tmp/linerate-before (A/B of a change)")
    ap.add_argument("--out", help="JSON file (default bench/results/mem-<mode>.json)")
    a = ap.parse_args()

    mode = "netns-veth" if a.netns else "loopback"
    out_path = Path(a.out or ROOT / f"bench/results/mem-{mode}.json")
    env = Env(a.netns)
    tools, skipped = [], {}
    for name in a.tools.split(","):
        binary = a.linerate if name == "linerate" else {"iperf2": "iperf"}.get(name, name)
        if shutil.which(binary) or Path(binary).is_file():
            tools.append(Tool(name, env, a.linerate))
        else:
            skipped[name] = f"not installed (Debian package {PACKAGES.get(name, name)})"
    for v in a.variant:
        name, _, flags = v.partition("=")
        tools.append(Tool(f"linerate[{name}]", env, a.linerate, flags.split()))
    for b in a.build:
        name, _, binary = b.partition("=")
        if not Path(binary).is_file():
            sys.exit(f"--build {b}: no such binary")
        tools.append(Tool(f"linerate[{name}]", env, binary))
    stream_counts = [int(s) for s in a.streams.split(",")]

    def cleanup(*_):
        for t in tools:
            t.stop()
        env.teardown()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    readings = yardstick.start()
    results = {}
    try:
        env.setup()
        for t in tools:
            t.start()
        for n in stream_counts:
            runs = {t.name: [] for t in tools}
            warmup = {t.name: [] for t in tools}
            for _ in range(a.warmup):
                for t in tools:
                    gbps, _cpu = t.measure(n, a.seconds)
                    warmup[t.name].append(round(gbps, 3))
                    print(f"  P={n} warm-up {t.name:9s} {gbps:7.2f} Gbit/s", file=sys.stderr)
            for r in range(a.pairs):
                order = tools[r % len(tools):] + tools[: r % len(tools)]
                for t in order:
                    gbps, cpu = t.measure(n, a.seconds)
                    runs[t.name].append({"gbps": round(gbps, 3), "cpu_s_per_gb": cpu and round(cpu, 4)})
                    print(f"  P={n} round {r + 1} {t.name:9s} {gbps:7.2f} Gbit/s  cpu {cpu or 0:.3f} s/GB",
                          file=sys.stderr)
            row = {}
            for name, rs in runs.items():
                cpus = [x["cpu_s_per_gb"] for x in rs if x["cpu_s_per_gb"] is not None]
                row[name] = {
                    "runs": rs,
                    "median_gbps": round(statistics.median(x["gbps"] for x in rs), 3),
                    "median_cpu_s_per_gb": round(statistics.median(cpus), 4) if cpus else None,
                    "warmup_gbps": warmup[name],
                }
            peers = {k: v for k, v in row.items() if not k.startswith("linerate")}
            if "linerate" in row and peers:
                best = max(peers, key=lambda k: peers[k]["median_gbps"])
                row["best_peer"] = best
                row["ratio_vs_best_peer"] = round(row["linerate"]["median_gbps"] / peers[best]["median_gbps"], 3)
                if "iperf2" in row and row["iperf2"]["median_cpu_s_per_gb"]:
                    row["cpu_ratio_vs_iperf2"] = round(
                        row["linerate"]["median_cpu_s_per_gb"] / row["iperf2"]["median_cpu_s_per_gb"], 3)
            # Against each other build: this build's median over that one's.
            for k in [k for k in row if k.startswith("linerate[")]:
                if "linerate" in row and row[k]["median_gbps"]:
                    row[f"ratio_vs_{k}"] = round(row["linerate"]["median_gbps"] / row[k]["median_gbps"], 3)
            results[str(n)] = row
    finally:
        cleanup()
    yardstick.finish(readings)

    doc = {
        "schema": "linerate.bench/1",
        "bench": "mem_throughput",
        "mode": mode,
        "seconds": a.seconds,
        "pairs": a.pairs,
        "warmup": a.warmup,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": host_facts(),
        "yardstick": readings,
        "skipped": skipped,
        "results": results,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(doc, indent=2) + "\n")
    names = [t.name for t in tools]
    print(f"\n{mode}, {a.seconds} s runs, {a.pairs} rounds, medians in Gbit/s (CPU s/GB)")
    print("streams " + "".join(f"{n:>20}" for n in names) + "   linerate/best   cpu vs iperf2")
    for n, row in results.items():
        cells = "".join(f"{row[x]['median_gbps']:>10.2f} ({row[x]['median_cpu_s_per_gb'] or 0:.3f})" for x in names)
        print(f"{n:>7} {cells}   {row.get('ratio_vs_best_peer', '-'):>8} {row.get('best_peer', '')}"
              f"   {row.get('cpu_ratio_vs_iperf2', '-')}")
    for k, v in skipped.items():
        print(f"skipped {k}: {v}")
    print(f"written to {out_path}")


if __name__ == "__main__":
    main()
