#!/usr/bin/env python3
"""Writes into fresh memory against writes into memory already backed.

On a VM whose balloon reports free pages to the hypervisor, memory the guest
frees is taken back and backed again at its first write. Every transfer into
tmpfs writes into fresh pages, so this bounds what any tool can reach there.
Each round deletes the file, waits, writes SIZE into a new file in DIR
(fresh pages), then writes the same SIZE over it again (backed pages); 1 MiB
pwrite()s of one random buffer, one thread. Medians and their ratio, as JSON.

  bench/fresh_memory.py                      # 2 GiB in /dev/shm, 5 rounds
  bench/fresh_memory.py --dir /mnt/ram --size-mib 4096 --idle 5

`linerate tune audit` names free page reporting when the balloon has it.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

CHUNK = 1 << 20


def write_gbps(path, size_mib, buf, create):
    flags = os.O_WRONLY | (os.O_CREAT | os.O_TRUNC if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        t0 = time.monotonic()
        for i in range(size_mib):
            os.pwrite(fd, buf, i * CHUNK)
        elapsed = time.monotonic() - t0
    finally:
        os.close(fd)
    return size_mib * CHUNK * 8 / elapsed / 1e9


def balloon_reporting():
    """The same test `linerate tune audit` makes: bit 5 of a balloon's features."""
    base = "/sys/bus/virtio/drivers/virtio_balloon"
    try:
        devices = [d for d in os.listdir(base) if d.startswith("virtio")]
    except OSError:
        return None
    for d in devices:
        try:
            with open(os.path.join(base, d, "features")) as f:
                if f.read()[5:6] == "1":
                    return True
        except OSError:
            pass
    return False


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dir", default="/dev/shm", help="a tmpfs (or any) directory")
    ap.add_argument("--size-mib", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--idle", type=float, default=3.0, help="seconds between delete and write"
    )
    ap.add_argument("--out", default="bench/results/fresh-memory.json")
    a = ap.parse_args()
    if a.rounds < 1 or a.size_mib < 1:
        sys.exit("--rounds and --size-mib must be at least 1")
    path = os.path.join(a.dir, f"linerate-fresh-{os.getpid()}")
    buf = os.urandom(CHUNK)
    fresh, backed = [], []
    try:
        for r in range(a.rounds):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            time.sleep(a.idle)
            fresh.append(write_gbps(path, a.size_mib, buf, True))
            backed.append(write_gbps(path, a.size_mib, buf, False))
            print(
                f"round {r + 1}: fresh {fresh[-1]:.1f} Gbit/s, backed {backed[-1]:.1f} Gbit/s",
                flush=True,
            )
    finally:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    doc = {
        "schema": "linerate.bench.fresh-memory/1",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {
            "kernel": platform.release(),
            "cpus": os.cpu_count(),
            "free_page_reporting": balloon_reporting(),
        },
        "dir": a.dir,
        "size_mib": a.size_mib,
        "idle_s": a.idle,
        "fresh_gbps": fresh,
        "backed_gbps": backed,
        "median_fresh_gbps": statistics.median(fresh),
        "median_backed_gbps": statistics.median(backed),
        "fresh_over_backed": statistics.median(fresh) / statistics.median(backed),
    }
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(
        f"median fresh {doc['median_fresh_gbps']:.1f} Gbit/s, backed "
        f"{doc['median_backed_gbps']:.1f}, ratio {doc['fresh_over_backed']:.2f}; written to {a.out}"
    )


if __name__ == "__main__":
    main()
