/* Unit test of the settings table: sizes, enums, bad values, defaults. */
#include "config.h"
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/expect.h"

int main(void)
{
    ucoll_config_t cfg;
    size_t sz = 0;

    EXPECT(ucoll__parse_size("8192", &sz) == 0 && sz == 8192);
    EXPECT(ucoll__parse_size("64k", &sz) == 0 && sz == 65536);
    EXPECT(ucoll__parse_size("4M", &sz) == 0 && sz == 4u << 20);
    EXPECT(ucoll__parse_size("1gb", &sz) == 0 && sz == 1u << 30);
    EXPECT(ucoll__parse_size("", &sz) != 0);
    EXPECT(ucoll__parse_size("-1", &sz) != 0);
    EXPECT(ucoll__parse_size("12q", &sz) != 0);

    unsetenv("UCOLL_EAGER_LIMIT");
    setenv("UCOLL_LOG_LEVEL", "error", 1);
    EXPECT(ucoll__config_read(&cfg) == UCOLL_OK);
    EXPECT(cfg.eager_limit == 65536 && cfg.wait_mode == UCOLL_WAIT_AUTO);
    EXPECT(cfg.algo[UCOLL_COLL_BCAST] == NULL);
    ucoll__config_release(&cfg);

    setenv("UCOLL_EAGER_LIMIT", "16k", 1);
    setenv("UCOLL_WAIT", "BLOCK", 1);
    setenv("UCOLL_BCAST_ALGO", "binomial", 1);
    setenv("UCOLL_TIMEOUT", "2.5", 1);
    EXPECT(ucoll__config_read(&cfg) == UCOLL_OK);
    EXPECT(cfg.eager_limit == 16384 && cfg.wait_mode == UCOLL_WAIT_BLOCK);
    EXPECT(cfg.algo[UCOLL_COLL_BCAST] && !strcmp(cfg.algo[UCOLL_COLL_BCAST], "binomial"));
    EXPECT(cfg.timeout == 2.5);
    ucoll__config_release(&cfg);
    EXPECT(cfg.algo[UCOLL_COLL_BCAST] == NULL);

    setenv("UCOLL_WAIT", "sometimes", 1);
    EXPECT(ucoll__config_read(&cfg) == UCOLL_ERR_ARG);
    setenv("UCOLL_WAIT", "spin", 1);
    setenv("UCOLL_SPIN_TIME", "-3", 1);
    EXPECT(ucoll__config_read(&cfg) == UCOLL_ERR_ARG);
    setenv("UCOLL_WAIT", "yield", 1);
    unsetenv("UCOLL_SPIN_TIME");
    EXPECT(ucoll__config_read(&cfg) == UCOLL_OK && cfg.wait_mode == UCOLL_WAIT_YIELD);
    ucoll__config_release(&cfg);
    setenv("UCOLL_WAIT", "spin", 1);
    setenv("UCOLL_STATS", "maybe", 1);
    EXPECT(ucoll__config_read(&cfg) == UCOLL_ERR_ARG);
    unsetenv("UCOLL_STATS");
    EXPECT(ucoll__config_read(&cfg) == UCOLL_OK);
    EXPECT(cfg.wait_mode == UCOLL_WAIT_SPIN);
    ucoll__config_release(&cfg);

    /* out of range, and algorithm ids that do not exist, fail at init */
    {
        static const char *bad[][2] = {
            {"UCOLL_RADIX", "1"},           {"UCOLL_RADIX", "5000"},
            {"UCOLL_SEGMENT_SIZE", "8"},    {"UCOLL_EAGER_LIMIT", "100g"},
            {"UCOLL_SPIN_TIME", "99999999"}, {"UCOLL_MODEL_ALPHA", "5"},
            {"UCOLL_BCAST_ALGO", "nosuch"}, {"UCOLL_ALLREDUCE_ALGO", "binomial"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            setenv(bad[i][0], bad[i][1], 1);
            EXPECT(ucoll__config_read(&cfg) == UCOLL_ERR_ARG);
            unsetenv(bad[i][0]);
        }
        setenv("UCOLL_RADIX", "0", 1);
        setenv("UCOLL_SEGMENT_SIZE", "64", 1);
        setenv("UCOLL_ALLREDUCE_ALGO", "ring", 1);
        EXPECT(ucoll__config_read(&cfg) == UCOLL_OK && cfg.radix == 0 && cfg.seg_size == 64);
        ucoll__config_release(&cfg);
        setenv("UCOLL_RADIX", "2", 1);
        EXPECT(ucoll__config_read(&cfg) == UCOLL_OK && cfg.radix == 2);
        ucoll__config_release(&cfg);
        unsetenv("UCOLL_RADIX");
        unsetenv("UCOLL_SEGMENT_SIZE");
        unsetenv("UCOLL_ALLREDUCE_ALGO");
    }

    if (failures) {
        printf("test_config: %d failed\n", failures);
        return 1;
    }
    printf("test_config: all passed\n");
    return 0;
}
