#!/usr/bin/env python3
"""How fast this host is right now: two quick measurements that every
benchmark script records before and after its rounds, so figures taken on
different days can be told apart from changes in linerate.

  loopback_gbps    iperf2, 1 stream, 128 KiB writes, 3 s on loopback: the
                   cores and the socket copies (None without iperf)
  fresh_write_gbps 512 MiB written into new tmpfs pages after 3 s idle, and
  backed_write_gbps the same pages written again: a VM whose balloon reports
                   free pages backs every fresh page again at its first write

On the VM this project is developed on, both swing by 2x or more between
hours with nothing else running (loopback 10-11 Gbit/s on slow days against
21-27 on fast ones), and every absolute figure in bench/results moves with
them. Ratios measured in the same alternating rounds do not need it.

  bench/yardstick.py            # measure and print, as JSON
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import end, free_port, iperf2_bps  # noqa: E402
from fresh_memory import CHUNK, balloon_reporting, write_gbps  # noqa: E402

WRITE_MIB = 512
IDLE_S = 3.0


def loopback_gbps(seconds=3):
    """iperf2 on loopback at one stream, or None where iperf is missing."""
    if not shutil.which("iperf"):
        return None
    port = str(free_port())
    server = subprocess.Popen(
        ["iperf", "-s", "-p", port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        time.sleep(0.5)
        out = subprocess.run(
            ["iperf", "-c", "127.0.0.1", "-p", port, "-t", str(seconds), "-l", "128K", "-y", "C"],
            capture_output=True, text=True, timeout=seconds + 30,
        )
        if out.returncode != 0:
            return None
        return round(iperf2_bps(out.stdout) / 1e9, 2)
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None
    finally:
        end(server)


def memory_write_gbps(directory="/dev/shm"):
    """(fresh, backed) Gbit/s of 1 MiB writes into a new file, then over it."""
    path = os.path.join(directory, f"linerate-yardstick-{os.getpid()}")
    buf = os.urandom(CHUNK)
    try:
        time.sleep(IDLE_S)
        fresh = write_gbps(path, WRITE_MIB, buf, True)
        backed = write_gbps(path, WRITE_MIB, buf, False)
        return round(fresh, 2), round(backed, 2)
    except OSError:
        return None, None
    finally:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def measure():
    """One reading, about 8 s."""
    fresh, backed = memory_write_gbps()
    return {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "loopback_gbps": loopback_gbps(),
        "fresh_write_gbps": fresh,
        "backed_write_gbps": backed,
        "free_page_reporting": balloon_reporting(),
    }


def start():
    """A reading before a script's rounds, printed to stderr."""
    before = measure()
    print(line(before), file=sys.stderr, flush=True)
    return {"before": before}


def finish(readings):
    """Adds a reading after the rounds; returns what goes in the JSON."""
    readings["after"] = measure()
    print(line(readings["after"]), file=sys.stderr, flush=True)
    return readings


def line(reading):
    """One line for a script's log."""
    def f(v):
        return "n/a" if v is None else f"{v:.1f}"
    return (f"yardstick: loopback iperf2 {f(reading['loopback_gbps'])} Gbit/s, tmpfs writes "
            f"fresh {f(reading['fresh_write_gbps'])} / backed {f(reading['backed_write_gbps'])} Gbit/s")


if __name__ == "__main__":
    r = measure()
    print(line(r), file=sys.stderr)
    print(json.dumps(r, indent=1))
