"""
The Python package in one process, without a launcher: loading the library,
the declarations against include/ucoll.h, datatype mapping, the error
classes, the checks made before calling C (also those only the root makes),
singleton contexts, finalize, requests (timed out, dropped), the GIL during
C calls, and ucoll.init_oob (argument errors, a failing callback, and jobs
of 2 and 3 processes bootstrapped through files, no launcher at all).
"""
import array
import gc
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import as_np, needs_torch, torch

import ucoll
from ucoll import _errors, _ffi, _paths

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(HERE, "..", "..", "include", "ucoll.h")


def run_py(code, env=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def ctx():
    c = ucoll.init()
    yield c
    c.finalize()


@pytest.fixture
def with_env():
    """Set environment variables for the ucoll.init() of a test (the C
    library reads its settings at init)."""
    saved = {}

    def set_env(**kv):
        for k, v in kv.items():
            saved.setdefault(k, os.environ.get(k))
            os.environ[k] = v

    yield set_env
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


# ---- the library and its declarations ---------------------------------------


def test_library_and_version():
    assert os.path.isabs(_paths.LIBRARY)
    if "UCOLL_LIBRARY" not in os.environ:
        assert ucoll.library_path() == _paths.LIBRARY
    assert os.path.exists(ucoll.library_path())
    assert re.fullmatch(r"\d+\.\d+\.\d+", ucoll.version())


def test_library_override():
    bad = run_py("import ucoll", {"UCOLL_LIBRARY": "/nonexistent/libucoll.so"})
    assert bad.returncode != 0
    assert "ImportError" in bad.stderr and "UCOLL_LIBRARY" in bad.stderr
    good = run_py("import ucoll; print(ucoll.library_path())",
                  {"UCOLL_LIBRARY": _paths.LIBRARY})
    assert good.returncode == 0 and good.stdout.strip() == _paths.LIBRARY


def test_torch_not_imported():
    """numpy-only use never imports torch (nor does importing ucoll)."""
    r = run_py("import sys, numpy as np, ucoll\n"
               "with ucoll.init() as c:\n"
               "    x = np.ones(3); c.world.allreduce(x); c.world.allgather(bytearray(2))\n"
               "    try: c.world.allreduce([1])\n"
               "    except ucoll.ArgumentError: pass\n"
               "print('torch' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def _normalize(decl):
    decl = re.sub(r"/\*.*?\*/", " ", decl, flags=re.S)
    return re.sub(r"\s+", " ", decl).replace("( ", "(").replace(" )", ")").strip()


def test_cdef_matches_header():
    """Every function of include/ucoll.h is declared in _ffi.CDEF exactly as
    in the header (ABI mode calls with the signature written there)."""
    header = open(HEADER).read()
    protos = re.findall(r"^(?:const )?\w+ \*?ucoll_\w+\([^;]*\);", header, flags=re.M)
    assert len(protos) > 50
    cdef = _normalize(_ffi.CDEF)
    missing = [p for p in protos if _normalize(p) not in cdef]
    assert not missing, "declared differently in _ffi.CDEF (or not at all): %s" % missing
    # the structs C reads and writes, field by field
    for name in ("ucoll_oob_t", "ucoll_status_t", "ucoll_iov_t"):
        pattern = r"typedef struct(?: \w+)? \{([^}]*)\}\s*%s;" % name
        body = _normalize(re.search(pattern, header).group(1))
        assert body.count(";") >= 2 and body == _normalize(re.search(pattern, _ffi.CDEF).group(1))
    for enum_name, py in (("ucoll_dtype_t", ucoll.Datatype), ("ucoll_op_t", ucoll.Op)):
        body = re.search(r"typedef enum \{([^}]*)\} %s;" % enum_name, header).group(1)
        names = [n.strip() for n in body.split(",") if n.strip()]
        names = [n for n in names if not n.endswith("_LAST")]
        assert [("UCOLL_" + m.name) for m in py] == names
    for m in ucoll.ErrorCode:
        if m.value:
            assert re.search(r"UCOLL_%s = %d\b" % (m.name, m.value), header), m
    assert re.search(r"#define UCOLL_TAG_UB 0x3fffffff", header)


def test_dtype_sizes():
    sizes = {"BYTE": 1, "INT8": 1, "UINT8": 1, "INT16": 2, "UINT16": 2, "INT32": 4, "UINT32": 4,
             "INT64": 8, "UINT64": 8, "FLOAT16": 2, "BFLOAT16": 2, "FLOAT32": 4, "FLOAT64": 8}
    for dt in ucoll.Datatype:
        assert ucoll.dtype_size(dt) == sizes[dt.name]


# ---- datatypes ----------------------------------------------------------------


def test_dtype_of_numpy():
    D = ucoll.Datatype
    for name, dt in (("int8", D.INT8), ("uint8", D.UINT8), ("int16", D.INT16),
                     ("uint16", D.UINT16), ("int32", D.INT32), ("uint32", D.UINT32),
                     ("int64", D.INT64), ("uint64", D.UINT64), ("float16", D.FLOAT16),
                     ("float32", D.FLOAT32), ("float64", D.FLOAT64), ("longlong", D.INT64),
                     ("ulonglong", D.UINT64), ("intc", D.INT32), ("short", D.INT16)):
        assert ucoll.dtype_of(np.zeros(2, name)) == dt, name
    assert ucoll.dtype_of(np.zeros((2, 3), np.float32)) == D.FLOAT32  # any shape, C order
    assert ucoll.dtype_of(np.float64(1.0).reshape(())) == D.FLOAT64
    class Sub(np.ndarray):
        pass

    assert ucoll.dtype_of(np.zeros(2, np.int16).view(Sub)) == D.INT16  # a subclass
    for bad, what in ((np.zeros(2, bool), "bool"), (np.zeros(2, complex), "complex"),
                      (np.zeros(2, object), "object"), (np.zeros(2, ">f8"), "byte order"),
                      (np.zeros(2, "U3"), "<U3")):
        with pytest.raises(ucoll.ArgumentError, match=what):
            ucoll.dtype_of(bad)


@needs_torch
def test_dtype_of_torch():
    D = ucoll.Datatype
    for name, dt in (("int8", D.INT8), ("uint8", D.UINT8), ("int16", D.INT16),
                     ("int32", D.INT32), ("int64", D.INT64), ("float16", D.FLOAT16),
                     ("bfloat16", D.BFLOAT16), ("float32", D.FLOAT32), ("float64", D.FLOAT64)):
        assert ucoll.dtype_of(torch.zeros(2, dtype=getattr(torch, name))) == dt, name
    assert ucoll.dtype_of(torch.nn.Parameter(torch.zeros(2))) == D.FLOAT32  # a subclass
    for bad in (torch.zeros(2, dtype=torch.bool), torch.zeros(2, dtype=torch.complex64)):
        with pytest.raises(ucoll.ArgumentError, match="no ucoll datatype"):
            ucoll.dtype_of(bad)
    with pytest.raises(ucoll.ArgumentError, match="sparse"):
        ucoll.dtype_of(torch.zeros(3, 3).to_sparse())


def test_dtype_of_buffer_protocol():
    D = ucoll.Datatype
    assert ucoll.dtype_of(b"ab") == D.BYTE
    assert ucoll.dtype_of(bytearray(3)) == D.BYTE
    assert ucoll.dtype_of(memoryview(bytearray(3))) == D.BYTE
    assert ucoll.dtype_of(array.array("d", [1.0])) == D.FLOAT64
    assert ucoll.dtype_of(array.array("i", [1])) == D.INT32
    assert ucoll.dtype_of(array.array("q", [1])) == D.INT64
    assert ucoll.dtype_of(array.array("H", [1])) == D.UINT16
    with pytest.raises(ucoll.ArgumentError, match="format"):
        ucoll.dtype_of(array.array("u", "x"))
    with pytest.raises(ucoll.ArgumentError, match="not a buffer"):
        ucoll.dtype_of(3.0)
    with pytest.raises(ucoll.ArgumentError, match="not contiguous"):
        ucoll.dtype_of(memoryview(bytearray(8))[::2])


# ---- errors -------------------------------------------------------------------


def test_error_classes():
    classes = {-1: ucoll.ArgumentError, -2: ucoll.NoMemoryError, -3: ucoll.TruncationError,
               -4: ucoll.TransportError, -5: ucoll.BootstrapError, -6: ucoll.TimeoutError,
               -7: ucoll.PeerError, -8: ucoll.UnsupportedError, -9: ucoll.BusyError}
    texts = set()
    for code, cls in classes.items():
        e = _errors.error_for(code, "bcast", "buf")
        assert type(e) is cls and isinstance(e, ucoll.Error)
        assert e.status == ucoll.ErrorCode(code) and e.status.name.startswith("ERR_")
        assert e.code == code and e.call == "bcast" and e.arg == "buf"
        assert str(e).startswith("bcast: ") and "UCOLL_" + e.status.name in str(e)
        assert cls.__module__ == "ucoll"
        texts.add(ucoll.strerror(code))
    assert len(texts) == len(classes)  # the enum values are the library's
    e = _errors.error_for(-99, "barrier")
    assert type(e) is ucoll.Error and e.status is None and e.code == -99
    assert issubclass(ucoll.ArgumentError, ValueError)
    assert issubclass(ucoll.NoMemoryError, MemoryError)


def test_rooted_errors(ctx):
    """The checks only the root makes, at size 1 (this rank is the root)."""
    w = ctx.world
    x = np.zeros(4)

    def raises(arg, match, fn, *a, **k):
        with pytest.raises(ucoll.ArgumentError, match=match) as ei:
            fn(*a, **k)
        assert ei.value.arg == arg, ei.value

    raises("rbuf", "has 5 elements, expected size", w.gather, x, np.zeros(5))
    raises("rbuf", "required", w.gather, x)
    raises("rbuf", "IN_PLACE", w.gather, x, ucoll.IN_PLACE)
    raises("rbuf", "does not match", w.gather, x, np.zeros(4, np.int64))
    raises("sbuf", "expected size", w.scatter, np.zeros(5), x)
    raises("rbuf", "required", w.scatter, x, None)
    raises("sbuf", "IN_PLACE", w.scatter, ucoll.IN_PLACE, x)
    raises("rbuf", "counts and displs need 9", w.gatherv, x, np.zeros(8), [4], [5])
    raises("sbuf", r"counts\[root\]", w.gatherv, x, np.zeros(8), [3])
    raises("counts", "required", w.gatherv, x, np.zeros(8))
    raises("counts", "negative", w.gatherv, x, np.zeros(8), [-1])
    raises("counts", "ints", w.gatherv, x, np.zeros(8), [1.5])
    raises("sbuf", "counts and displs need", w.scatterv, np.zeros(3), x, [4])
    raises("rbuf", r"counts\[root\]", w.scatterv, np.zeros(8), x, [3])
    raises("scounts", "sends 4 elements to itself", w.alltoallv, x, np.zeros(4), [4], [3])
    raises("rbuf", "has 4 elements, rcounts and rdispls need 6", w.alltoallv, x, np.zeros(4),
           [4], [4], [0], [2])
    raises("rbuf", "sbuf's count", w.reduce, x, np.zeros(3))
    raises("root", "not a rank", w.reduce, x, root=1)
    raises("op", "not defined for float16", w.reduce, np.zeros(2, np.float16), op=ucoll.BXOR)
    raises("sbuf", "IN_PLACE is not allowed", w.allreduce, ucoll.IN_PLACE)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    w.bcast(ro)  # the root only reads its buffer
    w.gather(ro, np.zeros(3))
    ro4 = np.zeros(4)
    ro4.flags.writeable = False
    raises("rbuf", "read-only", w.gather, x, ro4)
    raises("sbuf", "not C-contiguous", w.gather, np.broadcast_to(np.zeros(1), (4,)), x)


def test_errors_from_c(ctx):
    """What only C can tell: a message longer than the receive buffer."""
    w = ctx.world
    w.send(np.arange(5, dtype=np.int16), 0, tag=3)
    with pytest.raises(ucoll.TruncationError) as ei:
        w.recv(np.zeros(2, np.int16), 0, 3)
    assert ei.value.message_status.bytes == 10 and ei.value.message_status.tag == 3
    req = w.irecv(np.zeros(2, np.int16), 0, 4)
    w.send(np.arange(5, dtype=np.int16), 0, tag=4)
    with pytest.raises(ucoll.TruncationError) as ei:
        req.wait()
    assert ei.value.message_status.bytes == 10 and ei.value.call == "irecv"
    assert req.done and req.status is ei.value.message_status and req.wait() is req.status


# ---- singleton contexts ---------------------------------------------------------


def test_singleton(ctx):
    w = ctx.world
    assert (ctx.rank, ctx.size, ctx.local_rank, ctx.local_size) == (0, 1, 0, 1)
    assert (w.rank, w.size) == (0, 1)
    assert ctx.peer_transports(0)  # some UCX transport reaches this rank itself
    x = np.arange(6, dtype=np.float32)
    w.allreduce(x)
    np.testing.assert_array_equal(x, np.arange(6))
    sreq = w.isend(np.ones(1), 0)
    st = w.recv(np.zeros(1), ucoll.ANY_SOURCE)
    sreq.wait()
    assert (st.source, st.tag, st.count) == (0, 0, 1)


def test_two_contexts():
    with ucoll.init() as a, ucoll.init() as b:
        x, y = np.ones(2), np.full(2, 2.0)
        a.world.allreduce(x)
        b.world.allreduce(y)
        assert a.world is not b.world
    assert a.finalized and b.finalized


def test_context_manager_and_finalize():
    with ucoll.init() as c:
        w = c.world
        sub = w.split(0)
    assert c.finalized
    c.finalize()  # idempotent
    for fn in (lambda: w.barrier(), lambda: sub.barrier(), lambda: c.world, lambda: w.size):
        with pytest.raises(ucoll.FinalizedError, match="finalized"):
            fn()
    # an exception leaves the context alive: finalize is collective, and
    # the other ranks may never get there
    with pytest.raises(ZeroDivisionError):
        with ucoll.init() as c:
            1 / 0
    assert not c.finalized
    c.world.barrier()
    c.finalize()


def test_gil_released_during_c_calls(with_env):
    """A blocking call in one thread lets another thread run Python: cffi
    releases the GIL around C calls. The receive below blocks for
    UCOLL_TIMEOUT = 0.5 s; with the GIL held, the main thread could not
    count during that time."""
    with_env(UCOLL_TIMEOUT="0.5")
    c = ucoll.init()
    out = {}

    def blocked():
        t0 = time.perf_counter()
        try:
            c.world.recv(np.zeros(1), 0, tag=77)
        except ucoll.TimeoutError as e:
            out["error"] = e
        out["seconds"] = time.perf_counter() - t0

    th = threading.Thread(target=blocked)
    counts = 0
    th.start()
    time.sleep(0.05)  # the thread is inside ucoll_recv by now
    t0 = time.perf_counter()
    while th.is_alive():
        counts += 1
    ran = time.perf_counter() - t0
    th.join()
    c.finalize()
    assert isinstance(out.get("error"), ucoll.TimeoutError)
    assert out["seconds"] >= 0.45
    assert ran >= 0.3 and counts > 10000, (ran, counts)


def test_timed_out_request_stays(with_env):
    """ucoll_wait's UCOLL_ERR_TIMEOUT leaves the request in flight: it can
    be waited for again, and completes when its message comes."""
    with_env(UCOLL_TIMEOUT="0.2")
    with ucoll.init() as c:
        w = c.world
        buf = np.zeros(3, np.int64)
        req = w.irecv(buf, 0, tag=8)
        with pytest.raises(ucoll.TimeoutError):
            req.wait()
        assert not req.done and not req.test()
        w.send(np.array([4, 5, 6]), 0, tag=8)
        assert req.wait().count == 3
        np.testing.assert_array_equal(buf, [4, 5, 6])


def test_dropped_request(ctx):
    """A request dropped in flight warns and keeps its buffer (C still
    writes into it); progress() lets go once it has completed."""
    w = ctx.world
    buf = np.zeros(2)
    with pytest.warns(ResourceWarning, match="irecv request was dropped"):
        w.irecv(buf, 0, tag=21)
        gc.collect()
    assert len(ctx._orphans) == 1
    w.send(np.array([1.0, 2.0]), 0, tag=21)
    ctx.progress()
    assert ctx._orphans == []
    np.testing.assert_array_equal(buf, [1.0, 2.0])


@needs_torch
def test_torch_singleton(ctx):
    w = ctx.world
    t = torch.arange(4, dtype=torch.bfloat16)
    w.bcast(t)
    out = torch.zeros(4, dtype=torch.bfloat16)
    w.iallreduce(t, out, op="max").wait()
    np.testing.assert_array_equal(as_np(out), np.arange(4))
    with pytest.raises(ucoll.ArgumentError, match="does not match sbuf's bfloat16"):
        w.allreduce(t, torch.zeros(4, dtype=torch.float16))
    e = torch.zeros(0)
    w.allreduce(e)  # zero elements: a NULL pointer with count 0


# ---- init_oob -----------------------------------------------------------------


def test_init_oob_argument_errors():
    def echo(d):
        return d

    for kw, arg in ((dict(rank=1, size=1, allgather=echo), "rank"),
                    (dict(rank=0, size=0, allgather=echo), "size"),
                    (dict(rank=-1, size=2, allgather=echo), "rank"),
                    (dict(rank=0, size=1, allgather=None), "allgather"),
                    (dict(rank=0, size=1, allgather=echo, node_id="x"), "node_id")):
        with pytest.raises(ucoll.ArgumentError) as ei:
            ucoll.init_oob(**kw)
        assert ei.value.arg == arg


def test_init_oob_single():
    seen = []

    def allgather(data):
        seen.append(len(data))
        return data

    with ucoll.init_oob(0, 1, allgather) as c:
        x = np.ones(3)
        c.world.allreduce(x)
        assert c.size == 1 and seen
        n = len(seen)
    assert len(seen) > n  # finalize called it once more


def test_init_oob_failing_callback(capfd):
    class Boom(Exception):
        pass

    def raises(data):
        raise Boom("no store")

    with pytest.raises(ucoll.BootstrapError, match="Boom: no store") as ei:
        ucoll.init_oob(0, 1, raises)
    assert isinstance(ei.value.__cause__, Boom) and ei.value.arg == "allgather"
    with pytest.raises(ucoll.BootstrapError) as ei:
        ucoll.init_oob(0, 1, lambda d: d + b"x")
    assert "expected size*len" in str(ei.value.__cause__)
    with pytest.raises(ucoll.BootstrapError):
        ucoll.init_oob(0, 1, lambda d: 42)  # not bytes
    # failing in finalize's round: finalize raises, and the context is gone
    rounds = []

    def fails_later(data):
        rounds.append(data)
        if len(rounds) > 1:
            raise ConnectionError("store went away")
        return data

    c = ucoll.init_oob(0, 1, fails_later)
    c.world.barrier()
    with pytest.raises(ucoll.BootstrapError) as ei:
        c.finalize()
    assert isinstance(ei.value.__cause__, ConnectionError) and c.finalized
    c.finalize()


@pytest.mark.parametrize("size,node", [(2, None), (3, 5)])
def test_init_oob_processes(tmp_path, size, node):
    """size processes, no launcher, bootstrapped through files."""
    script = os.path.join(HERE, "oob_files.py")
    extra = [] if node is None else [str(node)]
    procs = [subprocess.Popen([sys.executable, script, str(r), str(size), str(tmp_path)] + extra,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(size)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=90)
            outs.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for r, (rc, out, err) in enumerate(outs):
        assert rc == 0, "rank %d: %s%s" % (r, out, err)
        words = out.split()
        assert words[:3] == ["ok", str(r), str(size)], out
        assert words[3] == str(size)  # one node: every rank is local
