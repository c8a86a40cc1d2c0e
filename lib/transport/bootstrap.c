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
    default:
        if (launched_by_pmix()) {
            return ucoll__boot_pmix_init(boot_p);
        }
        ucoll_info("no PMIx launcher in the environment: running as a singleton of size 1 "
                   "(start with ucollrun -n N, mpirun, prterun or srun --mpi=pmix for more)");
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
