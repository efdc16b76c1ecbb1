/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p)
{
        free(*(void **) p);
}

/* Closing must not clobber the errno that the caller is about to report. */
static inline void closep(const int *fd)
{
        if (*fd >= 0) {
                int saved_errno = errno;

                (void) close(*fd);
                errno = saved_errno;
        }
}

static inline void fclosep(FILE **f)
{
        if (*f) {
                int saved_errno = errno;

                (void) fclose(*f);
                errno = saved_errno;
        }
}

static inline void closedirp(DIR **d)
{
        if (*d) {
                int saved_errno = errno;

                (void) closedir(*d);
                errno = saved_errno;
        }
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Closes fd if it is open, errno kept (as closep); -EBADF, to store back:
 * fd = safe_close(fd). */
static inline int safe_close(int fd)
{
        closep(&fd);
        return -EBADF;
}
#define _cleanup_fclose_ _cleanup_(fclosep)

#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _fd = (fd);                                                                    \
                (fd) = -EBADF;                                                                     \
                _fd;                                                                               \
        })
#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _p = (p);                                                            \
                (p) = NULL;                                                                        \
                _p;                                                                                \
        })

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static inline bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}
