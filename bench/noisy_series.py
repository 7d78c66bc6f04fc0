#!/usr/bin/env python3
"""Real noisy series for the archive's regression rule, from bench/results.

Every benchmark document here that lists each run's rate ("runs": [{"gbps":
...}]) contributes its runs, in the order they ran, to the series of its
benchmark (the file's name without its date) and configuration (its place
in the document: streams or data set, and tool); the documents are taken
oldest first by their "started" time.
A series spans weeks of this VM, which drifts by 2x between hours, and of
linerate's own changes: the rule's test replays each as it was and with a
step or a lone outlier added at its end (crates/archive/tests/noisy.rs).

  bench/noisy_series.py > crates/archive/tests/fixtures/noisy_series.json
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def runs_in(doc, path=()):
    """(configuration, [rates]) for every "runs" list of rates in doc."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from runs_in(v, path + (k,))
    elif isinstance(doc, list) and path and path[-1] == "runs" and len(path) >= 3:
        rates = [r.get("gbps") for r in doc if isinstance(r, dict)]
        rates = [r for r in rates if isinstance(r, (int, float)) and r > 0]
        if len(rates) >= 3:
            yield "/".join(path[:-1]), rates


def main():
    docs = []
    for f in glob.glob(os.path.join(HERE, "results", "*.json")):
        try:
            d = json.load(open(f))
        except (OSError, ValueError):
            continue
        if isinstance(d, dict):
            docs.append((str(d.get("started", "")), os.path.basename(f), d))
    series = {}
    for started, name, d in sorted(docs, key=lambda x: (x[0], x[1])):
        # One benchmark over days: its file's name without the date.
        bench = re.sub(r"-20[0-9]{2}-[0-9]{2}-[0-9]{2}[a-z]?$", "", name[: -len(".json")])
        for config, rates in runs_in(d):
            series.setdefault(f"{bench}/{config}", []).extend(rates)
    out = {k: v for k, v in sorted(series.items()) if len(v) >= 15}
    json.dump({"source": "bench/results (bench/noisy_series.py)", "unit": "Gbit/s",
               "series": out}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
