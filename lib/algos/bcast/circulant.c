/*
 * Broadcast of n blocks on a circulant graph in n - 1 + q rounds,
 * q = ⌈log2 p⌉, for any p: the round optimum (Träff, "Optimal broadcast
 * schedules in logarithmic time with applications to broadcast,
 * all-broadcast, reduction and all-reduction", 2023).
 *
 * The graph. Skips sk[q] = p and sk[e] = ⌈sk[e+1] / 2⌉ down to sk[0] = 1
 * (roughly doubling). Round i of the broadcast uses skip k = i mod q: every
 * srank r sends one block to r + sk[k] and receives one from r - sk[k]
 * (mod p), so each round is a permutation and every port carries at most
 * one block. The rounds fall into phases of q.
 *
 * The blocks. The root holds everything and sends block k in round k of
 * phase 0 (block k + xq in round k of phase x). Srank r's base block b is
 * the last skip of its greedy decomposition r = sk[e1] + sk[e2] + ...
 * (e1 > e2 > ... = b; the root's is q): it is the residue mod q whose
 * blocks reach r within their own phase. In each phase r receives one
 * block of every residue: in round k its receive schedule names either b
 * (this phase's block of residue b) or e - q for a residue e ≠ b (the
 * previous phase's block e). The schedule comes from a search over the
 * canonical paths of skips ending at r + p, smallest round first, that
 * picks for round k the largest residue whose block the sender r - sk[k]
 * already holds (recv_schedule); it takes O(q) steps. What r sends in
 * round k is what r + sk[k] receives then, so r finds its send schedule
 * from the q receive schedules of its targets, O(q^2) = O(log^2 p) in all.
 *
 * n blocks with n - 1 not a multiple of q: the schedule runs for
 * n' = n + x blocks, n' - 1 ≡ 0 (mod q), numbered from -x, and skips its
 * first x rounds, in which only blocks below 0 would move. Block numbers
 * of the last phase past n - 1 stand for n - 1: they travel the trees of
 * their residue from the root within that phase, which is how the ranks
 * of every base block get the last block, each exactly once.
 *
 * A block is a segment of s bytes (s from the model, the optimum
 * n* = √((q-1)mβ/α) of the cost below): every round costs one message.
 *
 * Cost: (n - 1 + q)(α + sβ), n = ⌈m/s⌉: ⌈log2 p⌉(α + mβ) for one block,
 * mβ + O(α log p + √(αβ m log p)) at the best s.
 */
#include "bcast.h"

#define CIRC_MAXQ 32

/* The skips of p ranks, sk[0..q] and a guard sk[q+1]; returns q. */
static int circ_skips(int p, long long *sk)
{
    int q = ucoll__ceil_log2(p);

    sk[q] = p;
    for (int e = q - 1; e >= 0; e--) {
        sk[e] = sk[e + 1] - sk[e + 1] / 2;
    }
    sk[q + 1] = 2 * (long long)p;
    return q;
}

/* Base block of srank r (q for the root). */
static int circ_baseblock(long long r, int q, const long long *sk)
{
    long long v = 0;

    for (int e = q - 1; e >= 0; e--) {
        if (v + sk[e] == r) {
            return e;
        }
        if (v + sk[e] < r) {
            v += sk[e];
        }
    }
    return q;
}

/* The search of recv_schedule: the residues not yet given to a round, a
 * list in decreasing order (next[e], prev[e]; -1 ends it), and the rounds
 * filled so far. */
typedef struct {
    const long long *sk;
    long long target; /* r + p */
    int next[CIRC_MAXQ + 2], prev[CIRC_MAXQ + 2], head;
    int *blk, k, upto;
} circ_search_t;

static void circ_unlink(circ_search_t *cs, int e)
{
    if (cs->prev[e] >= 0) {
        cs->next[cs->prev[e]] = cs->next[e];
    } else {
        cs->head = cs->next[e];
    }
    if (cs->next[e] >= 0) {
        cs->prev[cs->next[e]] = cs->prev[e];
    }
}

/*
 * Extend the path that has reached v by skips from e downwards. A skip e
 * taking the path to u = v + sk[e] gives round k residue e when u is at or
 * below the round's sender r + p - sk[k] and below the last residue's node
 * s (so the residues come out in decreasing order). Before taking e the
 * search goes deeper from u, for the earlier rounds whose sender u can
 * still reach; it returns as soon as v lies past the sender of the next
 * round (no residue found from here can serve it).
 */
