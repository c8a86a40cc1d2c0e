"""
Every collective and point-to-point call of the Python package, run by
every rank of a job (ucollrun -n 2, -n 4, or a singleton without launcher):
numpy and torch buffers of every datatype, blocking and nonblocking twins,
in-place forms, communicators from split, errors every rank raises alike
before calling C, and, last, the finalized context.

Inputs are small integers that every datatype (bfloat16 too) holds exactly,
and the expected results are computed here with numpy in float64.
"""
import gc
import weakref

import numpy as np
import pytest
from conftest import CASES, FLOATS, KINDS, SOME, as_np, full, make, needs_torch, torch

import ucoll

ARITH = ["sum", "prod", "min", "max"]
LOGIC = ["land", "lor", "lxor", "band", "bor", "bxor"]
N = 7  # elements per rank: odd, not a power of two


def rank_values(r, n, op="sum"):
    """Rank r's input: 1..3 for arithmetic, 0..2 for logical and bitwise ops
    (prod of 4 ranks stays below 127)."""
    v = (np.arange(n) + r) % 3
    return v + 1 if op in ARITH else v


def reference(op, stack):
    """The reduction of the rows of stack (one per rank), as float64. A
    single row is the result as it is (as in MPI, no operation is applied:
    a logical op does not turn 2 into 1)."""
    s = np.asarray(stack, dtype=np.int64)
    if len(s) == 1:
        return s[0].astype(np.float64)
    f = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max,
         "land": lambda a, axis: np.logical_and.reduce(a != 0, axis=axis),
         "lor": lambda a, axis: np.logical_or.reduce(a != 0, axis=axis),
         "lxor": lambda a, axis: np.logical_xor.reduce(a != 0, axis=axis),
         "band": np.bitwise_and.reduce, "bor": np.bitwise_or.reduce,
         "bxor": np.bitwise_xor.reduce}[op]
    return np.asarray(f(s, axis=0), dtype=np.float64)


def all_inputs(p, n, op="sum"):
    return [rank_values(r, n, op) for r in range(p)]


def check(x, expect):
    np.testing.assert_array_equal(as_np(x), np.asarray(expect, dtype=np.float64))


def roots(world):
    return sorted({0, world.size - 1})


# ---- the context ----------------------------------------------------------


def test_world(ctx, world):
    assert ctx.world is world
    assert 0 <= world.rank < world.size == ctx.size
    assert ctx.rank == world.rank
    assert 0 <= ctx.local_rank < ctx.local_size <= ctx.size
    got = np.zeros(world.size, np.int64)
    world.allgather(np.array([world.rank], np.int64), got)
    check(got, np.arange(world.size))


def test_barrier(world):
    world.barrier()
    world.ibarrier().wait()
    reqs = [world.ibarrier() for _ in range(5)]
    assert ucoll.waitall(reqs) == [None] * 5
    assert all(r.done for r in reqs)


# ---- rooted and reducing collectives --------------------------------------


@pytest.mark.parametrize("kind,dtype", CASES)
def test_bcast(world, kind, dtype):
    for root in roots(world):
        for nb in (False, True):
            x = make(kind, dtype, np.arange(N) + 3) if world.rank == root else full(kind, dtype, N, 0)
            if nb:
                world.ibcast(x, root=root).wait()
            else:
                world.bcast(x, root=root)
            check(x, np.arange(N) + 3)


