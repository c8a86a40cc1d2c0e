/*
 * Test cases of the data-movement collectives (gather, gatherv, scatter,
 * scatterv, allgather, allgatherv, alltoall, alltoallv), shared by the
 * simulated-network test and the multi-rank test. Public API only.
 *
 * A case is (op, p, root, count, dtype, in place, seed). Every rank fills its
 * send data with bytes that are a hash of (seed, source, destination, byte),
 * poisons its receive buffer (and a guard after it), starts the collective,
 * and after completion checks every byte it can: the blocks it must have
 * received, the gaps between displacements and the guard (still poisoned),
 * and a root's send buffer under in-place scatter (unchanged). The
 * v-variants use irregular counts, zeros included, and displacements in
 * reverse rank order with gaps.
 */
#ifndef DM_CASE_H
#define DM_CASE_H

#include <stddef.h>
#include <ucoll.h>

typedef enum {
    DM_GATHER,
    DM_GATHERV,
    DM_SCATTER,
    DM_SCATTERV,
    DM_ALLGATHER,
    DM_ALLGATHERV,
    DM_ALLTOALL,
    DM_ALLTOALLV,
    DM_NOPS
} dm_op_t;

/* "gather", ... as in UCOLL_<OP>_ALGO (upper-cased). */
extern const char *const dm_op_names[DM_NOPS];

typedef struct dm_case {
    dm_op_t op;
    int p;
    int root;     /* rooted ops only */
    size_t count; /* per block; v-variants: the base of the counts */
    ucoll_dtype_t dt;
    int in_place; /* at the root for rooted ops, everywhere else */
    unsigned seed;
} dm_case_t;

typedef struct dm_bufs {
    char *sbuf, *rbuf;         /* NULL where the rank passes none */
    size_t sbytes, rbytes;     /* extents, without the guard */
    size_t scount, rcount;     /* v-variants: this rank's own counts */
    size_t *scounts, *sdispls; /* p entries, NULL where not passed */
    size_t *rcounts, *rdispls;
} dm_bufs_t;

int dm_rooted(dm_op_t op);
int dm_is_v(dm_op_t op);

/* Allocate and fill rank's buffers for case c. 0 or -1 (out of memory). */
int dm_setup(const dm_case_t *c, int rank, dm_bufs_t *b);
/* Start the nonblocking collective (ucoll_i<op>) with rank's buffers. */
int dm_start(const dm_case_t *c, int rank, ucoll_comm_t *comm, dm_bufs_t *b, ucoll_req_t **req);
/* Check rank's result: 0 when right, else -1 with the first difference
 * described in msg. */
int dm_check(const dm_case_t *c, int rank, const dm_bufs_t *b, char *msg, size_t len);
void dm_free(dm_bufs_t *b);
/* One line naming the case. */
void dm_describe(const dm_case_t *c, char *buf, size_t len);

#endif
