/*
 * Streaming chosen by measurement (lib/progress/shm.h: ucoll__shm_adapt_pick
 * and ucoll__shm_adapt_record) on a machine whose times this test makes
 * up: the order of the first calls, the better way taken and the other
 * tried every UCOLL_SHM_ADAPT_TRY-th call, slow calls and a difference
 * within the margin that do not turn it, and a machine that changes,
 * followed both ways. Then the ways of the reductions
 * (ucoll__shm_way_pick), which every rank must take alike: three ranks
 * whose calls run in every order the shm calls allow (a rank makes call n
 * only once every other is through call n-2), rank 0 measuring on a
 * machine that changes, take the same way at every call, and follow rank
 * 0's measurement within UCOLL_SHM_ADAPT_SPARSE + 1 rounds (the other
 * way, twice as slow, is tried in one round of UCOLL_SHM_ADAPT_SPARSE);
 * one 1.1x as slow is tried in every round; with turn, the way changes at
 * every round. The ways decide on the second least of their kept times:
 * one call of the slower way that ran quick does not turn the choice, two
 * do. Then the rows of duelled calls (ucoll__shm_duel_pick) alike: the
 * same row on every rank at every call, rank 0's measurement followed,
 * tries of UCOLL_SHM_DUEL_TRY calls whose first is not timed, nor the
 * first call after them.
 */
#include "progress/shm.h"

#include "tests/expect.h"

/* Run n calls of ad on a machine where a streamed call takes ts and a plain
 * one tp (per byte), every call `spike` (if set) taking 50x; returns how
 * many went streamed. */
static int run(ucoll_shm_adapt_t *ad, int n, float ts, float tp, int spike)
{
    int streamed = 0;

    for (int i = 0; i < n; i++) {
        int c = ucoll__shm_adapt_pick(ad);
        float x = c != 0 ? ts : tp;

        if (spike && i % spike == spike - 1) {
            x *= 50;
        }
        streamed += c != 0;
        if (c >= 0) {
            ucoll__shm_adapt_record(ad, c, x);
        }
    }
    return streamed;
}

#define RANKS 3
#define CALLS (40 * UCOLL_SHM_ADAPT_TRY)

/* The model's way (1) is quicker but in calls [from, to), measured by rank 0,
 * the slower taking `slower` times the time. Runs the calls of RANKS ranks
 * in an order drawn from seed; way[r][n]: the way rank r took at call n
 * (-1 counted as the model's). */
static void way_run(int way[RANKS][CALLS], unsigned seed, int turn, int from, int to, float slower)
{
    ucoll_shm_adapt_t ad[RANKS] = {{{{0}}}};
    _Atomic uint64_t word = 0;
    int next[RANKS] = {0};

    for (int left = RANKS * CALLS; left > 0;) {
        int r, n, ok = 1;

        seed = seed * 1103515245u + 12345u;
        r = (int)((seed >> 16) % RANKS);
        n = next[r];
        for (int q = 0; q < RANKS && n < CALLS; q++) {
            ok &= q == r || next[q] >= n - 1; /* q through call n-2 */
        }
        if (n == CALLS || !ok) {
            continue;
        }
        way[r][n] = ucoll__shm_way_pick(&ad[r], r == 0, &word, turn);
        if (r == 0 && way[r][n] >= 0) {
            int slow = n >= from && n < to ? way[r][n] : !way[r][n];

            ucoll__shm_adapt_record(&ad[0], way[r][n], slow ? slower : 1.0f);
        }
        way[r][n] = way[r][n] != 0;
        next[r]++;
        left--;
    }
}