@pytest.mark.parametrize("kind", KINDS)
def test_bcast_coalesced(world, kind):
    """A list of buffers of mixed datatypes as one message: the same bytes
    split at different places on every rank, 0 to 320 KB, blocking and
    nonblocking, with an empty entry."""
    if kind == "torch" and torch is None:
        pytest.skip("no torch")
    dtypes = ["float32", "int64", "uint8", "float64", "int16"]
    for total_elems in (0, 5, 3000, 40000):
        for root in roots(world):
            for nb in (False, True):
                src = (np.arange(total_elems * 8) % 251).astype(np.uint8)
                # cut the bytes at places of this rank's own, each piece seen
                # as one of the datatypes (its bytes a multiple of 8)
                cuts = sorted({0, len(src)} | {(8 * ((k * 977 + world.rank * 131) % (total_elems + 1)))
                                               for k in range(4)})
                pieces = [src[a:b] for a, b in zip(cuts, cuts[1:])]
                pieces.insert(world.rank % (len(pieces) + 1), src[:0])  # an empty entry
                bufs, want, off = [], [], 0
                for i, piece in enumerate(pieces):
                    dt = dtypes[i % len(dtypes)]
                    size = np.dtype(dt).itemsize
                    data = src[off:off + len(piece)]
                    off += len(piece)
                    want.append(data.copy())
                    host = data.copy() if world.rank == root else np.zeros(len(piece), np.uint8)
                    a = host.view(dt)
                    bufs.append(torch.from_numpy(a) if kind == "torch" else a)
                if nb:
                    world.ibcast_coalesced(bufs, root=root).wait()
                else:
                    world.bcast_coalesced(bufs, root=root)
                for b, w in zip(bufs, want):
                    got = (b.numpy() if kind == "torch" else b).view(np.uint8)
                    np.testing.assert_array_equal(got, w)
    # errors, alike on every rank, before any call
    with pytest.raises(ucoll.ArgumentError, match="a list or tuple of buffers"):
        world.bcast_coalesced(np.zeros(3))
    with pytest.raises(ucoll.ArgumentError, match="bufs\\[1\\]"):
        world.bcast_coalesced([np.zeros(4), np.zeros((4, 4))[:, 0]], root=0)
    with pytest.raises(ucoll.ArgumentError, match="root"):
        world.bcast_coalesced([np.zeros(4)], root=world.size)


@pytest.mark.parametrize("kind,dtype", CASES)
def test_reduce(world, kind, dtype):
    p, r = world.size, world.rank
    ops = ARITH if dtype in FLOATS else ARITH + LOGIC
    for op in ops:
        for root in roots(world):
            s = make(kind, dtype, rank_values(r, N, op))
            out = full(kind, dtype, N, 0)
            world.reduce(s, out, op=op, root=root)
            if r == root:
                check(out, reference(op, all_inputs(p, N, op)))
            else:
                check(out, np.zeros(N))  # untouched off the root
            world.reduce(s, root=root, op=op)  # in place at the root
            check(s, reference(op, all_inputs(p, N, op)) if r == root else rank_values(r, N, op))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_allreduce(world, kind, dtype):
    p, r = world.size, world.rank
    ops = ARITH if dtype in FLOATS else ARITH + LOGIC
    for op in ops:
        expect = reference(op, all_inputs(p, N, op))
        s, out = make(kind, dtype, rank_values(r, N, op)), full(kind, dtype, N, 0)
        world.allreduce(s, out, op=op)
        check(out, expect)
        check(s, rank_values(r, N, op))
        world.allreduce(s, op=getattr(ucoll, op.upper()))  # one buffer: in place, Op enum
        check(s, expect)
        s = make(kind, dtype, rank_values(r, N, op))
        world.allreduce(ucoll.IN_PLACE, s, op=ucoll.Op[op.upper()])
        check(s, expect)
        s, out = make(kind, dtype, rank_values(r, N, op)), full(kind, dtype, N, 0)
        world.iallreduce(s, out, op=op).wait()
        check(out, expect)


@pytest.mark.parametrize("kind,dtype", SOME)
def test_allreduce_large(world, kind, dtype):
    """Past the eager limit (rendezvous) and through segmented algorithms."""
    n = 100_000
    p, r = world.size, world.rank
    x = make(kind, dtype, rank_values(r, n))
    world.allreduce(x)
    check(x, reference("sum", all_inputs(p, n)))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_scan_exscan(world, kind, dtype):
    p, r = world.size, world.rank
    for op in ARITH:
        inputs = all_inputs(p, N, op)
        s, out = make(kind, dtype, inputs[r]), full(kind, dtype, N, 99)
        world.scan(s, out, op=op)
        check(out, reference(op, inputs[: r + 1]))
        world.iscan(s, op=op).wait()  # in place
        check(s, reference(op, inputs[: r + 1]))
        s, out = make(kind, dtype, inputs[r]), full(kind, dtype, N, 99)
        world.exscan(s, out, op=op)
        check(out, reference(op, inputs[:r]) if r else np.full(N, 99))  # rank 0 untouched
        req = world.iexscan(s, op=op)
        req.wait()
        check(s, reference(op, inputs[:r]) if r else inputs[0])


