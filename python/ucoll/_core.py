"""
Contexts, communicators and requests over include/ucoll.h.

Ownership follows the C API. A Context owns its C context, its world Comm
and every Comm split from it; finalize() frees them all, after which every
call on the context, its communicators and its requests raises
FinalizedError (the Python objects stay, their pointers are gone). A Comm
from split() is freed by free() or with its context. A Request holds the
buffers of its call (the arrays and tensors, the cdata pointing into them,
the count and displacement arrays given to C) until it completes; one
dropped before completion is parked on its context until the context is
finalized, so C never writes into freed memory.

The hot path of a call: one buffer() per buffer (_buffers.py), a few
integer checks, one cffi call through a function object looked up once at
import. Arguments are checked here before C sees them, so a wrong one is
named in the exception; C's own checks remain underneath.
"""
import enum
import operator
import warnings
import weakref

from ._buffers import FIRST_FLOAT, IN_PLACE, Datatype, buffer
from ._errors import (BootstrapError, ErrorCode, TruncationError,
                      UnsupportedError, arg_error, error_for, finalized_error)
from ._ffi import ANY_SOURCE, ANY_TAG, IN_PLACE_PTR, LIBRARY, TAG_UB, ffi, lib


class Op(enum.IntEnum):
    """The ucoll_op_t values; a collective also takes their names in lower
    case ("sum", "max"...)."""

    SUM = 0
    PROD = 1
    MIN = 2
    MAX = 3
    LAND = 4
    LOR = 5
    LXOR = 6
    BAND = 7
    BOR = 8
    BXOR = 9


# name or code (an Op is an int and finds its code) -> int code
_OPS = {}
for _o in Op:
    _OPS[_o.name.lower()] = int(_o)
    _OPS[int(_o)] = int(_o)
_FLOAT_OPS = int(Op.MAX)  # floating point datatypes take SUM..MAX only

_ESIZE = [1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8]  # bytes per element, by Datatype
_BYTES = (Datatype.BYTE, Datatype.UINT8)  # one representation: either side may be either

_NULL = ffi.NULL
_new = ffi.new
_REQPP = ffi.typeof("ucoll_req_t **")
_STATUSP = ffi.typeof("ucoll_status_t *")
_SIZES = ffi.typeof("size_t[]")
_INTP = ffi.typeof("int *")
_ERR_TIMEOUT = int(ErrorCode.ERR_TIMEOUT)

# the C functions, looked up once (a cffi lib attribute costs a lookup per use)
_barrier, _ibarrier = lib.ucoll_barrier, lib.ucoll_ibarrier
_bcast, _ibcast = lib.ucoll_bcast, lib.ucoll_ibcast
_bcast_iov, _ibcast_iov = lib.ucoll_bcast_iov, lib.ucoll_ibcast_iov
_IOVS = ffi.typeof("ucoll_iov_t[]")
_reduce, _ireduce = lib.ucoll_reduce, lib.ucoll_ireduce
_allreduce, _iallreduce = lib.ucoll_allreduce, lib.ucoll_iallreduce
_gather, _igather = lib.ucoll_gather, lib.ucoll_igather
_gatherv, _igatherv = lib.ucoll_gatherv, lib.ucoll_igatherv
_scatter, _iscatter = lib.ucoll_scatter, lib.ucoll_iscatter
_scatterv, _iscatterv = lib.ucoll_scatterv, lib.ucoll_iscatterv
_allgather, _iallgather = lib.ucoll_allgather, lib.ucoll_iallgather
_allgatherv, _iallgatherv = lib.ucoll_allgatherv, lib.ucoll_iallgatherv
_alltoall, _ialltoall = lib.ucoll_alltoall, lib.ucoll_ialltoall
_alltoallv, _ialltoallv = lib.ucoll_alltoallv, lib.ucoll_ialltoallv
_rsb, _irsb = lib.ucoll_reduce_scatter_block, lib.ucoll_ireduce_scatter_block
_rs, _irs = lib.ucoll_reduce_scatter, lib.ucoll_ireduce_scatter
_scan, _iscan = lib.ucoll_scan, lib.ucoll_iscan
_exscan, _iexscan = lib.ucoll_exscan, lib.ucoll_iexscan
_send, _isend = lib.ucoll_send, lib.ucoll_isend
_recv, _irecv = lib.ucoll_recv, lib.ucoll_irecv
_wait, _test = lib.ucoll_wait, lib.ucoll_test


# ---- argument checks (the slow parts run only when something is wrong) ----


def _op_code(op, dt, call):
    """The C code of op for datatype dt."""
    try:
        o = _OPS[op]
    except (KeyError, TypeError):
        try:
            o = _OPS[op.lower()]
        except (KeyError, AttributeError):
            raise arg_error(call, "op", "unknown reduction %r (one of %s, or ucoll.Op)"
                            % (op, ", ".join(n.lower() for n in Op.__members__))) from None
    if o > _FLOAT_OPS and dt >= FIRST_FLOAT:
        raise arg_error(call, "op", "%s is not defined for %s (floating point takes sum, prod, "
                        "min, max)" % (Op(o).name.lower(), Datatype(dt).name.lower()))
    return o


def _same_dtype(a, b):
    return a == b or (a in _BYTES and b in _BYTES)


def _expect(call, name, n, dt, want_n, want_dt, other, how):
    """Argument name holds n elements of dt; the call needs want_n of
    want_dt (the datatype of argument other; how: where want_n comes from)."""
    if not _same_dtype(dt, want_dt):
        raise arg_error(call, name, "datatype %s does not match %s's %s"
                        % (Datatype(dt).name.lower(), other, Datatype(want_dt).name.lower()))
    if n != want_n:
        raise arg_error(call, name, "has %d elements, expected %s = %d" % (n, how, want_n))


def _check_dtype(call, name, dt, want_dt, other):
    if not _same_dtype(dt, want_dt):
        raise arg_error(call, name, "datatype %s does not match %s's %s"
                        % (Datatype(dt).name.lower(), other, Datatype(want_dt).name.lower()))


