/*
 * Locality from the launcher's values (ucoll__boot_set_locality): what it
 * says is taken, what it does not say is not guessed. Without a local size
 * and a valid list of the node's ranks, every rank is its own node.
 */
#include "transport/bootstrap.h"
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/expect.h"


static void set(ucoll_boot_t *b, int rank, int size, int lrank, int lsize, const char *peers,
                int node, int nnodes)
{
    b->rank = rank;
    b->size = size;
    EXPECT_MSG(ucoll__boot_set_locality(b, lrank, lsize, peers, node, nnodes) == UCOLL_OK, "status");
}

static void expect_alone(const ucoll_boot_t *b, const char *what)
{
    EXPECT_MSG(!b->locality_known, "%s: locality taken as known", what);
    EXPECT_MSG(b->local_size == 1 && b->local_rank == 0, "%s: local %d of %d", what, b->local_rank,
          b->local_size);
    EXPECT_MSG(b->local_peers && b->local_peers[0] == b->rank, "%s: peers", what);
    EXPECT_MSG(b->node_id == b->rank && b->num_nodes == b->size, "%s: node %d of %d", what,
          b->node_id, b->num_nodes);
}

int main(void)
{
    ucoll_boot_t b;

    memset(&b, 0, sizeof(b));
    ucoll__log_level = UCOLL_LOG_ERROR; /* the invalid cases warn */

    /* everything said */
    set(&b, 5, 8, 1, 4, "4,5,6,7", 1, 2);
    EXPECT_MSG(b.locality_known && b.local_size == 4 && b.local_rank == 1, "full");
    EXPECT_MSG(b.local_peers[0] == 4 && b.local_peers[3] == 7, "peers in order");
    EXPECT_MSG(b.node_id == 1 && b.num_nodes == 2, "node %d of %d", b.node_id, b.num_nodes);

    /* a missing local size: unknown, not "everyone is local" */
    set(&b, 5, 8, 1, -1, "4,5,6,7", 1, 2);
    expect_alone(&b, "no local size");
    /* a missing peer list: no contiguous guess */
    set(&b, 5, 8, 1, 4, NULL, 1, 2);
    expect_alone(&b, "no peer list");
    /* lists that cannot be right */
    set(&b, 5, 8, 1, 4, "4,6,7,0", 1, 2); /* without self */
    expect_alone(&b, "list without self");
    set(&b, 5, 8, 1, 4, "4,5,6", 1, 2); /* too short */
    expect_alone(&b, "short list");
    set(&b, 5, 8, 1, 2, "4,5,6", 1, 2); /* too long */
    expect_alone(&b, "long list");
    set(&b, 5, 8, 1, 3, "5,5,6", 1, 2); /* duplicate */
    expect_alone(&b, "duplicate");
    set(&b, 5, 8, 1, 2, "5,9", 1, 2); /* outside the job */
    expect_alone(&b, "rank outside");
    set(&b, 5, 8, 1, 2, "5;6", 1, 2); /* a stranger's syntax */
    expect_alone(&b, "bad separator");
    set(&b, 5, 8, 1, 2, "", 1, 2);
    expect_alone(&b, "empty list");
    set(&b, 1, 2, 0, 3, "0,1,2", 0, 1); /* more local than in the job */
    expect_alone(&b, "local size above job size");

    /* missing node id: the node's smallest rank, the same on all of it */
    set(&b, 6, 8, 2, 4, "7,6,5,4", -1, -1);
    EXPECT_MSG(b.locality_known && b.node_id == 4 && b.num_nodes == 0, "node %d nodes %d", b.node_id,
          b.num_nodes);
    /* missing local rank: the position in the list */
    set(&b, 6, 8, -1, 4, "7,6,5,4", 0, 2);
    EXPECT_MSG(b.locality_known && b.local_rank == 1, "local rank %d", b.local_rank);

    free(b.local_peers);
    if (failures) {
        printf("test_locality: %d failed\n", failures);
        return 1;
    }
    printf("test_locality: all passed\n");
    return 0;
}
