#!/usr/bin/env python3
"""The kernel's own floor for moving page-cached files over loopback TCP:
no framing, no checksums, no metadata. What no transfer tool can beat.

Each of N streams is a sender process that sends its share of the data and a
receiver process that takes it, 256 KiB at a time. One file is cut into N
slices; a tree's files are dealt out to the streams, largest first, each to
the stream with the fewest bytes so far. Both ends know the list, so the
stream carries bare bytes:

  copy        pread into a buffer and send it; recv into a buffer and drop it
              (one copy out of the page cache, one into the socket, one out of
              it: what `linerate send --skip-writes` does, minus framing and
              hashes)
  zero-copy   sendfile, and recv with MSG_TRUNC, which discards in the kernel
              (no copy at either end)
  write       as copy, and the receiver pwrites each piece at its offset into
              a file of the same name under --dest (what `linerate send` into
              a directory does, minus framing, hashes, fallocate, temporary
              names and metadata)

Syscalls dominate (one per 256 KiB), so Python costs little here: the copy
mode measured within a few per cent of the same loop in C on this VM.

  bench/kernel_floor.py FILE --streams 2 --mode copy
  bench/kernel_floor.py TREE --mode write --dest /dev/shm/into
"""

import argparse
import os
import resource
import socket
import sys
import time
from pathlib import Path

PIECE = 256 << 10
MODES = ("copy", "zero-copy", "write")


def plan(source, streams):
    """The directory the paths are relative to, and each stream's share: a list
    of (relative path, start, end), in the order it is sent."""
    source = Path(source)
    if source.is_file():
        size = source.stat().st_size
        return source.parent, [[(source.name, i * size // streams, (i + 1) * size // streams)]
                               for i in range(streams)]
    files = []
    for dirpath, _, names in os.walk(source):
        for name in names:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                files.append((path.stat().st_size, str(path.relative_to(source))))
    shares = [[] for _ in range(streams)]
    loads = [0] * streams
    for size, rel in sorted(files, reverse=True):
        i = loads.index(min(loads))
        shares[i].append((rel, 0, size))
        loads[i] += size
    return source, shares


def _send_share(port, root, share, zero_copy, go):
    sock = socket.create_connection(("127.0.0.1", port))
    buf = bytearray(PIECE)
    view = memoryview(buf)
    os.read(go, 1)
    for rel, offset, end in share:
        fd = os.open(Path(root) / rel, os.O_RDONLY)
        while offset < end:
            want = min(PIECE, end - offset)
            if zero_copy:
                n = os.sendfile(sock.fileno(), fd, offset, want)
            else:
                n = os.preadv(fd, [view[:want]], offset)
                sock.sendall(view[:n])
            if n <= 0:
                os._exit(2)
            offset += n
        os.close(fd)
    sock.close()
    os._exit(0)


def _receive(conn, mode, dest, share, counts):
    buf = bytearray(PIECE)
    view = memoryview(buf)
    flags = socket.MSG_TRUNC if mode == "zero-copy" else 0
    got = 0
    for rel, offset, end in share:
        fd = None
        if mode == "write":
            fd = os.open(Path(dest) / rel, os.O_WRONLY | os.O_CREAT, 0o644)
        while offset < end:
            n = conn.recv_into(buf, min(PIECE, end - offset), flags)
            if n <= 0:
                os._exit(3)
            if fd is not None:
                os.pwrite(fd, view[:n], offset)
            offset += n
            got += n
        if fd is not None:
            os.close(fd)
    os.write(counts, got.to_bytes(8, "little"))
    os._exit(0)


def _fork(child):
    pid = os.fork()
    if pid == 0:
        try:
            child()
        finally:
            os._exit(4)
    return pid


def _reap(pids):
    """CPU seconds of the children, or an error if any failed."""
    cpu = 0.0
    for pid in pids:
        _, status, usage = os.wait4(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"kernel floor: child {pid} failed ({status})")
        cpu += usage.ru_utime + usage.ru_stime
    return cpu


def run(source, streams, mode, dest=None):
    """Gbit/s, sender and receiver CPU seconds per GB of one run. In write mode
    the files land under dest, which must exist; the caller removes them."""
    if mode not in MODES:
        raise ValueError(f"kernel floor: no mode {mode!r}")
    if mode == "write" and dest is None:
        raise ValueError("kernel floor: write mode needs a destination directory")
    root, shares = plan(source, streams)
    size = sum(end - start for share in shares for _, start, end in share)
    if size == 0:
        raise ValueError(f"kernel floor: nothing to move in {source}")
    if mode == "write":
        for rel in {rel for share in shares for rel, _, _ in share}:
            (Path(dest) / rel).parent.mkdir(parents=True, exist_ok=True)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(streams)
    port = listener.getsockname()[1]
    go_read, go_write = os.pipe()
    counts_read, counts_write = os.pipe()
    senders, receivers = [], []
    zero_copy = mode == "zero-copy"
    try:
        # Connections are accepted in the order the senders start, so each
        # receiver is handed the share its sender sends.
        conns = []
        listener.settimeout(30)
        for share in shares:
            senders.append(_fork(lambda share=share: _send_share(
                port, root, share, zero_copy, go_read)))
            conns.append(listener.accept()[0])
        for conn, share in zip(conns, shares):
            receivers.append(_fork(lambda c=conn, share=share: _receive(
                c, mode, dest, share, counts_write)))
        for conn in conns:
            conn.close()
        start = time.monotonic()
        os.write(go_write, b"g" * streams)
        receiver_cpu = _reap(receivers)
        seconds = time.monotonic() - start
        receivers = []
        sender_cpu = _reap(senders)
        senders = []
        counts = os.read(counts_read, 8 * streams)
        got = sum(int.from_bytes(counts[i:i + 8], "little") for i in range(0, len(counts), 8))
        if got != size:
            raise RuntimeError(f"kernel floor: {got} bytes received of {size}")
    finally:
        for pid in senders + receivers:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        listener.close()
        for fd in (go_read, go_write, counts_read, counts_write):
            os.close(fd)
    gb = size / 1e9
    return size * 8 / seconds / 1e9, sender_cpu / gb, receiver_cpu / gb


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", help="a file or a directory tree")
    ap.add_argument("--streams", type=int, default=2)
    ap.add_argument("--mode", choices=MODES, default="copy")
    ap.add_argument("--dest", help="write mode: directory the files are written under")
    a = ap.parse_args()
    if a.mode == "write" and not a.dest:
        ap.error("--mode write needs --dest")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if a.dest:
        Path(a.dest).mkdir(parents=True, exist_ok=True)
    try:
        gbps, snd, rcv = run(a.source, a.streams, a.mode, a.dest)
    except (OSError, ValueError, RuntimeError) as e:
        print(e, file=sys.stderr)
        return 1
    print(f"{a.mode}: {gbps:.2f} Gbit/s, CPU s/GB sender {snd:.3f} receiver {rcv:.3f}")


if __name__ == "__main__":
    sys.exit(main())
