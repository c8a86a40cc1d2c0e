/*
 * prog_info: a PMIx client that checks the job information its launcher
 * registered and exercises put/commit/fence/get. It uses only the PMIx client
 * API, so it runs the same under ucollrun and under Open MPI's mpirun.
 *
 *   prog_info           check, then print one line:
 *                       "prog_info rank=R size=N local_rank=L local_size=LS
 *                        nodeid=I univ=U appnum=A peers_ok=P"
 *   prog_info --keys    rank 0 also prints "key NAME = VALUE" (or "= <absent>")
 *                       for every job/proc key a launcher should provide, so
 *                       the output of two launchers can be compared.
 *   prog_info --direct  no fence: rank r puts its value 50*r ms late and every
 *                       rank gets the peers' values at once, so the server
 *                       must hold a get until the peer commits (direct modex).
 *
 * Exit status 0 when every check passed, 1 otherwise (with "prog_info rank=R
 * FAIL: ..." lines on stderr).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <pmix.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_KEY "ucoll.test.val"

static int nfail;

static void fail(const pmix_proc_t *me, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "prog_info rank=%u FAIL: ", me->rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ++nfail;
}

/* PMIx_Get of an unsigned integer key of any width; false when absent. */
static bool get_uint(const pmix_proc_t *proc, const char *key, uint64_t *val_p)
{
    pmix_value_t *val = NULL;
    bool ok = true;

    if (PMIX_SUCCESS != PMIx_Get(proc, key, NULL, 0, &val)) {
        return false;
    }
    switch (val->type) {
    case PMIX_UINT8: *val_p = val->data.uint8; break;
    case PMIX_UINT16: *val_p = val->data.uint16; break;
    case PMIX_UINT32: *val_p = val->data.uint32; break;
    case PMIX_UINT64: *val_p = val->data.uint64; break;
    case PMIX_SIZE: *val_p = val->data.size; break;
    case PMIX_PROC_RANK: *val_p = val->data.rank; break;
    case PMIX_INT: *val_p = (uint64_t)val->data.integer; break;
    default: ok = false; break;
    }
    PMIX_VALUE_RELEASE(val);
    return ok;
}

static void print_key(const pmix_proc_t *proc, const char *name, const char *key)
{
    pmix_value_t *val = NULL;

    if (PMIX_SUCCESS != PMIx_Get(proc, key, NULL, 0, &val)) {
        printf("key %s = <absent>\n", name);
        return;
    }
    switch (val->type) {
    case PMIX_STRING: printf("key %s = \"%s\"\n", name, val->data.string); break;
    case PMIX_UINT8: printf("key %s = %u (uint8)\n", name, val->data.uint8); break;
    case PMIX_UINT16: printf("key %s = %u (uint16)\n", name, val->data.uint16); break;
    case PMIX_UINT32: printf("key %s = %u (uint32)\n", name, val->data.uint32); break;
    case PMIX_UINT64:
        printf("key %s = %lu (uint64)\n", name, (unsigned long)val->data.uint64);
        break;
    case PMIX_PROC_RANK: printf("key %s = %u (rank)\n", name, val->data.rank); break;
    case PMIX_BOOL: printf("key %s = %s (bool)\n", name, val->data.flag ? "true" : "false"); break;
    default: printf("key %s = <type %s>\n", name, PMIx_Data_type_string(val->type)); break;
    }
    PMIX_VALUE_RELEASE(val);
}

static void dump_keys(const pmix_proc_t *me)
{
    static const struct {
        const char *name, *key;
        bool job;
    } keys[] = {
        {"PMIX_JOB_SIZE", PMIX_JOB_SIZE, true},
        {"PMIX_UNIV_SIZE", PMIX_UNIV_SIZE, true},
        {"PMIX_LOCAL_SIZE", PMIX_LOCAL_SIZE, true},
        {"PMIX_LOCAL_PEERS", PMIX_LOCAL_PEERS, true},
        {"PMIX_NUM_NODES", PMIX_NUM_NODES, true},
        {"PMIX_JOBID", PMIX_JOBID, true},
        {"PMIX_APPNUM", PMIX_APPNUM, true},
        {"PMIX_APP_SIZE", PMIX_APP_SIZE, true},
        {"PMIX_APPLDR", PMIX_APPLDR, true},
        {"PMIX_LOCALLDR", PMIX_LOCALLDR, true},
        {"PMIX_MAX_PROCS", PMIX_MAX_PROCS, true},
        {"PMIX_NODE_SIZE", PMIX_NODE_SIZE, true},
        {"PMIX_NSDIR", PMIX_NSDIR, true},
        {"PMIX_TMPDIR", PMIX_TMPDIR, true},
        {"PMIX_RANK", PMIX_RANK, false},
        {"PMIX_LOCAL_RANK", PMIX_LOCAL_RANK, false},
        {"PMIX_NODE_RANK", PMIX_NODE_RANK, false},
        {"PMIX_NODEID", PMIX_NODEID, false},
        {"PMIX_HOSTNAME", PMIX_HOSTNAME, false},
        {"PMIX_APPNUM(proc)", PMIX_APPNUM, false},
        {"PMIX_GLOBAL_RANK", PMIX_GLOBAL_RANK, false},
        {"PMIX_APP_RANK", PMIX_APP_RANK, false},
    };
    pmix_proc_t wild;

    PMIX_LOAD_PROCID(&wild, me->nspace, PMIX_RANK_WILDCARD);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); ++i) {
        print_key(keys[i].job ? &wild : me, keys[i].name, keys[i].key);
    }
}

