/*
 * Broadcast down two complementary binary trees, with the edge colouring
 * that lets every rank receive one segment and send one segment per round
 * (Sanders, Speck, Träff 2009, "Two-tree algorithms for full bandwidth
 * broadcast, reduction and scan"; the "double binary tree").
 *
 * Trees. Let N = p - 1 (the non-root sranks) and N' = N rounded down to
 * even. One in-order tree T over the labels [L, R], R = L + N' - 1: the
 * root of an interval of labels is the label in it with the most trailing
 * zero bits, and its halves hang below it. An interval of two labels or
 * more holds an even one with more trailing zeros than any odd one, so
 * every interior node of T has an even label. Tree A puts srank r
 * (1 ≤ r ≤ N') at label r + L - 1, tree B at that label with its lowest
 * bit flipped (the labels pair up as 2j, 2j + 1): a rank with an even
 * label in A has an odd one in B and the reverse, so no rank forwards in
 * both trees. When N is odd, srank N hangs left of label L in both trees
 * (nothing else does: the labels below L are not used). Depth ≤ ⌈log2 p⌉
 * (checked as F below).
 *
 * Colouring. The segments alternate between the trees (even ones down A,
 * odd ones down B), and in round t only the edges of colour t mod 2 carry
 * data. That is one receive per rank and round when a rank's two incoming
 * edges (one per tree) differ in colour, and one send when the edges to
 * two siblings differ. The edge into label q gets colour
 * c(q) = parity of the popcount of q >> 1, flipped in tree B (and
 * everywhere once more, so that A's root gets 0 and B's root 1):
 *  - a rank's two labels q and q ^ 1 have the same q >> 1, so its two
 *    incoming edges differ;
 *  - the two children m ∓ 2^(k-1) of m (k ≥ 1 trailing zeros) differ in
 *    bit k alone, which q >> 1 keeps;
 *  - where T is cut at R, the right child of m on the right spine is
 *    m + 2^j, j ≤ k - 1, and for j ≥ 1 its q >> 1 still has one bit
 *    more than m >> 1, while the left child m - 2^(k-1) (k ≥ 2) has as
 *    many. Only j = 0, a lone odd label R = m + 1 below m with k ≥ 2, i.e.
 *    R ≡ 1 (mod 4), would copy its sibling's colour: L is 2 when
 *    N' ≡ 2 (mod 4) and 4 when N' ≡ 0, so that R ≡ 3 (mod 4); the labels
 *    below L are whole left subtrees of T, and leaving them out cuts
 *    nothing else;
 *  - srank N (N odd) takes the colour opposite to its sibling's in each
 *    tree, which makes its two colours differ too.
 * This is a 2-edge-colouring of the union of the trees, seen as a
 * bipartite graph of senders and receivers of degree ≤ 2 (König: one
 * always exists); the rule above finds it for every rank by itself in
 * O(log² p), with no global state.
 *
 * Timetable. Tree b's segment i reaches a rank in round 2i + f, where f,
 * the rank's first round in tree b, is the first round after its parent's
 * with the parity of its own colour (parent's f + 1 or + 2; srank 0 has
 * f = -1, so A's root gets f = 0 and B's root f = 1).
 * Srank 0 sends segment j in round j; an interior rank forwards each
 * segment to its two children in the two rounds after it arrived, one per
 * round; a rank's receptions from A and from B fall in rounds of opposite
 * parities. So each round a rank sends at most one segment and receives at
 * most one, every message is received in the round it is sent, and no
 * rank sends a segment before the round after it arrived. The schedule's
 * rounds are these rounds (a rank's empty ones are dropped).
 *
 * Cost: the latest first round is F = 2⌈log2 p⌉ - 2 in tree A (one less
 * when L = 4, p ≥ 5) and F + 1 in B (f ≤ 2·depth - 1 bounds it by
 * 2⌈log2 p⌉ - 1; the exact F is what the trees come to, checked for every
 * p up to 20000 and sampled up to 3·10^5). With n segments of s bytes,
 * A's last one (n odd) or B's (n even) arrives in round n + F - 1, and a
 * round costs one message in and one out, full duplex:
 * (n + F)(α + sβ) ≈ mβ + O(α log p) for large m; the simulator comes
 * out at 0.98-1.00 times it from 64 KiB to 16 MiB at p = 64 … 1024.
 */
