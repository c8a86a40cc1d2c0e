/*
 * ucoll_info: versions, settings, transports and algorithms of this build.
 *
 *   ucoll_info -v   versions of ucoll, UCX, PMIx and hwloc
 *   ucoll_info -c   every UCOLL_* setting: type, default, help
 *   ucoll_info -t   UCX transports and devices this machine would use
 *   ucoll_info -a   collective algorithms by operation
 *   ucoll_info --explain OP BYTES [-p N] [-A alpha] [-B beta] [-G gamma]
 *              [-W wake] [-S seg] [-R radix] [--net] [--no-shm]
 *                   the ranking the default selection makes for one call
 *                   (float32 sum, root 0), from the same code as the
 *                   runtime, on a simulated communicator of N ranks, with
 *                   the parameters each algorithm would run with: the
 *                   UCOLL_* settings apply (forced algorithms, tuning file),
 *                   the flags replace the model's parameters; --net takes
 *                   the communicator as spanning nodes (the tuning file's
 *                   network model); -W > 0 as oversubscribed. On one node
 *                   the shared-memory rows are ranked as the runtime's
 *                   communicator has them (on unless UCOLL_SHM=off, or
 *                   --no-shm: as where the transports offer no shared
 *                   memory).
 */
#include "algos/algos.h"
#include "config.h"
#include "core.h"
#include "topo.h"
#include "transport/simnet.h"
#include "transport/tl.h"

#include <hwloc.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: ucoll_info [-v] [-c] [-t] [-a]\n"
                 "       ucoll_info --explain OP BYTES [-p N] [-A alpha] [-B beta] [-G gamma]\n"
                 "                  [-W wake] [-S seg] [-R radix] [--net] [--no-shm]\n"
                 "  -v  versions of ucoll, UCX, PMIx and hwloc\n"
                 "  -c  every UCOLL_* setting with its type, default and help\n"
                 "  -t  UCX transports and devices ucoll would use on this machine\n"
                 "  -a  collective algorithms of every operation\n"
                 "  --explain  the default selection's ranking for one call, predicted times\n");
}

static void print_versions(void)
{
    unsigned hw = hwloc_get_api_version();

    printf("ucoll  %s\n", ucoll_version());
    printf("UCX    %s (built against %d.%d)\n", ucp_get_version_string(), UCP_API_MAJOR,
           UCP_API_MINOR);
    printf("PMIx   %s\n", PMIx_Get_version());
    printf("hwloc  %u.%u.%u (built against %u.%u.%u)\n", hw >> 16, (hw >> 8) & 0xff, hw & 0xff,
           HWLOC_API_VERSION >> 16, (HWLOC_API_VERSION >> 8) & 0xff, HWLOC_API_VERSION & 0xff);
}

static int print_config(void)
{
    ucoll_config_t cfg;

    if (ucoll__config_read(&cfg) != UCOLL_OK) {
        ucoll__config_print(stdout, NULL);
        return 1;
    }
    ucoll__config_print(stdout, &cfg);
    ucoll__config_release(&cfg);
    return 0;
}

static int print_transports(void)
{
    ucoll_ctx_t *ctx;
    ucoll_topo_t topo;
    int status;

    if (ucoll__topo_query(&topo) == UCOLL_OK) {
        printf("machine: %d PUs, %d cores; this process: %s\n", topo.npus_machine,
               topo.ncores_machine, topo.binding);
    }
    /* A context of its own, whatever launched us: only this machine's view. */
    setenv("UCOLL_BOOTSTRAP", "singleton", 1);
    status = ucoll_init(&ctx);
    if (status != UCOLL_OK) {
        fprintf(stderr, "ucoll_info: ucoll_init failed: %s\n", ucoll_strerror(status));
        return 1;
    }
    ucoll__tl_describe(ctx, stdout);
    ucoll_finalize(ctx);
    return 0;
}

static void print_algorithms(void)
{
    int c, i;

    for (c = 0; c < UCOLL_COLL_LAST; c++) {
        const ucoll_algo_t *const *algos = ucoll__algos((ucoll_coll_t)c);
        printf("%s:\n", ucoll__coll_name((ucoll_coll_t)c));
        for (i = 0; algos && algos[i]; i++) {
            printf("  %-16s %s\n", algos[i]->id, algos[i]->desc);
        }
    }
}

