/*
 * The bootstrap: how a process learns who it is and exchanges byte strings
 * with its peers before any UCX endpoint exists. PMIx is the first
 * implementation (boot_pmix.c); a process started without any launcher runs
 * as a singleton (boot_single.c); a framework that brings its own allgather
 * uses ucoll_init_oob (boot_oob.c), and jobs started the torchrun way
 * (RANK, WORLD_SIZE, MASTER_ADDR) meet over TCP at rank 0 (boot_env.c, on
 * top of boot_oob.c).
 *
 * Several contexts may live in one process: every bootstrap instance keeps
 * its keys apart from the others' (boot_pmix.c prefixes them with the
 * instance's number in the process).
 */
#ifndef UCOLL_BOOTSTRAP_H
#define UCOLL_BOOTSTRAP_H

#include <stddef.h>

#include "ucoll.h"

typedef struct ucoll_boot ucoll_boot_t;

typedef struct ucoll_boot_ops {
    const char *name;
    /* Make this rank's blob under key visible to peers after the next fence
     * (or, with direct modex, on demand). */
    int (*publish)(ucoll_boot_t *b, const char *key, const void *data, size_t len);
    /* Collective over the job: everything published before is visible after.
     * collect = 1 moves all data to every rank now; 0 only synchronizes. */
    int (*fence)(ucoll_boot_t *b, int collect);
    /* Fetch the blob rank published under key. *data_p is malloc'ed; the
     * caller frees it. May block until the peer has published. */
    int (*fetch)(ucoll_boot_t *b, int rank, const char *key, void **data_p, size_t *len_p);
    /* Optional: a barrier over the job ranks ranks[0..n) only (this one
     * among them), for a job that has lost ranks. NULL where the bootstrap
     * can only synchronise the whole job (an allgather of the caller's). */
    int (*fence_ranks)(ucoll_boot_t *b, const int *ranks, int n);
    /* Ask the launcher to end the job (never returns on success). */
    int (*abort)(ucoll_boot_t *b, int status, const char *msg);
    void (*finalize)(ucoll_boot_t *b);
} ucoll_boot_ops_t;

struct ucoll_boot {
    const ucoll_boot_ops_t *ops;
    int rank, size;             /* in the job */
    int local_rank, local_size; /* on this node */
    int node_id, num_nodes;
    int *local_peers;    /* job ranks on this node, local_size of them */
    int locality_known;  /* 0: the launcher did not say; every rank is its own node */
    int needs_fence;     /* fetch sees only what a fence moved: no direct modex */
    char name[300];      /* "pmix <namespace>" or "singleton" */
    unsigned priv_round; /* allgather rounds so far (fresh keys) */
    void *priv;
};

struct ucoll_config;

/* Bootstrap as cfg->bootstrap says: PMIx when a launcher started the process
 * (or always, with "pmix"), else a singleton of size 1. On failure the
 * reason and how to start the program have been printed and
 * UCOLL_ERR_BOOTSTRAP is returned; *boot_p is set only on success, and
 * released by its ops->finalize (which also frees the struct). */
int ucoll__boot_init(const struct ucoll_config *cfg, ucoll_boot_t **boot_p);

/* The implementations (used by ucoll__boot_init). */
int ucoll__boot_pmix_init(ucoll_boot_t **boot_p);
int ucoll__boot_single_init(ucoll_boot_t **boot_p);
/* TCP rendezvous at MASTER_ADDR:cfg->boot_port, rank and size from RANK and
 * WORLD_SIZE. */
int ucoll__boot_env_init(const struct ucoll_config *cfg, ucoll_boot_t **boot_p);
/* 1 when RANK, WORLD_SIZE and MASTER_ADDR are all set. */
int ucoll__boot_env_present(void);

/* A bootstrap over oob's allgather (copied). env: name it "env". release,
 * when not NULL, is called with oob->arg when the bootstrap is finalized
 * (also when this call fails). Exchanges rank, size and node with every
 * process before it returns: UCOLL_ERR_BOOTSTRAP when they disagree. */
int ucoll__boot_oob_create(const ucoll_oob_t *oob, int env, void (*release)(void *arg),
                           ucoll_boot_t **boot_p);

/* Set b's locality (local_rank, local_size, local_peers, node_id,
 * num_nodes, locality_known) from what the launcher said, b->rank and
 * b->size set. Unknown values are -1 (peers: NULL, the comma-separated
 * PMIX_LOCAL_PEERS list). Nothing is guessed: without a local size and a
 * valid peer list that holds this rank, every rank is its own node
 * (locality_known = 0). A missing node id is taken as the smallest rank of
 * the node (the same on every rank of it). UCOLL_ERR_NOMEM or UCOLL_OK. */
int ucoll__boot_set_locality(ucoll_boot_t *b, int local_rank, int local_size, const char *peers,
                             int node_id, int num_nodes);

/* Equal-size allgather of byte strings over the bootstrap:
 * out holds size * len bytes in rank order. Built on publish/fence/fetch. */
int ucoll__boot_allgather(ucoll_boot_t *b, const void *in, size_t len, void *out);
/* Barrier over the bootstrap. */
int ucoll__boot_barrier(ucoll_boot_t *b);
/* Barrier over the job ranks live[0..n) (increasing, this one among them):
 * the whole job when n is its size; otherwise through ops->fence_ranks,
 * and skipped (UCOLL_OK, logged) by a bootstrap that has none, since a
 * barrier that waits for a dead rank never ends. Ranks that disagree on who
 * is dead fence over different sets and do not meet: the caller passes the
 * ranks it knows to be alive. */
int ucoll__boot_barrier_live(ucoll_boot_t *b, const int *live, int n);

#endif
