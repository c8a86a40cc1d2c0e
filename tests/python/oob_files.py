"""
A rank of an out-of-band job without any launcher: `oob_files.py RANK SIZE
DIR [NODE_ID]`. The allgather that ucoll.init_oob asks for goes through
files in DIR (each round, every rank writes its part and reads everyone's),
as a framework's key-value store would carry it. Prints "ok RANK SIZE
LOCAL_SIZE ROUNDS" when the collectives gave the right results.
"""
import os
import sys
import time

import numpy as np

import ucoll

rank, size, d = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
node_id = int(sys.argv[4]) if len(sys.argv) > 4 else -1
rounds = 0


def allgather(data):
    global rounds
    rounds += 1
    tmp = os.path.join(d, "%d.%d.tmp" % (rounds, rank))
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, os.path.join(d, "%d.%d" % (rounds, rank)))
    parts = []
    deadline = time.monotonic() + 60
    for r in range(size):
        path = os.path.join(d, "%d.%d" % (rounds, r))
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise RuntimeError("rank %d never wrote round %d" % (r, rounds))
            time.sleep(0.001)
        with open(path, "rb") as f:
            parts.append(f.read())
    return b"".join(parts)


with ucoll.init_oob(rank, size, allgather, node_id=node_id) as ctx:
    w = ctx.world
    assert (w.rank, w.size) == (rank, size)
    x = np.full(5, rank + 1.0)
    w.allreduce(x)
    assert (x == size * (size + 1) / 2).all(), x
    got = np.zeros(size, np.int32)
    w.allgather(np.array([rank], np.int32), got)
    assert (got == np.arange(size)).all(), got
    local = ctx.local_size
print("ok", rank, size, local, rounds)
