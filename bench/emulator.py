#!/usr/bin/env python3
"""The lab emulator's own capacity and accuracy (root).

  bench/emulator.py                    # about 6 minutes
  bench/emulator.py --rounds 5 --seconds 6

1. Forwarding at 0 ms added delay: h1 -> h2 through the emulator, and for
   reference through a router namespace with kernel forwarding (plain veth),
   with linerate bench and iperf2 as traffic, 1/2/4 streams, after one
   uncounted warm-up run per lab. Rounds alternate the labs and the tools;
   medians in Gbit/s.
2. 44 ms RTT behind a 10 Gbit/s rate limit, one stream, buffers sized to the
   BDP in the lab hosts (net.ipv4.tcp_rmem/tcp_wmem max = 2 x BDP), cubic and
   bbr; medians of the rate after the first 5 s, as a share of the limit.
3. Added-delay accuracy under load: ping every 50 ms while two bulk streams
   run, at 5 and 44 ms configured RTT, no rate limit, the host's default TCP
   buffers; median and 10th/90th percentiles. (With no rate limit the
   emulator's own forwarding is the bottleneck; senders with windows far
   larger than that rate x RTT queue in front of it, as in front of any
   bottleneck, and the RTT grows by that queue.)

`--parts 3` runs only the third part and merges it into the existing results.

Labs are removed on exit, also on failure or Ctrl-C; servers are ended by PID.
Results: bench/results/emulator.json.
"""

import argparse, json, os, platform, shutil, signal, statistics, subprocess, sys, time
from pathlib import Path

import yardstick

ROOT = Path(__file__).resolve().parent.parent
LR = ROOT / "target" / "release" / "linerate"
LABS = ["bemu", "bveth"]
started = []


def sh(*args, check=True, **kw):
    return subprocess.run([str(a) for a in args], check=check, capture_output=True, text=True, **kw)


def lab(*args):
    return sh(LR, "lab", *args)


def addr(name):
    return lab("addr", "--name", name, "h2").stdout.strip()