static void way_agreement(void)
{
    static int way[RANKS][CALLS];
    const int T = UCOLL_SHM_ADAPT_TRY, S = UCOLL_SHM_ADAPT_SPARSE, from = 10 * T + 5,
              to = 25 * T + 7;

    for (unsigned seed = 1; seed <= 20; seed++) {
        int bad = -1, late = 0, changes = 0, tries = 0;

        way_run(way, seed, 0, from, to, 2.0f);
        for (int n = 0; n < CALLS && bad < 0; n++) {
            if (way[1][n] != way[0][n] || way[2][n] != way[0][n]) {
                bad = n;
            }
        }
        EXPECT_MSG(bad < 0, "seed %u: ranks took different ways at call %d", seed, bad);
        /* the other way from the (S+1)-th round after the change until the
         * (S+1)-th round after it changes back, but the tries: the way
         * that turns quicker was twice as slow, so tried in one round of
         * S */
        for (int n = (from / T + S + 1) * T; n < (to / T + 1) * T; n++) {
            late += n % T != 0 && way[0][n] != 0;
        }
        for (int n = (to / T + S + 1) * T; n < CALLS; n++) {
            late += n % T != 0 && way[0][n] != 1;
            tries += n % T == 0 && way[0][n] != 1;
        }
        EXPECT_MSG(late == 0, "seed %u: %d calls late to follow rank 0's measurement", seed, late);
        EXPECT_MSG(tries >= (CALLS / T - to / T - S - 1) / S - 1 &&
                       tries <= (CALLS / T - to / T - S - 1) / S + 1,
                   "seed %u: %d tries of a way twice as slow in %d rounds", seed, tries,
                   CALLS / T - to / T - S - 1);

        /* a way 1.1x as slow: tried in every round */
        way_run(way, seed, 0, CALLS, CALLS, 1.1f);
        tries = 0;
        for (int n = 2 * T; n < CALLS; n++) {
            tries += n % T == 0 && way[0][n] != 1;
            late += n % T != 0 && way[0][n] != 1;
        }
        EXPECT_MSG(late == 0 && tries == CALLS / T - 2, "seed %u: %d tries, %d calls off the way",
                   seed, tries, late);

        way_run(way, seed, 1, 0, 0, 2.0f);
        for (int n = 2 * T + 1; n < CALLS; n++) {
            changes += n % T == 1 && way[0][n] != way[0][n - T];
            bad = way[1][n] != way[0][n] || way[2][n] != way[0][n] ? n : bad;
        }
        EXPECT_MSG(bad < 0 && changes == CALLS / T - 2,
                   "seed %u, turn: %d changes of way, ranks apart at call %d", seed, changes, bad);
    }
}

/* The first calls of a reduction's way (ucoll__shm_way_pick alone, as
 * rank 0 of one): the model's way takes 1.0, the other other[i] at its
 * i-th timed call; returns the way rank 0 then takes. */
static int way_first(const float other[UCOLL_SHM_ADAPT_KEEP])
{
    ucoll_shm_adapt_t ad = {0};
    _Atomic uint64_t word = 0;
    int k = 0;

    for (int n = 0; n < 2 + 2 * UCOLL_SHM_ADAPT_KEEP; n++) {
        int c = ucoll__shm_way_pick(&ad, 1, &word, 0);

        if (c >= 0) {
            ucoll__shm_adapt_record(&ad, c, c ? 1.0f : other[k++]);
        }
    }
    return ad.best;
}

static void way_lucky(void)
{
    const float one[UCOLL_SHM_ADAPT_KEEP] = {1.5f, 0.5f, 1.5f, 1.5f};
    const float two[UCOLL_SHM_ADAPT_KEEP] = {1.5f, 0.5f, 1.5f, 0.6f};
    const float all[UCOLL_SHM_ADAPT_KEEP] = {0.7f, 0.7f, 0.7f, 0.7f};

    EXPECT_MSG(way_first(one) == 1, "one quick call of the slower way turned the choice");
    EXPECT_MSG(way_first(two) == 0, "two quick calls of the other way did not turn it");
    EXPECT_MSG(way_first(all) == 0, "a quicker other way not taken");
}