def _multiple(call, name, n, p):
    if n % p:
        raise arg_error(call, name, "has %d elements, not a multiple of the communicator size %d"
                        % (n, p))
    return n // p


def _int_arg(v, call, name):
    try:
        return operator.index(v)
    except TypeError:
        raise arg_error(call, name, "an int is required, got %r" % (v,)) from None


def _sizes(vals):
    return _new(_SIZES, vals)


def _extent(counts, displs):
    return max([c + d for c, d in zip(counts, displs)], default=0)


class Status:
    """What a receive learned: the source rank (in the communicator), the
    tag, the size of the message as sent in bytes, and count, that size in
    elements of the receive buffer's datatype."""

    __slots__ = ("source", "tag", "bytes", "count", "error")

    def __init__(self, source, tag, nbytes, esize, error=0):
        self.source = source
        self.tag = tag
        self.bytes = nbytes
        self.count = nbytes // esize
        self.error = error

    def __repr__(self):
        return "Status(source=%d, tag=%d, bytes=%d)" % (self.source, self.tag, self.bytes)


def _status(stp, esize):
    return Status(stp.source, stp.tag, stp.bytes, esize, stp.error)


class Request:
    """A nonblocking call in flight: wait(), test(), or ucoll.waitall().
    wait() returns the Status of a point-to-point request (None for a
    collective); the request then lets go of its buffers."""

    __slots__ = ("_reqp", "_ctx", "_keep", "_call", "_stp", "_esize", "_result", "__weakref__")

    def __init__(self, ctx, reqp, keep, call, stp=None, esize=1):
        self._reqp = reqp  # ucoll_req_t ** (None once complete)
        self._ctx = ctx
        self._keep = keep  # buffers, their cdata, count arrays: alive until completion
        self._call = call
        self._stp = stp  # ucoll_status_t * for point-to-point
        self._esize = esize
        self._result = None

    @property
    def done(self):
        """True once wait() or test() has seen the request complete."""
        return self._reqp is None

    @property
    def status(self):
        """The Status of a completed point-to-point request (else None)."""
        return self._result

    def wait(self):
        """Block until the request completes; raises its error. A completed
        request returns its result again. On TimeoutError (UCOLL_TIMEOUT)
        the request is still in flight and may be waited on again."""
        reqp = self._reqp
        if reqp is None:
            return self._result
        if self._ctx._ptr is None:
            raise finalized_error(self._call, "the context is finalized (the request was "
                                  "cancelled)")
        stp = self._stp
        st = _wait(reqp[0], _NULL if stp is None else stp)
        if st == _ERR_TIMEOUT:
            raise error_for(st, self._call, None, "still in flight")
        return self._finish(st)

    def test(self):
        """True (and the request complete, its error raised) or False."""
        reqp = self._reqp
        if reqp is None:
            return True
        if self._ctx._ptr is None:
            raise finalized_error(self._call, "the context is finalized (the request was "
                                  "cancelled)")
        done = _new(_INTP)
        stp = self._stp
        st = _test(reqp[0], done, _NULL if stp is None else stp)
        if not done[0]:
            if st:
                raise error_for(st, self._call)
            return False
        self._finish(st)
        return True

    def _finish(self, st):
        """The request is complete and freed in C: let go of its buffers."""
        self._reqp = None
        self._keep = None
        stp = self._stp
        res = None if stp is None else _status(stp, self._esize)
        self._result = res
        if st:
            e = error_for(st, self._call)
            if isinstance(e, TruncationError):
                e.message_status = res
            raise e
        return res

    def __del__(self):
        if self._reqp is not None and self._ctx._ptr is not None:
            # still in flight in C: keep its buffers until the context goes
            # (no C call here: __del__ may run in any thread, at any time)
            self._ctx._orphans.append((self._reqp, self._keep, self._stp))
            warnings.warn("ucoll: a %s request was dropped before completion; its buffers are "
                          "kept until the context is finalized" % self._call, ResourceWarning,
                          stacklevel=2)

    def __repr__(self):
        return "<ucoll.Request %s %s>" % (self._call, "done" if self._reqp is None else "pending")


def waitall(reqs):
    """Wait for every request (in order, all of them even when one fails);
    returns their results (Status or None) and raises the first error."""
    results = []
    first = None
    for r in reqs:
        try:
            results.append(r.wait())
        except Exception as e:  # noqa: BLE001 (re-raised below)
            if first is None:
                first = e
            results.append(None)
    if first is not None:
        raise first
    return results


