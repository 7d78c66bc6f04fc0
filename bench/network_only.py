#!/usr/bin/env python3
"""Where the network-only mode's time goes: `linerate bench` against `send --skip-writes`
from memory and from a file, with and without block checksums.

One 4 GiB file on tmpfs (so in the page cache) is sent with `--skip-writes`
to a `linerate serve` on loopback, in rounds in which every mode runs once,
the order rotating:

  bench          linerate bench -P N -t 4 (memory to memory, no framing)
  bench-8m       the same with 8 MiB writes (-l 8M), the transfer's block: its
                 one buffer no longer fits a core's cache, as a 4 GiB file never does
  memory-nock    send --from-memory 4G --no-block-checksum (transfer framing alone)
  memory         send --from-memory 4G (adds the receiver's hash)
  file-nock      send FILE --no-block-checksum (adds reading the source from the page cache)
  file           send FILE (the issue's network-only figure: both hashes)
  floor-copy     the same file moved by bench/kernel_floor.py: pread and send,
                 recv and drop, 256 KiB at a time, nothing else (the copies
                 `send --skip-writes` makes, without framing or hashes)
  floor-zero-copy  kernel_floor.py with sendfile and MSG_TRUNC: no copy at all

Medians of Gbit/s (a transfer's bytes over its own seconds, as `send`
reports them) and of CPU seconds per GB at each end, and each mode's ratio
to `bench`. The steps between neighbours are the cost of framing, of the
receiver's checksum, of the source and of the sender's checksum. JSON and a
table. The floors bound what any tool can do with a 4 GiB file here; bench's
128 KiB buffer, reused, is not such a file.

  bench/network_only.py --rounds 5
  bench/network_only.py --streams 4 --out bench/results/network-only-p4.json
"""

import argparse
import datetime
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import end, free_port  # noqa: E402
from transfer import write_random  # noqa: E402
import kernel_floor  # noqa: E402
import yardstick  # noqa: E402

SIZE = 4 << 30


def modes(src):
    """Each mode: the linerate command and its extra flags."""
    return {
        "bench": ("bench", []),
        "bench-8m": ("bench", ["-l", "8M"]),
        "memory-nock": ("send", ["--from-memory", str(SIZE), "--no-block-checksum"]),
        "memory": ("send", ["--from-memory", str(SIZE)]),
        "file-nock": ("send", [str(src), "--no-block-checksum"]),
        "file": ("send", [str(src)]),
        "floor-copy": ("floor", [str(src), "copy"]),
        "floor-zero-copy": ("floor", [str(src), "zero-copy"]),
    }


def run_one(binary, port, streams, mode):
    """Gbit/s and CPU seconds per GB (sender, receiver) of one run."""
    command, extra = mode
    if command == "floor":
        path, how = extra
        return kernel_floor.run(path, streams, how)
    if command == "bench":
        cmd = [binary, "bench", f"127.0.0.1:{port}", "-P", str(streams), "-t", "4",
               "-i", "0", *extra, "--json", "-"]
    else:
        cmd = [binary, "send", "-q", "-P", str(streams), "--skip-writes", *extra,
               f"127.0.0.1:{port}:/x", "--json", "-"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {out.stderr.strip()[-400:]}")
    summary = json.loads(out.stdout)["summary"]
    cpu = summary["cpu_seconds_per_gb"]
    return summary["bits_per_second"] / 1e9, cpu["sender"], cpu["receiver"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--streams", type=int, default=2)
    ap.add_argument("--linerate", default="target/release/linerate")
    ap.add_argument("--out", default="bench/results/network-only.json")
    a = ap.parse_args()
    if a.rounds < 3:
        ap.error("--rounds must be at least 3")
    if not Path(a.linerate).exists():
        ap.error(f"{a.linerate} not found: build with `cargo build --release`")
    readings = yardstick.start()
    base = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="lrnet-"))
    server = None
    try:
        src = base / "one-4g"
        write_random(src, SIZE, 1)
        root = base / "root"
        root.mkdir()
        port = free_port()
        server = subprocess.Popen(
            [a.linerate, "serve", "--bind", "127.0.0.1", "--port", str(port),
             "--root", str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        table = modes(src)
        names = list(table)
        runs = {n: [] for n in names}
        for r in range(a.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                gbps, snd, rcv = run_one(a.linerate, port, a.streams, table[n])
                runs[n].append({"gbps": gbps, "sender_cpu_s_per_gb": snd,
                                "receiver_cpu_s_per_gb": rcv})
                print(f"  round {r + 1} {n:16} {gbps:6.2f} Gbit/s  cpu/GB "
                      f"sender {snd:.3f} receiver {rcv:.3f}", flush=True)
        med = {n: {k: statistics.median(x[k] for x in runs[n]) for k in runs[n][0]}
               for n in names}
        for n in names:
            med[n]["ratio_to_bench"] = med[n]["gbps"] / med["bench"]["gbps"]
            med[n]["ratio_to_floor_copy"] = med[n]["gbps"] / med["floor-copy"]["gbps"]
        result = {
            "schema": "linerate.bench/1",
            "bench": "network_only",
            "started": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"),
            "bytes": SIZE, "streams": a.streams, "rounds": a.rounds,
            "runs": runs, "medians": med,
            "yardstick": yardstick.finish(readings),
        }
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(result, indent=2) + "\n")
        print(f"\n{'mode':16} {'Gbit/s':>7} {'x bench':>8} {'x floor':>8} "
              f"{'snd s/GB':>9} {'rcv s/GB':>9}")
        for n in names:
            m = med[n]
            print(f"{n:16} {m['gbps']:7.2f} {m['ratio_to_bench']:8.2f} "
                  f"{m['ratio_to_floor_copy']:8.2f} "
                  f"{m['sender_cpu_s_per_gb']:9.3f} {m['receiver_cpu_s_per_gb']:9.3f}")
        print(f"written to {a.out}")
    finally:
        if server is not None:
            end(server)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