#include "bcast.h"

/* The label with the most trailing zero bits in [lo, hi] (unique). */
static int maxlow(int lo, int hi)
{
    int t = 1;

    while (t <= hi / 2) {
        t *= 2;
    }
    while ((hi / t) * t < lo) {
        t /= 2;
    }
    return (hi / t) * t;
}

/* The labels [L, R] of T for p ranks (p >= 3; see the header comment). */
static void tt_labels(int p, int *l_p, int *r_p)
{
    int even = (p - 1) & ~1;

    *l_p = (even % 4 == 2) ? 2 : 4;
    *r_p = *l_p + even - 1;
}

/* Srank at label q of tree b (0 = A, 1 = B), and back (1 <= sr <= N'). */
static int tt_srank(int q, int l, int b)
{
    return (q ^ b) - l + 1;
}
static int tt_label(int sr, int l, int b)
{
    return (sr + l - 1) ^ b;
}

/* Colour of the edge into label q of tree b. */
static int tt_colour(int q, int b)
{
    unsigned x = (unsigned)q >> 1;

    x ^= x >> 16;
    x ^= x >> 8;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return (int)(x & 1) ^ 1 ^ b;
}

/* The first round after f with the parity of colour c. */
static int tt_next(int f, int c)
{
    f++;
    return f + ((f ^ c) & 1);
}

static void tt_add_child(ucoll_twotree_t *t, int sr, int first, int root, int p)
{
    t->child[t->nchild] = ucoll__rank_of(sr, root, p);
    t->cfirst[t->nchild++] = first;
}

void ucoll__twotree_node(int sr, int p, int root, int b, ucoll_twotree_t *t)
{
    int n = p - 1, extra = (n & 1) ? n : 0; /* srank N when N is odd */
    int l, lo, hi, q, f = -1, depth = 0, parent = 0;

    t->nchild = 0;
    if (n == 1) { /* p = 2: srank 1 alone, below srank 0 in both trees */
        t->depth = sr;
        t->parent = sr ? root : -1;
        t->first = sr ? b : -1;
        if (sr == 0) {
            tt_add_child(t, 1, b, root, p);
        }
        return;
    }
    tt_labels(p, &lo, &hi);
    l = lo;
    if (sr == 0) {
        int m = maxlow(lo, hi);
        t->depth = 0;
        t->parent = -1;
        t->first = -1;
        tt_add_child(t, tt_srank(m, l, b), tt_next(f, tt_colour(m, b)), root, p);
        return;
    }
    /* down from the root to sr's label (srank N: to L, its parent) */
    q = (sr == extra) ? l : tt_label(sr, l, b);
    for (;;) {
        int m = maxlow(lo, hi);
        f = tt_next(f, tt_colour(m, b));
        depth++;
        if (m == q) {
            break;
        }
        parent = tt_srank(m, l, b);
        if (q < m) {
            hi = m - 1;
        } else {
            lo = m + 1;
        }
    }
    /* [lo, hi] is q's subtree now. L's right child maxlow(L + 1, hi) is
     * there (N' >= 2), and srank N's colour is the opposite of its. */
    if (sr == extra) {
        t->depth = depth + 1;
        t->parent = ucoll__rank_of(tt_srank(q, l, b), root, p);
        t->first = tt_next(f, !tt_colour(maxlow(q + 1, hi), b));
        return;
    }
    t->depth = depth;
    t->parent = ucoll__rank_of(parent, root, p);
    t->first = f;
    if (extra && q == l) {
        tt_add_child(t, extra, tt_next(f, !tt_colour(maxlow(q + 1, hi), b)), root, p);
    }
    if (lo <= q - 1) {
        int c = maxlow(lo, q - 1);
        tt_add_child(t, tt_srank(c, l, b), tt_next(f, tt_colour(c, b)), root, p);
    }
    if (q + 1 <= hi) {
        int c = maxlow(q + 1, hi);
        tt_add_child(t, tt_srank(c, l, b), tt_next(f, tt_colour(c, b)), root, p);
    }
}

