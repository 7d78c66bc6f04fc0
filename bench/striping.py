#!/usr/bin/env python3
"""The striping study (seeds 000 and 004) at full length (root).

  bench/striping.py                     # about 2 minutes
  bench/striping.py -- --links 8 --rate 500M

Runs `linerate study striping`: two hosts joined by 4 links of 1 Gbit/s,
bonded (the kernel's bonding driver where present, else multipath routes
hashed by layer 3+4 at both ends); one link alone with 4 streams, the bond
with 1, 4 and 16 streams, the 4 links striped with --stripe (one stream a
link), each as a 5 s bench and as a transfer of a 1 GiB file (in the clear,
without fsync, in /dev/shm where it has room), with a yardstick reading before and after; writes the
study's document to bench/results/striping.json. The study builds and
removes its lab itself, also on failure.
"""

import argparse, json, os, subprocess, sys
from pathlib import Path

import yardstick

ROOT = Path(__file__).resolve().parent.parent
LR = ROOT / "target" / "release" / "linerate"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "striping.json"))
    ap.add_argument("extra", nargs="*", help="more flags for linerate study striping")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/striping.py needs root (the study builds a lab)")
    if not LR.exists():
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    readings = yardstick.start()
    out = subprocess.run([str(LR), "study", "striping", "--name", "bstrp", "--json", "-", *a.extra],
                         capture_output=True, text=True, timeout=1800)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        sys.exit(f"the study failed ({out.returncode})")
    doc = json.loads(out.stdout)
    doc["yardstick"] = yardstick.finish(readings)
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    f = doc["study"]["findings"]
    print(json.dumps({k: round(v, 3) for k, v in f.items()}, indent=1))
    print(doc["study"]["definitions"]["sentence"])
    print(f"written to {a.out}")


if __name__ == "__main__":
    main()