int main(int argc, char **argv)
{
    bool keys = argc > 1 && 0 == strcmp(argv[1], "--keys");
    bool direct = argc > 1 && 0 == strcmp(argv[1], "--direct");
    uint64_t size = 0, lrank = 0, lsize = 0, nodeid = 0, univ = 0, appnum = 0, v;
    pmix_proc_t me, wild, peer;
    pmix_value_t val, *pval;
    pmix_info_t collect;
    bool flag = true;
    pmix_status_t rc;
    char want[64];
    unsigned npeers_ok = 0;

    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "prog_info: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);

    if (!get_uint(&wild, PMIX_JOB_SIZE, &size))
        fail(&me, "no PMIX_JOB_SIZE");
    if (!get_uint(&wild, PMIX_UNIV_SIZE, &univ))
        fail(&me, "no PMIX_UNIV_SIZE");
    if (!get_uint(&wild, PMIX_LOCAL_SIZE, &lsize))
        fail(&me, "no PMIX_LOCAL_SIZE");
    if (!get_uint(&me, PMIX_APPNUM, &appnum))
        fail(&me, "no PMIX_APPNUM"); /* mpirun: per proc only */
    if (!get_uint(&me, PMIX_LOCAL_RANK, &lrank))
        fail(&me, "no PMIX_LOCAL_RANK");
    if (!get_uint(&me, PMIX_NODEID, &nodeid))
        fail(&me, "no PMIX_NODEID");
    if (!get_uint(&me, PMIX_NODE_RANK, &v))
        fail(&me, "no PMIX_NODE_RANK");
    if (me.rank >= size)
        fail(&me, "rank %u >= job size %lu", me.rank, (unsigned long)size);
    /* One node: every peer is local, local ranks are the ranks. PMIX_UNIV_SIZE
     * is not checked: mpirun reports its slot count there, not the job size. */
    if (lsize != size)
        fail(&me, "local size %lu != job size %lu", (unsigned long)lsize, (unsigned long)size);
    if (lrank != me.rank)
        fail(&me, "local rank %lu != rank", (unsigned long)lrank);

    if (PMIX_SUCCESS == PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &pval)) {
        char *expect = NULL, *tmp;
        for (uint64_t r = 0; r < size; ++r) {
            if (0 > asprintf(&tmp, "%s%s%lu", expect ? expect : "", expect ? "," : "",
                             (unsigned long)r))
                abort();
            free(expect);
            expect = tmp;
        }
        if (PMIX_STRING != pval->type || NULL == expect || 0 != strcmp(pval->data.string, expect)) {
            fail(&me, "PMIX_LOCAL_PEERS is '%s', expected '%s'",
                 PMIX_STRING == pval->type ? pval->data.string : "?", expect ? expect : "");
        }
        free(expect);
        PMIX_VALUE_RELEASE(pval);
    } else {
        fail(&me, "no PMIX_LOCAL_PEERS");
    }
    if (PMIX_SUCCESS == PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &pval)) {
        PMIX_VALUE_RELEASE(pval);
    } else {
        fail(&me, "no PMIX_HOSTNAME");
    }

    /* put/commit/fence/get: every rank publishes a value derived from its rank */
    if (direct) {
        usleep(50000 * me.rank);
    }
    snprintf(want, sizeof(want), "value-of-rank-%u", me.rank);
    PMIX_VALUE_LOAD(&val, want, PMIX_STRING);
    if (PMIX_SUCCESS != (rc = PMIx_Put(PMIX_GLOBAL, TEST_KEY, &val)))
        fail(&me, "PMIx_Put: %s", PMIx_Error_string(rc));
    PMIX_VALUE_DESTRUCT(&val);
    if (PMIX_SUCCESS != (rc = PMIx_Commit()))
        fail(&me, "PMIx_Commit: %s", PMIx_Error_string(rc));
    if (!direct) {
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &collect, 1);
        if (PMIX_SUCCESS != rc) {
            fail(&me, "PMIx_Fence: %s", PMIx_Error_string(rc));
        }
        PMIX_INFO_DESTRUCT(&collect);
    }
    for (uint64_t r = 0; r < size; ++r) {
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)r);
        snprintf(want, sizeof(want), "value-of-rank-%lu", (unsigned long)r);
        if (PMIX_SUCCESS != (rc = PMIx_Get(&peer, TEST_KEY, NULL, 0, &pval))) {
            fail(&me, "PMIx_Get(rank %lu): %s", (unsigned long)r, PMIx_Error_string(rc));
            continue;
        }
        if (PMIX_STRING == pval->type && 0 == strcmp(pval->data.string, want)) {
            ++npeers_ok;
        } else {
            fail(&me, "rank %lu's value is wrong", (unsigned long)r);
        }
        PMIX_VALUE_RELEASE(pval);
    }

    if (keys && 0 == me.rank) {
        dump_keys(&me);
    }
    printf("prog_info rank=%u size=%lu local_rank=%lu local_size=%lu nodeid=%lu univ=%lu "
           "appnum=%lu peers_ok=%u\n",
           me.rank, (unsigned long)size, (unsigned long)lrank, (unsigned long)lsize,
           (unsigned long)nodeid, (unsigned long)univ, (unsigned long)appnum, npeers_ok);
    fflush(stdout);

    if (PMIX_SUCCESS != (rc = PMIx_Finalize(NULL, 0)))
        fail(&me, "PMIx_Finalize: %s", PMIx_Error_string(rc));
    return nfail ? 1 : 0;
}
