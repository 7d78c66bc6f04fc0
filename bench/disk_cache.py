#!/usr/bin/env python3
"""Disk to disk with a cold page cache: linerate's page-cache modes side by side.

  bench/disk_cache.py                      # 4 GiB, 3 rounds, in /var/tmp
  bench/disk_cache.py --size 1G --rounds 5 --dir /scratch

One file is written once to a directory on a disk (not tmpfs). Every run
first flushes it and drops it from the page cache, removes the last
destination, then runs `linerate send` to a one-shot `linerate recv` in the
same directory with one of the modes:

  buffered    the default: sender maps the page cache, receiver writes through it
  direct      --direct: O_DIRECT reads and writes of whole pages
  evict       --evict: the default, each block dropped from the cache when done

Rounds alternate the modes, rotating their order. Per run: Gbit/s over the
wall time of `linerate send`, and over that time plus a `sync` of the
destination (data on disk: a buffered receiver is done before its data is),
and how much of the source and destination the page cache holds afterwards.
Medians, JSON (bench/results/disk-cache.json) and a table.

Everything is removed on exit; the receiver is ended by PID.
"""

import argparse, json, os, platform, shutil, statistics, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LR = ROOT / "target" / "release" / "linerate"
MODES = {"buffered": [], "direct": ["--direct"], "evict": ["--evict"]}


def size_arg(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * units[s[-1].upper()]) if s[-1].upper() in units else int(s)


def resident(path):
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def drop_cache(path):
    subprocess.run(["sync", str(path)], check=True)
    subprocess.run(["dd", f"if={path}", "iflag=nocache", "count=0", "status=none"], check=True)


def one_run(src, dst, flags, size):
    shutil.rmtree(dst, ignore_errors=True)
    drop_cache(src)
    recv = subprocess.Popen([str(LR), "recv", str(dst), "--bind", "127.0.0.1", "--foreground"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = recv.stdout.readline().strip()
        t0 = time.monotonic()
        out = subprocess.run([str(LR), "send", "-q", *flags, str(src), url],
                             capture_output=True, text=True, timeout=600)
        t1 = time.monotonic()
        if out.returncode != 0:
            raise RuntimeError(f"send {flags}: {out.stderr.strip()}")
        recv.wait(timeout=30)
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
    target = dst / src.name
    subprocess.run(["sync", str(target)], check=True)
    t2 = time.monotonic()
    return {
        "gbps": size * 8 / (t1 - t0) / 1e9,
        "gbps_on_disk": size * 8 / (t2 - t0) / 1e9,
        "source_cached_bytes": resident(src),
        "destination_cached_bytes": resident(target),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=size_arg, default=4 << 30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "disk-cache.json"))
    a = ap.parse_args()
    fs = subprocess.run(["stat", "-f", "-c", "%T", a.dir], capture_output=True, text=True).stdout.strip()
    if fs in ("tmpfs", "ramfs"):
        sys.exit(f"{a.dir} is {fs}: give a directory on a disk with --dir")
    if not LR.exists():
        sys.exit(f"build first: cargo build --release ({LR} missing)")
    work = Path(a.dir) / f"linerate-disk-bench-{os.getpid()}"
    work.mkdir(parents=True)
    try:
        src = work / "src.bin"
        with open(src, "wb") as f:
            chunk = bytearray(os.urandom(16 << 20))
            left, i = a.size, 0
            while left > 0:
                chunk[:8] = i.to_bytes(8, "little")
                n = min(left, len(chunk))
                f.write(chunk[:n])
                left -= n
                i += 1
        runs = {m: [] for m in MODES}
        names = list(MODES)
        for r in range(a.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for m in order:
                res = one_run(src, work / "dst", MODES[m], a.size)
                runs[m].append(res)
                print(f"round {r + 1} {m:9} {res['gbps']:6.2f} Gbit/s, {res['gbps_on_disk']:6.2f} to disk, "
                      f"cached after: source {res['source_cached_bytes'] >> 20} MiB, "
                      f"destination {res['destination_cached_bytes'] >> 20} MiB", flush=True)
        summary = {}
        for m, rs in runs.items():
            summary[m] = {k: statistics.median(x[k] for x in rs)
                          for k in ("gbps", "gbps_on_disk", "source_cached_bytes", "destination_cached_bytes")}
        result = {
            "machine": {"kernel": platform.release(), "cpus": os.cpu_count(), "filesystem": fs},
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "size_bytes": a.size, "rounds": a.rounds, "runs": runs, "medians": summary,
        }
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(result, indent=2))
        print(f"\n{a.size >> 20} MiB, {fs}, cold source, medians of {a.rounds}:")
        print("| mode | Gbit/s (send) | Gbit/s (until on disk) | source cached after | destination cached after |")
        print("|---|---|---|---|---|")
        for m, s in summary.items():
            print(f"| {m} | {s['gbps']:.2f} | {s['gbps_on_disk']:.2f} | {int(s['source_cached_bytes']) >> 20} MiB "
                  f"| {int(s['destination_cached_bytes']) >> 20} MiB |")
        print(f"written to {a.out}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
