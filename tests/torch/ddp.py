"""DistributedDataParallel over "ucoll" against the same over gloo.

Two copies of one small model (same initial weights: one seed on every
rank), one wrapped in DDP over the ucoll world group, the other over a gloo
group of the same ranks; each rank feeds both the same data (its own seed).
Every step prints the loss of both and the losses must agree (to 1e-5,
relative: the two backends may add the ranks' gradients in another order);
at the end the weights must agree as well, be identical on every rank
(checked over gloo), and the loss must have gone down. Small DDP buckets
keep several allreduces in flight; BatchNorm buffers add DDP's broadcasts.

  ddp.py [--steps N]
"""
import copy
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from common import Failures, log, setup


def model():
    return nn.Sequential(nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64),
                         nn.ReLU(), nn.Linear(64, 8))


def main():
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 12
    rank, p = setup("ucoll")
    F = Failures(rank)
    g_gloo = dist.new_group(backend="gloo")
    torch.manual_seed(0)
    base = model()
    runs = {}
    for name, group in (("ucoll", dist.group.WORLD), ("gloo", g_gloo)):
        m = DDP(copy.deepcopy(base), process_group=group, bucket_cap_mb=0.005)
        runs[name] = (m, torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9))
    # four batches per rank, taken in turn; a linear target of unit scale
    data = torch.Generator().manual_seed(100 + rank)
    target_w = torch.randn(32, 8, generator=torch.Generator().manual_seed(7)) / 32**0.5
    batches = [torch.randn(16, 32, generator=data) for _ in range(4)]
    means = []
    for step in range(steps):
        x = batches[step % 4]
        y = x @ target_w
        losses = {}
        for name, (m, opt) in runs.items():
            opt.zero_grad()
            loss = nn.functional.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            losses[name] = loss.item()
        # the mean over the ranks, computed over gloo
        mean = torch.tensor([losses["ucoll"], losses["gloo"]], dtype=torch.float64)
        dist.all_reduce(mean, group=g_gloo)
        mean /= p
        log(rank, f"step {step}: loss ucoll {losses['ucoll']:.9f} gloo {losses['gloo']:.9f} "
                  f"(mean over ranks {mean[0].item():.9f} / {mean[1].item():.9f})")
        F.expect(abs(losses["ucoll"] - losses["gloo"]) <= 1e-5 * max(1.0, abs(losses["gloo"])),
                 f"step {step}: losses differ: ucoll {losses['ucoll']} gloo {losses['gloo']}")
        means.append(mean[0].item())
    first, last = sum(means[:4]) / 4, sum(means[-4:]) / 4
    F.expect(last < first, f"loss went down: first 4 steps {first}, last 4 {last}")

    # parameters and buffers (BatchNorm statistics, local to each rank)
    wu, wg = ([t.detach().flatten() for t in runs[k][0].module.state_dict().values()
               if t.is_floating_point()] for k in ("ucoll", "gloo"))
    diff = max((a - b).abs().max().item() for a, b in zip(wu, wg))
    log(rank, f"max |w_ucoll - w_gloo| = {diff:.3g} over {sum(a.numel() for a in wu)} values")
    F.expect(diff <= 1e-5, f"weights differ from gloo's by {diff}")
    # the parameters (not the buffers) are the same on every rank
    pu = torch.cat([t.detach().flatten() for t in runs["ucoll"][0].module.parameters()])
    p0 = pu.clone()
    dist.broadcast(p0, src=0, group=g_gloo)
    F.equal(pu, p0, "ucoll replicas identical on every rank")

    F.report(f"ddp p={p}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
