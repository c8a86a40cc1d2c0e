/*
 * The two-tree reduce and allreduce (lib/algos/reduce/twotree.c,
 * lib/algos/allreduce/twotree.c): the simulated time of their real
 * schedules against their cost formulas, where the formulas count the
 * schedule's critical path exactly in the Hockney model:
 *  - p = 2, any size (a short last segment included): the trees are one
 *    edge, and the two halves of the allreduce overlap on opposite ports;
 *  - one segment (1 KiB) at p = 4, 8, 64, where every level of tree A
 *    below its root has two children.
 * The other rows (p = 3, several segments at p >= 3) are printed, not
 * checked: there the formulas idealise the ports (see reduce/twotree.c).
 * The models are calibrated ones (α, β, γ of a 2-rank and a 4-rank run).
 */
#include "algos/algos.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "transport/simnet.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tests/expect.h"

static int checked;

/* The simulated time of al's schedules on p dry ranks (no bytes move; the
 * buffers are fake), the segment size chosen from m as the runtime does. */
static double sim_time(const ucoll_algo_t *al, const ucoll_coll_args_t *a, int p,
                       const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    ucoll_simnet_params_t sp = {m->alpha, m->beta, m->gamma, m->lambda, 1, 0};
    ucoll_ctx_t **ctx = calloc((size_t)p, sizeof(*ctx)), *c;
    ucoll_req_t *req = calloc((size_t)p, sizeof(*req));
    ucoll_simnet_t *net;
    double t;
    int done = 0;

    if (ctx == NULL || req == NULL || ucoll__simnet_create(p, &sp, &net) != UCOLL_OK) {
        abort();
    }
    for (int r = 0; r < p; r++) {
        ucoll_sched_t *s;
        if (ucoll__ctx_create_sim(r, p, &ucoll__net_sim, net, &ctx[r]) != UCOLL_OK) {
            abort();
        }
        ucoll__exec_set_dry(ctx[r], 1);
        req[r].ctx = ctx[r];
        req[r].kind = UCOLL_REQ_COLL;
        if (ucoll__sched_create(ctx[r]->world, 0, &s) != UCOLL_OK || al->build(s, a, prm)) {
            abort();
        }
        ucoll__sched_start(s, &req[r]);
    }
    while ((c = ucoll__simnet_advance(net)) != NULL) {
        ucoll__exec_progress(c);
    }
    for (int r = 0; r < p; r++) {
        done += req[r].complete;
    }
    EXPECT_MSG(done == p && ucoll__simnet_unmatched(net) == 0, "%s/%s p=%d count=%zu incomplete",
          ucoll__coll_name(a->coll), al->id, p, a->count);
    t = ucoll__simnet_max_clock(net);
    for (int r = 0; r < p; r++) {
        ucoll__ctx_destroy_sim(ctx[r]);
    }
    ucoll__simnet_destroy(net);
    free(ctx);
    free(req);
    return t;
}

/* One row: sim against formula, to rounding when exact. */
static void row(ucoll_coll_t coll, int p, size_t bytes, size_t seg, const ucoll_model_t *m,
                int exact)
{
    const ucoll_algo_t *al = ucoll__algo_find(coll, "twotree");
    void *fake = (void *)(uintptr_t)4096;
    ucoll_coll_args_t a = {.coll = coll,
                           .dt = UCOLL_FLOAT32,
                           .op = UCOLL_SUM,
                           .esize = 4,
                           .sbuf = fake,
                           .rbuf = fake,
                           .count = bytes / 4};
    ucoll_algo_params_t prm = {.seg_size = seg, .model = *m};
    double t, f;

    if (al == NULL || al->cost == NULL) {
        EXPECT_MSG(0, "no twotree %s", ucoll__coll_name(coll));
        return;
    }
    t = sim_time(al, &a, p, &prm, m);
    f = al->cost(&a, p, &prm, m);
    printf("%-9s p=%-3d %8zu B seg %-7zu alpha %.3g: sim %.6e formula %.6e ratio %.6f%s\n",
           ucoll__coll_name(coll), p, bytes, seg, m->alpha, t, f, t / f,
           exact ? "" : " (not checked)");
    if (exact) {
        checked++;
        EXPECT_MSG(fabs(t - f) <= 1e-9 * t, "%s twotree p=%d %zu B seg %zu: sim %.9e s, formula %.9e s",
              ucoll__coll_name(coll), p, bytes, seg, t, f);
    }
}

int main(void)
{
    /* α, β, γ calibrated at p = 2 and at p = 4 (α with a wake-up) */
    const ucoll_model_t models[] = {{.alpha = 8.4e-7, .beta = 1.65e-10, .gamma = 3.1e-11},
                                    {.alpha = 6.1e-6 + 4e-5, .beta = 2.3e-10, .gamma = 2.5e-11}};
    const ucoll_coll_t colls[] = {UCOLL_COLL_REDUCE, UCOLL_COLL_ALLREDUCE};
    const size_t sizes[] = {1024, 65536, 4 << 20};
    const int ps[] = {2, 3, 4, 8, 64};

    for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
        for (size_t c = 0; c < 2; c++) {
            for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
                for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
                    int one_seg = sizes[j] <= 4096; /* the least segment */
                    row(colls[c], ps[i], sizes[j], 0, &models[k],
                        ps[i] == 2 || (ps[i] != 3 && one_seg));
                }
            }
            /* p = 2 with a short last segment, one to 49 segments */
            row(colls[c], 2, 70000, 0, &models[k], 1);
            row(colls[c], 2, 1000004, 0, &models[k], 1);
            row(colls[c], 2, 16388, 4096, &models[k], 1);
            row(colls[c], 2, 200000, 4096, &models[k], 1);
        }
    }
    printf("%d rows checked, %d failures\n", checked, failures);
    return failures != 0;
}
