/*
 * Shared tree and peer math, and the schedule pieces several algorithms
 * share (recursive halving and doubling over folded ranks). Everything here
 * is a pure function of (rank, p, parameters): each rank computes its own
 * part in O(log p) without talking to anyone.
 */
#include "algos/algos.h"

int ucoll__ceil_log2(int p)
{
    int l = 0;

    while ((1 << l) < p) {
        l++;
    }
    return l;
}

int ucoll__is_pow2(int p)
{
    return p > 0 && (p & (p - 1)) == 0;
}

int ucoll__floor_pow2(int p)
{
    int p2 = 1;

    while (p2 * 2 <= p) {
        p2 *= 2;
    }
    return p2;
}

int ucoll__ceil_logk(int p, int k)
{
    long long pw = 1;
    int d = 0;

    while (pw < p) {
        pw *= k;
        d++;
    }
    return d;
}

int ucoll__knomial_parent(int srank, int p, int k)
{
    long long pw = 1;

    if (srank == 0) {
        return -1;
    }
    while ((srank / pw) % k == 0) {
        pw *= k;
    }
    return srank - (int)(((srank / pw) % k) * pw);
}

int ucoll__knomial_children(int srank, int p, int k, int *children, int *sizes)
{
    long long pw = 1, top;
    int n = 0;

    /* positions below srank's lowest non-zero digit (every position for
     * the root) */
    if (srank == 0) {
        top = 1;
        while (top < p) {
            top *= k;
        }
    } else {
        top = 1;
        while ((srank / top) % k == 0) {
            top *= k;
        }
    }
    for (pw = 1; pw < top; pw *= k) {
        for (int j = 1; j < k; j++) {
            long long c = srank + j * pw;
            if (c >= p) {
                break;
            }
            if (children) {
                children[n] = (int)c;
            }
            if (sizes) {
                sizes[n] = (int)UCOLL_MIN((long long)pw, (long long)p - c);
            }
            n++;
        }
    }
    return n;
}

void ucoll__rd_init(int rank, int p, ucoll_rd_t *rd)
{
    rd->p2 = ucoll__floor_pow2(p);
    rd->rem = p - rd->p2;
    if (rank < 2 * rd->rem) {
        rd->newrank = (rank % 2 == 0) ? rank / 2 : -1;
    } else {
        rd->newrank = rank - rd->rem;
    }
}

int ucoll__sched_rhalving(ucoll_sched_t *s, const ucoll_rd_t *rd, char *acc, const char *src,
                          char *tmp, const size_t *goff, size_t esize, ucoll_dtype_t dt,
                          ucoll_op_t op, ucoll_rank_map_t to_rank, const void *arg)
{
    int v = rd->newrank;
    int st;

    for (int d = rd->p2 / 2; d >= 1; d /= 2) {
        int base = v & ~(2 * d - 1);
        int partner = v ^ d;
        int keep = (v & d) ? base + d : base;
        int give = (v & d) ? base : base + d;
        size_t klo = goff[keep], khi = goff[keep + d];
        size_t glo = goff[give], ghi = goff[give + d];
        int peer = to_rank(partner, arg);

        if ((st = ucoll__sched_send(s, src + glo * esize, (ghi - glo) * esize, peer)) ||
            (st = ucoll__sched_recv(s, tmp, (khi - klo) * esize, peer)) ||
            (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc + klo * esize, src + klo * esize, tmp, khi - klo, dt,
                                      op))) {
            return st;
        }
        src = acc;
    }
    return UCOLL_OK;
}

int ucoll__sched_rdoubling(ucoll_sched_t *s, const ucoll_rd_t *rd, char *acc, const size_t *goff,
                           size_t esize, ucoll_rank_map_t to_rank, const void *arg)
{
    int v = rd->newrank;
    int st;

    for (int d = 1; d < rd->p2; d *= 2) {
        int mine = v & ~(d - 1);
        int partner = v ^ d;
        int theirs = partner & ~(d - 1);
        int peer = to_rank(partner, arg);
        size_t mlo = goff[mine], mhi = goff[mine + d];
        size_t tlo = goff[theirs], thi = goff[theirs + d];

        if ((st = ucoll__sched_send(s, acc + mlo * esize, (mhi - mlo) * esize, peer)) ||
            (st = ucoll__sched_recv(s, acc + tlo * esize, (thi - tlo) * esize, peer)) ||
            (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}
