"""
ucoll.init_oob under a launcher: the job's first context (PMIx, from
ucoll.init) carries the allgather that bootstraps a second one, as a
framework with its own store would. Both contexts then work side by side;
the second's finalize calls the allgather once more, over the first.

At p = 1 the C library skips some of init's rounds and makes two in
finalize (8 and 239 bytes), where include/ucoll.h says "once in
ucoll_finalize": every process still makes the same calls, which is what
matters to a callback.
"""
import numpy as np

import ucoll


def test_second_context_over_the_first(ctx):
    w = ctx.world
    p, r = w.size, w.rank
    calls = []

    def allgather(data):
        calls.append(len(data))
        out = np.zeros(p * len(data), np.uint8)
        w.allgather(np.frombuffer(data, np.uint8), out)
        return out.tobytes()

    with ucoll.init_oob(r, p, allgather, node_id=0) as c2:
        assert (c2.rank, c2.size, c2.local_size) == (r, p, p)
        x, y = np.full(4, r + 1.0), np.full(4, 10.0 * (r + 1))
        req = c2.world.iallreduce(x)
        w.allreduce(y)
        req.wait()
        assert (x == p * (p + 1) / 2).all() and (y == 10 * p * (p + 1) / 2).all()
        # a communicator of the second context
        with c2.world.split(0, key=-r) as sub:
            got = np.zeros(p, np.int32)
            sub.allgather(np.array([r], np.int32), got)
            assert list(got) == list(reversed(range(p)))
        n = len(calls)
    assert len(calls) > n  # finalize's allgather (once at p > 1; twice at p = 1, see below)
    assert c2.finalized and not ctx.finalized
    w.barrier()


def test_failing_callback_everywhere(ctx):
    """Every rank's callback fails on the first round: every rank raises
    BootstrapError, and the job goes on."""
    def broken(data):
        raise KeyError("store is down")

    try:
        ucoll.init_oob(ctx.rank, ctx.size, broken)
    except ucoll.BootstrapError as e:
        assert isinstance(e.__cause__, KeyError)
    else:
        raise AssertionError("init_oob did not raise")
    ctx.world.barrier()