/* Duelled calls of RANKS ranks in an order drawn from seed (a rank takes
 * call n's row once every other has taken call n-1's: its calls before n
 * have ended, each with every rank in it); the rival (0) takes `slower`
 * times the shm row's time in calls [from, to), 1/slower outside. row[r][n]:
 * the row rank r took at call n; timed[n]: rank 0 timed call n. */
static void duel_run(int row[RANKS][CALLS], int timed[CALLS], unsigned seed, int turn, int from,
                     int to, float slower)
{
    ucoll_shm_adapt_t ad[RANKS] = {{{{0}}}};
    _Atomic uint64_t word = 0;
    int next[RANKS] = {0};

    for (int left = RANKS * CALLS; left > 0;) {
        int r, n, ok = 1, t;

        seed = seed * 1103515245u + 12345u;
        r = (int)((seed >> 16) % RANKS);
        n = next[r];
        for (int q = 0; q < RANKS && n < CALLS; q++) {
            ok &= q == r || next[q] >= n;
        }
        if (n == CALLS || !ok) {
            continue;
        }
        row[r][n] = ucoll__shm_duel_pick(&ad[r], r == 0, &word, turn, &t);
        if (r == 0) {
            timed[n] = t;
            if (t) {
                float x = row[r][n] ? 1.0f : n >= from && n < to ? slower : 1.0f / slower;

                ucoll__shm_adapt_record(&ad[0], row[r][n], x);
            }
        }
        next[r]++;
        left--;
    }
}

static void duel_agreement(void)
{
    static int row[RANKS][CALLS], timed[CALLS];
    const int T = UCOLL_SHM_ADAPT_TRY, D = UCOLL_SHM_DUEL_TRY, S = UCOLL_SHM_ADAPT_SPARSE;
    const int from = 10 * T + 5, to = 25 * T + 7;

    for (unsigned seed = 1; seed <= 20; seed++) {
        int bad = -1, late = 0, off = 0, badt = -1;

        /* the rival twice as slow in [from, to), twice as quick elsewhere */
        duel_run(row, timed, seed, 0, from, to, 2.0f);
        for (int n = 0; n < CALLS && bad < 0; n++) {
            if (row[1][n] != row[0][n] || row[2][n] != row[0][n]) {
                bad = n;
            }
        }
        EXPECT_MSG(bad < 0, "seed %u: ranks took different rows at call %d", seed, bad);
        /* the first calls: 2 warm up (shm, untimed), D rival, D shm, the
         * first of each untimed */
        for (int n = 0; n < 2 + 2 * D; n++) {
            int want = n < 2 || n >= 2 + D, wt = n >= 2 && (n - 2) % D != 0;

            badt = row[0][n] != want || timed[n] != wt ? n : badt;
        }
        EXPECT_MSG(badt < 0, "seed %u: call %d of the first ones: row %d, timed %d", seed, badt,
                   row[0][badt < 0 ? 0 : badt], timed[badt < 0 ? 0 : badt]);
        /* the rival from the second round on, but tries of the shm row
         * (twice as slow: in one round of S), until the (S+1)-th round
         * after the change; then the shm row, the rival tried */
        for (int n = 2 * T; n < (from / T) * T; n++) {
            late += n % T >= D && row[0][n] != 0;
        }
        for (int n = (from / T + S + 1) * T; n < (to / T) * T; n++) {
            late += n % T >= D && row[0][n] != 1;
        }
        for (int n = (to / T + S + 1) * T; n < CALLS; n++) {
            late += n % T >= D && row[0][n] != 0;
            off += n % T < D && n % T != 0 && row[0][n] == 0 && row[0][n - n % T] != 0;
        }
        EXPECT_MSG(late == 0 && off == 0, "seed %u: %d calls off the measured row, %d tries split",
                   seed, late, off);
        /* a try's first call and the first after it are not timed */
        badt = -1;
        for (int n = 2 * T; n < CALLS; n++) {
            int i = n % T;
            int tried = row[0][n - i + 1] != row[0][n - i + D];

            if ((i == 0 || (tried && i == D)) && timed[n]) {
                badt = n;
            }
        }
        EXPECT_MSG(badt < 0, "seed %u: call %d, first of a row, timed", seed, badt);

        /* turn: the row changes every round, on every rank alike */
        duel_run(row, timed, seed, 1, 0, 0, 2.0f);
        bad = -1;
        late = 0;
        for (int n = 2 * T + 1; n < CALLS; n++) {
            late += n % T == 1 && row[0][n] == row[0][n - T];
            bad = row[1][n] != row[0][n] || row[2][n] != row[0][n] ? n : bad;
        }
        EXPECT_MSG(bad < 0 && late == 0, "seed %u, turn: %d rounds unchanged, ranks apart at %d",
                   seed, late, bad);
    }
}

