/*
 * Settings. Every UCOLL_* environment variable is one row of the table in
 * config.c: {name, type, default, help, where it lands}. That table is the
 * only reader of the environment, and `ucoll_info -c` prints it.
 */
#ifndef UCOLL_CONFIG_H
#define UCOLL_CONFIG_H

#include <stddef.h>
#include <stdio.h>

/* The collective operations, in the order of the API; used to name
 * algorithm settings, statistics and benchmark rows. */
typedef enum {
    UCOLL_COLL_BARRIER,
    UCOLL_COLL_BCAST,
    UCOLL_COLL_REDUCE,
    UCOLL_COLL_ALLREDUCE,
    UCOLL_COLL_GATHER,
    UCOLL_COLL_GATHERV,
    UCOLL_COLL_SCATTER,
    UCOLL_COLL_SCATTERV,
    UCOLL_COLL_ALLGATHER,
    UCOLL_COLL_ALLGATHERV,
    UCOLL_COLL_ALLTOALL,
    UCOLL_COLL_ALLTOALLV,
    UCOLL_COLL_REDUCE_SCATTER_BLOCK,
    UCOLL_COLL_REDUCE_SCATTER,
    UCOLL_COLL_SCAN,
    UCOLL_COLL_EXSCAN,
    UCOLL_COLL_LAST
} ucoll_coll_t;

/* Lower-case name of a collective ("allreduce"). */
extern const char *const ucoll__coll_names[UCOLL_COLL_LAST];

static inline const char *ucoll__coll_name(ucoll_coll_t coll)
{
    return ((unsigned)coll < UCOLL_COLL_LAST) ? ucoll__coll_names[coll] : "?";
}

typedef enum { UCOLL_MODEX_FENCE, UCOLL_MODEX_DIRECT } ucoll_modex_t;
typedef enum {
    UCOLL_BOOT_AUTO,
    UCOLL_BOOT_PMIX,
    UCOLL_BOOT_SINGLETON,
    UCOLL_BOOT_ENV /* TCP rendezvous at MASTER_ADDR, as torchrun sets it */
} ucoll_boot_mode_t;
typedef enum {
    UCOLL_WAIT_SPIN,
    UCOLL_WAIT_BLOCK,
    UCOLL_WAIT_HYBRID,
    UCOLL_WAIT_YIELD,
    UCOLL_WAIT_AUTO /* resolved at init: spin, or yield when oversubscribed */
} ucoll_wait_mode_t;
typedef enum { UCOLL_RNDV_AUTO, UCOLL_RNDV_TAG, UCOLL_RNDV_AM, UCOLL_RNDV_GET } ucoll_rndv_mode_t;
typedef enum { UCOLL_SHM_MODE_AUTO, UCOLL_SHM_MODE_OFF } ucoll_shm_mode_t;
/* How a same-node peer's death is found (lib/transport/ucx.h, "Failure
 * detection"): AUTO watches its process where it can, UCX hands every peer
 * to UCX's peer error handling. */
typedef enum { UCOLL_LIVENESS_AUTO, UCOLL_LIVENESS_UCX } ucoll_liveness_t;
/* The way of the shared-memory reduce and allreduce rows
 * (lib/algos/allreduce/shm.c); AUTO: the model's. */
typedef enum {
    UCOLL_SHM_WAY_AUTO,
    UCOLL_SHM_WAY_ONESHOT,
    UCOLL_SHM_WAY_SLICED,
    UCOLL_SHM_WAY_ROOT, /* pipelined to the root: reduce */
    UCOLL_SHM_WAY_PIPE, /* pipelined: allreduce */
    UCOLL_SHM_WAY_LAST
} ucoll_shm_way_t;
/* Their names, as UCOLL_SHM_WAY and tuning rules (way=) spell them, by
 * value; NULL-terminated. */
