"""
Buffers: what the collectives take and how they reach C without a copy.

A buffer is a numpy array, a torch CPU tensor, or any other object with the
buffer protocol (bytes, bytearray, memoryview, array.array). Its datatype
comes from the object, its element count from its size; the pointer goes to
C as is:
  numpy   ffi.from_buffer(arr): the cdata holds the array's buffer (and so
          the array) until it is dropped, and refuses non-contiguous arrays
          and, for outputs, read-only ones;
  torch   t.data_ptr() cast to void *: the caller keeps the tensor alive
          (Request does for nonblocking calls);
  others  ffi.from_buffer as for numpy; bytes and bytearray (format 'B')
          are UCOLL_BYTE.
Nothing is ever copied or converted: a buffer that C cannot use as it is
(non-contiguous, read-only output, another device, a datatype C does not
have, non-native byte order) raises ArgumentError naming the argument.

Neither numpy nor torch is imported here: an object is recognised by its
type, and the modules are taken from sys.modules, where they must already
be for such an object to exist. The first array (tensor) of a type seen
builds the dtype map of its library and registers the type for the fast
path (buffer()'s first two branches).
"""
import enum
import sys

from ._errors import arg_error
from ._ffi import ffi


class Datatype(enum.IntEnum):
    """The ucoll_dtype_t values."""

    BYTE = 0
    INT8 = 1
    UINT8 = 2
    INT16 = 3
    UINT16 = 4
    INT32 = 5
    UINT32 = 6
    INT64 = 7
    UINT64 = 8
    FLOAT16 = 9
    BFLOAT16 = 10
    FLOAT32 = 11
    FLOAT64 = 12


class _InPlace:
    """The type of ucoll.IN_PLACE."""

    __slots__ = ()

    def __repr__(self):
        return "ucoll.IN_PLACE"

IN_PLACE = _InPlace()

FIRST_FLOAT = Datatype.FLOAT16  # every dtype from here on is a floating point one

_NULL = ffi.NULL
_VOIDP = ffi.typeof("void *")
_CHARS = ffi.typeof("char[]")
_cast = ffi.cast
_from_buffer = ffi.from_buffer


class _Unseen:
    """Stands for numpy.ndarray until the first numpy array arrives."""


_ndarray = _Unseen
_NP_DT = {}  # numpy dtype -> Datatype (native byte order only)
_TORCH_TYPES = set()  # exact types known to be torch.Tensor (subclasses included)
_TORCH_DT = {}  # torch.dtype -> Datatype
_torch = None  # the torch module, once a tensor was seen

# struct format characters of the buffer protocol (native sizes)
_FMT_DT = {
    "b": Datatype.INT8,
    "B": Datatype.BYTE,
    "c": Datatype.BYTE,
    "h": Datatype.INT16,
    "H": Datatype.UINT16,
    "e": Datatype.FLOAT16,
    "f": Datatype.FLOAT32,
    "d": Datatype.FLOAT64,
}
_INT_BY_SIZE = {1: (Datatype.INT8, Datatype.UINT8), 2: (Datatype.INT16, Datatype.UINT16),
                4: (Datatype.INT32, Datatype.UINT32), 8: (Datatype.INT64, Datatype.UINT64)}


def buffer(x, call, name, out):
    """(pointer, element count, Datatype) of buffer x, argument name of
    call; out: C writes into it. Raises ArgumentError."""
    if type(x) is _ndarray:
        dt = _NP_DT.get(x.dtype)
        if dt is not None:
            try:
                return _from_buffer(_CHARS, x, out), x.size, dt
            except ValueError:
                pass
        raise _numpy_error(x, call, name, out)
    if type(x) in _TORCH_TYPES:
        try:
            dt = _TORCH_DT[x.dtype]
            if x.is_cpu and x.is_contiguous() and not (out and x.requires_grad and
                                                       _torch.is_grad_enabled()):
                p = x.data_ptr()
                return (_cast(_VOIDP, p) if p else _NULL), x.numel(), dt
        except Exception:
            pass
        raise _torch_error(x, call, name, out)
    return _other(x, call, name, out)