int main(void)
{
    ucoll_shm_adapt_t ad = {0};
    int s;

    /* first calls: two warm up (streamed, untimed), then the ways in turn,
     * UCOLL_SHM_ADAPT_KEEP times each */
    EXPECT(ucoll__shm_adapt_pick(&ad) == -1);
    EXPECT(ucoll__shm_adapt_pick(&ad) == -1);
    for (int i = 0; i < 2 * UCOLL_SHM_ADAPT_KEEP; i++) {
        int c = ucoll__shm_adapt_pick(&ad);

        EXPECT_MSG(c == !(i & 1), "call %d: way %d", i + 2, c);
        ucoll__shm_adapt_record(&ad, c, c ? 2.0f : 1.0f);
    }
    EXPECT_MSG(ad.best == 0, "plain measured quicker");

    /* plain stays the better way: the other only every TRY-th call */
    s = run(&ad, 16 * UCOLL_SHM_ADAPT_TRY, 2.0f, 1.0f, 0);
    EXPECT_MSG(s == 16, "%d of %d streamed", s, 16 * UCOLL_SHM_ADAPT_TRY);
    EXPECT(ad.best == 0);

    /* one call in 8 of either way 50x slower (a peer late): the least of
     * the last few ignores it */
    s = run(&ad, 16 * UCOLL_SHM_ADAPT_TRY, 2.0f, 1.0f, 8);
    EXPECT_MSG(ad.best == 0 && s <= 17, "best %d, %d streamed", ad.best, s);

    /* streaming 5% quicker: within the margin, plain stays */
    run(&ad, 16 * UCOLL_SHM_ADAPT_TRY, 0.95f, 1.0f, 0);
    EXPECT_MSG(ad.best == 0, "turned by a 5%% difference");

    /* the machine changes: streaming is now the quicker way. Taken at the
     * next try of it, and then kept */
    {
        int i;

        for (i = 1; i <= 4 * UCOLL_SHM_ADAPT_TRY && ad.best != 1; i++) {
            run(&ad, 1, 0.5f, 1.0f, 0);
        }
        EXPECT_MSG(ad.best == 1 && i <= UCOLL_SHM_ADAPT_TRY + 1, "streaming taken after %d calls",
                   i - 1);
        s = run(&ad, 16 * UCOLL_SHM_ADAPT_TRY, 0.5f, 1.0f, 0);
        EXPECT_MSG(s == 16 * UCOLL_SHM_ADAPT_TRY - 16, "%d of %d streamed", s,
                   16 * UCOLL_SHM_ADAPT_TRY);
    }

    /* and back: once streaming's last few calls are all slower */
    {
        int i;

        for (i = 1; i <= 4 * UCOLL_SHM_ADAPT_TRY && ad.best != 0; i++) {
            run(&ad, 1, 1.5f, 1.0f, 0);
        }
        EXPECT_MSG(ad.best == 0 && i <= UCOLL_SHM_ADAPT_KEEP + 2, "plain taken again after %d calls",
                   i - 1);
    }
    way_lucky();
    way_agreement();
    duel_agreement();
    if (failures == 0) {
        printf("shm-adapt: ok\n");
    }
    return failures != 0;
}
