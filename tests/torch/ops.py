"""Every operation of the "ucoll" torch.distributed backend against values
computed here: broadcast, all_reduce (SUM AVG MIN MAX PRODUCT, bitwise on
integers, bool), reduce, all_gather and all_gather_into_tensor,
all_gather_coalesced, reduce_scatter and reduce_scatter_tensor, gather,
scatter, all_to_all and all_to_all_single (with and without split sizes),
barrier, send/recv/isend/irecv and recv from any source; every dtype ucoll
maps; every root; async ops whose futures complete without wait(); and the
errors for what the backend refuses.

  ops.py [--break]   --break perturbs one expected value: the run must fail
                     (meson runs it so, should_fail), which shows that the
                     checks can fail.

Run under torchrun or ucollrun (see run_torch.sh).
"""
import functools
import warnings
import sys

import torch
import torch.distributed as dist
from torch.distributed import ReduceOp

from common import Failures, log, setup, wait_done

BREAK = "--break" in sys.argv
warnings.filterwarnings("ignore", message=".*will be deprecated")

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
          torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool]
SIZES = [0, 1, 7, 4099]


def val(r, n, dtype, salt=0):
    """rank r's data: small integers, exact in every dtype"""
    x = torch.arange(n, dtype=torch.int64) + r + salt
    if dtype == torch.bool:
        return (x % 2) == 0
    return (x % 7 + 1).to(dtype)


def small(r, n, dtype):
    """factors for PRODUCT: 1 or 2, so that products stay exact"""
    x = (torch.arange(n, dtype=torch.int64) + r) % 2 + 1
    return x.to(dtype)


def expected_allreduce(op, p, n, dtype):
    xs = [(small if op == ReduceOp.PRODUCT else val)(r, n, dtype) for r in range(p)]
    if dtype == torch.bool:
        if op in (ReduceOp.SUM, ReduceOp.MAX):
            return functools.reduce(torch.logical_or, xs)
        if op in (ReduceOp.PRODUCT, ReduceOp.MIN):
            return functools.reduce(torch.logical_and, xs)
        f = {ReduceOp.BAND: torch.bitwise_and, ReduceOp.BOR: torch.bitwise_or,
             ReduceOp.BXOR: torch.bitwise_xor}[op]
        return functools.reduce(f, xs)
    if op == ReduceOp.SUM:
        return functools.reduce(torch.add, xs)
    if op == ReduceOp.AVG:
        s = functools.reduce(torch.add, [x.to(torch.float64 if dtype.is_floating_point else torch.int64)
                                         for x in xs])
        return (s / p if dtype.is_floating_point else torch.div(s, p, rounding_mode="trunc")).to(dtype)
    if op == ReduceOp.PRODUCT:
        return functools.reduce(torch.mul, xs)
    if op == ReduceOp.MIN:
        return functools.reduce(torch.minimum, xs)
    if op == ReduceOp.MAX:
        return functools.reduce(torch.maximum, xs)
    f = {ReduceOp.BAND: torch.bitwise_and, ReduceOp.BOR: torch.bitwise_or,
         ReduceOp.BXOR: torch.bitwise_xor}[op]
    return functools.reduce(f, xs)


def ops_for(dtype):
    if dtype == torch.bool:
        return [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BOR,
                ReduceOp.BAND, ReduceOp.BXOR]
    base = [ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.PRODUCT]
    if not dtype.is_floating_point:
        base += [ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR]
    return base


def opname(op):
    for name in ("SUM", "AVG", "MIN", "MAX", "PRODUCT", "BAND", "BOR", "BXOR"):
        if op == getattr(ReduceOp, name):
            return name
    return str(op)


