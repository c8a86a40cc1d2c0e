/*
 * PMIx bootstrap: identity, locality and the exchange of byte blobs through
 * the launcher's PMIx server (ucollrun, prterun, Open MPI's mpirun, srun).
 * Only the PMIx client API is used, so any PMIx launcher serves.
 */
#include "transport/bootstrap.h"
#include "core.h"

#include <pmix.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    pmix_proc_t me;
    pmix_proc_t wild; /* the whole namespace: job-level keys and fences */
    unsigned instance; /* this bootstrap's number in the process */
} boot_pmix_t;

/* PMIx is one client per process, however many contexts use it: the keys of
 * each context carry the context's number among the PMIx bootstraps made in
 * this process, so two contexts never read each other's values. The ranks
 * make their contexts in the same order (their fences are collective), so
 * the numbers agree across the job. */
static atomic_uint pmix_instances;

static void pmix_key(const ucoll_boot_t *b, const char *key, char *out)
{
    const boot_pmix_t *p = b->priv;

    snprintf(out, PMIX_MAX_KEYLEN + 1, "ucoll%u.%s", p->instance, key);
}

static const char *how_to_start = "start the program with a PMIx launcher: ucollrun -n N PROGRAM, "
                                  "mpirun -np N PROGRAM, prterun -n N PROGRAM or srun --mpi=pmix";

/* Read an integer-valued key of any PMIx integer type. */
static int get_int(const pmix_proc_t *proc, const char *key, int *out_p)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    long v;

    rc = PMIx_Get(proc, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL) {
        return -1;
    }
    switch (val->type) {
    case PMIX_UINT32: v = val->data.uint32; break;
    case PMIX_INT32: v = val->data.int32; break;
    case PMIX_UINT16: v = val->data.uint16; break;
    case PMIX_INT16: v = val->data.int16; break;
    case PMIX_UINT64: v = (long)val->data.uint64; break;
    case PMIX_INT64: v = (long)val->data.int64; break;
    case PMIX_INT: v = val->data.integer; break;
    case PMIX_UINT: v = val->data.uint; break;
    case PMIX_PROC_RANK: v = val->data.rank; break;
    case PMIX_SIZE: v = (long)val->data.size; break;
    default: PMIX_VALUE_RELEASE(val); return -1;
    }
    PMIX_VALUE_RELEASE(val);
    *out_p = (int)v;
    return 0;
}

/* PMIX_LOCAL_PEERS: a comma-separated list of ranks on this node, as a
 * malloc'ed string; NULL when the server does not say. */
static char *get_local_peers(const pmix_proc_t *wild)
{
    pmix_value_t *val = NULL;
    char *dup = NULL;

    if (PMIx_Get(wild, PMIX_LOCAL_PEERS, NULL, 0, &val) == PMIX_SUCCESS && val != NULL &&
        val->type == PMIX_STRING && val->data.string != NULL) {
        dup = strdup(val->data.string);
    }
    if (val) {
        PMIX_VALUE_RELEASE(val);
    }
    return dup;
}

static int pmix_publish(ucoll_boot_t *b, const char *key, const void *data, size_t len)
{
    pmix_value_t val;
    pmix_status_t rc;

    char pkey[PMIX_MAX_KEYLEN + 1];

    pmix_key(b, key, pkey);
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)data;
    val.data.bo.size = len;
    rc = PMIx_Put(PMIX_GLOBAL, pkey, &val); /* PMIx copies the value */
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Commit();
    }
    if (rc != PMIX_SUCCESS) {
        ucoll_error("PMIx_Put/Commit of %s failed: %s", key, PMIx_Error_string(rc));
        return UCOLL_ERR_BOOTSTRAP;
    }
    return UCOLL_OK;
}

static int pmix_fence(ucoll_boot_t *b, int collect)
{
    boot_pmix_t *p = b->priv;
    pmix_info_t info;
    pmix_status_t rc;
    bool flag = collect ? true : false;

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    rc = PMIx_Fence(&p->wild, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        ucoll_error("PMIx_Fence failed: %s", PMIx_Error_string(rc));
        return (rc == PMIX_ERR_TIMEOUT) ? UCOLL_ERR_TIMEOUT : UCOLL_ERR_BOOTSTRAP;
    }
    return UCOLL_OK;
}

/* A synchronising fence over some ranks of the namespace (the live ones). */
static int pmix_fence_ranks(ucoll_boot_t *b, const int *ranks, int n)
{
    boot_pmix_t *p = b->priv;
    pmix_proc_t *procs = calloc((size_t)n, sizeof(*procs));
    pmix_status_t rc;

    if (procs == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        PMIX_PROC_LOAD(&procs[i], p->me.nspace, (pmix_rank_t)ranks[i]);
    }
    rc = PMIx_Fence(procs, (size_t)n, NULL, 0);
    free(procs);
    if (rc != PMIX_SUCCESS) {
        ucoll_error("PMIx_Fence over %d live ranks failed: %s", n, PMIx_Error_string(rc));
        return (rc == PMIX_ERR_TIMEOUT) ? UCOLL_ERR_TIMEOUT : UCOLL_ERR_BOOTSTRAP;
    }
    return UCOLL_OK;
}