class Comm:
    """A communicator: ctx.world or one made by split(). Collectives follow
    MPI's semantics (include/ucoll.h); counts and datatypes come from the
    buffers. Where a collective allows ucoll.IN_PLACE as its send buffer,
    giving a single buffer means in place: comm.allreduce(buf) reduces into
    buf; comm.reduce(buf, root=r) reduces into buf at r."""

    __slots__ = ("_ptr", "_ctx", "_rank", "_size", "_is_world", "_stp", "__weakref__")

    def __init__(self, ctx, ptr, is_world):
        self._ptr = ptr
        self._ctx = ctx
        self._rank = lib.ucoll_comm_rank(ptr)
        self._size = lib.ucoll_comm_size(ptr)
        self._is_world = is_world
        self._stp = _new(_STATUSP)  # for blocking receives
        ctx._comms.add(self)

    # ---- life cycle ----

    def _gone(self, call):
        if self._ctx._ptr is None:
            return finalized_error(call, "the context is finalized")
        return finalized_error(call, "the communicator was freed")

    def _live(self, call):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        return c

    @property
    def rank(self):
        """This process's rank in the communicator."""
        self._live("rank")
        return self._rank

    @property
    def size(self):
        """Number of ranks in the communicator."""
        self._live("size")
        return self._size

    @property
    def context(self):
        return self._ctx

    def split(self, color, key=0):
        """Collective: ranks with the same color form a new communicator,
        ordered by (key, rank). color < 0 (or None) leaves this rank out and
        returns None."""
        c = self._live("split")
        color = -1 if color is None else _int_arg(color, "split", "color")
        key = _int_arg(key, "split", "key")
        outp = _new("ucoll_comm_t **")
        st = lib.ucoll_comm_split(c, color if color >= 0 else -1, key, outp)
        if st:
            raise error_for(st, "split")
        if outp[0] == _NULL:
            return None
        return Comm(self._ctx, outp[0], False)

    def free(self):
        """Free a communicator made by split() (local). BusyError while
        operations on it are under way: it stays usable, complete them and
        free it again."""
        c = self._live("free")
        if self._is_world:
            raise arg_error("free", "comm", "the world communicator belongs to its context "
                            "(ctx.finalize() frees it)")
        st = lib.ucoll_comm_free(c)
        if st:
            raise error_for(st, "free")
        self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._ptr is not None and not self._is_world:
            self.free()

    def __repr__(self):
        if self._ptr is None:
            return "<ucoll.Comm (freed)>"
        return "<ucoll.Comm rank %d of %d%s>" % (self._rank, self._size,
                                                 " (world)" if self._is_world else "")

    # ---- shared argument logic ----

    def _root(self, root, call, name="root"):
        if type(root) is int and 0 <= root < self._size:
            return root
        r = _int_arg(root, call, name)
        if not 0 <= r < self._size:
            raise arg_error(call, name, "%d is not a rank of this communicator (size %d)"
                            % (r, self._size))
        return r

    def _tag(self, tag, call, recv):
        if type(tag) is int and 0 <= tag <= TAG_UB:
            return tag
        t = _int_arg(tag, call, "tag")
        if not (0 <= t <= TAG_UB or (recv and t == ANY_TAG)):
            raise arg_error(call, "tag", "%d is outside 0..%d%s" % (t, TAG_UB,
                            " (or ucoll.ANY_TAG)" if recv else ""))
        return t

    def _counts(self, seq, call, name):
        if seq is None:
            raise arg_error(call, name, "required: %d element counts, one per rank" % self._size)
        try:
            vals = [operator.index(v) for v in seq]
        except TypeError:
            raise arg_error(call, name, "a sequence of %d ints is required, got %r"
                            % (self._size, seq)) from None
        if len(vals) != self._size:
            raise arg_error(call, name, "has %d entries, the communicator has %d ranks"
                            % (len(vals), self._size))
        if vals and min(vals) < 0:
            raise arg_error(call, name, "negative count %d" % min(vals))
        return vals

    def _displs(self, seq, counts, call, name):
        if seq is None:  # packed blocks in rank order
            out, d = [], 0
            for c in counts:
                out.append(d)
                d += c
            return out
        return self._counts(seq, call, name)

    def _in_place_buf(self, call, sbuf, rbuf):
        """The one buffer of an in-place call (rbuf None or sbuf IN_PLACE):
        (pointer, count, dtype, name)."""
        if rbuf is None:
            return buffer(sbuf, call, "sbuf", True) + ("sbuf",)
        return buffer(rbuf, call, "rbuf", True) + ("rbuf",)

    def _reducing(self, call, sbuf, rbuf, op):
        """allreduce, scan, exscan: (sbuf, rbuf, count, dtype, op, comm)."""
        c = self._ptr
        if c is None:
            raise self._gone(call)
        if rbuf is None or sbuf is IN_PLACE:
            rp, n, dt = buffer(sbuf if rbuf is None else rbuf, call,
                               "sbuf" if rbuf is None else "rbuf", True)
            sp = IN_PLACE_PTR
        else:
            sp, n, dt = buffer(sbuf, call, "sbuf", False)
            rp, rn, rdt = buffer(rbuf, call, "rbuf", True)
            if rn != n or rdt != dt:
                _expect(call, "rbuf", rn, rdt, n, dt, "sbuf", "sbuf's count")
        try:
            o = _OPS[op]
            if o > _FLOAT_OPS and dt >= FIRST_FLOAT:
                o = _op_code(op, dt, call)
        except (KeyError, TypeError):
            o = _op_code(op, dt, call)
        return sp, rp, n, dt, o, c

    def _start(self, fn, args, call, keep):
        reqp = _new(_REQPP)
        st = fn(*args, reqp)
        if st:
            raise error_for(st, call)
        return Request(self._ctx, reqp, (args, keep), call)

    # ---- collectives: blocking and nonblocking twins ----

    def barrier(self):
        """Wait until every rank has called barrier."""
        st = _barrier(self._live("barrier"))
        if st:
            raise error_for(st, "barrier")

    def ibarrier(self):
        return self._start(_ibarrier, (self._live("ibarrier"),), "ibarrier", None)

    def _a_bcast(self, call, buf, root):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        root = self._root(root, call)
        p, n, dt = buffer(buf, call, "buf", self._rank != root)
        return p, n, dt, root, c

    def bcast(self, buf, root=0):
        """Root's buf to every rank's buf (same count and datatype)."""
        st = _bcast(*self._a_bcast("bcast", buf, root))
        if st:
            raise error_for(st, "bcast")

    def ibcast(self, buf, root=0):
        return self._start(_ibcast, self._a_bcast("ibcast", buf, root), "ibcast", buf)

    def _a_bcast_iov(self, call, bufs, root):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        root = self._root(root, call)
        if not isinstance(bufs, (list, tuple)):
            # not any sequence: an array is one, of scalars
            raise arg_error(call, "bufs", "a list or tuple of buffers is required here, got %s"
                            % type(bufs).__name__)
        out = self._rank != root
        iov = _new(_IOVS, max(len(bufs), 1))
        for i, b in enumerate(bufs):
            p, n, dt = buffer(b, call, "bufs[%d]" % i, out)
            iov[i].buf = p
            iov[i].len = n * _ESIZE[dt]
        return iov, len(bufs), root, c

    def bcast_coalesced(self, bufs, root=0):
        """Root's buffers, taken in order as one message, to every rank's
        (a list of arrays or tensors, each contiguous; the total bytes must
        be the same on every rank, the split may differ). No flattening: the
        data goes straight from root's buffers to the others' through shared
        memory (packed once inside the library elsewhere)."""
        st = _bcast_iov(*self._a_bcast_iov("bcast_coalesced", bufs, root))
        if st:
            raise error_for(st, "bcast_coalesced")

    def ibcast_coalesced(self, bufs, root=0):
        args = self._a_bcast_iov("ibcast_coalesced", bufs, root)
        return self._start(_ibcast_iov, args, "ibcast_coalesced", list(bufs))

    def _a_reduce(self, call, sbuf, rbuf, op, root):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        root = self._root(root, call)
        if self._rank == root:
            if rbuf is None or sbuf is IN_PLACE:
                rp, n, dt, _ = self._in_place_buf(call, sbuf, rbuf)
                sp = IN_PLACE_PTR
            else:
                sp, n, dt = buffer(sbuf, call, "sbuf", False)
                rp, rn, rdt = buffer(rbuf, call, "rbuf", True)
                _expect(call, "rbuf", rn, rdt, n, dt, "sbuf", "sbuf's count")
        else:
            if sbuf is IN_PLACE:
                raise arg_error(call, "sbuf", "ucoll.IN_PLACE is only allowed at the root")
            sp, n, dt = buffer(sbuf, call, "sbuf", False)
            rp = _NULL  # rbuf matters at the root only
        return sp, rp, n, dt, _op_code(op, dt, call), root, c

    def reduce(self, sbuf, rbuf=None, op=Op.SUM, root=0):
        """Reduce every rank's sbuf into root's rbuf (rbuf is ignored
        elsewhere). reduce(buf, root=r): in place at r."""
        st = _reduce(*self._a_reduce("reduce", sbuf, rbuf, op, root))
        if st:
            raise error_for(st, "reduce")

    def ireduce(self, sbuf, rbuf=None, op=Op.SUM, root=0):
        a = self._a_reduce("ireduce", sbuf, rbuf, op, root)
        return self._start(_ireduce, a, "ireduce", (sbuf, rbuf))

    def allreduce(self, sbuf, rbuf=None, op=Op.SUM):
        """Reduce every rank's sbuf into every rank's rbuf; allreduce(buf)
        reduces in place."""
        st = _allreduce(*self._reducing("allreduce", sbuf, rbuf, op))
        if st:
            raise error_for(st, "allreduce")

    def iallreduce(self, sbuf, rbuf=None, op=Op.SUM):
        a = self._reducing("iallreduce", sbuf, rbuf, op)
        return self._start(_iallreduce, a, "iallreduce", (sbuf, rbuf))

    def scan(self, sbuf, rbuf=None, op=Op.SUM):
        """Inclusive prefix reduction over ranks 0..rank; scan(buf) in place."""
        st = _scan(*self._reducing("scan", sbuf, rbuf, op))
        if st:
            raise error_for(st, "scan")

    def iscan(self, sbuf, rbuf=None, op=Op.SUM):
        a = self._reducing("iscan", sbuf, rbuf, op)
        return self._start(_iscan, a, "iscan", (sbuf, rbuf))

    def exscan(self, sbuf, rbuf=None, op=Op.SUM):
        """Exclusive prefix reduction over ranks 0..rank-1; rank 0's rbuf is
        left untouched; exscan(buf) in place."""
        st = _exscan(*self._reducing("exscan", sbuf, rbuf, op))
        if st:
            raise error_for(st, "exscan")

    def iexscan(self, sbuf, rbuf=None, op=Op.SUM):
        a = self._reducing("iexscan", sbuf, rbuf, op)
        return self._start(_iexscan, a, "iexscan", (sbuf, rbuf))

    def _a_gather(self, call, sbuf, rbuf, root):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        root = self._root(root, call)
        p = self._size
        if self._rank == root:
            if rbuf is IN_PLACE:
                raise arg_error(call, "rbuf", "cannot be ucoll.IN_PLACE (pass sbuf=ucoll.IN_PLACE)")
            rp, rn, rdt = buffer(rbuf, call, "rbuf", True)
            if sbuf is IN_PLACE:
                sp, n, dt = IN_PLACE_PTR, _multiple(call, "rbuf", rn, p), rdt
            else:
                sp, n, dt = buffer(sbuf, call, "sbuf", False)
                _expect(call, "rbuf", rn, rdt, n * p, dt, "sbuf", "size*count = %d*%d" % (p, n))
        else:
            if sbuf is IN_PLACE:
                raise arg_error(call, "sbuf", "ucoll.IN_PLACE is only allowed at the root")
            sp, n, dt = buffer(sbuf, call, "sbuf", False)
            rp = _NULL
        return sp, rp, n, dt, root, c

    def gather(self, sbuf, rbuf=None, root=0):
        """Every rank's sbuf, in rank order, into root's rbuf (size*count
        elements; ignored elsewhere). At the root sbuf may be IN_PLACE (its
        block already in place in rbuf)."""
        st = _gather(*self._a_gather("gather", sbuf, rbuf, root))
        if st:
            raise error_for(st, "gather")

    def igather(self, sbuf, rbuf=None, root=0):
        a = self._a_gather("igather", sbuf, rbuf, root)
        return self._start(_igather, a, "igather", (sbuf, rbuf))

    def _a_gatherv(self, call, sbuf, rbuf, counts, displs, root):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        root = self._root(root, call)
        if self._rank == root:
            if rbuf is IN_PLACE:
                raise arg_error(call, "rbuf", "cannot be ucoll.IN_PLACE (pass sbuf=ucoll.IN_PLACE)")
            rp, rn, dt = buffer(rbuf, call, "rbuf", True)
            cnt = self._counts(counts, call, "counts")
            dsp = self._displs(displs, cnt, call, "displs")
            ext = _extent(cnt, dsp)
            if rn < ext:
                raise arg_error(call, "rbuf", "has %d elements, counts and displs need %d"
                                % (rn, ext))
            if sbuf is IN_PLACE:
                sp, sn = IN_PLACE_PTR, cnt[root]
            else:
                sp, sn, sdt = buffer(sbuf, call, "sbuf", False)
                _expect(call, "sbuf", sn, sdt, cnt[root], dt, "rbuf", "counts[root]")
            ca, da = _sizes(cnt), _sizes(dsp)
        else:
            if sbuf is IN_PLACE:
                raise arg_error(call, "sbuf", "ucoll.IN_PLACE is only allowed at the root")
            sp, sn, dt = buffer(sbuf, call, "sbuf", False)
            rp = ca = da = _NULL
        return sp, sn, rp, ca, da, dt, root, c

    def gatherv(self, sbuf, rbuf=None, counts=None, displs=None, root=0):
        """Gather blocks of different sizes: rank i's sbuf (counts[i]
        elements) to rbuf[displs[i]:] at the root. counts and displs (default:
        packed in rank order) matter at the root only."""
        st = _gatherv(*self._a_gatherv("gatherv", sbuf, rbuf, counts, displs, root))
        if st:
            raise error_for(st, "gatherv")

    def igatherv(self, sbuf, rbuf=None, counts=None, displs=None, root=0):
        a = self._a_gatherv("igatherv", sbuf, rbuf, counts, displs, root)
        return self._start(_igatherv, a, "igatherv", (sbuf, rbuf))

    def _a_scatter(self, call, sbuf, rbuf, root):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        root = self._root(root, call)
        p = self._size
        if self._rank == root:
            if sbuf is IN_PLACE:
                raise arg_error(call, "sbuf", "cannot be ucoll.IN_PLACE (pass rbuf=ucoll.IN_PLACE)")
            sp, sn, sdt = buffer(sbuf, call, "sbuf", False)
            if rbuf is IN_PLACE:
                rp, n, dt = IN_PLACE_PTR, _multiple(call, "sbuf", sn, p), sdt
            else:
                rp, n, dt = buffer(rbuf, call, "rbuf", True)
                _expect(call, "sbuf", sn, sdt, n * p, dt, "rbuf", "size*count = %d*%d" % (p, n))
        else:
            if rbuf is IN_PLACE:
                raise arg_error(call, "rbuf", "ucoll.IN_PLACE is only allowed at the root")
            rp, n, dt = buffer(rbuf, call, "rbuf", True)
            sp = _NULL
        return sp, rp, n, dt, root, c

    def scatter(self, sbuf, rbuf, root=0):
        """Block i of root's sbuf (size*count elements; ignored elsewhere) to
        rank i's rbuf. At the root rbuf may be IN_PLACE (its block stays in
        sbuf)."""
        st = _scatter(*self._a_scatter("scatter", sbuf, rbuf, root))
        if st:
            raise error_for(st, "scatter")

    def iscatter(self, sbuf, rbuf, root=0):
        a = self._a_scatter("iscatter", sbuf, rbuf, root)
        return self._start(_iscatter, a, "iscatter", (sbuf, rbuf))

    def _a_scatterv(self, call, sbuf, rbuf, counts, displs, root):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        root = self._root(root, call)
        if self._rank == root:
            if sbuf is IN_PLACE:
                raise arg_error(call, "sbuf", "cannot be ucoll.IN_PLACE (pass rbuf=ucoll.IN_PLACE)")
            sp, sn, dt = buffer(sbuf, call, "sbuf", False)
            cnt = self._counts(counts, call, "counts")
            dsp = self._displs(displs, cnt, call, "displs")
            ext = _extent(cnt, dsp)
            if sn < ext:
                raise arg_error(call, "sbuf", "has %d elements, counts and displs need %d"
                                % (sn, ext))
            if rbuf is IN_PLACE:
                rp, rn = IN_PLACE_PTR, cnt[root]
            else:
                rp, rn, rdt = buffer(rbuf, call, "rbuf", True)
                _expect(call, "rbuf", rn, rdt, cnt[root], dt, "sbuf", "counts[root]")
            ca, da = _sizes(cnt), _sizes(dsp)
        else:
            if rbuf is IN_PLACE:
                raise arg_error(call, "rbuf", "ucoll.IN_PLACE is only allowed at the root")
            rp, rn, dt = buffer(rbuf, call, "rbuf", True)
            sp = ca = da = _NULL
        return sp, ca, da, rp, rn, dt, root, c

    def scatterv(self, sbuf, rbuf, counts=None, displs=None, root=0):
        """Scatter blocks of different sizes: root's sbuf[displs[i]:] (counts[i]
        elements) to rank i's rbuf. counts and displs (default: packed) matter
        at the root only."""
        st = _scatterv(*self._a_scatterv("scatterv", sbuf, rbuf, counts, displs, root))
        if st:
            raise error_for(st, "scatterv")

    def iscatterv(self, sbuf, rbuf, counts=None, displs=None, root=0):
        a = self._a_scatterv("iscatterv", sbuf, rbuf, counts, displs, root)
        return self._start(_iscatterv, a, "iscatterv", (sbuf, rbuf))

    def _a_allgather(self, call, sbuf, rbuf, alltoall):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        p = self._size
        if rbuf is None or sbuf is IN_PLACE:
            rp, rn, dt, name = self._in_place_buf(call, sbuf, rbuf)
            sp, n = IN_PLACE_PTR, _multiple(call, name, rn, p)
        else:
            sp, n, dt = buffer(sbuf, call, "sbuf", False)
            rp, rn, rdt = buffer(rbuf, call, "rbuf", True)
            if alltoall:
                n = _multiple(call, "sbuf", n, p)
            _expect(call, "rbuf", rn, rdt, n * p, dt, "sbuf", "size*count = %d*%d" % (p, n))
        return sp, rp, n, dt, c

    def allgather(self, sbuf, rbuf=None):
        """Every rank's sbuf, in rank order, into every rank's rbuf
        (size*count elements). allgather(buf): in place, each rank's block
        already at its place in buf."""
        st = _allgather(*self._a_allgather("allgather", sbuf, rbuf, False))
        if st:
            raise error_for(st, "allgather")

    def iallgather(self, sbuf, rbuf=None):
        a = self._a_allgather("iallgather", sbuf, rbuf, False)
        return self._start(_iallgather, a, "iallgather", (sbuf, rbuf))

    def alltoall(self, sbuf, rbuf=None):
        """Block j of rank i's sbuf (size*count elements) to block i of rank
        j's rbuf. alltoall(buf): in place."""
        st = _alltoall(*self._a_allgather("alltoall", sbuf, rbuf, True))
        if st:
            raise error_for(st, "alltoall")

    def ialltoall(self, sbuf, rbuf=None):
        a = self._a_allgather("ialltoall", sbuf, rbuf, True)
        return self._start(_ialltoall, a, "ialltoall", (sbuf, rbuf))

    def _a_allgatherv(self, call, sbuf, rbuf, counts, displs):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        cnt = self._counts(counts, call, "counts")
        dsp = self._displs(displs, cnt, call, "displs")
        if rbuf is None or sbuf is IN_PLACE:
            rp, rn, dt, name = self._in_place_buf(call, sbuf, rbuf)
            sp, sn = IN_PLACE_PTR, cnt[self._rank]
        else:
            name = "rbuf"
            sp, sn, dt = buffer(sbuf, call, "sbuf", False)
            rp, rn, rdt = buffer(rbuf, call, "rbuf", True)
            _check_dtype(call, "rbuf", rdt, dt, "sbuf")
            if sn != cnt[self._rank]:
                raise arg_error(call, "sbuf", "has %d elements, counts[rank] = %d"
                                % (sn, cnt[self._rank]))
        ext = _extent(cnt, dsp)
        if rn < ext:
            raise arg_error(call, name, "has %d elements, counts and displs need %d" % (rn, ext))
        return sp, sn, rp, _sizes(cnt), _sizes(dsp), dt, c

    def allgatherv(self, sbuf, rbuf=None, counts=None, displs=None):
        """Allgather of blocks of different sizes: rank i's sbuf (counts[i]
        elements) to rbuf[displs[i]:] everywhere (displs default: packed).
        allgatherv(buf, counts=...): in place."""
        st = _allgatherv(*self._a_allgatherv("allgatherv", sbuf, rbuf, counts, displs))
        if st:
            raise error_for(st, "allgatherv")

    def iallgatherv(self, sbuf, rbuf=None, counts=None, displs=None):
        a = self._a_allgatherv("iallgatherv", sbuf, rbuf, counts, displs)
        return self._start(_iallgatherv, a, "iallgatherv", (sbuf, rbuf))

    def _a_alltoallv(self, call, sbuf, rbuf, scounts, rcounts, sdispls, rdispls):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        rc = self._counts(rcounts, call, "rcounts")
        rd = self._displs(rdispls, rc, call, "rdispls")
        if rbuf is None or sbuf is IN_PLACE:
            rp, rn, dt, name = self._in_place_buf(call, sbuf, rbuf)
            sp, sc, sd = IN_PLACE_PTR, _NULL, _NULL  # C sends from rbuf by rcounts, rdispls
        else:
            name = "rbuf"
            sp, sn, dt = buffer(sbuf, call, "sbuf", False)
            rp, rn, rdt = buffer(rbuf, call, "rbuf", True)
            _check_dtype(call, "rbuf", rdt, dt, "sbuf")
            scv = self._counts(scounts, call, "scounts")
            sdv = self._displs(sdispls, scv, call, "sdispls")
            ext = _extent(scv, sdv)
            if sn < ext:
                raise arg_error(call, "sbuf", "has %d elements, scounts and sdispls need %d"
                                % (sn, ext))
            r = self._rank
            if scv[r] > rc[r]:
                raise arg_error(call, "scounts", "rank %d sends %d elements to itself, rcounts "
                                "has room for %d" % (r, scv[r], rc[r]))
            sc, sd = _sizes(scv), _sizes(sdv)
        ext = _extent(rc, rd)
        if rn < ext:
            raise arg_error(call, name, "has %d elements, rcounts and rdispls need %d"
                            % (rn, ext))
        return sp, sc, sd, rp, _sizes(rc), _sizes(rd), dt, c

    def alltoallv(self, sbuf, rbuf=None, scounts=None, rcounts=None, sdispls=None,
                  rdispls=None):
        """Alltoall of blocks of different sizes: sbuf[sdispls[j]:] (scounts[j]
        elements) to rank j, rank i's block into rbuf[rdispls[i]:] (rcounts[i]
        elements); displacements default to packed. alltoallv(buf,
        rcounts=...): in place (the blocks to send in buf by rcounts,
        rdispls)."""
        st = _alltoallv(*self._a_alltoallv("alltoallv", sbuf, rbuf, scounts, rcounts, sdispls,
                                           rdispls))
        if st:
            raise error_for(st, "alltoallv")

    def ialltoallv(self, sbuf, rbuf=None, scounts=None, rcounts=None, sdispls=None,
                   rdispls=None):
        a = self._a_alltoallv("ialltoallv", sbuf, rbuf, scounts, rcounts, sdispls, rdispls)
        return self._start(_ialltoallv, a, "ialltoallv", (sbuf, rbuf))

    def _a_rsb(self, call, sbuf, rbuf, op):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        p = self._size
        if rbuf is None or sbuf is IN_PLACE:
            rp, rn, dt, name = self._in_place_buf(call, sbuf, rbuf)
            sp, n = IN_PLACE_PTR, _multiple(call, name, rn, p)
        else:
            rp, n, dt = buffer(rbuf, call, "rbuf", True)
            sp, sn, sdt = buffer(sbuf, call, "sbuf", False)
            _expect(call, "sbuf", sn, sdt, n * p, dt, "rbuf", "size*count = %d*%d" % (p, n))
        return sp, rp, n, dt, _op_code(op, dt, call), c

    def reduce_scatter_block(self, sbuf, rbuf=None, op=Op.SUM):
        """Reduce sbuf (size*count elements) over the ranks; block i of the
        result to rank i's rbuf (count elements). reduce_scatter_block(buf):
        in place, the block lands at the start of buf."""
        st = _rsb(*self._a_rsb("reduce_scatter_block", sbuf, rbuf, op))
        if st:
            raise error_for(st, "reduce_scatter_block")

    def ireduce_scatter_block(self, sbuf, rbuf=None, op=Op.SUM):
        a = self._a_rsb("ireduce_scatter_block", sbuf, rbuf, op)
        return self._start(_irsb, a, "ireduce_scatter_block", (sbuf, rbuf))

    def _a_rs(self, call, sbuf, rbuf, counts, op):
        c = self._ptr
        if c is None:
            raise self._gone(call)
        cnt = self._counts(counts, call, "counts")
        total = sum(cnt)
        if rbuf is None or sbuf is IN_PLACE:
            rp, rn, dt, name = self._in_place_buf(call, sbuf, rbuf)
            sp = IN_PLACE_PTR
            if rn != total:
                raise arg_error(call, name, "has %d elements, sum(counts) = %d" % (rn, total))
        else:
            rp, rn, dt = buffer(rbuf, call, "rbuf", True)
            sp, sn, sdt = buffer(sbuf, call, "sbuf", False)
            _expect(call, "sbuf", sn, sdt, total, dt, "rbuf", "sum(counts)")
            if rn != cnt[self._rank]:
                raise arg_error(call, "rbuf", "has %d elements, counts[rank] = %d"
                                % (rn, cnt[self._rank]))
        return sp, rp, _sizes(cnt), dt, _op_code(op, dt, call), c

    def reduce_scatter(self, sbuf, rbuf=None, counts=None, op=Op.SUM):
        """Reduce sbuf (sum(counts) elements) over the ranks; rank i gets
        counts[i] elements of the result (in rank order) in rbuf.
        reduce_scatter(buf, counts=...): in place, at the start of buf."""
        st = _rs(*self._a_rs("reduce_scatter", sbuf, rbuf, counts, op))
        if st:
            raise error_for(st, "reduce_scatter")

    def ireduce_scatter(self, sbuf, rbuf=None, counts=None, op=Op.SUM):
        a = self._a_rs("ireduce_scatter", sbuf, rbuf, counts, op)
        return self._start(_irs, a, "ireduce_scatter", (sbuf, rbuf))

    # ---- point to point ----

    def send(self, buf, dest, tag=0):
        """Send buf to rank dest; returns once buf may be reused."""
        c = self._ptr
        if c is None:
            raise self._gone("send")
        p, n, dt = buffer(buf, "send", "buf", False)
        if not (type(dest) is int and 0 <= dest < self._size):
            dest = self._root(dest, "send", "dest")
        if not (type(tag) is int and 0 <= tag <= TAG_UB):
            tag = self._tag(tag, "send", False)
        st = _send(p, n, dt, dest, tag, c)
        if st:
            raise error_for(st, "send")

    def isend(self, buf, dest, tag=0):
        c = self._live("isend")
        p, n, dt = buffer(buf, "isend", "buf", False)
        dest = self._root(dest, "isend", "dest")
        tag = self._tag(tag, "isend", False)
        reqp = _new(_REQPP)
        st = _isend(p, n, dt, dest, tag, c, reqp)
        if st:
            raise error_for(st, "isend")
        return Request(self._ctx, reqp, (p, buf), "isend", _new(_STATUSP), _ESIZE[dt])

    def _source(self, source, call):
        if source == ANY_SOURCE:
            return ANY_SOURCE
        return self._root(source, call, "source")

    def recv(self, buf, source=ANY_SOURCE, tag=ANY_TAG):
        """Receive into buf from source (ucoll.ANY_SOURCE) with tag
        (ucoll.ANY_TAG); returns the Status. A longer message raises
        TruncationError (its .message_status says how long)."""
        c = self._ptr
        if c is None:
            raise self._gone("recv")
        p, n, dt = buffer(buf, "recv", "buf", True)
        if not (type(source) is int and -1 <= source < self._size):
            source = self._source(source, "recv")
        if not (type(tag) is int and -1 <= tag <= TAG_UB):
            tag = self._tag(tag, "recv", True)
        stp = self._stp
        st = _recv(p, n, dt, source, tag, c, stp)
        res = Status(stp.source, stp.tag, stp.bytes, _ESIZE[dt], stp.error)
        if st:
            e = error_for(st, "recv")
            if isinstance(e, TruncationError):
                e.message_status = res
            raise e
        return res

    def irecv(self, buf, source=ANY_SOURCE, tag=ANY_TAG):
        c = self._live("irecv")
        p, n, dt = buffer(buf, "irecv", "buf", True)
        source = self._source(source, "irecv")
        tag = self._tag(tag, "irecv", True)
        reqp = _new(_REQPP)
        st = _irecv(p, n, dt, source, tag, c, reqp)
        if st:
            raise error_for(st, "irecv")
        return Request(self._ctx, reqp, (p, buf), "irecv", _new(_STATUSP), _ESIZE[dt])