@pytest.mark.parametrize("kind,dtype", CASES)
def test_reduce_scatter_block(world, kind, dtype):
    p, r = world.size, world.rank
    for op in ("sum", "max"):
        inputs = all_inputs(p, N * p, op)
        expect = reference(op, inputs)[r * N:(r + 1) * N]
        s, out = make(kind, dtype, inputs[r]), full(kind, dtype, N, 0)
        world.reduce_scatter_block(s, out, op=op)
        check(out, expect)
        world.ireduce_scatter_block(s, op=op).wait()  # in place: the block at the start
        check(as_np(s)[:N], expect)


@pytest.mark.parametrize("kind,dtype", CASES)
def test_reduce_scatter(world, kind, dtype):
    p, r = world.size, world.rank
    counts = [i + 1 for i in range(p)]
    total, off = sum(counts), sum(counts[:r])
    inputs = all_inputs(p, total)
    expect = reference("sum", inputs)[off:off + counts[r]]
    s, out = make(kind, dtype, inputs[r]), full(kind, dtype, counts[r], 0)
    world.reduce_scatter(s, out, counts=counts)
    check(out, expect)
    out = full(kind, dtype, counts[r], 0)
    world.ireduce_scatter(s, out, np.array(counts)).wait()
    check(out, expect)
    world.reduce_scatter(s, counts=counts)  # in place
    check(as_np(s)[:counts[r]], expect)


# ---- data movement --------------------------------------------------------


def block(i, n):
    """Rank i's block: values that say whose they are."""
    return 10 * i + np.arange(n) % 10


@pytest.mark.parametrize("kind,dtype", CASES)
def test_gather_scatter(world, kind, dtype):
    p, r = world.size, world.rank
    everything = np.concatenate([block(i, N) for i in range(p)])
    for root in roots(world):
        out = full(kind, dtype, N * p, 99) if r == root else None
        world.gather(make(kind, dtype, block(r, N)), out, root=root)
        if r == root:
            check(out, everything)
        # root's block already in place
        out = full(kind, dtype, N * p, 99)
        if r == root:
            out[r * N:(r + 1) * N] = make(kind, dtype, block(r, N))
            world.igather(ucoll.IN_PLACE, out, root=root).wait()
            check(out, everything)
        else:
            world.igather(make(kind, dtype, block(r, N)), root=root).wait()
        # scatter it back
        src = make(kind, dtype, everything) if r == root else None
        got = full(kind, dtype, N, 99)
        world.scatter(src, got, root=root)
        check(got, block(r, N))
        if r == root:
            world.iscatter(src, ucoll.IN_PLACE, root=root).wait()
            check(src, everything)
        else:
            got = full(kind, dtype, N, 99)
            world.iscatter(None, got, root=root).wait()
            check(got, block(r, N))


def v_layout(p):
    """counts i+1 and displacements with a one-element gap after each block."""
    counts = [i + 1 for i in range(p)]
    displs = [sum(counts[:i]) + i for i in range(p)]
    return counts, displs, displs[-1] + counts[-1] + 1


def v_expect(p, counts, displs, extent, fill=99):
    e = np.full(extent, fill)
    for i in range(p):
        e[displs[i]:displs[i] + counts[i]] = block(i, counts[i])
    return e