def _other(x, call, name, out):
    """buffer() for everything but an ndarray or a tensor of a known type."""
    global _ndarray
    if x is None:
        raise arg_error(call, name, "a buffer is required here, got None")
    if x is IN_PLACE:
        raise arg_error(call, name, "ucoll.IN_PLACE is not allowed here")
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        if not _NP_DT:
            _numpy_setup(np)
        if type(x) is np.ndarray:
            _ndarray = np.ndarray
            return buffer(x, call, name, out)
        dt = _NP_DT.get(x.dtype)  # a subclass: np.memmap, np.matrix...
        if dt is not None:
            try:
                return _from_buffer(_CHARS, x, out), x.size, dt
            except ValueError:
                pass
        raise _numpy_error(x, call, name, out)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if not _TORCH_DT:
            _torch_setup(torch)
        _TORCH_TYPES.add(type(x))
        return buffer(x, call, name, out)
    try:
        m = memoryview(x)
    except TypeError:
        raise arg_error(call, name, "a %s is not a buffer: pass a numpy array, a torch CPU tensor "
                        "or an object with the buffer protocol (bytearray...)"
                        % type(x).__name__) from None
    with m:
        fmt = m.format.lstrip("@")
        dt = _FMT_DT.get(fmt)
        if dt is None and fmt in ("i", "I", "l", "L", "q", "Q", "n", "N"):
            dt = _INT_BY_SIZE[m.itemsize][fmt.isupper()]
        if dt is None:
            raise arg_error(call, name, "buffer format %r has no ucoll datatype" % m.format)
        if not m.c_contiguous:
            raise arg_error(call, name, "the buffer is not contiguous")
        if out and m.readonly:
            raise arg_error(call, name, "a read-only %s cannot receive data" % type(x).__name__)
        n = m.nbytes // m.itemsize
    return _from_buffer(_CHARS, x, out), n, dt


def _numpy_setup(np):
    for name, dt in (("int8", Datatype.INT8), ("uint8", Datatype.UINT8),
                     ("int16", Datatype.INT16), ("uint16", Datatype.UINT16),
                     ("int32", Datatype.INT32), ("uint32", Datatype.UINT32),
                     ("int64", Datatype.INT64), ("uint64", Datatype.UINT64),
                     ("float16", Datatype.FLOAT16), ("float32", Datatype.FLOAT32),
                     ("float64", Datatype.FLOAT64)):
        _NP_DT[np.dtype(name)] = dt
    # the C names of the same types (long long next to long...) are other
    # dtype objects that compare equal; one entry serves both. Non-native
    # byte orders compare unequal and stay out.
    for code in np.typecodes["AllInteger"]:
        d = np.dtype(code)
        _NP_DT.setdefault(d, _INT_BY_SIZE[d.itemsize][d.kind == "u"])


def _torch_setup(torch):
    global _torch
    _TORCH_DT.update({
        torch.int8: Datatype.INT8, torch.uint8: Datatype.UINT8, torch.int16: Datatype.INT16,
        torch.int32: Datatype.INT32, torch.int64: Datatype.INT64,
        torch.float16: Datatype.FLOAT16, torch.bfloat16: Datatype.BFLOAT16,
        torch.float32: Datatype.FLOAT32, torch.float64: Datatype.FLOAT64,
    })
    for tname, dt in (("uint16", Datatype.UINT16), ("uint32", Datatype.UINT32),
                      ("uint64", Datatype.UINT64)):
        if isinstance(getattr(torch, tname, None), torch.dtype):  # torch >= 2.3
            _TORCH_DT[getattr(torch, tname)] = dt
    _torch = torch


def _numpy_error(x, call, name, out):
    if x.dtype not in _NP_DT:
        why = ("non-native byte order" if x.dtype.byteorder not in "=|" else "no ucoll datatype")
        return arg_error(call, name, "numpy dtype %s: %s (ucoll takes int8..uint64, float16, "
                         "float32, float64; bfloat16 only as a torch tensor)" % (x.dtype, why))
    if not x.flags.c_contiguous:
        return arg_error(call, name, "the numpy array is not C-contiguous (strides %s); pass "
                         "np.ascontiguousarray(...) and copy back yourself" % (x.strides,))
    if out and not x.flags.writeable:
        return arg_error(call, name, "the numpy array is read-only (flags.writeable is False) "
                         "and cannot receive data")
    return arg_error(call, name, "numpy refused its buffer")


def _torch_error(x, call, name, out):
    torch = _torch
    if x.dtype not in _TORCH_DT:
        return arg_error(call, name, "torch dtype %s has no ucoll datatype" % x.dtype)
    if x.layout is not torch.strided:
        return arg_error(call, name, "a %s tensor is not a dense buffer" % x.layout)
    if x.device.type != "cpu":
        return arg_error(call, name, "the tensor is on device %s; ucoll takes CPU tensors"
                         % x.device)
    if not x.is_contiguous():
        return arg_error(call, name, "the tensor is not contiguous (strides %s); pass "
                         "t.contiguous() and copy back yourself" % (tuple(x.stride()),))
    if out and x.requires_grad and torch.is_grad_enabled():
        return arg_error(call, name, "the tensor requires grad and would be written in place "
                         "behind autograd's back: call under torch.no_grad() or pass t.detach()")
    return arg_error(call, name, "the tensor cannot be used as a buffer")


def dtype_of(x):
    """The ucoll Datatype of buffer x (as a collective would see it)."""
    return buffer(x, "dtype_of", "buf", False)[2]
