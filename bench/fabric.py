#!/usr/bin/env python3
"""The fabric emulator's forwarding rate against kernel forwarding (root).

  bench/fabric.py                     # about 3 minutes
  bench/fabric.py --rounds 5 --seconds 6

1. Capacity: a star fabric of 4 hosts with 100 Gbit/s links (so no port
   limits) made by the emulator, the same made of kernel switches with HTB
   classes (--backend htb), and 4 hosts behind a router namespace on plain
   veth (kernel forwarding); linerate bench, one pair (h1 -> h2: one port's
   forwarding rate) and two pairs at once (h1 -> h2, h3 -> h4: the total).
   Rounds rotate the labs' order; medians in Gbit/s and each fabric's share
   of the kernel's.
2. Accuracy: a leaf-spine fabric (2 leaves of 4 hosts, 1 Gbit/s links, taper
   4:1, so each leaf's uplink runs at 1 Gbit/s): one flow across the spine,
   and four at once from leaf 1 to leaf 2, as a share of the uplink's rate.

The fabric is one forwarding thread (the model keeps every port's queues in
one place); the kernel forwards in softirq on every core.
Labs are removed on exit, also on failure or Ctrl-C; servers are ended by PID.
Results: bench/results/fabric.json.
"""

import argparse, json, os, platform, signal, statistics, subprocess, sys, time
from pathlib import Path

import yardstick

ROOT = Path(__file__).resolve().parent.parent
LR = ROOT / "target" / "release" / "linerate"
LABS = {"bfab": ["--topology", "star", "--hosts", "4", "--rate", "100G"],
        "bhtb": ["--topology", "star", "--hosts", "4", "--rate", "100G", "--backend", "htb"],
        "bkern": ["--hosts", "4", "--router", "--backend", "veth"]}
TAPERED = ["--topology", "leaf-spine", "--leaves", "2", "--hosts-per-leaf", "4", "--taper", "4:1"]
started = []
labs_up = []


def sh(*args, check=True, **kw):
    return subprocess.run([str(a) for a in args], check=check, capture_output=True, text=True, **kw)


def addr(name, host):
    return sh(LR, "lab", "addr", "--name", name, host).stdout.strip()


def spawn(name, host, *cmd, out=subprocess.DEVNULL):
    p = subprocess.Popen([str(LR), "lab", "exec", "--name", name, host, "--", *map(str, cmd)],
                         stdout=out, stderr=subprocess.DEVNULL, text=True)
    started.append(p)
    return p


def up(name, args):
    sh(LR, "lab", "up", "--name", name, *args)
    labs_up.append(name)


def cleanup(*_):
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()
    for n in labs_up:
        sh(LR, "lab", "down", "--name", n, check=False)


def listening(name, host, port):
    deadline = time.time() + 20
    while time.time() < deadline:
        out = sh("ip", "netns", "exec", f"lr-{name}-{host}", "ss", "-Hltn", f"sport = :{port}")
        if out.stdout.strip():
            return
        time.sleep(0.05)
    sys.exit(f"no server on {name}/{host}:{port}")


def pairs(name, flows, seconds):
    """Benches `flows` [(from, to)] at once; their rates in Gbit/s."""
    runs = [spawn(name, a, LR, "bench", f"{addr(name, b)}:5201", "-t", seconds, "--json", "-",
                  out=subprocess.PIPE) for a, b in flows]
    rates = []
    for p in runs:
        out, _ = p.communicate(timeout=seconds + 60)
        rates.append(json.loads(out)["summary"]["bits_per_second"] / 1e9)
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fabric.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/fabric.py needs root (it builds labs)")
    if not LR.exists():
        sh("cargo", "build", "--release", cwd=ROOT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    result = {"machine": {"kernel": platform.release(), "cpus": os.cpu_count()},
              "rounds": a.rounds, "seconds": a.seconds, "capacity": {}, "accuracy": {}}
    readings = yardstick.start()
    try:
        for name, args in LABS.items():
            up(name, args)
            for h in ("h2", "h4"):
                spawn(name, h, LR, "serve", "--port", "5201")
                listening(name, h, 5201)
        runs = {}
        names = list(LABS)
        for r in range(a.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                one = pairs(name, [("h1", "h2")], a.seconds)[0]
                two = sum(pairs(name, [("h1", "h2"), ("h3", "h4")], a.seconds))
                runs.setdefault(f"{name}/one_pair", []).append(one)
                runs.setdefault(f"{name}/two_pairs", []).append(two)
                print(f"round {r + 1} {name:5}: one pair {one:6.2f}, two pairs {two:6.2f} Gbit/s", flush=True)
        for key, v in runs.items():
            result["capacity"][key] = {"runs_gbps": v, "median_gbps": statistics.median(v)}
        for shape in ("one_pair", "two_pairs"):
            kern = result["capacity"][f"bkern/{shape}"]["median_gbps"]
            for fabric, key in (("bfab", "fabric"), ("bhtb", "htb_fabric")):
                fab = result["capacity"][f"{fabric}/{shape}"]["median_gbps"]
                result["capacity"][f"{key}_share_of_kernel/{shape}"] = fab / kern
        for name in list(LABS):
            sh(LR, "lab", "down", "--name", name)
            labs_up.remove(name)
        up("btaper", TAPERED)
        for h in ("h5", "h6", "h7", "h8"):
            spawn("btaper", h, LR, "serve", "--port", "5201")
            listening("btaper", h, 5201)
        one, four = [], []
        for _ in range(a.rounds):
            one.append(pairs("btaper", [("h1", "h5")], a.seconds)[0])
            four.append(sum(pairs("btaper", [(f"h{i}", f"h{i + 4}") for i in range(1, 5)], a.seconds)))
            print(f"taper 4:1, uplink 1 Gbit/s: one flow {one[-1]:.3f}, four flows {four[-1]:.3f} Gbit/s", flush=True)
        result["accuracy"] = {
            "uplink_gbps": 1.0,
            "one_flow": {"runs_gbps": one, "median_gbps": statistics.median(one)},
            "four_flows": {"runs_gbps": four, "median_gbps": statistics.median(four)},
            "note": "goodput: 1448 of each 1500 bytes on the wire are payload, so 0.965 is the ceiling"}
    finally:
        cleanup()
    result["yardstick"] = yardstick.finish(readings)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    cap = result["capacity"]
    for shape in ("one_pair", "two_pairs"):
        print(f"{shape}: emulator fabric {cap[f'bfab/{shape}']['median_gbps']:.2f}, kernel switches "
              f"{cap[f'bhtb/{shape}']['median_gbps']:.2f}, kernel router "
              f"{cap[f'bkern/{shape}']['median_gbps']:.2f} Gbit/s")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
