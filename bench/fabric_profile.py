#!/usr/bin/env python3
"""Where the fabric emulator's forwarding thread spends its time (root).

  bench/fabric_profile.py                # about 40 seconds

Brings up the interference study's fabric (leaf-spine, 2 leaves of 4 hosts,
1 Gbit/s links, taper 4:1) on the emulator, runs the study's bandwidth job
(halo3d, 128 cells a side, no compute, cubic) on h4, h3, h6, h7 for 20 s,
and while it runs records the emulator process with `perf record -g` for
`--seconds` and reads its CPU time from /proc. Writes the share of each
symbol (self time) and of each call chain's top kernel entry point to
bench/results/fabric_profile.json, and perf's own report beside it.
The lab is removed on exit, also on failure or Ctrl-C.
"""

import argparse, json, os, re, signal, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LR = ROOT / "target" / "release" / "linerate"
LAB = "bprof"
FABRIC = ["--topology", "leaf-spine", "--leaves", "2", "--hosts-per-leaf", "4", "--taper", "4:1",
          "--queue", "1M"]
started = []


def sh(*args, check=True, **kw):
    return subprocess.run([str(a) for a in args], check=check, capture_output=True, text=True, **kw)


def cleanup(*_):
    for p in started:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    sh(LR, "lab", "down", "--name", LAB, check=False)


def status():
    return json.loads(sh(LR, "lab", "status", "--name", LAB, "--json").stdout)[0]


def uplink_bytes():
    ports = status()["counters"]["ports"]
    return sum(c["sent_bytes"] for p in ports if p["port"] == "leaf1>spine1" for c in p["classes"])


def cpu_seconds(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fabric_profile.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/fabric_profile.py needs root (it builds a lab and runs perf)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    data = Path(a.out).with_suffix(".perf.data")
    try:
        sh(LR, "lab", "up", "--name", LAB, *FABRIC)
        pid = status()["lab"]["emulator"]["pid"]
        job = subprocess.Popen([str(LR), "job", "halo3d", "--lab", LAB, "--lab-hosts", "h4,h3,h6,h7",
                                "-n", "100000", "--cells", "128", "--compute", "0", "--limit", "20s",
                                "--cc", "cubic", "--json", "/dev/null"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(job)
        deadline = time.time() + 20
        while uplink_bytes() < 50_000_000:
            if time.time() > deadline or job.poll() is not None:
                sys.exit("the halo job never loaded the uplink")
            time.sleep(0.2)
        cpu0, up0, t0 = cpu_seconds(pid), uplink_bytes(), time.time()
        sh("perf", "record", "-F", "999", "-g", "-p", pid, "-o", data, "--", "sleep", a.seconds)
        cpu1, up1, t1 = cpu_seconds(pid), uplink_bytes(), time.time()
        report = sh("perf", "report", "-i", data, "--no-children", "--sort", "sym", "--stdio",
                    "--percent-limit", "0.5", "-g", "none").stdout
        inclusive = sh("perf", "report", "-i", data, "--children", "--sort", "sym", "--stdio",
                       "--percent-limit", "0.5", "-g", "none").stdout
    finally:
        cleanup()
    symbols = [{"percent": float(m.group(1)), "kernel": m.group(2) == "k", "symbol": m.group(3).strip()}
               for m in re.finditer(r"^\s+([\d.]+)%\s+\[([.k])\]\s+(.+)$", report, re.M)]
    # Time under each entry point, callees included: writing a frame into a
    # host's TUN device runs that host's receive path (IP, TCP, the wakeup of
    # its reader) in this thread; reading takes the sender's frame; poll waits.
    entry = {}
    for m in re.finditer(r"^\s+([\d.]+)%\s+[\d.]+%\s+\[[.k]\]\s+(.+)$", inclusive, re.M):
        name = m.group(2).strip()
        for key, sym in (("write_to_host_tun", "tun_get_user"), ("read_from_host_tun", "tun_do_read"),
                         ("poll", "do_sys_poll"), ("host_tcp_receive", "tcp_v4_rcv"),
                         ("fabric_model", "linerate_emulator::fabric::sim::Sim<T>::advance")):
            if name == sym:
                entry[key] = float(m.group(1))
    result = {
        "fabric": FABRIC, "seconds": round(t1 - t0, 2),
        "emulator_cores": round((cpu1 - cpu0) / (t1 - t0), 3),
        "uplink_gbps": round((up1 - up0) * 8 / (t1 - t0) / 1e9, 3),
        "kernel_percent": round(sum(s["percent"] for s in symbols if s["kernel"]), 1),
        "inclusive_percent": entry,
        "symbols": symbols,
    }
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    Path(a.out).with_suffix(".txt").write_text(report)
    data.unlink(missing_ok=True)
    print(f"emulator used {result['emulator_cores']} of a core, {result['kernel_percent']} % of its "
          f"samples in the kernel; leaf1's uplink carried {result['uplink_gbps']} Gbit/s")
    for s in symbols[:12]:
        print(f"{s['percent']:6.2f}%  {s['symbol']}")
    print("callees included:", ", ".join(f"{k} {v:.1f} %" for k, v in entry.items()))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
