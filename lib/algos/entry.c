/*
 * Entry points shared by collectives that mirror each other: gather and
 * scatter, gatherv and scatterv, allgather and alltoall. Each checks the
 * call's arguments, fills in its ucoll_coll_args_t and starts it; the
 * operation's own file keeps its registry and calls in here.
 *
 * Gather(v) and scatter(v) are written in terms of the root's "big" buffer, a
 * block for every rank (gather's rbuf, scatter's sbuf), and the "small" one,
 * a single rank's block (gather's sbuf, scatter's rbuf). Root-only
 * arguments are ignored, and left out of the call's arguments, on the other
 * ranks.
 */
#include "algos/algos.h"
#include "dtype.h"

typedef struct rooted {
    const char *name;
    int gather; /* big is rbuf (gather, gatherv); else sbuf */
    const void *big, *small;
    const char *big_param;             /* "rbuf" or "sbuf" */
    const char *big_what, *small_what; /* as ucoll__check_buf reports them */
} rooted_t;

/* Sort the buffers of a gather-like or scatter-like call and run the checks
 * every rank does. */
static int rooted_init(rooted_t *r, ucoll_coll_t coll, const void *sbuf, void *rbuf,
                       ucoll_dtype_t dt, int root, const ucoll_comm_t *comm, ucoll_req_t **req)
{
    int st;

    r->name = ucoll__coll_name(coll);
    r->gather = (coll == UCOLL_COLL_GATHER || coll == UCOLL_COLL_GATHERV);
    r->big = r->gather ? rbuf : sbuf;
    r->small = r->gather ? sbuf : rbuf;
    r->big_param = r->gather ? "rbuf" : "sbuf";
    switch (coll) {
    case UCOLL_COLL_GATHER:
        r->big_what = "gather rbuf";
        r->small_what = "gather sbuf";
        break;
    case UCOLL_COLL_GATHERV:
        r->big_what = "gatherv rbuf";
        r->small_what = "gatherv sbuf";
        break;
    case UCOLL_COLL_SCATTER:
        r->big_what = "scatter sbuf";
        r->small_what = "scatter rbuf";
        break;
    default:
        r->big_what = "scatterv sbuf";
        r->small_what = "scatterv rbuf";
        break;
    }
    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__coll_check_req(r->name, req))) {
        return st;
    }
    return ucoll__coll_check_root(r->name, comm, root);
}

/* At the root: big holds count elements and cannot be UCOLL_IN_PLACE. */
static int rooted_check_big(const rooted_t *r, size_t count)
{
    int st = ucoll__coll_check_not_in_place(r->name, r->big_param, r->big);

    return (st != UCOLL_OK) ? st : ucoll__check_buf(r->big, count, r->big_what);
}

/* Off the root: small holds count elements; only the root may pass
 * UCOLL_IN_PLACE. */
static int rooted_check_small(const rooted_t *r, size_t count)
{
    if (r->small == UCOLL_IN_PLACE) {
        ucoll_debug("%s: UCOLL_IN_PLACE is only allowed at the root", r->name);
        return UCOLL_ERR_ARG;
    }
    return ucoll__check_buf(r->small, count, r->small_what);
}

int ucoll__gather_scatter_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                                ucoll_dtype_t dt, int root, ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    rooted_t r;
    int st;

    if ((st = rooted_init(&r, coll, sbuf, rbuf, dt, root, comm, req)) ||
        (st = ucoll__coll_check_count(r.name, comm, count, ucoll__dtype_size(dt)))) {
        return st;
    }
    a.coll = coll;
    a.count = count;
    a.dt = dt;
    a.esize = ucoll__dtype_size(dt);
    a.root = root;
    if (comm->rank == root) {
        if ((st = rooted_check_big(&r, count * comm->size))) {
            return st;
        }
        if (r.small == UCOLL_IN_PLACE) {
            a.in_place = 1;
            r.small = (const char *)r.big + (size_t)root * count * a.esize;
        } else if ((st = ucoll__check_buf(r.small, count, r.small_what))) {
            return st;
        }
    } else {
        if ((st = rooted_check_small(&r, count))) {
            return st;
        }
        r.big = NULL;
    }
    a.sbuf = r.gather ? r.small : r.big;
    a.rbuf = (void *)(r.gather ? r.big : r.small);
    return ucoll__coll_start(comm, &a, req);
}

