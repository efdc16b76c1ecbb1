/* SPDX-License-Identifier: Apache-2.0 */
/* Runs a fuzz target's entry point once on each file named on the command
 * line, or on each file of a named directory: the corpus as a regression test
 * in builds without libFuzzer (gcc, valgrind). */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "fuzz.h"

#define INPUT_MAX (16u << 20)

static int replay_file(int dir_fd, const char *name)
{
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        r = read_file_at(dir_fd, name, INPUT_MAX, &buf, &len);
        if (r < 0)
                return r;
        (void) LLVMFuzzerTestOneInput((const uint8_t *) buf, len);
        return 0;
}

static int replay_dir(const char *path, unsigned *n)
{
        DIR *d = opendir(path);
        struct dirent *de;
        int r = 0;

        if (!d)
                return -errno;
        while (r >= 0 && (de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                r = replay_file(dirfd(d), de->d_name);
                (*n)++;
        }
        closedir(d);
        return r;
}

int main(int argc, char **argv)
{
        unsigned n = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                int r;

                if (stat(argv[i], &st) < 0) {
                        perror(argv[i]);
                        return EXIT_FAILURE;
                }
                if (S_ISDIR(st.st_mode)) {
                        r = replay_dir(argv[i], &n);
                } else {
                        r = replay_file(AT_FDCWD, argv[i]);
                        n++;
                }
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
        }
        printf("%u inputs replayed\n", n);
        return n > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
