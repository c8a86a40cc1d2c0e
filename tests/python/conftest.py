"""
Shared pieces of the Python package's tests: the context (one per session,
finalized at the end when every test passed; after a failure the rank
exits without finalizing and the launcher stops the job, instead of the
ranks waiting for each other in finalize), and arrays of every datatype in
numpy and torch. Every rank of a multi-rank run collects the same tests in
the same order: a skip must not depend on the rank.
"""
import numpy as np
import pytest

import ucoll

try:
    import torch
except ImportError:
    torch = None

NP_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
             "float16", "float32", "float64"]
TORCH_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
                "float32", "float64"]
FLOATS = ("float16", "bfloat16", "float32", "float64")

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

# (library, dtype) pairs: every datatype of both libraries
CASES = [pytest.param("numpy", d, id="np-" + d) for d in NP_DTYPES] + [
    pytest.param("torch", d, id="torch-" + d, marks=needs_torch) for d in TORCH_DTYPES]
# a few of them, for the tests that are about something other than datatypes
SOME = [pytest.param("numpy", "float64", id="np-float64"),
        pytest.param("numpy", "int32", id="np-int32"),
        pytest.param("torch", "float32", id="torch-float32", marks=needs_torch),
        pytest.param("torch", "bfloat16", id="torch-bfloat16", marks=needs_torch)]
KINDS = [pytest.param("numpy", id="np"), pytest.param("torch", id="torch", marks=needs_torch)]


def make(kind, dtype, values):
    """An array (tensor) of dtype holding the small integers in values."""
    v = np.asarray(values, dtype=np.int64)
    if kind == "numpy":
        return v.astype(dtype)
    return torch.from_numpy(v.copy()).to(getattr(torch, dtype))


def full(kind, dtype, n, value):
    return make(kind, dtype, np.full(n, value))


def as_np(x):
    """Values of an array or tensor as float64 (exact for these tests)."""
    if isinstance(x, np.ndarray):
        return x.astype(np.float64)
    return x.to(torch.float64).numpy()


@pytest.fixture(scope="session")
def ctx(request):
    c = ucoll.init()
    yield c
    if request.session.testsfailed == 0:
        c.finalize()


@pytest.fixture
def world(ctx):
    return ctx.world
