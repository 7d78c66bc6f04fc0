"""Helpers the benchmark scripts share: ports, ending what they started, and
reading iperf2's CSV."""

import signal
import socket
import subprocess


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def end(proc):
    """Ends a process this script started: SIGTERM, then SIGKILL after 5 s."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def iperf2_bps(csv_text):
    """Bits per second of an iperf2 `-y C` client: its per-stream rows added up
    (the sum row, stream id -1, is left out)."""
    rows = [l.split(",") for l in csv_text.splitlines() if l.count(",") >= 8]
    return float(sum(float(r[-1]) for r in rows if r[5] != "-1"))