@pytest.mark.parametrize("kind,dtype", CASES)
def test_gatherv_scatterv(world, kind, dtype):
    p, r = world.size, world.rank
    counts, displs, extent = v_layout(p)
    expect = v_expect(p, counts, displs, extent)
    for root in roots(world):
        mine = make(kind, dtype, block(r, counts[r]))
        out = full(kind, dtype, extent, 99) if r == root else None
        world.gatherv(mine, out, counts, displs, root=root)
        if r == root:
            check(out, expect)
        out = full(kind, dtype, p * (p + 1) // 2, 99) if r == root else None
        # packed displacements by default; counts may be a numpy array; the
        # count arrays handed to C are temporaries the request keeps alive
        req = world.igatherv(mine, out, counts=np.array(counts), root=root)
        gc.collect()
        req.wait()
        if r == root:
            check(out, np.concatenate([block(i, counts[i]) for i in range(p)]))
        # scatterv back, into place at the root
        src = make(kind, dtype, expect) if r == root else None
        got = full(kind, dtype, counts[r], 0)
        world.scatterv(src, got, counts if r == root else None, displs, root=root)
        check(got, block(r, counts[r]))
        if r == root:
            world.iscatterv(src, ucoll.IN_PLACE, counts, displs, root=root).wait()
            check(src, expect)
        else:
            got = full(kind, dtype, counts[r], 0)
            world.iscatterv(None, got, root=root).wait()
            check(got, block(r, counts[r]))


@pytest.mark.parametrize("kind,dtype", CASES)
def test_allgather(world, kind, dtype):
    p, r = world.size, world.rank
    everything = np.concatenate([block(i, N) for i in range(p)])
    out = full(kind, dtype, N * p, 99)
    world.allgather(make(kind, dtype, block(r, N)), out)
    check(out, everything)
    buf = full(kind, dtype, N * p, 99)
    buf[r * N:(r + 1) * N] = make(kind, dtype, block(r, N))
    world.iallgather(buf).wait()  # one buffer: in place
    check(buf, everything)


@pytest.mark.parametrize("kind,dtype", CASES)
def test_allgatherv(world, kind, dtype):
    p, r = world.size, world.rank
    counts, displs, extent = v_layout(p)
    expect = v_expect(p, counts, displs, extent)
    out = full(kind, dtype, extent, 99)
    world.allgatherv(make(kind, dtype, block(r, counts[r])), out, counts, displs)
    check(out, expect)
    buf = full(kind, dtype, extent, 99)
    buf[displs[r]:displs[r] + counts[r]] = make(kind, dtype, block(r, counts[r]))
    world.iallgatherv(ucoll.IN_PLACE, buf, counts, displs).wait()
    check(buf, expect)


@pytest.mark.parametrize("kind,dtype", CASES)
def test_alltoall(world, kind, dtype):
    p, r = world.size, world.rank
    # block j of rank i: 10 * i + j, N elements
    send = np.repeat(10 * r + np.arange(p), N)
    expect = np.repeat(10 * np.arange(p) + r, N)
    out = full(kind, dtype, N * p, 99)
    world.alltoall(make(kind, dtype, send), out)
    check(out, expect)
    buf = make(kind, dtype, send)
    world.ialltoall(buf).wait()  # in place
    check(buf, expect)


@pytest.mark.parametrize("kind,dtype", CASES)
def test_alltoallv(world, kind, dtype):
    p, r = world.size, world.rank
    # rank i sends i + j + 1 elements of value 10 * i + j to rank j
    scounts = [r + j + 1 for j in range(p)]
    rcounts = [i + r + 1 for i in range(p)]
    send = np.concatenate([np.full(scounts[j], 10 * r + j) for j in range(p)])
    expect = np.concatenate([np.full(rcounts[i], 10 * i + r) for i in range(p)])
    out = full(kind, dtype, sum(rcounts), 99)
    world.alltoallv(make(kind, dtype, send), out, scounts, rcounts)
    check(out, expect)
    # explicit displacements with gaps, nonblocking
    sdispls = [sum(scounts[:j]) + 2 * j for j in range(p)]
    rdispls = [sum(rcounts[:i]) + i for i in range(p)]
    sb = full(kind, dtype, sdispls[-1] + scounts[-1], 77)
    for j in range(p):
        sb[sdispls[j]:sdispls[j] + scounts[j]] = make(kind, dtype, np.full(scounts[j], 10 * r + j))
    out = full(kind, dtype, rdispls[-1] + rcounts[-1], 99)
    world.ialltoallv(sb, out, scounts, rcounts, sdispls, rdispls).wait()
    e = np.full(rdispls[-1] + rcounts[-1], 99)
    for i in range(p):
        e[rdispls[i]:rdispls[i] + rcounts[i]] = 10 * i + r
    check(out, e)
    # in place: every block the same size both ways
    counts = [3] * p
    buf = make(kind, dtype, np.repeat(10 * r + np.arange(p), 3))
    world.alltoallv(buf, rcounts=counts)
    check(buf, np.repeat(10 * np.arange(p) + r, 3))


# ---- point to point -------------------------------------------------------


@pytest.mark.parametrize("kind,dtype", SOME)
def test_send_recv_ring(world, kind, dtype):
    p, r = world.size, world.rank
    right, left = (r + 1) % p, (r - 1) % p
    got = full(kind, dtype, N, 0)
    rreq = world.irecv(got, source=left, tag=5)
    world.send(make(kind, dtype, block(r, N)), right, tag=5)
    st = rreq.wait()
    check(got, block(left, N))
    assert (st.source, st.tag, st.count) == (left, 5, N)
    assert st.bytes == N * ucoll.dtype_size(ucoll.dtype_of(got))
    assert rreq.status is st and rreq.wait() is st  # waiting again: the same result
    # blocking receive, isend, wildcard source and tag
    sreq = world.isend(make(kind, dtype, block(r, N)), right, tag=100 + r)
    got = full(kind, dtype, N, 0)
    st = world.recv(got, ucoll.ANY_SOURCE, ucoll.ANY_TAG)
    assert (st.source, st.tag) == (left, 100 + left)
    check(got, block(left, N))
    assert sreq.wait() is not None


def test_p2p_many_and_test(world):
    """Many requests in flight, completed by waitall and by polling test()."""
    p, r = world.size, world.rank
    k = 50
    bufs = [np.zeros(4, np.int64) for _ in range(k)]
    recvs = [world.irecv(bufs[i], (r - 1) % p, tag=i) for i in range(k)]
    sends = [world.isend(np.full(4, 1000 * r + i, np.int64), (r + 1) % p, tag=i)
             for i in range(k)]
    # polling one of them until done drives progress for all
    while not recvs[-1].test():
        pass
    sts = ucoll.waitall(recvs + sends)
    for i in range(k):
        check(bufs[i], np.full(4, 1000 * ((r - 1) % p) + i))
        assert sts[i].tag == i
    assert all(q.done for q in recvs + sends)


def test_truncation(world):
    p, r = world.size, world.rank
    sreq = world.isend(np.arange(8, dtype=np.int32), (r + 1) % p, tag=9)
    small = np.zeros(3, np.int32)
    with pytest.raises(ucoll.TruncationError) as ei:
        world.recv(small, (r - 1) % p, tag=9)
    sreq.wait()
    e = ei.value
    assert e.status == ucoll.ErrorCode.ERR_TRUNCATE and e.code == -3 and e.call == "recv"
    assert e.message_status.bytes == 32 and e.message_status.source == (r - 1) % p
    world.barrier()


# ---- requests keep their buffers ------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_request_keeps_buffers(world, kind):
    x = full(kind, "float64", 1000, 1)
    ref = weakref.ref(x)
    req = world.iallreduce(x)
    del x
    gc.collect()
    assert ref() is not None  # alive while the request is in flight
    req.wait()
    assert req._keep is None
    gc.collect()
    assert ref() is None  # let go after completion
    # a temporary output is fine too: the request holds it
    reqs = [world.iallgather(full(kind, "int32", 3, world.rank), full(kind, "int32", 3 * world.size, 0))
            for _ in range(10)]
    gc.collect()
    ucoll.waitall(reqs)


# ---- communicators --------------------------------------------------------


def test_split(world):
    p, r = world.size, world.rank
    with world.split(r % 2, key=-r) as sub:  # reversed order within each half
        members = [i for i in range(p) if i % 2 == r % 2]
        assert sub.size == len(members)
        assert sub.rank == sorted(members, reverse=True).index(r)
        x = np.array([r], np.int64)
        sub.allreduce(x)
        check(x, [sum(members)])
        got = np.zeros(sub.size, np.int64)
        sub.allgather(np.array([r], np.int64), got)
        check(got, sorted(members, reverse=True))
    assert "freed" in repr(sub)
    with pytest.raises(ucoll.FinalizedError, match="freed"):
        sub.allreduce(np.zeros(1))
    with pytest.raises(ucoll.FinalizedError):
        sub.rank
    # color < 0 (or None) leaves a rank out
    sub = world.split(0 if r == 0 else ucoll.UNDEFINED)
    if r == 0:
        assert sub.size == 1
        sub.free()
    else:
        assert sub is None
    assert world.split(None) is None
    with pytest.raises(ucoll.ArgumentError, match="world"):
        world.free()


# ---- errors every rank raises alike, before any C call --------------------


def test_argument_errors(world):
    p = world.size
    x, y = np.zeros(4), np.zeros(4)

    def raises(call, arg, match, fn, *a, **k):
        with pytest.raises(ucoll.ArgumentError, match=match) as ei:
            fn(*a, **k)
        e = ei.value
        assert (e.call, e.arg, e.status, e.code) == (call, arg, ucoll.ErrorCode.ERR_ARG, -1)
        assert isinstance(e, ucoll.Error) and isinstance(e, ValueError)
        assert "%s: %s: " % (call, arg) in str(e)

    raises("bcast", "root", "not a rank", world.bcast, x, root=p)
    raises("ibcast", "root", "not a rank", world.ibcast, x, root=-1)
    raises("reduce", "root", "an int", world.reduce, x, root="0")
    raises("allgather", "rbuf", r"expected size\*count", world.allgather, x, np.zeros(4 * p + 1))
    raises("alltoall", "rbuf", "expected", world.alltoall, x, np.zeros(4 * p + 1))
    raises("allreduce", "rbuf", "has 3 elements", world.allreduce, x, np.zeros(3))
    raises("allreduce", "rbuf", "does not match sbuf's float64", world.allreduce, x,
           np.zeros(4, np.float32))
    raises("allreduce", "op", "not defined for float64", world.allreduce, x, op="band")
    raises("allreduce", "op", "unknown reduction", world.allreduce, x, op="avg")
    raises("allreduce", "sbuf", "not C-contiguous", world.allreduce, np.zeros((4, 4))[:, 0])
    ro = np.zeros(4)
    ro.flags.writeable = False
    raises("allreduce", "rbuf", "read-only", world.allreduce, x, ro)
    raises("allreduce", "sbuf", "read-only", world.allreduce, ro)  # in place writes sbuf
    world.allreduce(ro, y)  # read-only input is fine
    raises("iallreduce", "sbuf", "bool", world.iallreduce, np.zeros(4, bool))
    raises("allreduce", "sbuf", "not a buffer", world.allreduce, [1.0, 2.0])
    raises("allreduce", "rbuf", "IN_PLACE is not allowed", world.allreduce, x, ucoll.IN_PLACE)
    raises("allgatherv", "counts", "entries", world.allgatherv, x, np.zeros(99), [4] * (p + 1))
    raises("allgatherv", "counts", "required", world.allgatherv, x, np.zeros(99))
    raises("reduce_scatter", "sbuf", r"sum\(counts\)", world.reduce_scatter, np.zeros(4 * p + 1),
           np.zeros(4), [4] * p)
    if p > 1:
        raises("reduce_scatter_block", "sbuf", "not a multiple", world.reduce_scatter_block,
               np.zeros(4 * p + 1))
    raises("send", "dest", "not a rank", world.send, x, p)
    raises("send", "tag", "outside", world.send, x, 0, tag=-1)
    raises("recv", "source", "not a rank", world.recv, x, source=p)
    raises("irecv", "tag", "outside", world.irecv, x, tag=ucoll.TAG_UB + 1)
    world.barrier()


@needs_torch
def test_torch_argument_errors(world):
    t = torch.zeros(4, 4)
    with pytest.raises(ucoll.ArgumentError, match="not contiguous") as ei:
        world.allreduce(t[:, 1])
    assert ei.value.arg == "sbuf"
    with pytest.raises(ucoll.ArgumentError, match="device meta"):
        world.allreduce(torch.zeros(4, device="meta"))
    with pytest.raises(ucoll.ArgumentError, match="bool"):
        world.allreduce(torch.zeros(4, dtype=torch.bool))
    with pytest.raises(ucoll.ArgumentError, match="complex"):
        world.allreduce(torch.zeros(4, dtype=torch.complex64))
    w = torch.ones(4, requires_grad=True)
    with pytest.raises(ucoll.ArgumentError, match="requires grad") as ei:
        world.allreduce(w)  # in place into a leaf that requires grad
    assert ei.value.arg == "sbuf"
    out = torch.zeros(4)
    world.allreduce(w, out)  # reading it is fine
    check(out, np.full(4, world.size))
    with torch.no_grad():
        world.allreduce(w)  # as an optimizer step would
    check(w.detach(), np.full(4, world.size))
    with pytest.raises(ucoll.ArgumentError, match="float32 does not match sbuf's float64"):
        world.allreduce(torch.zeros(4, dtype=torch.float64), torch.zeros(4))
    world.barrier()


def test_mixed_libraries(world):
    """numpy in, torch out (one datatype); bytes and bytearray as BYTE."""
    p, r = world.size, world.rank
    if torch is not None:
        out = torch.zeros(N * p, dtype=torch.int16)
        world.allgather(np.full(N, r, np.int16), out)
        check(out, np.repeat(np.arange(p), N))
    got = bytearray(3 * p)
    world.allgather(bytes([r, r + 1, r + 2]), got)
    assert got == bytes(b for i in range(p) for b in (i, i + 1, i + 2))
    u8 = np.zeros(3 * p, np.uint8)  # bytes and uint8 are one representation
    world.allgather(bytearray([r] * 3), u8)
    check(u8, np.repeat(np.arange(p), 3))


def test_free_busy(world):
    """free() with a receive pending on the communicator: BusyError, and it
    stays usable; once the receive completes, free() succeeds."""
    r, p = world.rank, world.size
    sub = world.split(0)
    got = np.zeros(1, np.int64)
    req = sub.irecv(got, (r - 1) % p, tag=7)
    with pytest.raises(ucoll.BusyError):
        sub.free()
    assert "freed" not in repr(sub)
    sub.barrier()  # every rank has seen BusyError before anyone sends
    sub.send(np.full(1, r, np.int64), (r + 1) % p, tag=7)
    req.wait()
    assert got[0] == (r - 1) % p
    sub.free()
    assert "freed" in repr(sub)


# ---- last: the finalized context ------------------------------------------


def test_zz_finalize(ctx, world):
    sub = world.split(0)
    pending = world.irecv(np.zeros(1), ucoll.ANY_SOURCE, tag=12345)  # never sent
    world.barrier()
    ctx.finalize()
    ctx.finalize()  # idempotent
    assert ctx.finalized and "finalized" in repr(ctx)
    calls = [lambda: world.allreduce(np.zeros(1)), lambda: world.iallreduce(np.zeros(1)),
             lambda: world.barrier(), lambda: world.send(np.zeros(1), 0),
             lambda: world.recv(np.zeros(1)), lambda: world.rank, lambda: ctx.world,
             lambda: ctx.size, lambda: ctx.local_rank, lambda: ctx.progress(),
             lambda: sub.bcast(np.zeros(1)), lambda: sub.free(), lambda: world.split(0),
             lambda: pending.wait(), lambda: pending.test()]
    for c in calls:
        with pytest.raises(ucoll.FinalizedError):
            c()
    assert issubclass(ucoll.FinalizedError, ucoll.ArgumentError)
