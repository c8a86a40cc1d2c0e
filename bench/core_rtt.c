/*
 * core_rtt: the round trip of a cache line between two CPUs (default 0 and
 * 1): two threads, each pinned to one, hand a counter back and forth, and
 * the mean over 200,000 exchanges after 50,000 to warm up is printed in
 * nanoseconds. Shared-memory collectives move their data and flags through
 * the same lines, so this is a figure of the machine's state when a
 * benchmark ran: on a virtual machine the host may place two virtual CPUs
 * on cores that share a cache or not, and change it while a job runs
 * (here: 110-200 ns and 420-520 ns). bench/vs_mpi.sh records it beside
 * each run.
 *
 *   core_rtt [CPU_A CPU_B]     prints "core_rtt A-B: T ns", or "n/a" and
 *                              exits 1 where the CPUs cannot be had
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WARM  50000L
#define COUNT 200000L

static _Atomic long line __attribute__((aligned(64)));
static _Atomic int failed; /* the far side could not be pinned */
static int cpu_b;

static int pin(int cpu)
{
    cpu_set_t s;

    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* The far side: answers every odd value with the next even one. */
static void *answer(void *arg)
{
    (void)arg;
    if (pin(cpu_b) != 0) {
        atomic_store(&failed, 1);
        return NULL;
    }
    for (long i = 0; i < WARM + COUNT; i++) {
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int cpu_a = argc > 2 ? atoi(argv[1]) : 0;
    struct timespec t0 = {0}, t1;
    pthread_t t;

    cpu_b = argc > 2 ? atoi(argv[2]) : 1;
    if (pin(cpu_a) != 0 || pthread_create(&t, NULL, answer, NULL) != 0) {
        printf("core_rtt %d-%d: n/a\n", cpu_a, cpu_b);
        return 1;
    }
    for (long i = 0; i < WARM + COUNT; i++) {
        if (i == WARM) {
            clock_gettime(CLOCK_MONOTONIC, &t0);
        }
        atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2) {
            if (atomic_load_explicit(&failed, memory_order_relaxed)) {
                pthread_join(t, NULL);
                printf("core_rtt %d-%d: n/a\n", cpu_a, cpu_b);
                return 1;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    printf("core_rtt %d-%d: %.1f ns\n", cpu_a, cpu_b,
           ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / COUNT);
    return 0;
}