def spawn(name, host, *cmd):
    p = subprocess.Popen([str(LR), "lab", "exec", "--name", name, host, "--", *map(str, cmd)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started.append(p)
    return p


def cleanup(*_):
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()
    for n in LABS:
        sh(LR, "lab", "down", "--name", n, check=False)


def bench_linerate(name, streams, seconds, extra=()):
    out = sh(LR, "lab", "exec", "--name", name, "h1", "--", LR, "bench", f"{addr(name)}:5201",
             "-t", seconds, "-P", streams, "--json", "-", *extra)
    return json.loads(out.stdout)


def bench_iperf2(name, streams, seconds):
    out = sh(LR, "lab", "exec", "--name", name, "h1", "--", "iperf", "-c", addr(name), "-p", "5001",
             "-t", seconds, "-P", streams, "-l", "128K", "-f", "b", "-y", "C")
    rows = [l.split(",") for l in out.stdout.strip().splitlines() if l.count(",") >= 8]
    # The sum row has stream id -1; without one (a single stream) add the rows up.
    sums = [r for r in rows if r[5] == "-1"]
    return float(sums[-1][8]) if sums else sum(float(r[8]) for r in rows)


def set_buffers(name, maximum):
    for h in ("h1", "h2"):
        lab("exec", "--name", name, h, "--", "sysctl", "-qw",
            f"net.ipv4.tcp_rmem=4096 131072 {maximum}", f"net.ipv4.tcp_wmem=4096 16384 {maximum}")


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="uncounted runs through each lab before part 1")
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--streams", default="1,2,4")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "emulator.json"))
    ap.add_argument("--parts", default="1,2,3")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/emulator.py needs root (it builds labs)")
    if not LR.exists():
        sh("cargo", "build", "--release", cwd=ROOT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    have_iperf = shutil.which("iperf") is not None
    streams = [int(s) for s in a.streams.split(",")]
    parts = {int(x) for x in a.parts.split(",")}
    previous = json.loads(Path(a.out).read_text()) if Path(a.out).exists() and parts != {1, 2, 3} else {}
    result = previous or {"machine": {"kernel": platform.release(), "cpus": os.cpu_count()}, "rounds": a.rounds,
              "seconds": a.seconds, "forwarding": {}, "rate_limited_44ms": {}, "delay_under_load": {}}
    readings = yardstick.start()
    try:
        lab("up", "--name", "bemu", "--backend", "emulator")
        lab("up", "--name", "bveth", "--backend", "veth", "--router")
        for n in LABS:
            spawn(n, "h2", LR, "serve", "--port", "5201")
            if have_iperf:
                spawn(n, "h2", "iperf", "-s", "-p", "5001")
        time.sleep(0.5)
        # 1. Forwarding capacity at 0 ms. One uncounted run through each lab
        # first: the first traffic after idle pays for memory this VM hands
        # back slowly, and would land on whichever run comes first.
        runs = {}
        for n in LABS if 1 in parts else ():
            for _ in range(a.warmup):
                bps = bench_linerate(n, max(streams), a.seconds)["summary"]["bits_per_second"]
                print(f"warm-up {n:6} linerate P{max(streams)}: {bps / 1e9:6.2f} Gbit/s", flush=True)
        for r in range(a.rounds if 1 in parts else 0):
            order = LABS if r % 2 == 0 else LABS[::-1]
            for n in order:
                for p in streams:
                    tools = ["linerate", "iperf2"] if have_iperf else ["linerate"]
                    for tool in (tools if r % 2 == 0 else tools[::-1]):
                        if tool == "linerate":
                            bps = bench_linerate(n, p, a.seconds)["summary"]["bits_per_second"]
                        else:
                            bps = bench_iperf2(n, p, a.seconds)
                        runs.setdefault(f"{n}/{tool}/P{p}", []).append(bps / 1e9)
                        print(f"round {r + 1} {n:6} {tool:8} P{p}: {bps / 1e9:6.2f} Gbit/s", flush=True)
        for key, v in runs.items():
            result["forwarding"][key] = {"runs_gbps": v, "median_gbps": statistics.median(v)}
        # 2. 44 ms, 10 Gbit/s limit, BDP buffers.
        lab("set", "--name", "bemu", "--rtt", "44ms", "--rate", "10gbit")
        set_buffers("bemu", 2 * 55_000_000)
        for cc in (("cubic", "bbr") if 2 in parts else ()):
            v = []
            for r in range(a.rounds):
                doc = bench_linerate("bemu", 1, 15, ("--omit", "5", "--cc", cc))
                v.append(doc["summary"]["bits_per_second"] / 1e9)
                print(f"44 ms, 10 Gbit/s limit, {cc}: {v[-1]:.2f} Gbit/s", flush=True)
            result["rate_limited_44ms"][cc] = {"runs_gbps": v, "median_gbps": statistics.median(v),
                                               "share_of_limit": statistics.median(v) / 10.0}
        # 3. Delay accuracy under load.
        lab("set", "--name", "bemu", "--rate", "none")
        with open("/proc/sys/net/ipv4/tcp_rmem") as f:
            rmem = f.read().split()
        with open("/proc/sys/net/ipv4/tcp_wmem") as f:
            wmem = f.read().split()
        for h in ("h1", "h2"):
            lab("exec", "--name", "bemu", h, "--", "sysctl", "-qw",
                f"net.ipv4.tcp_rmem={' '.join(rmem)}", f"net.ipv4.tcp_wmem={' '.join(wmem)}")
        for rtt in ((5, 44) if 3 in parts else ()):
            lab("set", "--name", "bemu", "--rtt", f"{rtt}ms")
            bulk = spawn("bemu", "h1", LR, "bench", f"{addr('bemu')}:5201", "-t", "9", "-P", "2")
            time.sleep(2)
            out = sh(LR, "lab", "exec", "--name", "bemu", "h1", "--", "ping", "-c", "100", "-i", "0.05", addr("bemu"))
            bulk.wait()
            rtts = [float(l.split("time=")[1].split()[0]) for l in out.stdout.splitlines() if "time=" in l]
            result["delay_under_load"][f"{rtt}ms"] = {
                "configured_ms": rtt, "replies": len(rtts), "median_ms": statistics.median(rtts),
                "p10_ms": pct(rtts, 0.1), "p90_ms": pct(rtts, 0.9),
                "median_error_ms": statistics.median(rtts) - rtt,
                "tcp_rmem": " ".join(rmem), "tcp_wmem": " ".join(wmem)}
            print(f"RTT {rtt} ms under load: median {statistics.median(rtts):.3f} ms", flush=True)
    finally:
        cleanup()
    # Parts run on different days keep the reading of their own run.
    result.setdefault("yardstick", {})[f"parts {a.parts}"] = yardstick.finish(readings)
    Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nforwarding at 0 ms, medians (Gbit/s):")
    for key, v in sorted(result["forwarding"].items()):
        print(f"  {key:24} {v['median_gbps']:6.2f}")
    for cc, v in result["rate_limited_44ms"].items():
        print(f"44 ms behind 10 Gbit/s, {cc}: {v['median_gbps']:.2f} Gbit/s = {100 * v['share_of_limit']:.0f} % of the limit")
    for k, v in result["delay_under_load"].items():
        print(f"delay {k}: median {v['median_ms']:.3f} ms (error {v['median_error_ms']:+.3f} ms)")
    print(f"written to {a.out}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        cleanup()
        sys.exit(130)
