#!/usr/bin/env python3
"""Sequence-numbered UDP through a lab: `recv ADDR PORT` prints what arrived
(count, lost, early = arrived before a lower sequence number that came
later); `send ADDR PORT N` sends N packets, paced so no socket drops them."""
import json, socket, sys, time

def recv(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.bind((addr, port))
    print("ready", flush=True)
    seqs, total = [], None
    s.settimeout(10)
    while True:
        try:
            data = s.recv(2048)
        except socket.timeout:
            break
        seq = int.from_bytes(data[:8], "big")
        total = int.from_bytes(data[8:16], "big")
        seqs.append(seq)
        s.settimeout(1.5)
    early, low = 0, None
    for seq in reversed(seqs):
        if low is not None and seq > low:
            early += 1
        low = seq if low is None else min(low, seq)
    distinct = len(set(seqs))
    print(json.dumps({"received": len(seqs), "distinct": distinct, "sent": total,
                      "lost": (total or 0) - distinct, "duplicates": len(seqs) - distinct,
                      "early": early}), flush=True)

def send(addr, port, n):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    pad = bytes(200)
    for i in range(n):
        s.sendto(i.to_bytes(8, "big") + n.to_bytes(8, "big") + pad, (addr, port))
        if i % 64 == 63:
            time.sleep(0.001)

if __name__ == "__main__":
    if sys.argv[1] == "recv":
        recv(sys.argv[2], int(sys.argv[3]))
    else:
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
