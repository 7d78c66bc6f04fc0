#!/usr/bin/env python3
"""The interference study of seed 002 at full length (root).

  bench/interference.py                 # about 5 minutes

Runs `linerate study interference` (leaf-spine, 2 leaves of 4 hosts,
1 Gbit/s links, taper 4:1, 1 MiB per port and class, the bandwidth job
10 s ahead of the latency job, 5,000 all-to-all iterations of 4 KiB,
cubic) with a yardstick reading before and after, and writes the study's
document to bench/results/interference.json. The study builds and removes
its labs itself, also on failure.
"""

import argparse, json, os, subprocess, sys
from pathlib import Path

import yardstick

ROOT = Path(__file__).resolve().parent.parent
LR = ROOT / "target" / "release" / "linerate"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "interference.json"))
    ap.add_argument("extra", nargs="*", help="more flags for linerate study interference")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/interference.py needs root (the study builds labs)")
    if not LR.exists():
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    readings = yardstick.start()
    out = subprocess.run([str(LR), "study", "interference", "--name", "bintf", "--json", "-", *a.extra],
                         capture_output=True, text=True, timeout=3600)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        sys.exit(f"the study failed ({out.returncode})")
    doc = json.loads(out.stdout)
    doc["yardstick"] = yardstick.finish(readings)
    # Compact: every rank's every iteration is in it (tens of thousands of numbers).
    Path(a.out).write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(doc["study"]["definitions"]["sentence"])
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
