/*
 * Machine topology through hwloc: how many processing units this process
 * may run on, its binding, and whether the node is oversubscribed (more
 * ranks than processing units), in which case spinning waits are harmful.
 */
#ifndef UCOLL_TOPO_H
#define UCOLL_TOPO_H

#include "core.h"

typedef struct ucoll_topo {
    int npus_machine; /* processing units on the machine */
    int npus_allowed; /* processing units this process is bound to */
    int ncores_machine;
    int numa_node;     /* NUMA node of the binding, -1 if not bound within one */
    char binding[128]; /* e.g. "core 1 (PU 1)" or "unbound (PUs 0-1)" */
} ucoll_topo_t;

/* Fill topo for the calling process. Returns UCOLL_OK, or
 * UCOLL_ERR_UNSUPPORTED when hwloc cannot load the topology (then topo holds
 * conservative values: one PU). */
int ucoll__topo_query(ucoll_topo_t *topo);

/* Decide the effective wait mode: in hybrid mode, when local_size ranks
 * share fewer processing units than that, sleep at once instead of spinning
 * (spinning would take the core that the peer we wait for needs). */
int ucoll__topo_wait_mode(const ucoll_topo_t *topo, int configured, int local_size);

#endif
