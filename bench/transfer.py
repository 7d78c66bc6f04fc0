#!/usr/bin/env python3
"""File transfer on loopback: linerate send/recv vs scp, rsync (ssh and daemon),
lftp against ProFTPD, GridFTP and WDT (when a `wdt` binary is on PATH or in $WDT).

Data sets are generated on tmpfs (so the source is in the page cache) and every
destination is a fresh tmpfs directory, removed after each run:

  one-4g        one 4 GiB file (linerate also with --skip-writes, and `linerate bench`)
  many-40m      100 x 40 MiB
  small-4k      20,000 x 4 KiB
  mixed         a tree of large, medium and small files, links and empty directories

With --dest-dir the destinations are made there instead (a directory on a
disk, to measure writes that must reach it: linerate syncs by default), and
`cp` (cp -r, then a sync of the destination's file system) is the local
floor: what copying the same data on this host costs without any network.

Next to the tools, `floor` (bench/kernel_floor.py --mode write) moves the two
large sets with bare pread/send and recv/pwrite and nothing else: what the
kernel allows on this host, and so what no tool can beat. Its rate is over its
own transfer seconds (no process start), so linerate's ratio to it errs low.

For each data set, rounds in which every tool runs once, the order rotating;
medians of Gbit/s (bytes over the wall time of the client command, setup
included) and of files/s; ratios of linerate to each peer. JSON and a table.

  bench/transfer.py                         # everything, 3 rounds
  bench/transfer.py --sets one-4g --tools linerate,scp --rounds 5
  bench/transfer.py --scale 0.25            # quarter-size data sets, for a quick look
  bench/transfer.py --sets one-4g,many-40m --tools linerate,cp --dest-dir /var/tmp \
      --variant clear=--no-encrypt          # to ext4: encrypted, clear and cp+sync

Every daemon (sshd, rsync, proftpd, gridftp) is started by this script on a
free port with a configuration in a temporary directory, and ended by PID.
"""

import argparse
import json
import os
import platform
import pwd
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kernel_floor
import yardstick
from common import end, free_port

ROOT = Path(__file__).resolve().parent.parent
SHM = Path("/dev/shm")
FLOOR_SETS = ("one-4g", "many-40m")


def write_random(path, size, seed):
    """Incompressible data, fast: a random 16 MiB chunk, varied per chunk."""
    chunk = bytearray(os.urandom(min(size, 16 << 20) or 1))
    with open(path, "wb") as f:
        left, i = size, 0
        while left > 0:
            chunk[:8] = (seed * 1_000_003 + i).to_bytes(8, "little")
            n = min(left, len(chunk))
            f.write(chunk[:n])
            left -= n
            i += 1


def make_sets(base, scale, names):
    sets = {}
    if "one-4g" in names:
        d = base / "one-4g"
        d.mkdir(parents=True)
        write_random(d / "big.bin", int((4 << 30) * scale), 1)
        sets["one-4g"] = d
    if "many-40m" in names:
        d = base / "many-40m"
        d.mkdir(parents=True)
        for i in range(max(2, int(100 * scale))):
            write_random(d / f"f{i:03}.bin", 40 << 20, 10 + i)
        sets["many-40m"] = d
    if "small-4k" in names:
        d = base / "small-4k"
        d.mkdir(parents=True)
        blob = os.urandom(4096)
        n = max(100, int(20_000 * scale))
        for i in range(n):
            sub = d / f"d{i // 1000:02}"
            sub.mkdir(exist_ok=True)
            (sub / f"s{i:05}").write_bytes(i.to_bytes(4, "little") + blob[4:])
        sets["small-4k"] = d
    if "mixed" in names:
        d = base / "mixed"
        for k in range(5):
            sub = d / f"group {k}" / "nested"
            sub.mkdir(parents=True)
            write_random(sub.parent / "large.bin", int((200 << 20) * scale) or 1, 100 + k)
            for j in range(10):
                write_random(sub / f"medium-{j}.bin", 2 << 20, 200 + k * 10 + j)
            for j in range(max(10, int(400 * scale))):
                (sub / f"small-{j}.txt").write_bytes(os.urandom(16 << 10))
            (d / f"group {k}" / "empty dir").mkdir()
            os.symlink("nested/medium-0.bin", d / f"group {k}" / "link")
        sets["mixed"] = d
    return sets