static int pmix_fetch(ucoll_boot_t *b, int rank, const char *key, void **data_p, size_t *len_p)
{
    boot_pmix_t *p = b->priv;
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    void *data;
    char pkey[PMIX_MAX_KEYLEN + 1];

    pmix_key(b, key, pkey);
    PMIX_PROC_LOAD(&peer, p->me.nspace, (pmix_rank_t)rank);
    rc = PMIx_Get(&peer, pkey, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL) {
        ucoll_error("PMIx_Get of %s from rank %d failed: %s", key, rank, PMIx_Error_string(rc));
        return UCOLL_ERR_BOOTSTRAP;
    }
    if (val->type != PMIX_BYTE_OBJECT) {
        ucoll_error("PMIx_Get of %s from rank %d: unexpected type %d", key, rank, val->type);
        PMIX_VALUE_RELEASE(val);
        return UCOLL_ERR_BOOTSTRAP;
    }
    data = malloc(val->data.bo.size ? val->data.bo.size : 1);
    if (data == NULL) {
        PMIX_VALUE_RELEASE(val);
        return UCOLL_ERR_NOMEM;
    }
    memcpy(data, val->data.bo.bytes, val->data.bo.size);
    *len_p = val->data.bo.size;
    *data_p = data;
    PMIX_VALUE_RELEASE(val);
    return UCOLL_OK;
}

static int pmix_abort(ucoll_boot_t *b, int status, const char *msg)
{
    PMIx_Abort(status, msg, NULL, 0);
    return UCOLL_ERR_BOOTSTRAP;
}

static void pmix_finalize(ucoll_boot_t *b)
{
    PMIx_Finalize(NULL, 0);
    free(b->local_peers);
    free(b->priv);
    free(b);
}

static const ucoll_boot_ops_t boot_pmix_ops = {
    .name = "pmix",
    .publish = pmix_publish,
    .fence = pmix_fence,
    .fence_ranks = pmix_fence_ranks,
    .fetch = pmix_fetch,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
};

int ucoll__boot_pmix_init(ucoll_boot_t **boot_p)
{
    ucoll_boot_t *b;
    boot_pmix_t *p;
    pmix_status_t rc;
    int status = UCOLL_ERR_NOMEM;

    b = calloc(1, sizeof(*b));
    p = calloc(1, sizeof(*p));
    if (b == NULL || p == NULL) {
        goto err_free;
    }
    rc = PMIx_Init(&p->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "ucoll: cannot reach a PMIx server (%s): %s\n", PMIx_Error_string(rc),
                how_to_start);
        status = UCOLL_ERR_BOOTSTRAP;
        goto err_free;
    }
    PMIX_PROC_LOAD(&p->wild, p->me.nspace, PMIX_RANK_WILDCARD);
    b->ops = &boot_pmix_ops;
    b->priv = p;
    p->instance = atomic_fetch_add(&pmix_instances, 1);
    b->rank = (int)p->me.rank;
    if (get_int(&p->wild, PMIX_JOB_SIZE, &b->size) != 0) {
        fprintf(stderr, "ucoll: the PMIx server did not say the job size (PMIX_JOB_SIZE); %s\n",
                how_to_start);
        status = UCOLL_ERR_BOOTSTRAP;
        goto err_finalize;
    }
    /* locality: only what the server says (ucoll__boot_set_locality) */
    {
        int lrank = -1, lsize = -1, node = -1, nnodes = -1;
        char *peers;

        /* get_int leaves -1 (unknown) where the server has no value */
        get_int(&p->me, PMIX_LOCAL_RANK, &lrank);
        get_int(&p->wild, PMIX_LOCAL_SIZE, &lsize);
        get_int(&p->me, PMIX_NODEID, &node);
        get_int(&p->wild, PMIX_NUM_NODES, &nnodes);
        peers = get_local_peers(&p->wild);
        status = ucoll__boot_set_locality(b, lrank, lsize, peers, node, nnodes);
        if (!b->locality_known) {
            ucoll_info("the PMIx server gave no usable locality (PMIX_LOCAL_SIZE, "
                       "PMIX_LOCAL_PEERS): every rank is taken as its own node");
        }
        free(peers);
        if (status != UCOLL_OK) {
            goto err_finalize;
        }
    }
    snprintf(b->name, sizeof(b->name), "pmix %s", p->me.nspace);
    *boot_p = b;
    return UCOLL_OK;

err_finalize:
    PMIx_Finalize(NULL, 0);
err_free:
    if (b) {
        free(b->local_peers);
    }
    free(p);
    free(b);
    return status;
}
