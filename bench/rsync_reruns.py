#!/usr/bin/env python3
"""Reruns against rsync on random trees, for longer than CI: runs the
differential test (crates/cli/tests/end_to_end/rsync_reruns.rs) for SEEDS seeds of
ROUNDS rounds each and writes, per seed, whether every round left the same
tree as rsync and, where not, the first difference and its round.

  bench/rsync_reruns.py                         # seeds 1, 3, ... 19, 500 rounds
  bench/rsync_reruns.py --seeds 20 --rounds 1000 --out bench/results/rsync-reruns.json
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time


def run_seed(seed, rounds, timeout):
    env = dict(os.environ, LINERATE_RERUN_SEED=str(seed), LINERATE_RERUN_ROUNDS=str(rounds))
    started = time.monotonic()
    # A session of its own: on a timeout the test binary, its server and
    # any rsync it started end with cargo (killing cargo alone left them).
    proc = subprocess.Popen(
        ["cargo", "test", "--release", "-q", "-p", "linerate", "--test", "rsync_reruns"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"seed": seed, "rounds": rounds, "same": False, "why": f"timed out after {timeout} s"}
    seconds = round(time.monotonic() - started, 1)
    text = stdout + stderr
    if proc.returncode == 0:
        return {"seed": seed, "rounds": rounds, "same": True, "seconds": seconds}
    where = re.search(r"round (\d+), send (.*)", text)
    first = re.search(r"panicked at [^\n]*\n([^\n]*)", text)
    return {
        "seed": seed,
        "rounds": rounds,
        "same": False,
        "seconds": seconds,
        "failed_round": int(where.group(1)) if where else None,
        "flags": where.group(2) if where else None,
        "first_difference": first.group(1) if first else text[-2000:],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10, help="N odd seeds from 1 (default 10)")
    ap.add_argument("--rounds", type=int, default=500, help="rounds per seed (default 500)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per seed (default 1800)")
    ap.add_argument("--out", help="write the JSON here as well as to stdout")
    a = ap.parse_args()
    results = []
    # The test's generator starts from seed | 1: odd seeds are distinct.
    for seed in range(1, 2 * a.seeds, 2):
        r = run_seed(seed, a.rounds, a.timeout)
        print(json.dumps(r), file=sys.stderr)
        results.append(r)
    doc = {
        "what": "linerate send against rsync -aHS on random trees changed between runs",
        "date": time.strftime("%Y-%m-%d"),
        "seeds": a.seeds,
        "rounds": a.rounds,
        "seeds_same_throughout": sum(r["same"] for r in results),
        "results": results,
    }
    text = json.dumps(doc, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