int ucoll__twotree_height(int p)
{
    return ucoll__ceil_log2(p);
}

static size_t twotree_seg(const ucoll_algo_params_t *prm, size_t bytes, int p)
{
    return ucoll__pipeline_seg(prm, bytes, 2 * ucoll__ceil_log2(p));
}

/* F of the header comment: the latest round in which a rank gets tree A's
 * first segment. */
static int twotree_last_first(int p)
{
    int even = (p - 1) & ~1;

    return 2 * ucoll__ceil_log2(p) - 2 - (even >= 4 && even % 4 == 0);
}

static double twotree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize;
    size_t seg;
    double n;

    if (p == 1 || bytes == 0) {
        return 0;
    }
    seg = twotree_seg(prm, bytes, p);
    n = (double)((bytes + seg - 1) / seg);
    return (n + twotree_last_first(p)) * (m->alpha + (double)UCOLL_MIN(seg, bytes) * m->beta);
}

int ucoll__bcast_twotree_steps(ucoll_sched_t *s, char *buf, size_t bytes, size_t seg, int root)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, root, p);
    size_t nseg = (bytes + seg - 1) / seg, nt[2], last = 0;
    ucoll_twotree_t t[2];
    int st;

    /* tree b carries segments 2i + b, i < nt[b] */
    nt[0] = (nseg + 1) / 2;
    nt[1] = nseg / 2;
    for (int b = 0; b < 2; b++) {
        ucoll__twotree_node(sr, p, root, b, &t[b]);
        if (nt[b] > 0) {
            last = UCOLL_MAX(last, 2 * (nt[b] - 1) + (size_t)(t[b].first + 1));
            for (int c = 0; c < t[b].nchild; c++) {
                last = UCOLL_MAX(last, 2 * (nt[b] - 1) + (size_t)t[b].cfirst[c] + 1);
            }
        }
    }
    for (size_t k = 0; k < last; k++) {
        for (int b = 0; b < 2; b++) {
            /* receive segment i in round 2i + first, send it to child c in
             * round 2i + cfirst[c] */
            size_t f = (size_t)t[b].first;
            if (t[b].first >= 0 && k >= f && (k - f) % 2 == 0 && (k - f) / 2 < nt[b]) {
                size_t off = (2 * ((k - f) / 2) + (size_t)b) * seg;
                if ((st = ucoll__sched_recv(s, buf + off, UCOLL_MIN(seg, bytes - off),
                                            t[b].parent))) {
                    return st;
                }
            }
            for (int c = 0; c < t[b].nchild; c++) {
                f = (size_t)t[b].cfirst[c];
                if (k >= f && (k - f) % 2 == 0 && (k - f) / 2 < nt[b]) {
                    size_t off = (2 * ((k - f) / 2) + (size_t)b) * seg;
                    if ((st = ucoll__sched_send(s, buf + off, UCOLL_MIN(seg, bytes - off),
                                                t[b].child[c]))) {
                        return st;
                    }
                }
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

static int twotree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    size_t bytes = a->count * a->esize;
    int p = ucoll__sched_comm(s)->size;

    if (bytes == 0 || p == 1) {
        return UCOLL_OK;
    }
    return ucoll__bcast_twotree_steps(s, a->rbuf, bytes, twotree_seg(prm, bytes, p), a->root);
}

static void twotree_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           char *buf, size_t len)
{
    ucoll__params_words(buf, len, twotree_seg(prm, a->count * a->esize, p), 0);
}

const ucoll_algo_t ucoll__bcast_twotree = {
    .id = "twotree",
    .desc = "two complementary binary trees, edge-coloured: one segment in, one out per round",
    .cost = twotree_cost,
    .build = twotree_build,
    .params = twotree_params,
};
