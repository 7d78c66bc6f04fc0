#!/usr/bin/env python3
"""What the archive costs: recording one result, and history over a large
archive (docs/archive.md#cost).

Recording: `linerate archive import RESULT` into a scratch archive, against
`linerate --version` (the same process's start and exit, nothing else), the
two alternating, --rounds each; the cost of recording is the difference of
the medians. A run records in its own process the same way, once, at its
end (open, deliver the spool, one transaction, judge the series).

History: an archive of --rows results over --series series (the schema made
by linerate itself; the rows written here with Python's sqlite3, each with a
compressed copy of a real result), then `linerate history --json -` timed
--rounds times; the median.

  bench/archive.py                       # 20 rounds, 100,000 rows
  bench/archive.py --linerate target/release/linerate --out bench/results/archive.json

Writes a JSON document (--out, default stdout).
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(argv, env):
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def a_result(linerate, env, work):
    """A real bench result on loopback, recorded nowhere."""
    server = subprocess.Popen([linerate, "serve", "--bind", "127.0.0.1", "--port", "0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        port = None
        for line in server.stderr:
            if "listening on" in line:
                port = line.rsplit(":", 1)[1].split()[0]
                break
        if port is None:
            sys.exit("linerate serve did not say where it listens")
        path = os.path.join(work, "result.json")
        subprocess.run([linerate, "bench", f"127.0.0.1:{port}", "-t", "1", "--no-archive",
                        "--json", path], env=env, stdout=subprocess.DEVNULL, check=True)
        return path
    finally:
        server.terminate()
        server.wait(5)


def recording(linerate, env, work, result, rounds):
    archive = os.path.join(work, "record.db")
    record, start = [], []
    # The first import makes the archive; not counted.
    subprocess.run([linerate, "archive", "import", result, "--archive", archive], env=env,
                   stdout=subprocess.DEVNULL, check=True)
    for _ in range(rounds):
        record.append(timed([linerate, "archive", "import", result, "--archive", archive], env))
        start.append(timed([linerate, "--version"], env))
    r, s = statistics.median(record), statistics.median(start)
    return {"import_median_ms": round(r * 1e3, 2), "process_median_ms": round(s * 1e3, 2),
            "recording_ms": round((r - s) * 1e3, 2), "rounds": rounds}


def big_archive(linerate, env, work, result, rows, series):
    archive = os.path.join(work, "big.db")
    subprocess.run([linerate, "archive", "import", result, "--archive", archive], env=env,
                   stdout=subprocess.DEVNULL, check=True)
    doc = open(result, "rb").read()
    packed = zlib.compress(doc, 1)
    db = sqlite3.connect(archive)
    key = json.loads(db.execute("SELECT key FROM series").fetchone()[0])
    now = time.time()
    with db:
        for s in range(series):
            k = dict(key, source=f"dtn{s % 40}", destination=f"dtn{s // 40 + 40}")
            sid = f"{s:016x}"
            db.execute("INSERT INTO series (id, key, tool, kind, source, destination, path, unit)"
                       " VALUES (?, ?, 'linerate', 'bench', ?, ?, ?, 'bits_per_second')",
                       (sid, json.dumps(k), k["source"], k["destination"], k["path"]))
            per = rows // series
            db.executemany(
                "INSERT INTO results (series, started_at, tool_version, value, verdict,"
                " interrupted, recorded_at, document) VALUES (?, ?, '0.1.0', ?, 'path_full', 0, ?, ?)",
                [(sid, now - (per - i) * 600.0, 9e9 + (i % 7) * 1e8, now, packed) for i in range(per)])
    count = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    db.close()
    return archive, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--linerate", default=os.path.join(HERE, "..", "target", "release", "linerate"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--series", type=int, default=400)
    ap.add_argument("--out")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="linerate-archive-bench-")
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(work, "data"), LINERATE_ARCHIVE="")
    try:
        result = a_result(a.linerate, env, work)
        doc = {"schema": "linerate.bench/1", "bench": "archive",
               "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "recording": recording(a.linerate, env, work, result, a.rounds)}
        archive, count = big_archive(a.linerate, env, work, result, a.rows, a.series)
        hist = [timed([a.linerate, "history", "--archive", archive, "--since", "3650d", "--json", "-"], env)
                for _ in range(max(5, a.rounds // 4))]
        doc["history"] = {"rows": count, "series": a.series + 1,
                          "median_ms": round(statistics.median(hist) * 1e3, 1),
                          "runs_ms": [round(h * 1e3, 1) for h in hist]}
        text = json.dumps(doc, indent=1)
        if a.out:
            open(a.out, "w").write(text + "\n")
        print(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
