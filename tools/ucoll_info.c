/*
 * ucoll_info: versions, settings, transports and algorithms of this build.
 *
 *   ucoll_info -v   versions of ucoll, UCX, PMIx and hwloc
 *   ucoll_info -c   every UCOLL_* setting: type, default, help
 *   ucoll_info -t   UCX transports and devices this machine would use
 *   ucoll_info -a   collective algorithms by operation
 */
#include "algos/algos.h"
#include "config.h"
#include "core.h"
#include "topo.h"
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
                 "  -v  versions of ucoll, UCX, PMIx and hwloc\n"
                 "  -c  every UCOLL_* setting with its type, default and help\n"
                 "  -t  UCX transports and devices ucoll would use on this machine\n"
                 "  -a  collective algorithms of every operation\n");
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

int main(int argc, char **argv)
{
    int opt, rc = 0, any = 0;

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