def tree_stats(path):
    files = size = 0
    for dirpath, _, filenames in os.walk(path):
        for f in filenames:
            p = Path(dirpath) / f
            if not p.is_symlink():
                files += 1
                size += p.stat().st_size
    return files, size


class Daemons:
    """The peers' servers, each on a free port, ended by PID."""

    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.procs = []
        self.ssh_port = self.rsync_port = self.ftp_port = self.gridftp_port = None
        self.key = self.tmp / "id_ed25519"

    def spawn(self, cmd, **kw):
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
        self.procs.append(p)
        time.sleep(0.5)
        if p.poll() is not None:
            raise RuntimeError(f"{cmd[0]} exited at once")
        return p

    def sshd(self):
        sshd = shutil.which("sshd") or "/usr/sbin/sshd"
        if not Path(sshd).exists():
            return False
        Path("/run/sshd").mkdir(exist_ok=True)
        hostkey = self.tmp / "host_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hostkey)], check=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True)
        auth = self.tmp / "authorized_keys"
        shutil.copy(f"{self.key}.pub", auth)
        self.ssh_port = free_port()
        conf = self.tmp / "sshd_config"
        conf.write_text(
            f"Port {self.ssh_port}\nListenAddress 127.0.0.1\nHostKey {hostkey}\n"
            f"AuthorizedKeysFile {auth}\nPermitRootLogin yes\nPasswordAuthentication no\n"
            f"UsePAM no\nStrictModes no\nPidFile {self.tmp}/sshd.pid\nSubsystem sftp internal-sftp\n"
        )
        self.spawn([sshd, "-D", "-e", "-f", str(conf)])
        return True

    def ssh_cmd(self):
        return (
            f"ssh -p {self.ssh_port} -i {self.key} -o StrictHostKeyChecking=no "
            f"-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
        )

    def rsyncd(self, dest_parent):
        if not shutil.which("rsync"):
            return False
        self.rsync_port = free_port()
        conf = self.tmp / "rsyncd.conf"
        conf.write_text(
            f"use chroot = no\npid file = {self.tmp}/rsyncd.pid\n[dst]\npath = {dest_parent}\n"
            "read only = no\nuid = root\ngid = root\n"
        )
        self.spawn(["rsync", "--daemon", "--no-detach", f"--port={self.rsync_port}", f"--config={conf}"])
        return True

    def proftpd(self, serve_dir):
        exe = shutil.which("proftpd") or "/usr/sbin/proftpd"
        if not Path(exe).exists():
            return False
        self.ftp_port = free_port()
        conf = self.tmp / "proftpd.conf"
        conf.write_text(
            f'ServerType standalone\nPort {self.ftp_port}\nDefaultAddress 127.0.0.1\nUseIPv6 off\n'
            f"PidFile {self.tmp}/proftpd.pid\nScoreboardFile {self.tmp}/proftpd.scoreboard\n"
            "User nobody\nGroup nogroup\nMaxInstances 64\nWtmpLog off\nUseReverseDNS off\n"
            f'<Anonymous {serve_dir}>\n  User ftp\n  Group nogroup\n  UserAlias anonymous ftp\n'
            "  RequireValidShell off\n</Anonymous>\n"
        )
        self.spawn([exe, "-n", "-c", str(conf)])
        return True

    def gridftp(self):
        exe = shutil.which("globus-gridftp-server")
        if not exe:
            return False
        self.gridftp_port = free_port()
        # Anonymous access must map to an unprivileged user (root is refused):
        # ftp where an FTP server's package made it, else nobody.
        try:
            pwd.getpwnam("ftp")
            user = "ftp"
        except KeyError:
            user = "nobody"
        self.spawn([exe, "-p", str(self.gridftp_port), "-aa", "-anonymous-user", user,
                    "-control-interface", "127.0.0.1", "-data-interface", "127.0.0.1"])
        return True

    def stop(self):
        for p in self.procs:
            end(p)


