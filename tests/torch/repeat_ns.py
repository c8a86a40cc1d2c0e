"""A job whose PMIx namespace repeats that of an earlier job which left its
FileStore behind (killed, or ended without destroying its groups).

repeat_ns.sh runs this twice in fresh PID namespaces, so that ucollrun has
the same process id, hence the same namespace, both times. The first run
("leave") makes the default group, runs an all_reduce and ends every rank
with os._exit, so torch never removes the store file: its keys and its
barrier counter stay. The second run ("reuse") must make its group, agree on
an all_reduce and a broadcast, and end cleanly within the test's timeout.
"""
import os
import sys

import torch
import torch.distributed as dist

from common import Failures, log, setup


def main():
    mode = sys.argv[1]
    rank, p = setup("ucoll")
    F = Failures(rank)
    t = torch.full((16,), float(rank + 1))
    dist.all_reduce(t)
    F.equal(t, torch.full((16,), float(p * (p + 1) // 2)), f"{mode}: all_reduce")
    ns = os.environ.get("PMIX_NAMESPACE", "")
    log(rank, f"{mode}: namespace {ns}")
    if mode == "leave":
        dist.barrier()
        F.report("repeat_ns leave")
        sys.stdout.flush()
        os._exit(0)
    b = torch.arange(8, dtype=torch.float32) * (rank + 1)
    dist.broadcast(b, src=p - 1)
    F.equal(b, torch.arange(8, dtype=torch.float32) * p, f"{mode}: broadcast")
    F.report("repeat_ns reuse")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
