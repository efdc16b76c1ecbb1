/* SPDX-License-Identifier: Apache-2.0 */
/* idle_threads N: a process of N threads that all sleep until it is killed,
 * standing in for a containerised server (scripts/bench.sh). Small stacks, so
 * that thousands of them fit on a test machine. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *idle(void *arg)
{
        (void) arg;
        for (;;)
                pause();
        return NULL;
}

int main(int argc, char **argv)
{
        pthread_attr_t attr;
        char *end;
        long n;

        n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
        if (argc != 2 || *end || n < 1 || n > 10000) {
                fprintf(stderr, "usage: idle_threads N (1..10000)\n");
                return 2;
        }
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
        for (long i = 1; i < n; i++) {
                pthread_t t;
                int r = pthread_create(&t, &attr, idle, NULL);

                if (r != 0) {
                        fprintf(stderr, "idle_threads: thread %ld: %s\n", i, strerror(r));
                        return 1;
                }
        }
        idle(NULL);
}
