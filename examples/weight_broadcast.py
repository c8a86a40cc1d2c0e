#!/usr/bin/env python3
"""Broadcast a model's weights from rank 0 to every rank, as a job does when
it starts from rank 0's checkpoint, and check them bit for bit.

A transformer-like torch.nn model (token embedding, N blocks of attention
projections and MLP with LayerNorms) of about --params parameters is built
on every rank: rank 0 initialises it (seed 0), the others allocate it and
zero it. The state_dict goes over in buckets of --bucket-mb: rank 0
flattens tensors into buckets, every bucket is broadcast with a nonblocking
broadcast, all buckets in flight at once (rank 0 posts each one as soon as
it is flattened), and each rank unflattens each bucket into its tensors as
soon as it has arrived, while later ones are still in flight. The bucket
buffers are allocated once and reused (--fresh: new ones every time). Then
every rank compares a CRC-32 of every tensor with rank 0's. Prints bytes, time and GB/s (the slowest rank's time, from a
barrier to its last tensor copied out), per iteration and their median, and
one "RESULT ..." line for scripts (bench/weight_bcast_vs_gloo.sh).

  --backend ucoll|gloo   through torch.distributed (default ucoll)
  --direct               the Python package ucoll (ctx.world.ibcast), no
                         torch.distributed process group
  --params 100M          model size (K, M, G suffixes)
  --dtype float32|bfloat16  (gloo of torch 1.13 has no bfloat16: its buckets
                         go to gloo as uint8 views, the same bytes)
  --bucket-mb 64
  --iters 3              timed broadcasts
  --warmup 1             whole broadcasts before them (printed, not counted:
                         the first one pays connections and first touches)
  --fresh                new bucket buffers for every broadcast (default:
                         allocated and touched once, reused)
  --flat                 the model's tensors live in the bucket buffers (as
                         FSDP's flat parameters or DDP's bucket views): set up
                         once, untimed; a broadcast is then the buckets'
                         broadcasts alone, no flatten and no unflatten copy
  --coalesced            each bucket's tensors go as they are, in one
                         coalesced broadcast (the ucoll backend's broadcast
                         of a list of tensors, or ucoll's ibcast_coalesced
                         with --direct): no flatten, no unflatten, no bucket
                         buffers; the model stays as it is. gloo's broadcast
                         takes one tensor per device, so with gloo this mode
                         flattens, as torch's own coalesced broadcast does

Run (from the project root, after ninja -C build):
  PYTHONPATH=build/python build/launcher/ucollrun -n 4 \\
      /usr/bin/python3 examples/weight_broadcast.py --backend ucoll
  PYTHONPATH=build/python torchrun --standalone --nproc_per_node 4 \\
      --redirects 1 --tee 1 examples/weight_broadcast.py --backend gloo
"""
import argparse
import os
import statistics
import sys
import time
import zlib

import torch
import torch.nn as nn


def parse_count(s):
    mult = {"K": 10**3, "M": 10**6, "G": 10**9}
    s = s.strip().upper()
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(float(s))


# ---- the model ---------------------------------------------------------------

class Block(nn.Module):
    def __init__(self, d, **kw):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, **kw)
        self.qkv = nn.Linear(d, 3 * d, **kw)
        self.proj = nn.Linear(d, d, **kw)
        self.ln2 = nn.LayerNorm(d, **kw)
        self.fc1 = nn.Linear(d, 4 * d, **kw)
        self.fc2 = nn.Linear(4 * d, d, **kw)


