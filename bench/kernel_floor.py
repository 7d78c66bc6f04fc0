#!/usr/bin/env python3
"""The kernel's own floor for moving one page-cached file over loopback TCP:
no framing, no checksums, no files written. What no transfer tool can beat.

Each of N streams is a sender process that sends its 1/N slice of the file
and a receiver process that takes it and throws it away, 256 KiB at a time:

  copy        pread into a buffer and send it; recv into a buffer (one copy
              out of the page cache, one into the socket, one out of it: what
              `linerate send --skip-writes` does, minus framing and hashes)
  zero-copy   sendfile, and recv with MSG_TRUNC, which discards in the kernel
              (no copy at either end)

Syscalls dominate (one per 256 KiB), so Python costs little here: the copy
mode measured within a few per cent of the same loop in C on this VM.

  bench/kernel_floor.py FILE --streams 2 --mode copy
"""

import argparse
import os
import resource
import socket
import sys
import time

PIECE = 256 << 10


def _send_slice(port, path, offset, end, zero_copy, go):
    sock = socket.create_connection(("127.0.0.1", port))
    fd = os.open(path, os.O_RDONLY)
    buf = bytearray(PIECE)
    view = memoryview(buf)
    os.read(go, 1)
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
    sock.close()
    os._exit(0)


def _receive(conn, zero_copy, counts):
    buf = bytearray(PIECE)
    flags = socket.MSG_TRUNC if zero_copy else 0
    got = 0
    while True:
        n = conn.recv_into(buf, PIECE, flags)
        if n <= 0:
            break
        got += n
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


def run(path, streams, zero_copy):
    """Gbit/s, sender and receiver CPU seconds per GB of one run."""
    size = os.path.getsize(path)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(streams)
    port = listener.getsockname()[1]
    go_read, go_write = os.pipe()
    counts_read, counts_write = os.pipe()
    senders, receivers = [], []
    try:
        for i in range(streams):
            lo, hi = i * size // streams, (i + 1) * size // streams
            senders.append(_fork(lambda lo=lo, hi=hi: _send_slice(
                port, path, lo, hi, zero_copy, go_read)))
        listener.settimeout(30)
        conns = [(listener.accept()[0]) for _ in range(streams)]
        for conn in conns:
            receivers.append(_fork(lambda c=conn: _receive(c, zero_copy, counts_write)))
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
    ap.add_argument("file")
    ap.add_argument("--streams", type=int, default=2)
    ap.add_argument("--mode", choices=["copy", "zero-copy"], default="copy")
    a = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    gbps, snd, rcv = run(a.file, a.streams, a.mode == "zero-copy")
    print(f"{a.mode}: {gbps:.2f} Gbit/s, CPU s/GB sender {snd:.3f} receiver {rcv:.3f}")


if __name__ == "__main__":
    sys.exit(main())
