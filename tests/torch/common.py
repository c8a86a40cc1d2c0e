"""Shared by the torch backend tests: process group set-up under torchrun or
a PMIx launcher, and checks that fail the test with the rank in the message.

The tests run from <builddir>/python on PYTHONPATH (run_torch.sh sets it).
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

import ucoll.torch as ucoll_torch

TIMEOUT = datetime.timedelta(seconds=float(os.environ.get("TORCH_TEST_TIMEOUT", "120")))


def setup(backend="ucoll"):
    """init_process_group under torchrun (env://) or ucollrun (FileStore);
    returns (rank, world size)."""
    rank, size = ucoll_torch.init_process_group(backend, timeout=TIMEOUT)
    launcher = "torchrun" if "TORCHELASTIC_RUN_ID" in os.environ else \
        "pmix" if "PMIX_RANK" in os.environ else "none"
    log(rank, f"up: rank {rank} of {size}, default backend {dist.get_backend()}, "
              f"launcher {launcher}")
    return rank, size


def log(rank, msg):
    print(f"[{rank}] {msg}", flush=True)


class Failures:
    """Collects mismatches; report() exits non-zero when there were any."""

    def __init__(self, rank):
        self.rank = rank
        self.n = 0
        self.checks = 0

    def expect(self, cond, what):
        self.checks += 1
        if not cond:
            self.n += 1
            log(self.rank, f"FAIL: {what}")

    def equal(self, got, want, what):
        self.checks += 1
        ok = got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want)
        if not ok:
            self.n += 1
            log(self.rank, f"FAIL: {what}: got {got.flatten()[:8].tolist()} "
                           f"({got.dtype}, {tuple(got.shape)}), want "
                           f"{want.flatten()[:8].tolist()} ({want.dtype}, {tuple(want.shape)})")

    def raises(self, fn, words, what):
        """fn() must raise RuntimeError/ValueError whose text has every word."""
        self.checks += 1
        try:
            fn()
        except (RuntimeError, ValueError) as e:
            text = str(e)
            if all(w in text for w in words):
                return
            self.n += 1
            log(self.rank, f"FAIL: {what}: error without {words}: {text.splitlines()[0]}")
            return
        self.n += 1
        log(self.rank, f"FAIL: {what}: no error raised")

    def report(self, name):
        if self.n:
            log(self.rank, f"{name}: {self.n} of {self.checks} checks FAILED")
            sys.stdout.flush()
            os._exit(1)
        log(self.rank, f"{name}: {self.checks} checks passed")


def wait_done(fut, seconds):
    """Poll a future without wait(): it must complete on its own."""
    end = time.monotonic() + seconds
    while not fut.done():
        if time.monotonic() > end:
            return False
        time.sleep(0.001)
    return True
