"""The torch.distributed backend "ucoll".

``import ucoll.torch`` registers the backend, after which::

    torch.distributed.init_process_group("ucoll", ...)
    torch.distributed.new_group(ranks, backend="ucoll")

work under ``torchrun`` (or any ``init_method``/``store``). Each process
group is its own ucoll context, bootstrapped over the store torch gives the
group (ucoll_init_oob with an allgather over that store), driven by one
worker thread of the group. CPU tensors only.

Under a PMIx launcher (``ucollrun -n N``, ``mpirun``), which sets neither
RANK nor WORLD_SIZE, :func:`init_process_group` finds the rank and size and
rendezvous through a FileStore.
"""

import datetime
import os
import re
import tempfile

import torch.distributed as dist

from . import _ucoll_torch

BACKEND = "ucoll"

ProcessGroupUcoll = _ucoll_torch.ProcessGroupUcoll


def _create(store, rank, size, timeout):
    return _ucoll_torch.create_process_group(store, rank, size, timeout)


if BACKEND.upper() not in dist.Backend._plugins:
    dist.Backend.register_backend(BACKEND, _create)


def launcher_rank_size():
    """(rank, world size) of this process.

    From RANK/WORLD_SIZE when set (torchrun), else from the PMIx launcher
    that started the process (PMIX_RANK set: ucollrun, mpirun, srun; the
    size is WORLD_SIZE when given, otherwise asked from PMIx), else (0, 1).
    """
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        return int(env["RANK"]), int(env["WORLD_SIZE"])
    if "PMIX_RANK" in env:
        if "WORLD_SIZE" in env:
            return int(env["PMIX_RANK"]), int(env["WORLD_SIZE"])
        return _ucoll_torch.launcher_job()[:2]
    return 0, 1


def init_process_group(backend=BACKEND, timeout=datetime.timedelta(minutes=30), **kwargs):
    """torch.distributed.init_process_group for torchrun and PMIx launchers.

    Under torchrun (MASTER_ADDR set) this is the env:// rendezvous. Under a
    PMIx launcher on one node (ucollrun -n N) the ranks meet in a FileStore
    in the temporary directory, named after the PMIx namespace and a token
    that rank 0 draws and broadcasts over ucoll. The namespace alone would
    not do: it carries the launcher's process id, which comes round again,
    and a file a killed job left behind holds its keys and counters. torch
    removes the file when the last rank is done with it. Returns (rank,
    world size).
    """
    env = os.environ
    if "MASTER_ADDR" in env or "PMIX_RANK" not in env:
        dist.init_process_group(backend, timeout=timeout, **kwargs)
        return dist.get_rank(), dist.get_world_size()
    rank, size, token = _ucoll_torch.launcher_job()
    if "WORLD_SIZE" in env:
        size = int(env["WORLD_SIZE"])
    ns = re.sub(r"[^A-Za-z0-9_.-]", "_", env.get("PMIX_NAMESPACE", "job"))
    path = os.path.join(tempfile.gettempdir(), f"ucoll-torch-store-{ns}-{token}")
    store = dist.FileStore(path, size)
    dist.init_process_group(backend, store=store, rank=rank, world_size=size,
                            timeout=timeout, **kwargs)
    return rank, size