def main():
    rank, p = setup("ucoll")
    F = Failures(rank)

    # ---- broadcast, every root, every dtype, zero-size too
    for dtype in DTYPES:
        for n in SIZES:
            for root in range(p):
                t = val(rank, n, dtype) if rank == root else torch.zeros(n, dtype=dtype)
                dist.broadcast(t, src=root)
                want = val(root, n, dtype)
                if BREAK and dtype == torch.float32 and n == 7 and root == 0:
                    want = want + 1
                F.equal(t, want, f"broadcast {dtype} n={n} root={root}")

    # ---- broadcast of several tensors at once (the backend's coalesced
    # form: mixed dtypes and shapes, one empty), through the group object
    pg = dist.distributed_c10d._get_default_group()
    for root in range(p):
        for scale in (1, 5000):
            shapes = [(3 * scale,), (2, 5 * scale), (0,), (7 * scale,)]
            dts = [torch.float32, torch.bfloat16, torch.int64, torch.uint8]
            want = [val(root, int(torch.Size(s).numel()), d).reshape(s) for s, d in zip(shapes, dts)]
            ts = [w.clone() if rank == root else torch.zeros(s, dtype=d)
                  for w, s, d in zip(want, shapes, dts)]
            opts = dist.BroadcastOptions()
            opts.rootRank = root
            pg.broadcast(ts, opts).wait()
            for k, (t, w) in enumerate(zip(ts, want)):
                F.equal(t, w, f"broadcast of 4 tensors, #{k} ({w.dtype}), scale {scale}, root {root}")

    # ---- all_reduce, every op that applies, every dtype
    for dtype in DTYPES:
        for op in ops_for(dtype):
            for n in SIZES:
                t = (small if op == ReduceOp.PRODUCT else val)(rank, n, dtype)
                dist.all_reduce(t, op=op)
                F.equal(t, expected_allreduce(op, p, n, dtype),
                        f"all_reduce {opname(op)} {dtype} n={n}")
    # complex: torch views it as float pairs
    t = torch.complex(val(rank, 5, torch.float32), -val(rank, 5, torch.float32))
    dist.all_reduce(t)
    s = sum(val(r, 5, torch.float32) for r in range(p))
    F.equal(t, torch.complex(s, -s), "all_reduce SUM complex64")
    # 1 Mi float32 elements: rendezvous-sized messages
    t = torch.full((1 << 20,), float(rank + 1))
    dist.all_reduce(t, op=ReduceOp.AVG)
    F.equal(t, torch.full((1 << 20,), (p + 1) / 2), "all_reduce AVG 1Mi float32")

    # ---- all_reduce_coalesced
    ts = [val(rank, n, torch.float32) for n in (3, 100, 1)]
    dist.all_reduce_coalesced(ts, op=ReduceOp.MAX)
    for i, n in enumerate((3, 100, 1)):
        F.equal(ts[i], expected_allreduce(ReduceOp.MAX, p, n, torch.float32),
                f"all_reduce_coalesced MAX tensor {i}")

    # ---- reduce, every root
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.bool):
        for op in (ReduceOp.SUM, ReduceOp.MAX) + ((ReduceOp.AVG,) if dtype != torch.bool else ()):
            for root in range(p):
                n = 33
                t = val(rank, n, dtype)
                dist.reduce(t, dst=root, op=op)
                want = expected_allreduce(op, p, n, dtype) if rank == root else val(rank, n, dtype)
                F.equal(t, want, f"reduce {opname(op)} {dtype} root={root}")

    # ---- all_gather: separate outputs, then views of one buffer
    for dtype in (torch.float32, torch.float16, torch.int8, torch.bool):
        for n in SIZES:
            outs = [torch.zeros(n, dtype=dtype) for _ in range(p)]
            dist.all_gather(outs, val(rank, n, dtype))
            for r in range(p):
                F.equal(outs[r], val(r, n, dtype), f"all_gather {dtype} n={n} from {r}")
    flat = torch.zeros(p * 10, dtype=torch.int32)
    outs = list(flat.chunk(p))
    dist.all_gather(outs, val(rank, 10, torch.int32))
    F.equal(flat, torch.cat([val(r, 10, torch.int32) for r in range(p)]), "all_gather into views")
    out = torch.zeros(p, 3, 5, dtype=torch.float64)
    dist.all_gather_into_tensor(out, val(rank, 15, torch.float64).view(3, 5))
    F.equal(out, torch.stack([val(r, 15, torch.float64).view(3, 5) for r in range(p)]),
            "all_gather_into_tensor")
    # non-contiguous output tensors are copied into
    big = torch.zeros(p, 8)
    cols = [big[r, ::2] for r in range(p)]
    dist.all_gather(cols, val(rank, 4, torch.float32))
    for r in range(p):
        F.equal(big[r, ::2], val(r, 4, torch.float32), f"all_gather into strided view {r}")

    # ---- all_gather_coalesced
    ins = [val(rank, 3, torch.float32), val(rank, 5, torch.float32, 1)]
    outl = [[torch.zeros(3), torch.zeros(5)] for _ in range(p)]
    dist.all_gather_coalesced(outl, ins)
    for r in range(p):
        F.equal(outl[r][0], val(r, 3, torch.float32), f"all_gather_coalesced [{r}][0]")
        F.equal(outl[r][1], val(r, 5, torch.float32, 1), f"all_gather_coalesced [{r}][1]")

    # ---- reduce_scatter (list) and reduce_scatter_tensor
    for dtype in (torch.float32, torch.float64, torch.int32, torch.bfloat16):
        for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG):
            n = 9
            ins = [val(rank, n, dtype, salt=j) for j in range(p)]
            out = torch.zeros(n, dtype=dtype)
            dist.reduce_scatter(out, ins, op=op)
            xs = [val(r, n, dtype, salt=rank) for r in range(p)]
            if op == ReduceOp.SUM:
                want = functools.reduce(torch.add, xs)
            elif op == ReduceOp.MAX:
                want = functools.reduce(torch.maximum, xs)
            else:
                s = functools.reduce(torch.add, [x.to(torch.float64) for x in xs])
                want = (s / p if dtype.is_floating_point else
                        torch.div(s, p, rounding_mode="trunc")).to(dtype)
            F.equal(out, want, f"reduce_scatter {opname(op)} {dtype}")
            inp = torch.cat(ins)
            out2 = torch.zeros(n, dtype=dtype)
            dist.reduce_scatter_tensor(out2, inp, op=op)
            F.equal(out2, want, f"reduce_scatter_tensor {opname(op)} {dtype}")

    # ---- gather and scatter, every root
    for root in range(p):
        for n in (0, 6, 1000):
            gl = [torch.zeros(n, dtype=torch.int16) for _ in range(p)] if rank == root else None
            dist.gather(val(rank, n, torch.int16), gather_list=gl, dst=root)
            if rank == root:
                for r in range(p):
                    F.equal(gl[r], val(r, n, torch.int16), f"gather root={root} n={n} from {r}")
            sl = [val(r, n, torch.float32, salt=root) for r in range(p)] if rank == root else None
            out = torch.zeros(n)
            dist.scatter(out, scatter_list=sl, src=root)
            F.equal(out, val(rank, n, torch.float32, salt=root), f"scatter root={root} n={n}")

    # ---- all_to_all_single: equal splits, then given split sizes (2-D rows)
    inp = torch.cat([torch.full((2, 3), rank * 10 + j, dtype=torch.int64) for j in range(p)])
    out = torch.zeros_like(inp)
    dist.all_to_all_single(out, inp)
    F.equal(out, torch.cat([torch.full((2, 3), i * 10 + rank, dtype=torch.int64)
                            for i in range(p)]), "all_to_all_single equal splits")
    in_splits = [j + 1 for j in range(p)]           # j+1 rows to rank j
    out_splits = [rank + 1] * p                     # rank+1 rows from everyone
    inp = torch.cat([torch.full((j + 1, 3), float(rank * 10 + j)) for j in range(p)])
    out = torch.zeros(sum(out_splits), 3)
    dist.all_to_all_single(out, inp, out_splits, in_splits)
    F.equal(out, torch.cat([torch.full((rank + 1, 3), float(i * 10 + rank)) for i in range(p)]),
            "all_to_all_single with split sizes")

    # ---- all_to_all (lists, sizes differ per pair)
    ins = [torch.full((j + rank + 1,), float(rank * 10 + j), dtype=torch.float64) for j in range(p)]
    outs = [torch.zeros(rank + i + 1, dtype=torch.float64) for i in range(p)]
    dist.all_to_all(outs, ins)
    for i in range(p):
        F.equal(outs[i], torch.full((rank + i + 1,), float(i * 10 + rank), dtype=torch.float64),
                f"all_to_all from {i}")

    # ---- barrier
    dist.barrier()

    # ---- point to point: a ring with isend/irecv, then recv from any source
    if p > 1:
        nxt, prv = (rank + 1) % p, (rank - 1) % p
        t = val(rank, 70000, torch.float32)  # past the eager limit
        r = torch.zeros(70000)
        reqs = [dist.irecv(r, src=prv, tag=5), dist.isend(t, dst=nxt, tag=5)]
        for q in reqs:
            q.wait()
        F.equal(r, val(prv, 70000, torch.float32), "isend/irecv ring")
        if rank == 0:
            got = set()
            for _ in range(p - 1):
                t = torch.zeros(4, dtype=torch.int64)
                src = dist.recv(t, tag=9)
                F.equal(t, torch.full((4,), src, dtype=torch.int64), f"recv any source from {src}")
                got.add(src)
            F.expect(got == set(range(1, p)), f"recv any source: senders {got}")
        else:
            dist.send(torch.full((4,), rank, dtype=torch.int64), dst=0, tag=9)
        # blocking send/recv pairs, both directions
        if rank < 2:
            t = torch.zeros(3, dtype=torch.bfloat16)
            if rank == 0:
                dist.send(val(0, 3, torch.bfloat16), dst=1)
                dist.recv(t, src=1)
                F.equal(t, val(1, 3, torch.bfloat16), "send/recv 0<-1")
            else:
                dist.recv(t, src=0)
                dist.send(val(1, 3, torch.bfloat16), dst=0)
                F.equal(t, val(0, 3, torch.bfloat16), "send/recv 1<-0")

    # ---- many async ops in flight; futures complete without wait()
    ts = [val(rank, 1000 + i, torch.float32) for i in range(20)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    futs = [w.get_future() for w in works]
    F.expect(all(wait_done(f, 60) for f in futs), "futures complete without wait()")
    for i, (w, f) in enumerate(zip(works, futs)):
        F.expect(w.is_completed() and f.done(), f"async work {i} completed")
        want = sum(val(r, 1000 + i, torch.float32) for r in range(p))
        F.equal(ts[i], want, f"async all_reduce {i}")
        F.equal(f.value()[0], want, f"future value {i}")
    w = dist.broadcast(torch.zeros(5), src=0, async_op=True)
    w.wait()
    fut = dist.all_reduce(torch.ones(3), async_op=True).get_future().then(
        lambda f: f.value()[0] * 2)
    F.equal(fut.wait(), torch.full((3,), 2.0 * p), "future.then")

    # ---- what the backend refuses, with the call in the message; every
    # rank raises locally before anything is posted, so the group goes on
    F.raises(lambda: dist.all_reduce(torch.zeros(4, 4).t()), ["allreduce", "contiguous"],
             "non-contiguous tensor")
    F.raises(lambda: dist.all_reduce(torch.zeros(4), op=ReduceOp.BAND), ["allreduce", "BAND"],
             "bitwise op on float")
    F.raises(lambda: dist.all_reduce(torch.zeros(4, dtype=torch.bool), op=ReduceOp.AVG),
             ["allreduce", "AVG", "bool"], "AVG on bool")
    F.raises(lambda: dist.all_reduce(torch.zeros(4), op=dist._make_nccl_premul_sum(2.0)),
             ["PREMUL_SUM"], "PREMUL_SUM")
    q = torch.quantize_per_tensor(torch.zeros(4), 0.1, 0, torch.quint8)
    F.raises(lambda: dist.all_reduce(q), ["allreduce", "dtype"], "quantized dtype")
    F.raises(lambda: dist.broadcast(torch.zeros(4), src=p), ["broadcast", "root"],
             "root out of range")
    F.raises(lambda: dist.all_reduce(torch.zeros(4).to_sparse()), ["allreduce"], "sparse tensor")
    F.raises(lambda: dist.all_gather([torch.zeros(3)] * p, torch.zeros(4)),
             ["allgather", "elements"], "all_gather size mismatch")
    F.raises(lambda: dist.all_to_all_single(torch.zeros(p + 1), torch.zeros(p + 1), [1] * p,
                                            [1] * p), ["alltoall_base", "split"],
             "all_to_all_single bad splits")
    t = torch.full((3,), float(rank))
    dist.all_reduce(t)
    F.equal(t, torch.full((3,), float(p * (p - 1) / 2)), "all_reduce after refused calls")

    F.report(f"ops p={p}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
