#!/usr/bin/env python3
"""The everyday second run of a tree: linerate send against rsync -a (local,
and over its daemon) and globus-url-copy -sync, side by side on loopback.

One tree of FILES small files (20,000 x 4 KiB by default, 100 directories) on
tmpfs; each tool keeps its own destination (tmpfs too) in sync with it:

  first      the first copy of the whole tree
  unchanged  the same command again, nothing changed
  changed    the same command after 1 % of the files were rewritten (new
             bytes, new modification time): only those must travel

Every round runs each tool once per case, the order rotating, and checks
that the changed files arrived. Medians of the wall time of the client
command (setup included) and ratios peer / linerate[clear] (above 1:
linerate is faster), like for like. linerate runs with its defaults (encrypted, synced) and, like for
like with rsync and GridFTP (clear, no fsync), as linerate[clear]; each run
of it starts a one-shot `linerate recv` into its destination. Comparing
contents instead of sizes and times (`-c`), linerate[clear -c] runs beside
rsync[-c], and their ratio is given apart.

  bench/rerun.py                    # 3 rounds
  bench/rerun.py --files 2000 --rounds 5 --tools linerate,rsync
"""

import argparse
import json
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import transfer
import yardstick

ROOT = Path(__file__).resolve().parent.parent
SHM = Path("/dev/shm")
DIRS = 100


def make_tree(top, files, size):
    for i in range(files):
        d = top / f"d{i % DIRS:03}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:06}").write_bytes(random.randbytes(size))


def change(top, files, share, size, rng):
    """Rewrites `share` of the files (new bytes, a new mtime); returns them."""
    picked = rng.sample(range(files), max(1, int(files * share)))
    paths = [top / f"d{i % DIRS:03}" / f"f{i:06}" for i in picked]
    for p in paths:
        p.write_bytes(rng.randbytes(size))
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--size", type=int, default=4096, help="bytes per file")
    ap.add_argument("--share", type=float, default=0.01, help="share of files changed per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools",
                    default="linerate,linerate[clear],rsync,rsyncd,gridftp,linerate[clear -c],rsync[-c]")
    ap.add_argument("--linerate", default=str(ROOT / "target/release/linerate"))
    ap.add_argument("--out", default=str(ROOT / "bench/results/rerun.json"))
    a = ap.parse_args()
    wanted = a.tools.split(",")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    readings = yardstick.start()
    work = Path(tempfile.mkdtemp(prefix="linerate-rerun-", dir=SHM))
    work.chmod(0o755)
    conf = Path(tempfile.mkdtemp(prefix="linerate-rerun-conf-"))
    daemons = transfer.Daemons(conf)
    rng = random.Random(7)
    times = {}
    skipped = {}
    try:
        src = work / "tree"
        print(f"making {a.files} files of {a.size} B in {src} ...", flush=True)
        make_tree(src, a.files, a.size)
        dst = work / "dst"
        dst.mkdir()
        # The GridFTP server writes as its anonymous user.
        dst.chmod(0o777)
        runners = {}
        lr = transfer.Linerate(a.linerate, 2)
        clear = transfer.Linerate(a.linerate, 2, ["--no-encrypt", "--no-fsync"])
        if "linerate" in wanted:
            runners["linerate"] = lambda d: lr.run(src, d)
        if "linerate[clear]" in wanted:
            runners["linerate[clear]"] = lambda d: clear.run(src, d)
        if "rsync" in wanted:
            runners["rsync"] = lambda d: transfer.timed(["rsync", "-a", str(src), f"{d}/"])
        by_contents = transfer.Linerate(a.linerate, 2, ["--no-encrypt", "--no-fsync", "-c"])
        if "linerate[clear -c]" in wanted:
            runners["linerate[clear -c]"] = lambda d: by_contents.run(src, d)
        if "rsync[-c]" in wanted:
            runners["rsync[-c]"] = lambda d: transfer.timed(["rsync", "-a", "-c", str(src), f"{d}/"])
        if "rsyncd" in wanted:
            if daemons.rsyncd(dst):
                runners["rsyncd"] = lambda d: transfer.timed(
                    ["rsync", "-a", str(src), f"rsync://127.0.0.1:{daemons.rsync_port}/dst/{d.name}/"])
            else:
                skipped["rsyncd"] = "rsync not installed"
        if "gridftp" in wanted:
            if shutil.which("globus-url-copy") and daemons.gridftp():
                def run_gridftp(d):
                    url = f"ftp://127.0.0.1:{daemons.gridftp_port}{d}/{src.name}/"
                    return transfer.timed(["globus-url-copy", "-r", "-cd", "-sync", "-fast",
                                           f"file://{src}/", url])
                runners["gridftp"] = run_gridftp
            else:
                skipped["gridftp"] = "globus-url-copy or globus-gridftp-server not installed"
        dests = {}
        for name in runners:
            d = dst / name.replace("[", "-").replace("]", "").replace(" ", "")
            d.mkdir()
            d.chmod(0o777)
            dests[name] = d
        names = list(runners)
        times = {case: {n: [] for n in names} for case in ("first", "unchanged", "changed")}

        def run_all(case, r, changed=()):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                t = runners[n](dests[n])
                times[case][n].append(t)
                for p in changed:
                    got = dests[n] / p.relative_to(src.parent)
                    if got.read_bytes() != p.read_bytes():
                        raise RuntimeError(f"{n}: {got} did not arrive")
                print(f"  {case:<9} {n:<16} {t:7.2f} s", flush=True)

        print("first copy", flush=True)
        run_all("first", 0)
        for r in range(a.rounds):
            print(f"round {r + 1} of {a.rounds}", flush=True)
            run_all("unchanged", r)
            changed = change(src, a.files, a.share, a.size, rng)
            run_all("changed", r, changed)
    finally:
        daemons.stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(conf, ignore_errors=True)
    med = {case: {n: statistics.median(v) for n, v in t.items() if v} for case, t in times.items()}
    # Like for like: the peers run in the clear and do not sync, as
    # linerate[clear] does; linerate's defaults (TLS, synced) are shown too.
    base = "linerate[clear]"
    ratios = {
        case: {n: m[n] / m[base] for n in m if not n.startswith("linerate") and not n.endswith("[-c]")}
        for case, m in med.items() if base in m
    }
    # By contents, like for like: rsync -c over linerate -c.
    by_contents = {
        case: {"rsync[-c]": m["rsync[-c]"] / m["linerate[clear -c]"]}
        for case, m in med.items() if "rsync[-c]" in m and "linerate[clear -c]" in m
    }
    for case, r in by_contents.items():
        ratios.setdefault(case, {}).update(r)
    doc = {
        "schema": "linerate.bench/1", "bench": "rerun",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": a.files,
        "file_bytes": a.size,
        "changed_share": a.share,
        "rounds": a.rounds,
        "seconds": times,
        "median_seconds": med,
        # rsync[-c] is over linerate[clear -c]; every other peer over linerate[clear].
        "peer_over_linerate_clear": ratios,
        "skipped": skipped,
        "yardstick": yardstick.finish(readings),
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=2) + "\n")
    for case, m in med.items():
        print(f"{case}:")
        for n, s in m.items():
            ratio = ratios.get(case, {}).get(n)
            against = "linerate[clear -c]" if n.endswith("[-c]") else "linerate[clear]"
            print(f"  {n:<18} {s:7.2f} s" + (f"   {ratio:.2f}x {against}'s time" if ratio else ""))
    for n, why in skipped.items():
        print(f"skipped {n}: {why}")
    print(f"written {a.out}")


if __name__ == "__main__":
    main()