class Context:
    """A ucoll context: ucoll.init() or ucoll.init_oob(). Use it as a
    context manager or call finalize() (collective) before the process
    exits: a rank that exits without finalizing counts as failed under
    ucollrun. Leaving a `with` block through an exception does not finalize
    (the other ranks may be inside a collective that this rank will never
    join): the process should exit, and the launcher stops the job."""

    __slots__ = ("_ptr", "_world", "_comms", "_oob", "_orphans", "__weakref__")

    def __init__(self, ptr, oob=None):
        self._ptr = ptr
        self._oob = oob  # the allgather callback of init_oob: alive until finalize returns
        self._orphans = []  # requests dropped in flight: (reqp, buffers, status)
        self._comms = weakref.WeakSet()
        self._world = Comm(self, lib.ucoll_comm_world(ptr), True)

    def _live(self, call):
        p = self._ptr
        if p is None:
            raise finalized_error(call)
        return p

    @property
    def world(self):
        """The communicator of every rank of the job."""
        self._live("world")
        return self._world

    @property
    def rank(self):
        self._live("rank")
        return self._world._rank

    @property
    def size(self):
        self._live("size")
        return self._world._size

    @property
    def local_rank(self):
        """This rank's index among the ranks of its node."""
        return lib.ucoll_local_rank(self._live("local_rank"))

    @property
    def local_size(self):
        """The number of ranks on this node."""
        return lib.ucoll_local_size(self._live("local_size"))

    @property
    def finalized(self):
        return self._ptr is None

    def progress(self):
        """One pass of the progress engine; also lets go of the buffers of
        dropped requests that have completed."""
        p = self._live("progress")
        n = lib.ucoll_progress(p)
        if self._orphans:
            done = _new(_INTP)
            keep = []
            for o in self._orphans:
                lib.ucoll_test(o[0][0], done, _NULL)
                if not done[0]:
                    keep.append(o)
            self._orphans = keep
        return n

    def peer_transports(self, world_rank):
        """The UCX transports that reach world_rank ("posix/memory ...")."""
        p = self._live("peer_transports")
        world_rank = self._world._root(world_rank, "peer_transports", "world_rank")
        buf = _new("char[]", 256)
        st = lib.ucoll_peer_transports(p, world_rank, buf, 256)
        if st:
            raise error_for(st, "peer_transports")
        return ffi.string(buf).decode()

    def finalize(self):
        """Collective: free every communicator, cancel outstanding requests,
        close the context. A second call does nothing."""
        p = self._ptr
        if p is None:
            return
        for comm in list(self._comms):
            comm._ptr = None
        self._ptr = None
        try:
            st = lib.ucoll_finalize(p)
        finally:
            self._orphans = []
            oob, self._oob = self._oob, None
        if st:
            e = error_for(st, "finalize")
            if oob is not None and oob.exc is not None:
                raise e from oob.exc
            raise e

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finalize()

    def __repr__(self):
        if self._ptr is None:
            return "<ucoll.Context (finalized)>"
        return "<ucoll.Context rank %d of %d>" % (self._world._rank, self._world._size)