int ucoll__gatherv_scatterv_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                                  const size_t *counts, const size_t *displs, ucoll_dtype_t dt,
                                  int root, ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    rooted_t r;
    int st;

    if ((st = rooted_init(&r, coll, sbuf, rbuf, dt, root, comm, req))) {
        return st;
    }
    a.coll = coll;
    a.dt = dt;
    a.esize = ucoll__dtype_size(dt);
    a.root = root;
    if (comm->rank == root) {
        if (counts == NULL || displs == NULL) {
            ucoll_debug("%s: %s and displs are required at the root", r.name,
                        r.gather ? "rcounts" : "scounts");
            return UCOLL_ERR_ARG;
        }
        if ((st = rooted_check_big(&r, ucoll__blocks_extent(counts, displs, comm->size)))) {
            return st;
        }
        if (r.small == UCOLL_IN_PLACE) {
            a.in_place = 1;
            r.small = (const char *)r.big + displs[root] * a.esize;
            count = counts[root];
        } else if ((st = ucoll__check_buf(r.small, count, r.small_what))) {
            return st;
        } else {
            size_t sends = r.gather ? count : counts[root];
            size_t receives = r.gather ? counts[root] : count;
            if (sends > receives) {
                ucoll_debug("%s: root sends %zu elements to itself, receives %zu", r.name, sends,
                            receives);
                return UCOLL_ERR_TRUNCATE;
            }
        }
    } else {
        if ((st = rooted_check_small(&r, count))) {
            return st;
        }
        r.big = NULL;
        counts = NULL;
        displs = NULL;
    }
    if (r.gather) {
        a.sbuf = r.small;
        a.scount = count;
        a.rbuf = (void *)r.big;
        a.rcounts = counts;
        a.rdispls = displs;
    } else {
        a.sbuf = r.big;
        a.scounts = counts;
        a.sdispls = displs;
        a.rbuf = (void *)r.small;
        a.rcount = count;
    }
    return ucoll__coll_start(comm, &a, req);
}

int ucoll__allgather_alltoall_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                                    ucoll_dtype_t dt, ucoll_comm_t *comm, ucoll_req_t **req)
{
    const int allgather = (coll == UCOLL_COLL_ALLGATHER);
    const char *name = ucoll__coll_name(coll);
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__coll_check_req(name, req)) ||
        (st = ucoll__coll_check_count(name, comm, count, ucoll__dtype_size(dt))) ||
        (st = ucoll__coll_check_not_in_place(name, "rbuf", rbuf)) ||
        (st = ucoll__check_buf(rbuf, count * comm->size,
                               allgather ? "allgather rbuf" : "alltoall rbuf"))) {
        return st;
    }
    a.coll = coll;
    a.count = count;
    a.dt = dt;
    a.esize = ucoll__dtype_size(dt);
    a.root = -1;
    a.rbuf = rbuf;
    if (sbuf == UCOLL_IN_PLACE) {
        /* allgather: this rank's block, in its place; alltoall: all of rbuf */
        a.in_place = 1;
        a.sbuf = allgather ? (char *)rbuf + (size_t)comm->rank * count * a.esize : rbuf;
    } else if ((st = ucoll__check_buf(sbuf, allgather ? count : count * comm->size,
                                      allgather ? "allgather sbuf" : "alltoall sbuf"))) {
        return st;
    } else {
        a.sbuf = sbuf;
    }
    return ucoll__coll_start(comm, &a, req);
}