class Linerate:
    def __init__(self, binary, streams, extra=()):
        self.binary, self.streams, self.extra = binary, streams, list(extra)

    def run(self, src, dst, skip_writes=False):
        # A sender in the clear needs a receiver that takes data in the clear.
        clear = ["--no-encrypt"] if "--no-encrypt" in self.extra else []
        recv = subprocess.Popen(
            [self.binary, "recv", str(dst), "--bind", "127.0.0.1", "--foreground"] + clear,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        try:
            url = recv.stdout.readline().strip()
            # Extra flags that set the stream count take its place.
            own_streams = any(f in ("-P", "--streams") or f.startswith("--streams=")
                              for f in self.extra)
            cmd = [self.binary, "send", "-q"] + ([] if own_streams else ["-P", str(self.streams)])
            cmd += self.extra
            cmd += ["--skip-writes"] if skip_writes else []
            cmd += [str(src), url]
            t = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            wall = time.monotonic() - t
            if out.returncode != 0:
                raise RuntimeError(out.stderr.strip()[-400:])
            recv.wait(30)
            return wall
        finally:
            if recv.poll() is None:
                recv.kill()
                recv.wait()


def timed(cmd, **kw):
    t = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    wall = time.monotonic() - t
    if out.returncode != 0:
        raise RuntimeError(f"{cmd[0]}: {(out.stderr or out.stdout).strip()[-400:]}")
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="one-4g,many-40m,small-4k,mixed")
    ap.add_argument("--tools", default="linerate,floor,wdt,scp,rsync-ssh,rsyncd,lftp,gridftp")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--streams", type=int, default=2, help="linerate streams (GridFTP -p, lftp -n too)")
    ap.add_argument("--scale", type=float, default=1.0, help="data set size factor")
    ap.add_argument("--linerate", default=str(ROOT / "target/release/linerate"))
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=FLAGS",
                    help="also run linerate send with extra flags")
    ap.add_argument("--dest-dir", default=None,
                    help="make destinations in this directory (default: tmpfs, next to the data)")
    ap.add_argument("--out", default=str(ROOT / "bench/results/transfer-loopback.json"))
    a = ap.parse_args()

    names = a.sets.split(",")
    wanted = a.tools.split(",")
    # Daemons end and data sets go also on SIGTERM.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # Before anything is created that a failed reading would leave behind.
    readings = yardstick.start()
    work = Path(tempfile.mkdtemp(prefix="linerate-bench-", dir=SHM))
    work.chmod(0o755)  # the FTP server reads as an unprivileged user
    tmp = Path(tempfile.mkdtemp(prefix="linerate-bench-conf-"))
    daemons = Daemons(tmp)
    results, skipped = {}, {}
    try:
        print(f"generating data sets in {work} ...", flush=True)
        sets = make_sets(work / "src", a.scale, names)
        if a.dest_dir:
            dest_parent = Path(tempfile.mkdtemp(prefix="linerate-bench-dst-", dir=a.dest_dir))
            dest_parent.chmod(0o755)
        else:
            dest_parent = work / "dst"
            dest_parent.mkdir()
        # A VM backs guest memory on first touch and may take freed pages back
        # within seconds, which makes writes into fresh tmpfs pages several
        # times slower and the order of runs matter. Every run that writes, of any tool,
        # starts right after writing (not fallocating: measured not to help)
        # as much as it will write, so each finds the same warm memory.
        def warm(size):
            w = dest_parent / "warm"
            write_random(w, int(size * 1.1), 0)
            w.unlink()
        wdt = os.environ.get("WDT") or shutil.which("wdt")
        runners = {}

        def dst_dir():
            d = dest_parent / f"run-{time.monotonic_ns()}"
            d.mkdir()
            return d

        lr = Linerate(a.linerate, a.streams)
        if "linerate" in wanted:
            runners["linerate"] = lambda s, src: lr.run(src, dst_dir())
        for v in a.variant:
            name, _, flags = v.partition("=")
            lv = Linerate(a.linerate, a.streams, flags.split())
            runners[f"linerate[{name}]"] = lambda s, src, lv=lv: lv.run(src, dst_dir())
        if "cp" in wanted:
            def run_cp(s, src):
                d = dst_dir()
                t = time.monotonic()
                subprocess.run(["cp", "-r", str(src), str(d)], check=True, timeout=900)
                subprocess.run(["sync", "--file-system", str(d)], check=True, timeout=900)
                return time.monotonic() - t
            runners["cp"] = run_cp
        if "floor" in wanted:
            def run_floor(s, src):
                _, size = tree_stats(src)
                gbps, _, _ = kernel_floor.run(src, a.streams, "write", dst_dir())
                return size * 8 / gbps / 1e9
            runners["floor"] = run_floor
        if "wdt" in wanted:
            if wdt:
                def run_wdt(s, src):
                    d = dst_dir()
                    recv = subprocess.Popen([wdt, "-directory", str(d), "-num_ports", str(a.streams)],
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                    url = recv.stdout.readline().strip()
                    try:
                        return timed([wdt, "-directory", str(src), "-connection_url", url])
                    finally:
                        recv.wait(60)
                runners["wdt"] = run_wdt
            else:
                skipped["wdt"] = "no wdt binary on PATH or in $WDT (not packaged for Debian)"
        need_ssh = any(t in wanted for t in ("scp", "rsync-ssh"))
        if need_ssh and daemons.sshd():
            if "scp" in wanted:
                runners["scp"] = lambda s, src: timed(
                    ["scp", "-r", "-q", "-P", str(daemons.ssh_port), "-i", str(daemons.key),
                     "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                     "-o", "LogLevel=ERROR", str(src), f"root@127.0.0.1:{dst_dir()}/"])
            if "rsync-ssh" in wanted:
                runners["rsync-ssh"] = lambda s, src: timed(
                    ["rsync", "-a", "-e", daemons.ssh_cmd(), str(src), f"root@127.0.0.1:{dst_dir()}/"])
        elif need_ssh:
            skipped["scp"] = skipped["rsync-ssh"] = "sshd not installed (Debian openssh-server)"
        if "rsyncd" in wanted:
            if daemons.rsyncd(dest_parent):
                runners["rsyncd"] = lambda s, src: timed(
                    ["rsync", "-a", str(src), f"rsync://127.0.0.1:{daemons.rsync_port}/dst/{dst_dir().name}/"])
            else:
                skipped["rsyncd"] = "rsync not installed"
        if "lftp" in wanted:
            if shutil.which("lftp") and daemons.proftpd(work / "src"):
                def run_lftp(s, src):
                    d = dst_dir()
                    rel = src.relative_to(work / "src")
                    if s == "one-4g":
                        script = f"pget -n {max(a.streams, 4)} -O {d} {rel}/big.bin; quit"
                    else:
                        script = f"mirror --parallel={max(a.streams, 4)} {rel} {d}/{rel.name}; quit"
                    script = "set net:max-retries 2; set net:reconnect-interval-base 1; set cmd:fail-exit yes; " + script
                    return timed(["lftp", "-e", script, f"ftp://127.0.0.1:{daemons.ftp_port}"])
                runners["lftp"] = run_lftp
            else:
                skipped["lftp"] = "lftp or proftpd not installed (Debian lftp, proftpd-basic)"
        if "gridftp" in wanted or "gridftp-cc4" in wanted:
            if shutil.which("globus-url-copy") and daemons.gridftp():
                def run_gridftp(s, src):
                    d = dst_dir()
                    d.chmod(0o777)  # written as the anonymous user
                    url = f"ftp://127.0.0.1:{daemons.gridftp_port}{d}/{src.name}/"
                    return timed(["globus-url-copy", "-p", str(a.streams), "-fast", "-r", "-cd",
                                  f"file://{src}/", url])
                if "gridftp" in wanted:
                    runners["gridftp"] = run_gridftp
                if "gridftp-cc4" in wanted:
                    # Four files at once, each over one connection.
                    def run_gridftp_cc(s, src):
                        d = dst_dir()
                        d.chmod(0o777)
                        url = f"ftp://127.0.0.1:{daemons.gridftp_port}{d}/{src.name}/"
                        return timed(["globus-url-copy", "-cc", "4", "-fast", "-r", "-cd",
                                      f"file://{src}/", url])
                    runners["gridftp-cc4"] = run_gridftp_cc
            else:
                skipped["gridftp"] = "globus-url-copy or globus-gridftp-server not installed"

        for s, src in sets.items():
            files, size = tree_stats(src)
            # The network-only variant belongs to the one-file set alone.
            run_of = dict(runners)
            # Per-file work in Python would dominate the small files' floor.
            if s not in FLOOR_SETS:
                run_of.pop("floor", None)
            if s == "one-4g" and "linerate" in runners:
                run_of["linerate[skip-writes]"] = lambda s_, src_: lr.run(src_, dst_dir(), skip_writes=True)
            tools = list(run_of)
            runs = {t: [] for t in tools}
            bench_runs = []
            for r in range(a.rounds):
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for t in order:
                    try:
                        # A run that writes nothing gains nothing from warm
                        # memory, and would pay for the pages the balloon
                        # takes back while it runs.
                        if not t.endswith("[skip-writes]"):
                            warm(size)
                        wall = run_of[t](s, src)
                        gbps = size * 8 / wall / 1e9
                        runs[t].append({"seconds": round(wall, 3), "gbps": round(gbps, 3),
                                        "files_per_second": round(files / wall, 1)})
                        print(f"  {s:9} round {r + 1} {t:22} {gbps:7.2f} Gbit/s {files / wall:10.0f} files/s", flush=True)
                    except Exception as e:  # a peer failing is reported, not fatal
                        runs[t].append({"error": str(e)})
                        print(f"  {s:9} round {r + 1} {t:22} failed: {e}", flush=True)
                    finally:
                        for d in dest_parent.iterdir():
                            shutil.rmtree(d, ignore_errors=True)
                if s == "one-4g" and "linerate" in runners:
                    bench_runs.append(bench_gbps(a.linerate, a.streams))
            entry = {"files": files, "bytes": size, "tools": {}}
            for t, rs in runs.items():
                ok = [x for x in rs if "gbps" in x]
                entry["tools"][t] = {
                    "runs": rs,
                    "median_gbps": statistics.median([x["gbps"] for x in ok]) if ok else None,
                    "median_files_per_second": statistics.median([x["files_per_second"] for x in ok]) if ok else None,
                }
            if bench_runs:
                entry["linerate_bench_gbps"] = {"runs": bench_runs, "median": statistics.median(bench_runs)}
            lm = entry["tools"].get("linerate", {}).get("median_gbps")
            entry["linerate_ratio"] = {
                t: round(lm / v["median_gbps"], 3)
                for t, v in entry["tools"].items()
                if t != "linerate" and lm and v["median_gbps"]
            }
            if bench_runs and entry["tools"].get("linerate[skip-writes]", {}).get("median_gbps"):
                entry["skip_writes_vs_bench"] = round(
                    entry["tools"]["linerate[skip-writes]"]["median_gbps"] / entry["linerate_bench_gbps"]["median"], 3)
            results[s] = entry
    finally:
        daemons.stop()
        shutil.rmtree(work, ignore_errors=True)
        if a.dest_dir:
            shutil.rmtree(dest_parent, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    yardstick.finish(readings)

    doc = {
        "schema": "linerate.bench/1", "bench": "transfer", "mode": "loopback",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "rounds": a.rounds, "streams": a.streams, "scale": a.scale,
        "destination": a.dest_dir or "tmpfs",
        "host": {"kernel": platform.release(), "cpus": os.cpu_count()},
        "yardstick": readings,
        "skipped": skipped, "results": results,
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"\nloopback to {a.dest_dir or 'tmpfs'}, {a.rounds} rounds, linerate -P {a.streams};"
          " medians (Gbit/s, files/s)")
    for s, e in results.items():
        print(f"{s} ({e['files']} files, {e['bytes'] / 2**30:.2f} GiB)")
        for t, v in e["tools"].items():
            g, f = v["median_gbps"], v["median_files_per_second"]
            ratio = e["linerate_ratio"].get(t)
            g = f"{g:.2f}" if g is not None else "-"
            f = f"{f:.0f}" if f is not None else "-"
            print(f"  {t:22} {g:>8} {f:>10}"
                  + (f"   linerate x{ratio}" if ratio else ""))
        if "linerate_bench_gbps" in e:
            print(f"  linerate bench -P {a.streams}: {e['linerate_bench_gbps']['median']:.2f} Gbit/s;"
                  f" skip-writes / bench = {e.get('skip_writes_vs_bench')}")
    for t, why in skipped.items():
        print(f"  skipped {t}: {why}")
    print(f"written to {a.out}")


def bench_gbps(binary, streams):
    port = free_port()
    srv = subprocess.Popen([binary, "serve", "--bind", "127.0.0.1", "--port", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = subprocess.run([binary, "bench", f"127.0.0.1:{port}", "-P", str(streams), "-t", "4",
                              "-i", "0", "--json", "-"], capture_output=True, text=True, timeout=60)
        return round(json.loads(out.stdout)["summary"]["bits_per_second"] / 1e9, 3)
    finally:
        srv.terminate()
        srv.wait(5)


if __name__ == "__main__":
    sys.exit(main())