def init():
    """Start ucoll as the C library decides (ucoll_init): through PMIx under
    a launcher (ucollrun, mpirun, srun), through UCOLL_BOOTSTRAP=env's TCP
    rendezvous, or as a singleton of size 1. Returns a Context."""
    pp = _new("ucoll_ctx_t **")
    st = lib.ucoll_init(pp)
    if st:
        raise error_for(st, "init", None, "the reason is on stderr")
    return Context(pp[0])


class _Oob:
    """The Python side of an out-of-band bootstrap: the user's allgather
    behind a cffi callback, and the first exception it raised."""

    def __init__(self, allgather, size):
        self.allgather = allgather
        self.size = size
        self.exc = None
        self.callback = ffi.callback("int(void *, const void *, void *, size_t)", self._call,
                                     error=-1, onerror=self._onerror)

    def _call(self, arg, inp, out, n):
        res = self.allgather(ffi.buffer(inp, n)[:])
        want = self.size * n
        with memoryview(res) as m:
            if m.nbytes != want:
                raise ValueError("the allgather callback returned %d bytes, expected size*len = "
                                 "%d*%d = %d" % (m.nbytes, self.size, n, want))
        ffi.memmove(out, res, want)
        return 0

    def _onerror(self, exc_type, exc, tb):
        if self.exc is None:
            self.exc = exc if exc is not None else exc_type()
        return -1