class Transformer(nn.Module):
    """About 12 d^2 parameters per block plus vocab * d for the embedding."""

    def __init__(self, vocab, d, layers, ctx_len=1024, **kw):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, **kw)
        self.pos = nn.Embedding(ctx_len, d, **kw)
        self.blocks = nn.ModuleList([Block(d, **kw) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d, **kw)


def shape_for(params):
    """(vocab, d, layers) for about params parameters."""
    d = 1024 if params >= 50e6 else 512 if params >= 5e6 else 128
    vocab = 32000 if params >= 50e6 else 8000
    per_block = 12 * d * d + 13 * d
    layers = max(1, round((params - (vocab + 1024) * d) / per_block))
    return vocab, d, layers


def build(params, dtype, root):
    vocab, d, layers = shape_for(params)
    if root:
        torch.manual_seed(0)
        return Transformer(vocab, d, layers, dtype=dtype)
    m = Transformer(vocab, d, layers, device="meta", dtype=dtype)
    m = m.to_empty(device="cpu")
    for t in m.state_dict().values():
        t.zero_()
    return m


# ---- buckets -----------------------------------------------------------------

def make_buckets(tensors, bucket_bytes):
    """Consecutive runs of tensors of at most bucket_bytes (one tensor alone
    when larger)."""
    buckets, cur, size = [], [], 0
    for t in tensors:
        n = t.numel() * t.element_size()
        if cur and size + n > bucket_bytes:
            buckets.append(cur)
            cur, size = [], 0
        cur.append(t)
        size += n
    if cur:
        buckets.append(cur)
    return buckets


def unflatten(flat, ts):
    off = 0
    for t in ts:
        n = t.numel()
        t.copy_(flat[off:off + n].view_as(t))
        off += n


def crc(t):
    """CRC-32 of a tensor's bytes (any dtype: viewed as bytes)."""
    b = t.contiguous().view(-1).view(torch.uint8).numpy()
    return zlib.crc32(memoryview(b))


# ---- communication: torch.distributed or the ucoll package ---------------------

class TorchComm:
    def __init__(self, backend):
        import datetime
        import torch.distributed as dist
        self.dist = dist
        if backend == "ucoll" or "PMIX_RANK" in os.environ:
            import ucoll.torch  # registers "ucoll"; init helper for PMIx launchers
            ucoll.torch.init_process_group(backend, timeout=datetime.timedelta(minutes=10))
        else:
            dist.init_process_group(backend, timeout=datetime.timedelta(minutes=10))
        self.rank, self.size = dist.get_rank(), dist.get_world_size()
        self.name = backend

    def ibcast_list(self, ts):
        """One broadcast of several tensors from rank 0 (None: this backend
        cannot; the caller flattens)."""
        if self.name == "gloo":
            return None
        opts = self.dist.BroadcastOptions()
        opts.rootRank = 0
        return self.dist.distributed_c10d._get_default_group().broadcast(ts, opts)

    def ibcast(self, t):
        if t.dtype == torch.bfloat16 and self.name == "gloo":
            t = t.view(torch.uint8)  # torch 1.13 gloo: "Invalid scalar type"; same bytes
        return self.dist.broadcast(t, src=0, async_op=True)

    def barrier(self):
        self.dist.barrier()

    def max(self, x):
        t = torch.tensor([x], dtype=torch.float64)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return t.item()

    def bcast(self, t):
        self.dist.broadcast(t, src=0)

    def sum(self, x):
        t = torch.tensor([x], dtype=torch.int64)
        self.dist.all_reduce(t)
        return int(t.item())

    def close(self):
        self.dist.destroy_process_group()


class DirectComm:
    """The ucoll Python package: ucoll.init() under a PMIx launcher, or
    ucoll.init_oob over torchrun's store when RANK/WORLD_SIZE are set."""

    def __init__(self):
        import ucoll
        self.ucoll = ucoll
        if "RANK" in os.environ and "PMIX_RANK" not in os.environ:
            import torch.distributed as dist
            rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
            agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
            store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                                  size, is_master=(rank == 0 and not agent))
            rounds = [0]

            def allgather(data):
                k = f"weight_broadcast/direct/{rounds[0]}/"
                rounds[0] += 1
                store.set(k + str(rank), data)
                return b"".join(store.get(k + str(r)) for r in range(size))

            self.ctx = ucoll.init_oob(rank, size, allgather)
        else:
            self.ctx = ucoll.init()
        self.world = self.ctx.world
        self.rank, self.size = self.world.rank, self.world.size
        self.name = "ucoll-direct"

    def ibcast(self, t):
        return self.world.ibcast(t, root=0)

    def ibcast_list(self, ts):
        return self.world.ibcast_coalesced(ts, root=0)

    def barrier(self):
        self.world.barrier()

    def max(self, x):
        t = torch.tensor([x], dtype=torch.float64)
        self.world.allreduce(t, op=self.ucoll.MAX)
        return t.item()

    def bcast(self, t):
        self.world.bcast(t, root=0)

    def sum(self, x):
        t = torch.tensor([x], dtype=torch.int64)
        self.world.allreduce(t)
        return int(t.item())

    def close(self):
        self.ctx.finalize()


# ---- main --------------------------------------------------------------------

def staging(buckets_of):
    """One flat buffer per bucket, touched once: reused by every broadcast,
    as a job that sends its weights again and again (trainer to inference
    workers) keeps its staging buffers. First touches are expensive on some
    machines (tens of us per page in a VM), so --fresh shows that cost
    apart."""
    return [torch.zeros(sum(t.numel() for t in b), dtype=b[0].dtype) for b in buckets_of]


def make_flat(model, names, buckets_of, flats):
    """--flat: copy every tensor into its bucket's buffer once and make the
    model's parameter (or buffer) a view of it, so that what lands in the
    buffer is the weight itself. Returns the new state tensors (views), in
    the order of names."""
    where = {}
    i = 0
    for b, f in zip(buckets_of, flats):
        off = 0
        for t in b:
            n = t.numel()
            view = f[off:off + n].view_as(t)
            view.copy_(t)
            where[names[i]] = view
            off += n
            i += 1
    with torch.no_grad():
        for name in names:
            mod_name, _, leaf = name.rpartition(".")
            mod = model.get_submodule(mod_name) if mod_name else model
            if leaf in mod._parameters:
                mod._parameters[leaf].data = where[name]
            else:
                mod._buffers[leaf] = where[name]
    state = model.state_dict()
    for name in names:
        assert state[name].data_ptr() == where[name].data_ptr(), name
    return [state[k] for k in names]


