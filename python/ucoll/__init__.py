"""
ucoll from Python: the collectives runtime's C API (include/ucoll.h) over
cffi, with numpy arrays and torch CPU tensors as buffers, without copies.

    import numpy as np, ucoll
    with ucoll.init() as ctx:              # PMIx under ucollrun, else a singleton
        world = ctx.world
        x = np.full(4, world.rank, dtype=np.float32)
        world.allreduce(x)                 # in place, op="sum"
        req = world.ibcast(x, root=0)
        req.wait()

Objects: Context (init, init_oob), Comm (ctx.world, comm.split), Request
(the nonblocking calls), Status (receives). Errors: Error and one subclass
per status code (ArgumentError, TruncationError, ...). ucoll.torch is the
torch.distributed backend, a separate module.
"""
from ._buffers import IN_PLACE, Datatype, dtype_of
from ._core import Comm, Context, Op, Request, Status, init, init_oob, waitall
from ._errors import (ArgumentError, BootstrapError, BusyError, Error, ErrorCode,
                      FinalizedError, NoMemoryError, PeerError, TimeoutError, TransportError,
                      TruncationError, UnsupportedError, strerror)
from ._ffi import ANY_SOURCE, ANY_TAG, TAG_UB, library_path
from ._ffi import ffi as _cffi
from ._ffi import lib as _lib

SUM, PROD, MIN, MAX = Op.SUM, Op.PROD, Op.MIN, Op.MAX
LAND, LOR, LXOR = Op.LAND, Op.LOR, Op.LXOR
BAND, BOR, BXOR = Op.BAND, Op.BOR, Op.BXOR
UNDEFINED = -1  # split color of a rank that joins no communicator

#: ucoll_version() of the loaded library ("0.1.0")
__version__ = _cffi.string(_lib.ucoll_version()).decode()


def version():
    """The version of the loaded libucoll."""
    return __version__


def dtype_size(dt):
    """Bytes per element of a Datatype (ucoll_dtype_size)."""
    return _lib.ucoll_dtype_size(int(dt))


__all__ = [
    "init", "init_oob", "Context", "Comm", "Request", "Status", "waitall",
    "Op", "SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR",
    "Datatype", "dtype_of", "dtype_size", "IN_PLACE", "ANY_SOURCE", "ANY_TAG", "TAG_UB",
    "UNDEFINED", "Error", "ErrorCode", "ArgumentError", "FinalizedError", "NoMemoryError",
    "TruncationError", "TransportError", "BootstrapError", "TimeoutError", "PeerError",
    "UnsupportedError", "BusyError", "strerror", "version", "library_path",
]

# the public classes present themselves as ucoll.X (tracebacks, repr)
for _cls in (Comm, Context, Op, Request, Status, Datatype, Error, ErrorCode, ArgumentError,
             FinalizedError, NoMemoryError, PeerError, TimeoutError, TransportError,
             TruncationError, UnsupportedError, BootstrapError, BusyError):
    _cls.__module__ = "ucoll"
del _cls
