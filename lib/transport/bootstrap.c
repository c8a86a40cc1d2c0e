/*
 * Bootstrap selection and the collectives every bootstrap gets for free from
 * publish/fence/fetch.
 */
#include "transport/bootstrap.h"
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Environment a PMIx launcher sets for its clients (PMIx v2+, and the older
 * Open MPI names). Their absence means: started by hand. */
static int launched_by_pmix(void)
{
    static const char *vars[] = {
        "PMIX_NAMESPACE",   "PMIX_RANK",        "PMIX_SERVER_URI4",  "PMIX_SERVER_URI41",
        "PMIX_SERVER_URI3", "PMIX_SERVER_URI2", "PMIX_SERVER_URI21", NULL};
    int i;

    for (i = 0; vars[i]; i++) {
        if (getenv(vars[i])) { /* reading the launcher's contract, not a setting */
            return 1;
        }
    }
    return 0;
}

int ucoll__boot_init(const ucoll_config_t *cfg, ucoll_boot_t **boot_p)
{
    switch (cfg->bootstrap) {
    case UCOLL_BOOT_SINGLETON: return ucoll__boot_single_init(boot_p);
    case UCOLL_BOOT_PMIX: return ucoll__boot_pmix_init(boot_p);
    case UCOLL_BOOT_ENV: return ucoll__boot_env_init(cfg, boot_p);
    default:
        if (launched_by_pmix()) {
            return ucoll__boot_pmix_init(boot_p);
        }
        if (ucoll__boot_env_present()) {
            return ucoll__boot_env_init(cfg, boot_p);
        }
        ucoll_info("no PMIx launcher in the environment and no RANK, WORLD_SIZE, MASTER_ADDR: "
                   "running as a singleton of size 1 (start with ucollrun -n N, mpirun, prterun, "
                   "srun --mpi=pmix or torchrun for more)");
        return ucoll__boot_single_init(boot_p);
    }
}

int ucoll__boot_allgather(ucoll_boot_t *b, const void *in, size_t len, void *out)
{
    /* Each call publishes under a fresh key, so earlier rounds' values can
     * never be read by a later one. */
    static const char prefix[] = "ucoll.ag.";
    char key[64];
    void *data;
    size_t dlen;
    int r, status;
    unsigned *round = &b->priv_round;

    snprintf(key, sizeof(key), "%s%u", prefix, (*round)++);
    status = b->ops->publish(b, key, in, len);
    if (status != UCOLL_OK) {
        return status;
    }
    status = b->ops->fence(b, 1);
    if (status != UCOLL_OK) {
        return status;
    }
    for (r = 0; r < b->size; r++) {
        if (r == b->rank) {
            memcpy((char *)out + (size_t)r * len, in, len);
            continue;
        }
        status = b->ops->fetch(b, r, key, &data, &dlen);
        if (status != UCOLL_OK) {
            return status;
        }
        if (dlen != len) {
            ucoll_error("bootstrap allgather: rank %d contributed %zu bytes, expected %zu", r, dlen,
                        len);
            free(data);
            return UCOLL_ERR_BOOTSTRAP;
        }
        memcpy((char *)out + (size_t)r * len, data, len);
        free(data);
    }
    return UCOLL_OK;
}

int ucoll__boot_barrier(ucoll_boot_t *b)
{
    return b->ops->fence(b, 0);
}

int ucoll__boot_barrier_live(ucoll_boot_t *b, const int *live, int n)
{
    if (n >= b->size) {
        return b->ops->fence(b, 0);
    }
    if (n <= 1) {
        return UCOLL_OK; /* nobody else to wait for */
    }
    if (b->ops->fence_ranks == NULL) {
        ucoll_debug("%s bootstrap cannot fence without the %d failed rank(s): no final fence",
                    b->ops->name, b->size - n);
        return UCOLL_OK;
    }
    return b->ops->fence_ranks(b, live, n);
}

/* Parse a PMIX_LOCAL_PEERS list into out (n entries expected): 0 if it
 * holds exactly n distinct ranks of the job, one of them self. */
static int parse_peers(const char *peers, int n, int self, int size, int *out)
{
    const char *s = peers;
    int k = 0, has_self = 0;

    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);

        if (end == s || v < 0 || v >= size || k >= n) {
            return -1;
        }
        for (int i = 0; i < k; i++) {
            if (out[i] == v) {
                return -1;
            }
        }
        has_self |= v == self;
        out[k++] = (int)v;
        s = end;
        if (*s == ',') {
            s++;
        } else if (*s) {
            return -1;
        }
    }
    return (k == n && has_self) ? 0 : -1;
}

int ucoll__boot_set_locality(ucoll_boot_t *b, int local_rank, int local_size, const char *peers,
                             int node_id, int num_nodes)
{
    int *lp;

    free(b->local_peers);
    b->local_peers = NULL;
    if (local_size >= 1 && local_size <= b->size && peers != NULL &&
        (lp = calloc((size_t)local_size, sizeof(int))) != NULL) {
        if (parse_peers(peers, local_size, b->rank, b->size, lp) == 0) {
            int lo = lp[0], idx = 0;

            for (int i = 0; i < local_size; i++) {
                lo = UCOLL_MIN(lo, lp[i]);
                if (lp[i] == b->rank) {
                    idx = i;
                }
            }
            b->local_peers = lp;
            b->local_size = local_size;
            b->local_rank = local_rank >= 0 && local_rank < local_size ? local_rank : idx;
            b->node_id = node_id >= 0 ? node_id : lo;
            b->num_nodes = num_nodes >= 1 ? num_nodes : 0;
            b->locality_known = 1;
            return UCOLL_OK;
        }
        ucoll_warn("the launcher's list of ranks on this node ('%s', %d expected) is not valid: "
                   "treating every rank as its own node",
                   peers, local_size);
        free(lp);
    } else if (local_size >= 1 && peers != NULL) {
        if (local_size > b->size) {
            ucoll_warn("the launcher says %d ranks on this node in a job of %d: treating every "
                       "rank as its own node",
                       local_size, b->size);
        } else {
            return UCOLL_ERR_NOMEM;
        }
    }
    /* unknown: this rank alone */
    b->local_peers = calloc(1, sizeof(int));
    if (b->local_peers == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    b->local_peers[0] = b->rank;
    b->local_size = 1;
    b->local_rank = 0;
    b->node_id = b->rank;
    b->num_nodes = b->size;
    b->locality_known = 0;
    return UCOLL_OK;
}
