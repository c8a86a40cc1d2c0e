"""
The C side of the binding: the declarations of include/ucoll.h that the
package calls, and the loaded libucoll.so.

cffi in ABI mode: nothing is compiled; ffi.dlopen() loads the library and
every call goes through libffi with the signature declared here. The
declarations below are copied from include/ucoll.h (tests/python/
test_local.py checks that each still matches the header word for word), and
the enum values are the header's: ABI mode cannot read them from the library.

The GIL: cffi releases it around every call into C (ABI and API mode alike)
and takes it back before returning, and a callback from C into Python (the
out-of-band allgather of ucoll_init_oob) takes it for the time of the
callback. So a blocking ucoll_recv or ucoll_allreduce in one thread lets the
other Python threads run; test_local.py::test_gil_released_during_c_calls
checks it.

The library: $UCOLL_LIBRARY when set, else the path _paths.py was generated
with (the build tree's libucoll.so for the copy in <builddir>/python, the
installed one for the installed package).
"""
import os

import cffi

from . import _paths

CDEF = """
enum {
    UCOLL_OK = 0,
    UCOLL_ERR_ARG = -1,
    UCOLL_ERR_NOMEM = -2,
    UCOLL_ERR_TRUNCATE = -3,
    UCOLL_ERR_TRANSPORT = -4,
    UCOLL_ERR_BOOTSTRAP = -5,
    UCOLL_ERR_TIMEOUT = -6,
    UCOLL_ERR_PEER = -7,
    UCOLL_ERR_UNSUPPORTED = -8,
    UCOLL_ERR_BUSY = -9
};

const char *ucoll_strerror(int status);

typedef enum {
    UCOLL_BYTE,
    UCOLL_INT8,
    UCOLL_UINT8,
    UCOLL_INT16,
    UCOLL_UINT16,
    UCOLL_INT32,
    UCOLL_UINT32,
    UCOLL_INT64,
    UCOLL_UINT64,
    UCOLL_FLOAT16,
    UCOLL_BFLOAT16,
    UCOLL_FLOAT32,
    UCOLL_FLOAT64,
    UCOLL_DTYPE_LAST
} ucoll_dtype_t;

typedef enum {
    UCOLL_SUM,
    UCOLL_PROD,
    UCOLL_MIN,
    UCOLL_MAX,
    UCOLL_LAND,
    UCOLL_LOR,
    UCOLL_LXOR,
    UCOLL_BAND,
    UCOLL_BOR,
    UCOLL_BXOR,
    UCOLL_OP_LAST
} ucoll_op_t;

size_t ucoll_dtype_size(ucoll_dtype_t dt);

typedef struct ucoll_ctx ucoll_ctx_t;
typedef struct ucoll_comm ucoll_comm_t;
typedef struct ucoll_req ucoll_req_t;

int ucoll_init(ucoll_ctx_t **ctx);

typedef struct ucoll_oob {
    int rank;
    int size;
    int (*allgather)(void *arg, const void *in, void *out, size_t len);
    void *arg;
    long node_id;
} ucoll_oob_t;

int ucoll_init_oob(const ucoll_oob_t *oob, ucoll_ctx_t **ctx);
int ucoll_finalize(ucoll_ctx_t *ctx);
ucoll_comm_t *ucoll_comm_world(ucoll_ctx_t *ctx);
int ucoll_comm_rank(const ucoll_comm_t *comm);
int ucoll_comm_size(const ucoll_comm_t *comm);
int ucoll_comm_split(ucoll_comm_t *comm, int color, int key, ucoll_comm_t **out);
int ucoll_comm_free(ucoll_comm_t *comm);
int ucoll_progress(ucoll_ctx_t *ctx);

typedef struct {
    int source;
    int tag;
    size_t bytes;
    int error;
} ucoll_status_t;

int ucoll_isend(const void *buf, size_t count, ucoll_dtype_t dt, int dst, int tag,
                ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_irecv(void *buf, size_t count, ucoll_dtype_t dt, int src, int tag, ucoll_comm_t *comm,
                ucoll_req_t **req);
int ucoll_send(const void *buf, size_t count, ucoll_dtype_t dt, int dst, int tag,
               ucoll_comm_t *comm);
int ucoll_recv(void *buf, size_t count, ucoll_dtype_t dt, int src, int tag, ucoll_comm_t *comm,
               ucoll_status_t *status);
int ucoll_test(ucoll_req_t *req, int *done, ucoll_status_t *status);
int ucoll_wait(ucoll_req_t *req, ucoll_status_t *status);
int ucoll_waitall(size_t n, ucoll_req_t **reqs);

int ucoll_barrier(ucoll_comm_t *comm);
int ucoll_bcast(void *buf, size_t count, ucoll_dtype_t dt, int root, ucoll_comm_t *comm);
typedef struct ucoll_iov {
    void *buf;
    size_t len;
} ucoll_iov_t;
int ucoll_bcast_iov(const ucoll_iov_t *iov, size_t niov, int root, ucoll_comm_t *comm);
int ucoll_reduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                 int root, ucoll_comm_t *comm);
int ucoll_allreduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                    ucoll_comm_t *comm);
int ucoll_gather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                 ucoll_comm_t *comm);
int ucoll_gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                  const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm);
int ucoll_scatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm);
int ucoll_scatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                   size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm);
int ucoll_allgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                    ucoll_comm_t *comm);
int ucoll_allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                     const size_t *displs, ucoll_dtype_t dt, ucoll_comm_t *comm);
int ucoll_alltoall(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                   ucoll_comm_t *comm);
int ucoll_alltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls, void *rbuf,
                    const size_t *rcounts, const size_t *rdispls, ucoll_dtype_t dt,
                    ucoll_comm_t *comm);
int ucoll_reduce_scatter_block(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                               ucoll_op_t op, ucoll_comm_t *comm);
int ucoll_reduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts, ucoll_dtype_t dt,
                         ucoll_op_t op, ucoll_comm_t *comm);
int ucoll_scan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
               ucoll_comm_t *comm);
int ucoll_exscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                 ucoll_comm_t *comm);

int ucoll_ibarrier(ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ibcast(void *buf, size_t count, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                 ucoll_req_t **req);
int ucoll_ibcast_iov(const ucoll_iov_t *iov, size_t niov, int root, ucoll_comm_t *comm,
                     ucoll_req_t **req);
int ucoll_ireduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                  int root, ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iallreduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                     ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_igather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_igatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                   const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                   ucoll_req_t **req);
int ucoll_iscatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                   ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iscatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                    size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                    ucoll_req_t **req);
int ucoll_iallgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                     ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iallgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                      const size_t *displs, ucoll_dtype_t dt, ucoll_comm_t *comm,
                      ucoll_req_t **req);
int ucoll_ialltoall(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                    ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ialltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls, void *rbuf,
                     const size_t *rcounts, const size_t *rdispls, ucoll_dtype_t dt,
                     ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                                ucoll_op_t op, ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ireduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts, ucoll_dtype_t dt,
                          ucoll_op_t op, ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iexscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                  ucoll_comm_t *comm, ucoll_req_t **req);

const char *ucoll_version(void);
int ucoll_local_rank(const ucoll_ctx_t *ctx);
int ucoll_local_size(const ucoll_ctx_t *ctx);
int ucoll_peer_transports(ucoll_ctx_t *ctx, int world_rank, char *buf, size_t len);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


def library_path():
    """The libucoll.so this package loads: $UCOLL_LIBRARY, else the one it
    was configured with."""
    return os.environ.get("UCOLL_LIBRARY") or _paths.LIBRARY


LIBRARY = library_path()
try:
    # dlopen resolves no symbol up front: a function the library lacks (an
    # older libucoll without ucoll_init_oob) fails only when it is looked up
    lib = ffi.dlopen(LIBRARY)
except OSError as e:
    raise ImportError(
        "ucoll: cannot load %s (%s); build ucoll (ninja -C <builddir>) or set "
        "UCOLL_LIBRARY to the path of libucoll.so" % (LIBRARY, e)
    ) from e

# The header's macros, which cdef cannot express.
IN_PLACE_PTR = ffi.cast("void *", 1)  # UCOLL_IN_PLACE
ANY_SOURCE = -1
ANY_TAG = -1
TAG_UB = 0x3FFFFFFF
