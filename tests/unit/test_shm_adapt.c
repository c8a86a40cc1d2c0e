/*
 * Streaming chosen by measurement (lib/progress/shm.h: ucoll__shm_adapt_pick
 * and ucoll__shm_adapt_record) on a machine whose times this test makes
 * up: the order of the first calls, the better way taken and the other
 * tried every UCOLL_SHM_ADAPT_TRY-th call, slow calls and a difference
 * within the margin that do not turn it, and a machine that changes,
 * followed both ways.
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
    if (failures == 0) {
        printf("shm-adapt: ok\n");
    }
    return failures != 0;
}
