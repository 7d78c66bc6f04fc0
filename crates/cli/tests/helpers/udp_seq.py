#!/usr/bin/env python3
"""Sequence-numbered UDP through a lab: `recv ADDR PORT` prints what arrived
(count, lost, early = arrived before a lower sequence number that came
later, socket_drops = datagrams the receiving socket itself dropped, full);
`send ADDR PORT N` sends N packets, paced so no socket drops them."""
import json, socket, struct, sys, time

# Linux values; Python's socket module names neither.
SO_RCVBUFFORCE, SO_RXQ_OVFL = 33, 40

def recv(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    # A receiver that other work keeps off its core for a moment must not
    # drop what the lab delivered: root sets the buffer past rmem_max.
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
    except PermissionError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
    s.bind((addr, port))
    print("ready", flush=True)
    seqs, total, socket_drops = [], None, 0
    s.settimeout(10)
    while True:
        try:
            data, ancillary, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(4))
        except socket.timeout:
            break
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL:
                socket_drops = struct.unpack("I", value[:4])[0]
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
                      "early": early, "socket_drops": socket_drops}), flush=True)

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