extern const char *ucoll__shm_way_names[];
/* UCOLL_SHM_WAY_ADAPT: the way of the model, or chosen per call by
 * measurement between it and another (lib/progress/shm.h,
 * ucoll__shm_way_pick); TURN, for tests: the way changes at every round;
 * AUTO: ON where every rank has a processing unit (the model's wake-up
 * cost is 0), OFF where ranks outnumber them, whose call times the
 * scheduler moves by more than the ways differ (3 ranks on 2 cores: the
 * same settings 0.97-1.34x apart from run to run). OFF by default: with
 * the CPUs close (p = 2, 100 calls a size) it took 1.09-1.33x the
 * model's time at 64-256 KiB, where the model's way was the quicker,
 * for 0.90-0.99x from 512 KiB where the sliced allreduce was. */
typedef enum {
    UCOLL_SHM_WAY_ADAPT_OFF,
    UCOLL_SHM_WAY_ADAPT_ON,
    UCOLL_SHM_WAY_ADAPT_TURN,
    UCOLL_SHM_WAY_ADAPT_AUTO
} ucoll_shm_way_adapt_t;
/* UCOLL_SHM_DUEL: where the model takes the shm row of alltoall or
 * reduce_scatter_block from UCOLL_SHM_DUEL_MIN bytes, calls are timed
 * through it and through the best message-based row, and every rank takes
 * the quicker at the same call (lib/progress/shm.h, ucoll__shm_duel_arm);
 * TURN, for tests: the row changes at every round. */
typedef enum { UCOLL_SHM_DUEL_OFF, UCOLL_SHM_DUEL_ON, UCOLL_SHM_DUEL_TURN } ucoll_shm_duel_t;

typedef struct ucoll_config {
    int log_level;        /* ucoll_log_level_t */
    int bootstrap;        /* ucoll_boot_mode_t */
    int modex;            /* ucoll_modex_t */
    int boot_port;        /* env bootstrap: rank 0's TCP port */
    double boot_timeout;  /* env bootstrap: seconds to find every rank */
    size_t eager_limit;   /* bytes: larger messages go rendezvous */
    size_t eager_credits; /* bytes a sender may have unconsumed at one receiver */
    int rndv_mode;        /* ucoll_rndv_mode_t */
    int wait_mode;        /* ucoll_wait_mode_t */
    unsigned spin_time;   /* microseconds of idle polling before a hybrid wait sleeps */
    int stats;            /* print counters at finalize */
    double timeout;       /* seconds a blocking wait may take; 0 = forever */
    size_t seg_size;      /* pipeline segment size, bytes; 0 = model */
    unsigned radix;       /* k of k-nomial / k-chain algorithms; 0 = model */
    double model_alpha, model_beta, model_gamma; /* selection model, s and s/B */
    double model_oversub_alpha;                  /* added to alpha when ranks outnumber PUs */
    char *tune_file;                             /* selection rules file, NULL = none */
    int shm;                                     /* ucoll_shm_mode_t */
    size_t shm_size;                             /* bytes of each rank's shared region */
    size_t shm_stream_min; /* copies into a region from this size stream past the cache */
    int shm_stream_adapt;  /* ... or not, as each rank measures (progress/shm.h) */
    int shm_way;                                 /* ucoll_shm_way_t */
    int shm_way_adapt;                           /* ucoll_shm_way_adapt_t */
    int shm_duel;                                /* ucoll_shm_duel_t */
    int p2p_shm;                                 /* ucoll_shm_mode_t: point-to-point rings */
    int liveness;                                /* ucoll_liveness_t */
    char *algo[UCOLL_COLL_LAST];                 /* forced algorithm ids, NULL = model */
} ucoll_config_t;

/* Read every UCOLL_* variable into cfg. Unknown UCOLL_* variables get a
 * warning; a value that does not parse is UCOLL_ERR_ARG with a message naming
 * the variable. Strings in cfg are owned by it: ucoll__config_release(). */
int ucoll__config_read(ucoll_config_t *cfg);
void ucoll__config_release(ucoll_config_t *cfg);

/* Print the table: name, type, default, help (and the current value when
 * cfg is not NULL). */
void ucoll__config_print(FILE *out, const ucoll_config_t *cfg);

/* Parse "8192", "64k", "4M", "1g" into bytes; 0 on success. */
int ucoll__parse_size(const char *s, size_t *out_p);

#endif
