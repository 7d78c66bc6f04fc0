#!/usr/bin/env python3
"""The quick interference study at several link rates, alternating (root).

  bench/interference_rates.py                        # 1G and 400M, 3 rounds
  bench/interference_rates.py --rates 1G,400M,250M --rounds 2

Each round runs `linerate study interference --quick --rate R` once for
every rate, the order rotating, and keeps each run's slowdowns of the
latency job (no classes, ETS, strict priority, PFC), its time alone, and
the host's busy share over the run (/proc/stat). Medians per rate and a
yardstick reading before and after go to JSON. It shows at which rate the
fabric's ports, not the emulator's one forwarding thread, set the halo's
pace on this machine today: where the thread is the limit, the ports never
queue and the classes have nothing to order.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import yardstick  # noqa: E402
from loaded_series import host_ticks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LR = ROOT / "target" / "release" / "linerate"
CONFIGS = ["no-classes", "ets", "strict", "pfc"]


def one_study(rate):
    """One quick study at `rate`: its findings and the host's busy share."""
    busy0, total0 = host_ticks()
    t0 = time.monotonic()
    out = subprocess.run(
        [str(LR), "study", "interference", "--quick", "--rate", rate,
         "--name", "bintr", "--json", "-"],
        capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - t0
    busy1, total1 = host_ticks()
    if out.returncode != 0:
        sys.exit(f"the study at {rate} failed ({out.returncode}): {out.stderr[-2000:]}")
    f = json.loads(out.stdout)["study"]["findings"]
    run = {
        "rate": rate,
        "seconds": round(seconds, 1),
        "host_busy": round((busy1 - busy0) / max(total1 - total0, 1), 3),
        "latency_alone_s": f.get("latency_job_seconds_latency-alone"),
    }
    for c in CONFIGS:
        run[f"slowdown_{c}"] = f.get(f"latency_slowdown_{c}")
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rates", default="1G,400M", help="link rates, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "interference-rates.json"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/interference_rates.py needs root (the study builds labs)")
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    if not LR.exists():
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    rates = [r.strip() for r in a.rates.split(",") if r.strip()]
    readings = yardstick.start()
    runs = []
    for i in range(a.rounds):
        order = rates[i % len(rates):] + rates[:i % len(rates)]
        for rate in order:
            run = one_study(rate)
            run["round"] = i + 1
            runs.append(run)
            print(json.dumps(run), flush=True)
    medians = {}
    for rate in rates:
        mine = [r for r in runs if r["rate"] == rate]
        medians[rate] = {
            k: round(statistics.median(r[k] for r in mine if r[k] is not None), 3)
            for k in ["latency_alone_s", "host_busy", *[f"slowdown_{c}" for c in CONFIGS]]
            if any(r[k] is not None for r in mine)
        }
    doc = {
        "kind": "interference-rates",
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.strip(),
        "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
        "rounds": a.rounds,
        "runs": runs,
        "medians": medians,
        "yardstick": yardstick.finish(readings),
    }
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(medians, indent=1))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
