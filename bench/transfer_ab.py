#!/usr/bin/env python3
"""Two linerate builds or settings side by side on one transfer data set: A/B of a change.

Rounds in which each build runs once, the order alternating, after one
uncounted warm-up round; medians of files/s and Gbit/s over the wall time
of `linerate send`, and the ratio B/A. The data sets are those of
bench/transfer.py, generated on tmpfs; every destination is a fresh tmpfs
directory, removed after its run. Written as JSON and printed.

  bench/transfer_ab.py --a /tmp/linerate-before --b target/release/linerate
  bench/transfer_ab.py --a OLD --b NEW --set many-40m --rounds 5
  bench/transfer_ab.py --a target/release/linerate --b target/release/linerate \
      --b-flags="--block 16M" --set one-4g --skip-writes
  bench/transfer_ab.py --a target/release/linerate --b target/release/linerate \
      --a-flags=--no-fsync --set one-4g --dest-base /tmp     # the cost of syncing, on ext4
  bench/transfer_ab.py --a target/release/linerate --b target/release/linerate \
      --a-flags=--no-encrypt --set one-4g --skip-writes      # the cost of encryption
"""

import argparse
import datetime
import json
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transfer import Linerate, make_sets, tree_stats  # noqa: E402
import yardstick  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="linerate binary A (before)")
    ap.add_argument("--b", required=True, help="linerate binary B (after)")
    ap.add_argument("--set", default="small-4k",
                    choices=["one-4g", "many-40m", "small-4k", "mixed"])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--streams", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--a-flags", default="", help="extra `send` flags for A (one string)")
    ap.add_argument("--b-flags", default="", help="extra `send` flags for B (one string)")
    ap.add_argument("--skip-writes", action="store_true", help="both sides with --skip-writes")
    ap.add_argument("--dest-base", default=None,
                    help="folder the destinations go in (default: tmpfs, beside the source)")
    ap.add_argument("--out", default="bench/results/transfer-ab.json")
    args = ap.parse_args()
    if args.rounds < 3:
        ap.error("--rounds must be at least 3")
    readings = yardstick.start()
    base = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="lrab-"))
    try:
        src = make_sets(base / "src", args.scale, {args.set})[args.set]
        files, size = tree_stats(src)
        bins = {"a": args.a, "b": args.b}
        flags = {"a": shlex.split(args.a_flags), "b": shlex.split(args.b_flags)}
        walls = {"a": [], "b": []}
        for r in range(args.rounds + 1):
            order = ["a", "b"] if r % 2 == 0 else ["b", "a"]
            for k in order:
                dst = Path(args.dest_base or base) / f"lrab-dst-{k}-{r}"
                dst.mkdir()
                try:
                    wall = Linerate(bins[k], args.streams, flags[k]).run(
                        src, dst, skip_writes=args.skip_writes)
                finally:
                    shutil.rmtree(dst, ignore_errors=True)
                label = "warm-up" if r == 0 else f"round {r}"
                print(f"  {label} {k}  {files / wall:9.0f} files/s  "
                      f"{size * 8 / wall / 1e9:6.2f} Gbit/s", flush=True)
                if r > 0:
                    walls[k].append(wall)
        result = {
            "schema": "linerate.bench/1",
            "bench": "transfer_ab",
            "started": datetime.datetime.now(datetime.timezone.utc)
            .strftime("%Y-%m-%dT%H:%M:%SZ"),
            "set": args.set, "files": files, "bytes": size,
            "streams": args.streams, "rounds": args.rounds,
            "binaries": bins, "flags": flags, "skip_writes": args.skip_writes,
            "dest_base": args.dest_base or "tmpfs",
            "walls": walls,
            "yardstick": yardstick.finish(readings),
        }
        for k in bins:
            w = statistics.median(walls[k])
            result[k] = {"files_per_second": files / w,
                         "gbps": size * 8 / w / 1e9, "wall_median": w}
        result["ratio_b_over_a"] = result["a"]["wall_median"] / result["b"]["wall_median"]
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
        print(f"{args.set}: A {result['a']['files_per_second']:.0f} files/s "
              f"({result['a']['gbps']:.2f} Gbit/s), B {result['b']['files_per_second']:.0f} "
              f"files/s ({result['b']['gbps']:.2f} Gbit/s), B/A {result['ratio_b_over_a']:.3f}")
        print(f"written to {args.out}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