def broadcast_state(comm, buckets_of, flats, flat=False, coalesced=False):
    """One bucketed broadcast of the buckets' tensors from rank 0 through the
    flat buffers; returns seconds. Copies overlap the transfers: rank 0
    posts each bucket's broadcast as soon as it is flattened, the others
    post every receive first and unflatten each bucket as soon as it has
    arrived, while the later ones are still in flight. coalesced: each
    bucket's tensors in one broadcast of the list, every bucket in flight,
    where the backend can (else flattened as above)."""
    comm.barrier()
    t0 = time.perf_counter()
    reqs = [comm.ibcast_list(b) for b in buckets_of] if coalesced else [None]
    if reqs[0] is not None:
        for r in reqs:
            r.wait()
    elif flat:  # the weights are the buffers: broadcast them, nothing to copy
        for r in [comm.ibcast(f) for f in flats]:
            r.wait()
    elif comm.rank == 0:
        reqs = []
        for b, f in zip(buckets_of, flats):
            torch.cat([t.reshape(-1) for t in b], out=f)
            reqs.append(comm.ibcast(f))
        for r in reqs:
            r.wait()
    else:
        reqs = [comm.ibcast(f) for f in flats]  # every bucket in flight
        for f, b, r in zip(flats, buckets_of, reqs):
            r.wait()
            unflatten(f, b)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["ucoll", "gloo"], default="ucoll")
    ap.add_argument("--direct", action="store_true")
    ap.add_argument("--params", default="100M")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    ap.add_argument("--bucket-mb", type=float, default=64)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed broadcasts first")
    ap.add_argument("--fresh", action="store_true",
                    help="new (untouched) bucket buffers for every broadcast")
    ap.add_argument("--flat", action="store_true",
                    help="the model's tensors are views of the bucket buffers: no copies")
    ap.add_argument("--coalesced", action="store_true",
                    help="each bucket's tensors in one broadcast of the list: no copies")
    args = ap.parse_args()
    torch.set_num_threads(1)

    comm = DirectComm() if args.direct else TorchComm(args.backend)
    rank, p = comm.rank, comm.size
    dtype = getattr(torch, args.dtype)
    model = build(parse_count(args.params), dtype, rank == 0)
    state = model.state_dict()
    names = list(state)
    tensors = [state[k] for k in names]
    nbytes = sum(t.numel() * t.element_size() for t in tensors)
    nparams = sum(t.numel() for t in tensors)
    bucket_bytes = int(args.bucket_mb * 2**20)
    buckets_of = make_buckets(tensors, bucket_bytes)
    if rank == 0:
        print(f"{comm.name}: p={p}, {nparams / 1e6:.1f} M parameters ({args.dtype}), "
              f"{len(tensors)} tensors, {nbytes / 1e9:.3f} GB in {len(buckets_of)} buckets "
              f"of <= {args.bucket_mb:g} MiB", flush=True)

    if args.flat and args.fresh:
        ap.error("--flat keeps the weights in the bucket buffers: no --fresh")
    if args.flat and args.coalesced:
        ap.error("--flat or --coalesced, not both")
    times = []
    flats = staging(buckets_of)
    if args.flat:
        tensors = make_flat(model, names, buckets_of, flats)
        buckets_of = make_buckets(tensors, bucket_bytes)
    for it in range(args.warmup + args.iters):
        if rank != 0:
            for t in tensors:
                t.zero_()
        if args.fresh and it > 0:
            flats = staging(buckets_of)
        dt = comm.max(broadcast_state(comm, buckets_of, flats, args.flat, args.coalesced))
        warm = it < args.warmup
        if not warm:
            times.append(dt)
        if rank == 0:
            print(f"  {'warm-up' if warm else 'iteration'} {it}: {nbytes} bytes in {dt:.3f} s = "
                  f"{nbytes / dt / 1e9:.2f} GB/s", flush=True)

    # every tensor against rank 0's, bit for bit
    sums = torch.tensor([crc(t) for t in tensors], dtype=torch.int64)
    ref = sums.clone()
    comm.bcast(ref)
    bad = [names[i] for i in range(len(names)) if sums[i] != ref[i]]
    nbad = comm.sum(len(bad))
    if bad:
        print(f"rank {rank}: {len(bad)} tensors differ from rank 0's, e.g. {bad[:3]}", flush=True)
    med = statistics.median(times)
    if rank == 0:
        print(f"checksums: {'all ' + str(len(names)) + ' tensors identical on every rank' if nbad == 0 else str(nbad) + ' mismatches'}")
        print(f"RESULT backend={comm.name} p={p} params={nparams} dtype={args.dtype} "
              f"bytes={nbytes} buckets={len(buckets_of)} mode={'flat' if args.flat else 'coalesced' if args.coalesced else 'copy'} median_s={med:.4f} "
              f"GBps={nbytes / med / 1e9:.3f} times={','.join(f'{t:.4f}' for t in times)} "
              f"check={'ok' if nbad == 0 else 'FAILED'}", flush=True)
    comm.close()
    sys.exit(0 if nbad == 0 else 1)


if __name__ == "__main__":
    main()