def init_oob(rank, size, allgather, node_id=-1):
    """Start ucoll through the caller's own rendezvous (ucoll_init_oob):
    this process is rank of size, and allgather(data: bytes) -> bytes is a
    collective over the size processes returning the size*len(data) bytes
    of everyone's data in rank order. It is called during init_oob and once
    more in finalize, from the calling thread. node_id: equal for the
    processes of one node (negative: ucoll finds out). Returns a Context."""
    rank = _int_arg(rank, "init_oob", "rank")
    size = _int_arg(size, "init_oob", "size")
    node_id = _int_arg(node_id, "init_oob", "node_id")
    if size < 1:
        raise arg_error("init_oob", "size", "must be at least 1, got %d" % size)
    if not 0 <= rank < size:
        raise arg_error("init_oob", "rank", "%d is outside 0..size-1 = 0..%d" % (rank, size - 1))
    if not callable(allgather):
        raise arg_error("init_oob", "allgather", "a callable allgather(bytes) -> bytes is "
                        "required, got %r" % (allgather,))
    try:
        fn = lib.ucoll_init_oob
    except AttributeError:
        raise UnsupportedError("init_oob: %s has no ucoll_init_oob (an older libucoll)"
                               % LIBRARY, "init_oob") from None
    oob = _Oob(allgather, size)
    desc = _new("ucoll_oob_t *", {"rank": rank, "size": size, "allgather": oob.callback,
                                  "arg": _NULL, "node_id": node_id})
    pp = _new("ucoll_ctx_t **")
    st = fn(desc, pp)
    if st:
        e = error_for(st, "init_oob", None, "the reason is on stderr")
        if oob.exc is not None:
            if not isinstance(e, BootstrapError):
                raise e
            raise BootstrapError("init_oob: the allgather callback raised %s: %s"
                                 % (type(oob.exc).__name__, oob.exc), "init_oob",
                                 "allgather", st) from oob.exc
        raise e
    return Context(pp[0], oob)

