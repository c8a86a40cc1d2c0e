/*
 * Singleton bootstrap: a process started without any launcher is rank 0 of
 * a job of size 1. Publish/fetch keep the blobs in the process.
 */
#include "transport/bootstrap.h"
#include "core.h"

#include <string.h>

typedef struct single_kv {
    struct single_kv *next;
    char *key;
    void *data;
    size_t len;
} single_kv_t;

static int single_publish(ucoll_boot_t *b, const char *key, const void *data, size_t len)
{
    single_kv_t *kv = calloc(1, sizeof(*kv));

    if (kv == NULL || (kv->key = strdup(key)) == NULL ||
        (kv->data = malloc(len ? len : 1)) == NULL) {
        if (kv) {
            free(kv->key);
        }
        free(kv);
        return UCOLL_ERR_NOMEM;
    }
    memcpy(kv->data, data, len);
    kv->len = len;
    kv->next = b->priv;
    b->priv = kv;
    return UCOLL_OK;
}

static int single_fence(ucoll_boot_t *b, int collect)
{
    return UCOLL_OK;
}

static int single_fetch(ucoll_boot_t *b, int rank, const char *key, void **data_p, size_t *len_p)
{
    single_kv_t *kv;

    for (kv = b->priv; kv; kv = kv->next) {
        if (rank == 0 && !strcmp(kv->key, key)) {
            *data_p = malloc(kv->len ? kv->len : 1);
            if (*data_p == NULL) {
                return UCOLL_ERR_NOMEM;
            }
            memcpy(*data_p, kv->data, kv->len);
            *len_p = kv->len;
            return UCOLL_OK;
        }
    }
    ucoll_error("singleton bootstrap: no value %s for rank %d", key, rank);
    return UCOLL_ERR_BOOTSTRAP;
}

static int single_abort(ucoll_boot_t *b, int status, const char *msg)
{
    fprintf(stderr, "ucoll: abort (%d): %s\n", status, msg);
    exit(status ? status : 1);
}

static void single_finalize(ucoll_boot_t *b)
{
    single_kv_t *kv, *next;

    for (kv = b->priv; kv; kv = next) {
        next = kv->next;
        free(kv->key);
        free(kv->data);
        free(kv);
    }
    free(b->local_peers);
    free(b);
}

static const ucoll_boot_ops_t boot_single_ops = {
    .name = "singleton",
    .publish = single_publish,
    .fence = single_fence,
    .fetch = single_fetch,
    .abort = single_abort,
    .finalize = single_finalize,
};

int ucoll__boot_single_init(ucoll_boot_t **boot_p)
{
    ucoll_boot_t *b = calloc(1, sizeof(*b));

    if (b == NULL || (b->local_peers = calloc(1, sizeof(int))) == NULL) {
        free(b);
        return UCOLL_ERR_NOMEM;
    }
    b->ops = &boot_single_ops;
    b->size = b->local_size = b->num_nodes = 1;
    b->locality_known = 1;
    snprintf(b->name, sizeof(b->name), "singleton");
    *boot_p = b;
    return UCOLL_OK;
}
