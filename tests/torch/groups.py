"""Several "ucoll" process groups in one process, each its own ucoll context
and worker thread: subsets of ranks made with new_group, their operations
interleaved (posted async, completed in any order), two Python threads
driving two groups at once, a gloo group beside them giving the same
results, a group whose timeout expires (the error names the call, and the
group is destroyed without hanging), and groups destroyed and made again.

Run under torchrun or ucollrun (see run_torch.sh); needs 2 or more ranks.
"""
import datetime
import threading
import time

import torch
import torch.distributed as dist

from common import Failures, log, setup


def main():
    rank, p = setup("ucoll")
    F = Failures(rank)
    world = dist.group.WORLD
    evens = list(range(0, p, 2))
    odds = list(range(1, p, 2))
    # every rank makes every group, in the same order
    g_even = dist.new_group(evens, backend="ucoll")
    g_odd = dist.new_group(odds, backend="ucoll")
    g_pair = dist.new_group([0, 1], backend="ucoll")
    g_all = dist.new_group(backend="ucoll")
    g_gloo = dist.new_group(backend="gloo")
    mine = g_even if rank % 2 == 0 else g_odd
    members = evens if rank % 2 == 0 else odds
    F.expect(dist.get_world_size(mine) == len(members), "subgroup size")
    F.expect(dist.get_rank(mine) == members.index(rank), "rank in subgroup")
    F.expect(dist.get_backend(mine) == "ucoll", "subgroup backend")

    # ---- interleaved: async ops on four groups, waited for in reverse
    pending = []
    for i in range(40):
        a = torch.full((100 + i,), float(rank + i))
        pending.append((dist.all_reduce(a, group=world, async_op=True), a,
                        torch.full((100 + i,), float(sum(range(p)) + p * i)), f"world {i}"))
        b = torch.full((7,), float(rank * 2 + i))
        pending.append((dist.all_reduce(b, group=mine, op=dist.ReduceOp.MAX, async_op=True), b,
                        torch.full((7,), float(max(members) * 2 + i)), f"subgroup {i}"))
        root = members[i % len(members)]
        c = torch.full((1000,), float(i)) if rank == root else torch.zeros(1000)
        pending.append((dist.broadcast(c, src=root, group=mine, async_op=True), c,
                        torch.full((1000,), float(i)), f"subgroup bcast {i}"))
        if rank in (0, 1):
            d = torch.full((3,), float(rank + 1))
            pending.append((dist.all_reduce(d, group=g_pair, op=dist.ReduceOp.PRODUCT,
                                            async_op=True), d, torch.full((3,), 2.0),
                            f"pair {i}"))
        e = torch.arange(p * 4, dtype=torch.float32) + rank
        out = torch.zeros(4)
        pending.append((dist.reduce_scatter_tensor(out, e, group=g_all, async_op=True), out,
                        (torch.arange(p * 4, dtype=torch.float32)[rank * 4:rank * 4 + 4] * p
                         + sum(range(p))), f"all reduce_scatter {i}"))
    for work, got, want, what in reversed(pending):
        work.wait()
        F.equal(got, want, what)

    # ---- point to point inside a subgroup (global ranks)
    if len(members) > 1:
        peer = members[(members.index(rank) + 1) % len(members)]
        prev = members[(members.index(rank) - 1) % len(members)]
        r = torch.zeros(5, dtype=torch.int32)
        reqs = [dist.irecv(r, src=prev, group=mine),
                dist.isend(torch.full((5,), rank, dtype=torch.int32), dst=peer, group=mine)]
        for q in reqs:
            q.wait()
        F.equal(r, torch.full((5,), prev, dtype=torch.int32), "subgroup ring")

    # ---- two threads, each on its own group, at the same time
    results = {}

    def drive(group, name, k):
        t = torch.zeros(257)
        for i in range(k):
            t.fill_(rank + i)
            dist.all_reduce(t, group=group)
            if not torch.equal(t, torch.full((257,), float(sum(range(p)) + p * i))):
                results[name] = f"iteration {i}: {t[:3].tolist()}"
                return
        results[name] = "ok"

    th = [threading.Thread(target=drive, args=(world, "world", 200)),
          threading.Thread(target=drive, args=(g_all, "g_all", 200))]
    for x in th:
        x.start()
    for x in th:
        x.join()
    F.expect(results == {"world": "ok", "g_all": "ok"}, f"two threads: {results}")

    # ---- same results as gloo (float sums of integers: exact)
    torch.manual_seed(1)
    for i in range(5):
        x = torch.randint(-1000, 1000, (1000,)).float() * (rank + 1)
        y = x.clone()
        dist.all_reduce(x, group=g_all)
        dist.all_reduce(y, group=g_gloo)
        F.equal(x, y, f"ucoll == gloo all_reduce {i}")

    # ---- a receive nobody sends times out; the group still goes away
    g_t = dist.new_group(backend="ucoll", timeout=datetime.timedelta(seconds=3))
    if rank == 0:
        t0 = time.monotonic()
        F.raises(lambda: dist.recv(torch.zeros(2), src=1, group=g_t, tag=77),
                 ["recv", "timed out"], "unmatched recv times out")
        F.expect(time.monotonic() - t0 < 30, "timeout within 30 s")
    dist.barrier()
    dist.destroy_process_group(g_t)

    # ---- destroy groups and make new ones
    for g in (g_even, g_odd, g_pair):
        dist.destroy_process_group(g)  # a no-op where the rank is no member
    g_new = dist.new_group(list(range(p - 1, -1, -1)), backend="ucoll")
    t = torch.full((4,), float(rank))
    dist.all_reduce(t, group=g_new)
    F.equal(t, torch.full((4,), float(sum(range(p)))), "group made after destroys")

    F.report(f"groups p={p}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
