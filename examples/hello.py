#!/usr/bin/env python3
"""ucoll from Python: each rank contributes its rank to an allreduce of a
numpy array (in place) and of a torch tensor when torch is installed, rank 0
broadcasts a vector, everyone gathers everyone's rank; prints OK at rank 0
when every result is right.

    PYTHONPATH=build/python build/launcher/ucollrun -n 4 /usr/bin/python3 examples/hello.py
"""
import numpy as np

import ucoll

with ucoll.init() as ctx:
    world = ctx.world
    r, p = world.rank, world.size
    x = np.full(4, r, dtype=np.float32)
    world.allreduce(x)  # one buffer: in place, op="sum"
    w = np.arange(8.0) if r == 0 else np.zeros(8)
    world.ibcast(w, root=0).wait()
    ranks = np.zeros(p, dtype=np.int64)
    world.allgather(np.array([r]), ranks)
    ok = (x == p * (p - 1) / 2).all() and (w == np.arange(8)).all() and (ranks == range(p)).all()
    try:
        import torch
    except ImportError:
        pass
    else:
        t = torch.full((3,), r + 1, dtype=torch.bfloat16)
        world.allreduce(t, op=ucoll.MAX)
        ok = ok and bool((t == p).all())
    print("rank %d of %d (local %d of %d): %s" % (r, p, ctx.local_rank, ctx.local_size,
                                                  "right" if ok else "WRONG"))
    flags = np.array([ok], dtype=np.uint8)
    world.allreduce(flags, op="land")
    if r == 0:
        print("OK" if flags[0] else "FAILED")
