/*
 * Bootstrap over a caller's allgather (ucoll_init_oob), and the base of the
 * env bootstrap (boot_env.c), whose allgather is a TCP star.
 *
 * An allgather has no key-value store behind it, so publish keeps the blobs
 * here until the next fence, and the fence moves them all: one allgather of
 * the lengths, one of the blobs padded to the longest. Fetch reads what the
 * last fences brought. Direct modex cannot work (nothing can be fetched from
 * a peer that has not fenced), so this bootstrap asks for the fence
 * (needs_fence).
 *
 * At init the ranks exchange who they are (rank, size, node) so that a rank
 * or size given wrong on one process is an error on every process, and the
 * node of each rank is known.
 */
#include "transport/bootstrap.h"
#include "core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OOB_MAGIC    0x75636f6c6c6f6f62ULL /* "ucolloob" */
#define OOB_NODE_LEN 128

typedef struct oob_kv {
    struct oob_kv *next;
    char *key;
    void *data;
    size_t len;
} oob_kv_t;

typedef struct {
    ucoll_oob_t oob;
    void (*release)(void *arg); /* the allgather's own state (env); NULL for a caller's */
    oob_kv_t *pending;          /* published since the last fence */
    oob_kv_t **table;           /* per rank: what its fences brought */
} boot_oob_t;

/* What each rank says about itself at init. */
typedef struct {
    uint64_t magic;
    int32_t rank, size;
    int64_t node_id;            /* < 0: use node[] */
    char node[OOB_NODE_LEN];    /* host name and boot id */
} oob_hello_t;

static int oob_allgather(boot_oob_t *o, const void *in, void *out, size_t len)
{
    int rc = o->oob.allgather(o->oob.arg, in, out, len);

    if (rc != 0) {
        ucoll_error("bootstrap allgather of %zu bytes failed (%d)", len, rc);
        return UCOLL_ERR_BOOTSTRAP;
    }
    return UCOLL_OK;
}

static void kv_free(oob_kv_t *kv)
{
    while (kv) {
        oob_kv_t *next = kv->next;
        free(kv->key);
        free(kv->data);
        free(kv);
        kv = next;
    }
}

