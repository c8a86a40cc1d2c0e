#!/usr/bin/python3
"""Print a TCP port on 127.0.0.1 that nothing holds now, below the kernel's
ephemeral range: there the connections of tests running alongside (UCX's
TCP ones included) never take it between this check and its use."""
import random
import socket

lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
top = max(lo - 1, 20100)
for _ in range(500):
    p = random.randint(20000, top)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
else:
    raise SystemExit("no free port found")
