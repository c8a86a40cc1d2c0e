"""
Errors: one exception class per ucoll status code, all under ucoll.Error.

Every error carries .status, the ErrorCode member (its .name is the C name
without the UCOLL_ prefix, its value the C code), .call, the Python call
that failed ("allreduce", "init"), and .arg, the argument at fault when one
is known (always for the checks this package makes before calling C). The
message reads "call: arg: what is wrong".
"""
import enum

from ._ffi import ffi, lib


class ErrorCode(enum.IntEnum):
    """The status codes of include/ucoll.h."""

    OK = 0
    ERR_ARG = -1
    ERR_NOMEM = -2
    ERR_TRUNCATE = -3
    ERR_TRANSPORT = -4
    ERR_BOOTSTRAP = -5
    ERR_TIMEOUT = -6
    ERR_PEER = -7
    ERR_UNSUPPORTED = -8
    ERR_BUSY = -9


class Error(Exception):
    """A ucoll call failed. Subclasses name the status; .status, .call and
    .arg say which and where."""

    status = None  # the ErrorCode of the subclass (None: an unknown code)

    def __init__(self, message, call=None, arg=None, code=None):
        super().__init__(message)
        self.call = call
        self.arg = arg
        #: the C status code, an int (also for a code this package does not know)
        self.code = code if code is not None else (None if self.status is None else int(self.status))


class ArgumentError(Error, ValueError):
    """UCOLL_ERR_ARG: an invalid argument (buffer, count, datatype, op,
    root, rank, tag); raised before calling C when this package sees it."""

    status = ErrorCode.ERR_ARG


class FinalizedError(ArgumentError):
    """A call on a finalized context, a communicator of one, a freed
    communicator, or a request of a finalized context."""


class NoMemoryError(Error, MemoryError):
    """UCOLL_ERR_NOMEM."""

    status = ErrorCode.ERR_NOMEM


class TruncationError(Error):
    """UCOLL_ERR_TRUNCATE: a message longer than the receive buffer. For a
    receive, .message_status is the Status of the message as sent."""

    status = ErrorCode.ERR_TRUNCATE
    message_status = None


class TransportError(Error):
    """UCOLL_ERR_TRANSPORT: UCX reported an error."""

    status = ErrorCode.ERR_TRANSPORT


class BootstrapError(Error):
    """UCOLL_ERR_BOOTSTRAP: PMIx, the launcher or the out-of-band allgather
    failed."""

    status = ErrorCode.ERR_BOOTSTRAP


class TimeoutError(Error):  # noqa: A001 (ucoll.TimeoutError, as the C name)
    """UCOLL_ERR_TIMEOUT: a blocking call outlasted UCOLL_TIMEOUT."""

    status = ErrorCode.ERR_TIMEOUT


class PeerError(Error):
    """UCOLL_ERR_PEER: a peer process died or became unreachable."""

    status = ErrorCode.ERR_PEER


class UnsupportedError(Error):
    """UCOLL_ERR_UNSUPPORTED: the operation or combination is not
    supported."""

    status = ErrorCode.ERR_UNSUPPORTED


class BusyError(Error):
    """UCOLL_ERR_BUSY: the communicator still has operations under way
    (Comm.free before they complete)."""

    status = ErrorCode.ERR_BUSY


_BY_CODE = {
    c.status.value: c
    for c in (
        ArgumentError,
        NoMemoryError,
        TruncationError,
        TransportError,
        BootstrapError,
        TimeoutError,
        PeerError,
        UnsupportedError,
        BusyError,
    )
}


def strerror(code):
    """ucoll_strerror(code) as a str."""
    return ffi.string(lib.ucoll_strerror(int(code))).decode()


def error_for(code, call, arg=None, detail=None):
    """The exception for the C status code returned by call (not raised)."""
    cls = _BY_CODE.get(code, Error)
    try:
        name = "UCOLL_" + ErrorCode(code).name
    except ValueError:
        name = "status %d" % code
    msg = "%s: %s (%s)" % (call, strerror(code), name)
    if arg is not None:
        msg = "%s: %s" % (msg, arg)
    if detail:
        msg = "%s: %s" % (msg, detail)
    return cls(msg, call, arg, code)


def arg_error(call, arg, what):
    """An ArgumentError for argument arg of call (not raised)."""
    return ArgumentError("%s: %s: %s" % (call, arg, what), call, arg)


def finalized_error(call, what="the context is finalized"):
    return FinalizedError("%s: %s" % (call, what), call, None)