/* Add (or replace) key in *list, taking a copy of data. */
static int kv_put(oob_kv_t **list, const char *key, size_t klen, const void *data, size_t len)
{
    oob_kv_t *kv;
    void *copy = malloc(len ? len : 1);

    if (copy == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    memcpy(copy, data, len);
    for (kv = *list; kv; kv = kv->next) {
        if (strlen(kv->key) == klen && !memcmp(kv->key, key, klen)) {
            free(kv->data);
            kv->data = copy;
            kv->len = len;
            return UCOLL_OK;
        }
    }
    kv = calloc(1, sizeof(*kv));
    if (kv == NULL || (kv->key = strndup(key, klen)) == NULL) {
        free(kv);
        free(copy);
        return UCOLL_ERR_NOMEM;
    }
    kv->data = copy;
    kv->len = len;
    kv->next = *list;
    *list = kv;
    return UCOLL_OK;
}

static int oob_publish(ucoll_boot_t *b, const char *key, const void *data, size_t len)
{
    boot_oob_t *o = b->priv;

    if (len > UINT32_MAX || strlen(key) > UINT16_MAX) {
        return UCOLL_ERR_ARG;
    }
    return kv_put(&o->pending, key, strlen(key), data, len);
}

/* Pending blobs as records: u16 key length, u32 data length, key, data. */
static size_t pack_size(const oob_kv_t *kv)
{
    size_t n = 0;

    for (; kv; kv = kv->next) {
        n += 6 + strlen(kv->key) + kv->len;
    }
    return n;
}

static void pack(const oob_kv_t *kv, uint8_t *p)
{
    for (; kv; kv = kv->next) {
        uint16_t kl = (uint16_t)strlen(kv->key);
        uint32_t dl = (uint32_t)kv->len;

        memcpy(p, &kl, 2);
        memcpy(p + 2, &dl, 4);
        memcpy(p + 6, kv->key, kl);
        memcpy(p + 6 + kl, kv->data, dl);
        p += 6 + kl + dl;
    }
}

static int unpack(oob_kv_t **list, const uint8_t *p, size_t len, int rank)
{
    while (len > 0) {
        uint16_t kl;
        uint32_t dl;
        int status;

        if (len < 6) {
            goto bad;
        }
        memcpy(&kl, p, 2);
        memcpy(&dl, p + 2, 4);
        if (len - 6 < (size_t)kl + dl) {
            goto bad;
        }
        status = kv_put(list, (const char *)p + 6, kl, p + 6 + kl, dl);
        if (status != UCOLL_OK) {
            return status;
        }
        p += 6 + (size_t)kl + dl;
        len -= 6 + (size_t)kl + dl;
    }
    return UCOLL_OK;
bad:
    ucoll_error("bootstrap: rank %d's published data is malformed", rank);
    return UCOLL_ERR_BOOTSTRAP;
}

static int oob_fence(ucoll_boot_t *b, int collect)
{
    boot_oob_t *o = b->priv;
    uint64_t mine = pack_size(o->pending), *lens, max = 0;
    uint8_t *in = NULL, *all = NULL;
    int status, r;

    /* a fence without anything published, or one that only synchronises
     * (what was published waits for the next collecting fence), is a
     * barrier: one allgather */
    if (!collect) {
        mine = 0;
    }
    lens = calloc((size_t)b->size, sizeof(*lens));
    if (lens == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    status = oob_allgather(o, &mine, lens, sizeof(mine));
    if (status != UCOLL_OK) {
        goto out;
    }
    for (r = 0; r < b->size; r++) {
        max = UCOLL_MAX(max, lens[r]);
    }
    if (max == 0) {
        goto out;
    }
    if (max > SIZE_MAX / (size_t)b->size) {
        status = UCOLL_ERR_NOMEM;
        goto out;
    }
    in = calloc(1, max);
    all = malloc(max * (size_t)b->size);
    if (in == NULL || all == NULL) {
        status = UCOLL_ERR_NOMEM; /* the peers fail in the allgather or wait: nothing to do */
        goto out;
    }
    pack(o->pending, in);
    status = oob_allgather(o, in, all, max);
    for (r = 0; r < b->size && status == UCOLL_OK; r++) {
        if (lens[r] > max) {
            status = UCOLL_ERR_BOOTSTRAP;
            break;
        }
        status = unpack(&o->table[r], all + (size_t)r * max, lens[r], r);
    }
    if (status == UCOLL_OK) {
        kv_free(o->pending);
        o->pending = NULL;
    }
out:
    free(in);
    free(all);
    free(lens);
    return status;
}

static int oob_fetch(ucoll_boot_t *b, int rank, const char *key, void **data_p, size_t *len_p)
{
    boot_oob_t *o = b->priv;
    oob_kv_t *kv;

    if (rank < 0 || rank >= b->size) {
        return UCOLL_ERR_ARG;
    }
    for (kv = o->table[rank]; kv; kv = kv->next) {
        if (!strcmp(kv->key, key)) {
            *data_p = malloc(kv->len ? kv->len : 1);
            if (*data_p == NULL) {
                return UCOLL_ERR_NOMEM;
            }
            memcpy(*data_p, kv->data, kv->len);
            *len_p = kv->len;
            return UCOLL_OK;
        }
    }
    ucoll_error("%s bootstrap: rank %d published no %s before the last fence", b->ops->name, rank,
                key);
    return UCOLL_ERR_BOOTSTRAP;
}

static int oob_abort(ucoll_boot_t *b, int status, const char *msg)
{
    fprintf(stderr, "ucoll: abort (%d): %s\n", status, msg);
    exit(status ? status : 1);
}

static void oob_finalize(ucoll_boot_t *b)
{
    boot_oob_t *o = b->priv;

    if (o) {
        for (int r = 0; o->table && r < b->size; r++) {
            kv_free(o->table[r]);
        }
        free(o->table);
        kv_free(o->pending);
        if (o->release) {
            o->release(o->oob.arg);
        }
        free(o);
    }
    free(b->local_peers);
    free(b);
}

static const ucoll_boot_ops_t boot_oob_ops = {
    .name = "oob",
    .publish = oob_publish,
    .fence = oob_fence,
    .fetch = oob_fetch,
    .abort = oob_abort,
    .finalize = oob_finalize,
};

static const ucoll_boot_ops_t boot_env_ops = {
    .name = "env",
    .publish = oob_publish,
    .fence = oob_fence,
    .fetch = oob_fetch,
    .abort = oob_abort,
    .finalize = oob_finalize,
};

/* This machine: its host name and the kernel's boot id (two machines may
 * share a name, two boots of one do not share the id). */
static void node_name(char *out, size_t len)
{
    char host[64] = "?", boot[40] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

    if (f) {
        if (fgets(boot, sizeof(boot), f) == NULL) {
            boot[0] = '\0';
        }
        fclose(f);
        boot[strcspn(boot, "\n")] = '\0';
    }
    if (gethostname(host, sizeof(host)) != 0) {
        strcpy(host, "?");
    }
    host[sizeof(host) - 1] = '\0';
    snprintf(out, len, "%s/%s", host, boot);
}

/* Exchange hellos: check rank and size everywhere, and find the nodes. */
static int oob_hello(ucoll_boot_t *b, long node_id)
{
    boot_oob_t *o = b->priv;
    oob_hello_t me = {0}, *all;
    char *peers = NULL, *p;
    int status, r, n = 0, given = 0, node = -1;

    me.magic = OOB_MAGIC;
    me.rank = b->rank;
    me.size = b->size;
    me.node_id = node_id;
    node_name(me.node, sizeof(me.node));
    all = calloc((size_t)b->size, sizeof(*all));
    peers = calloc((size_t)b->size, 12);
    if (all == NULL || peers == NULL) {
        status = UCOLL_ERR_NOMEM;
        goto out;
    }
    status = oob_allgather(o, &me, all, sizeof(me));
    if (status != UCOLL_OK) {
        goto out;
    }
    for (r = 0; r < b->size; r++) {
        if (all[r].magic != OOB_MAGIC || all[r].rank != r || all[r].size != b->size) {
            ucoll_error("%s bootstrap: the process at position %d of the allgather says it is "
                        "rank %d of %d, this one is rank %d of %d (wrong rank or size given, or "
                        "an allgather that does not order by rank)",
                        b->ops->name, r, (int)all[r].rank, (int)all[r].size, b->rank, b->size);
            status = UCOLL_ERR_BOOTSTRAP;
            goto out;
        }
        given += all[r].node_id >= 0;
    }
    if (given != 0 && given != b->size) {
        ucoll_error("%s bootstrap: %d of %d processes gave a node id: all or none must",
                    b->ops->name, given, b->size);
        status = UCOLL_ERR_BOOTSTRAP;
        goto out;
    }
    /* the ranks of this node, and the node's index among the nodes in
     * order of their smallest rank */
    p = peers;
    for (r = 0; r < b->size; r++) {
        int same = given ? all[r].node_id == me.node_id
                         : !strncmp(all[r].node, me.node, OOB_NODE_LEN);
        int first = 1;

        for (int q = 0; q < r && first; q++) {
            first = given ? all[q].node_id != all[r].node_id
                          : strncmp(all[q].node, all[r].node, OOB_NODE_LEN) != 0;
        }
        n += first;
        if (first && same) {
            node = n - 1;
        }
        if (same) {
            p += sprintf(p, "%s%d", p == peers ? "" : ",", r);
        }
    }
    {
        int local = 1;

        for (p = peers; *p; p++) {
            local += *p == ',';
        }
        status = ucoll__boot_set_locality(b, -1, local, peers, node, n);
    }
out:
    free(peers);
    free(all);
    return status;
}

int ucoll__boot_oob_create(const ucoll_oob_t *oob, int env, void (*release)(void *arg),
                           ucoll_boot_t **boot_p)
{
    ucoll_boot_t *b = calloc(1, sizeof(*b));
    boot_oob_t *o = calloc(1, sizeof(*o));
    int status = UCOLL_ERR_NOMEM;

    if (b == NULL || o == NULL ||
        (o->table = calloc((size_t)oob->size, sizeof(*o->table))) == NULL) {
        free(o);
        free(b);
        if (release) {
            release(oob->arg);
        }
        return status;
    }
    o->oob = *oob;
    o->release = release;
    b->ops = env ? &boot_env_ops : &boot_oob_ops;
    b->priv = o;
    b->rank = oob->rank;
    b->size = oob->size;
    b->needs_fence = 1;
    snprintf(b->name, sizeof(b->name), "%s rank %d of %d", b->ops->name, b->rank, b->size);
    status = oob_hello(b, oob->node_id);
    if (status != UCOLL_OK) {
        oob_finalize(b);
        return status;
    }
    *boot_p = b;
    return UCOLL_OK;
}