static void circ_search(circ_search_t *cs, long long v, long long s, int e)
{
    const long long *sk = cs->sk;

    while (e >= 0 && cs->k <= cs->upto) {
        long long u = v + sk[e];
        int nx = cs->next[e];

        if (u <= cs->target - sk[cs->k] && u < s) {
            if (u <= cs->target - sk[cs->k + 1]) {
                circ_search(cs, u, s, e);
                if (cs->k > cs->upto) {
                    return;
                }
            }
            if (v > cs->target - sk[cs->k + 1]) {
                return;
            }
            s = u;
            cs->blk[cs->k++] = e;
            nx = cs->next[e];
            circ_unlink(cs, e);
        }
        e = nx;
    }
}

/* Srank r's receive schedule (r > 0) for rounds 0..upto of a phase:
 * blk[k] is the block of round k, numbered within the phase (b, or e - q
 * for the previous phase's block e). */
static void circ_recv_schedule(long long r, int p, int q, const long long *sk, int upto, int *blk)
{
    circ_search_t cs;
    int b = circ_baseblock(r, q, sk);

    cs.sk = sk;
    cs.target = r + p;
    cs.blk = blk;
    cs.k = 0;
    cs.upto = upto;
    /* residues q, q-1, ..., 0 but b; q stands for this phase's b */
    cs.head = -1;
    for (int e = 0, last = -1; e <= q; e++) {
        if (e == b) {
            continue;
        }
        cs.next[e] = last;
        cs.prev[e] = -1;
        if (last >= 0) {
            cs.prev[last] = e;
        }
        last = e;
        cs.head = e;
    }
    circ_search(&cs, 0, 2 * (long long)p, cs.head);
    for (int k = 0; k < cs.k; k++) {
        blk[k] = (blk[k] == q) ? b : blk[k] - q;
    }
}

static size_t circulant_seg(const ucoll_algo_params_t *prm, size_t bytes, int p)
{
    return ucoll__pipeline_seg(prm, bytes, ucoll__ceil_log2(p) - 1);
}

static double circulant_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                             const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize, seg;
    double n;

    if (p == 1 || bytes == 0) {
        return 0;
    }
    seg = circulant_seg(prm, bytes, p);
    n = (double)((bytes + seg - 1) / seg);
    return (n - 1 + ucoll__ceil_log2(p)) * (m->alpha + (double)UCOLL_MIN(seg, bytes) * m->beta);
}

static int circulant_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                           const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, q, x, st;
    long long sk[CIRC_MAXQ + 2], sr = ucoll__srank(comm->rank, a->root, p);
    int rblk[CIRC_MAXQ], sblk[CIRC_MAXQ], tmp[CIRC_MAXQ];
    size_t bytes = a->count * a->esize, seg, nblk;
    char *buf = a->rbuf;

    if (bytes == 0 || p == 1) {
        return UCOLL_OK;
    }
    q = circ_skips(p, sk);
    seg = circulant_seg(prm, bytes, p);
    nblk = (bytes + seg - 1) / seg;
    if (sr > 0) {
        circ_recv_schedule(sr, p, q, sk, q - 1, rblk);
    }
    /* what each target receives from us, round by round (none for the root) */
    for (int k = 0; k < q; k++) {
        long long t = (sr + sk[k]) % p;
        if (t == 0) {
            sblk[k] = INT32_MIN;
        } else {
            circ_recv_schedule(t, p, q, sk, k, tmp);
            sblk[k] = tmp[k];
        }
    }
    x = (int)((q - (long long)(nblk - 1) % q) % q);
    for (long long i = x; i < (long long)nblk - 1 + q + x; i++) {
        long long phase = i / q, j;
        int k = (int)(i % q);
        if (sblk[k] != INT32_MIN && (j = sblk[k] + phase * q - x) >= 0) {
            size_t off = (size_t)UCOLL_MIN(j, (long long)nblk - 1) * seg;
            int to = ucoll__rank_of((int)((sr + sk[k]) % p), a->root, p);
            if ((st = ucoll__sched_send(s, buf + off, UCOLL_MIN(seg, bytes - off), to))) {
                return st;
            }
        }
        if (sr > 0 && (j = rblk[k] + phase * q - x) >= 0) {
            size_t off = (size_t)UCOLL_MIN(j, (long long)nblk - 1) * seg;
            int from = ucoll__rank_of((int)((sr - sk[k] + p) % p), a->root, p);
            if ((st = ucoll__sched_recv(s, buf + off, UCOLL_MIN(seg, bytes - off), from))) {
                return st;
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

static void circulant_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                             char *buf, size_t len)
{
    ucoll__params_words(buf, len, circulant_seg(prm, a->count * a->esize, p), 0);
}

const ucoll_algo_t ucoll__bcast_circulant = {
    .id = "circulant",
    .desc = "n blocks on a circulant graph, n - 1 + ceil(log2 p) rounds (Traff)",
    .cost = circulant_cost,
    .build = circulant_build,
    .params = circulant_params,
};