static int explain(int argc, char **argv)
{
    ucoll_simnet_params_t sp = {0};
    ucoll_coll_args_t a = {0};
    ucoll_simnet_t *net = NULL;
    ucoll_ctx_t *ctx = NULL;
    size_t bytes, *counts = NULL, *displs = NULL;
    double alpha = -1, beta = -1, gamma = -1, wake = -1;
    int p = 4, c, rc = 2, spans = 0, shm = 1;
    char *seg = NULL, *radix = NULL;

    if (argc < 4) {
        usage(stderr);
        return 2;
    }
    for (c = 0; c < UCOLL_COLL_LAST; c++) {
        if (strcmp(argv[2], ucoll__coll_name((ucoll_coll_t)c)) == 0) {
            break;
        }
    }
    if (c == UCOLL_COLL_LAST || ucoll__parse_size(argv[3], &bytes) != 0) {
        fprintf(stderr, "ucoll_info --explain: '%s' is not an operation or '%s' not a size\n",
                argv[2], argv[3]);
        return 2;
    }
    for (int i = 4; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(o, "--net")) {
            spans = 1;
            continue;
        }
        if (!strcmp(o, "--no-shm")) {
            shm = 0;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "ucoll_info --explain: %s needs a value\n", o);
            return 2;
        }
        i++;
        if (!strcmp(o, "-p")) {
            p = atoi(v);
        } else if (!strcmp(o, "-A")) {
            alpha = atof(v);
        } else if (!strcmp(o, "-B")) {
            beta = atof(v);
        } else if (!strcmp(o, "-G")) {
            gamma = atof(v);
        } else if (!strcmp(o, "-W")) {
            wake = atof(v);
        } else if (!strcmp(o, "-S")) {
            seg = (char *)v;
        } else if (!strcmp(o, "-R")) {
            radix = (char *)v;
        } else {
            fprintf(stderr, "ucoll_info --explain: unknown option %s\n", o);
            return 2;
        }
    }
    if (p < 1 || p > (1 << 24)) {
        fprintf(stderr, "ucoll_info --explain: -p %d out of range\n", p);
        return 2;
    }
    /* the selection's own settings, with the flags on top */
    if (seg) {
        setenv("UCOLL_SEGMENT_SIZE", seg, 1);
    }
    if (radix) {
        setenv("UCOLL_RADIX", radix, 1);
    }
    if (ucoll__simnet_create(p, &sp, &net) != UCOLL_OK ||
        ucoll__ctx_create_sim(0, p, &ucoll__net_sim, net, &ctx) != UCOLL_OK) {
        fprintf(stderr, "ucoll_info --explain: cannot create a communicator of %d ranks\n", p);
        goto out;
    }
    ctx->cfg.model_alpha = alpha >= 0 ? alpha : ctx->cfg.model_alpha;
    ctx->cfg.model_beta = beta >= 0 ? beta : ctx->cfg.model_beta;
    ctx->cfg.model_gamma = gamma >= 0 ? gamma : ctx->cfg.model_gamma;
    if (wake > 0) {
        ctx->oversub = 1;
        ctx->cfg.model_oversub_alpha = wake;
    }
    ctx->world->spans_nodes = spans;
    /* one node: the runtime's communicator has its shared memory on
     * (UCOLL_SHM=auto, the transports offering it) */
    ctx->world->shm_assumed = !spans && shm && ctx->cfg.shm != UCOLL_SHM_MODE_OFF;
    counts = calloc((size_t)p, sizeof(size_t));
    displs = calloc((size_t)p, sizeof(size_t));
    if (counts == NULL || displs == NULL) {
        goto out;
    }
    a.coll = (ucoll_coll_t)c;
    a.dt = UCOLL_FLOAT32;
    a.op = UCOLL_SUM;
    a.esize = 4;
    a.sbuf = (void *)(uintptr_t)4096; /* never touched: nothing runs */
    a.rbuf = (void *)(uintptr_t)(1 << 30);
    a.count = bytes / 4;
    if (c == UCOLL_COLL_REDUCE_SCATTER_BLOCK || c == UCOLL_COLL_REDUCE_SCATTER) {
        a.count = bytes / 4 / (size_t)p;
    }
    for (int r = 0; r < p; r++) {
        counts[r] = a.count;
        displs[r] = (size_t)r * a.count;
    }
    a.scount = a.rcount = a.count;
    a.scounts = a.rcounts = counts;
    a.sdispls = a.rdispls = displs;
    if (c != UCOLL_COLL_REDUCE_SCATTER && c != UCOLL_COLL_GATHERV && c != UCOLL_COLL_SCATTERV &&
        c != UCOLL_COLL_ALLGATHERV && c != UCOLL_COLL_ALLTOALLV) {
        a.scounts = a.rcounts = a.sdispls = a.rdispls = NULL;
    }
    rc = ucoll__algo_explain(ctx->world, &a, stdout) == UCOLL_OK ? 0 : 1;
out:
    if (ctx) {
        ucoll__ctx_destroy_sim(ctx);
    }
    if (net) {
        ucoll__simnet_destroy(net);
    }
    free(counts);
    free(displs);
    return rc;
}

int main(int argc, char **argv)
{
    int opt, rc = 0, any = 0;

    if (argc > 1 && strcmp(argv[1], "--explain") == 0) {
        return explain(argc, argv);
    }

    while ((opt = getopt(argc, argv, "vctah")) != -1) {
        any = 1;
        switch (opt) {
        case 'v': print_versions(); break;
        case 'c': rc |= print_config(); break;
        case 't': rc |= print_transports(); break;
        case 'a': print_algorithms(); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!any || optind < argc) {
        usage(any ? stderr : stdout);
        return any ? 2 : 0;
    }
    return rc;
}
