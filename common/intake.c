/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "intake.h"
#include "macro.h"
#include "statedir.h"

/* A record names one container of a pod: a few hundred bytes. */
#define INTAKE_FILE_MAX ((size_t) 64 << 10)

/* FNV-1a, 64 bits: a name for an id that makes none. */
static uint64_t fnv1a(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ULL;

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
        return h;
}

int intake_prepare(int state_fd, const char *uid, const char *id, const struct pod_state *st,
                   struct intake *ret)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        int n, r;

        *ret = (struct intake) INTAKE_INIT;
        n = snprintf(ret->name, sizeof(ret->name), "%s%s%s", uid, STATEDIR_INTAKE_INFIX, id);
        /* runc takes ids of up to 1024 characters; the record holds the id. */
        if (!name_is_valid(id) || n < 0 || (size_t) n >= sizeof(ret->name))
                (void) snprintf(ret->name, sizeof(ret->name), "%s%s~%016" PRIx64, uid,
                                STATEDIR_INTAKE_INFIX, fnv1a(id));
        r = pod_state_format(st, uid, &text);
        if (r < 0)
                return r;
        fd = openat(state_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = write_all(fd, text, strlen(text));
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r < 0)
                return r;
        (void) snprintf(ret->fd_path, sizeof(ret->fd_path), "/proc/self/fd/%d", fd);
        ret->state_fd = state_fd;
        ret->fd = TAKE_FD(fd);
        return 0;
}

int intake_commit(const struct intake *in)
{
        if (in->fd < 0)
                return -EBADF;
        /* Through /proc: AT_EMPTY_PATH would want CAP_DAC_READ_SEARCH. */
        if (linkat(AT_FDCWD, in->fd_path, in->state_fd, in->name, AT_SYMLINK_FOLLOW) < 0)
                return -errno;
        return 0;
}

void intake_discard(struct intake *in)
{
        closep(&in->fd);
        in->fd = -EBADF;
}

void intake_names_free(char **names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

static int name_compare(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int intake_list(int state_fd, const char *uid, char ***ret, size_t *ret_n)
{
        _cleanup_(closedirp) DIR *d = NULL;
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        int r;

        r = opendir_at(state_fd, ".", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                char of[POD_UID_LEN + 1];
                char **a;

                if (!statedir_parse_intake_name(de->d_name, of) || strcmp(of, uid) != 0)
                        continue;
                a = realloc(names, (n + 1) * sizeof(*a));
                if (!a || !(a[n] = strdup(de->d_name))) {
                        intake_names_free(a ? a : names, n);
                        return -ENOMEM;
                }
                names = a;
                n++;
        }
        if (errno != 0) {
                r = -errno;
                intake_names_free(names, n);
                return r;
        }
        if (n > 1) /* qsort wants an array, even of nothing */
                qsort(names, n, sizeof(*names), name_compare);
        *ret = names;
        *ret_n = n;
        return 0;
}

int intake_load(int state_fd, const char *name, const char *uid, struct pod_state *ret,
                char **reterr)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = read_file_at(state_fd, name, INTAKE_FILE_MAX, &text, &len);
        if (r == -EFBIG || r == -EINVAL) {
                if (reterr)
                        *reterr = strdup(r == -EFBIG ? "larger than 64 KiB" : "not a file");
                return -EBADMSG;
        }
        if (r < 0)
                return r;
        r = pod_state_parse(text, len, uid, ret, reterr);
        if (r < 0)
                return r;
        if (ret->n_members != 1) {
                pod_state_done(ret);
                if (reterr)
                        *reterr = strdup("not exactly one container");
                return -EBADMSG;
        }
        return 0;
}

int intake_view(int state_fd, const char *uid, uint64_t pid_ns, const char *boot_id,
                struct pod_state *st)
{
        char **names = NULL;
        size_t n = 0;
        int r, added = 0;

        r = intake_list(state_fd, uid, &names, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_(pod_state_done) struct pod_state in = {0};

                /* Gone meanwhile, taken in, or one no pass here takes in. */
                if (intake_load(state_fd, names[i], uid, &in, NULL) < 0 ||
                    pod_state_find_member(st, in.members[0].id) ||
                    pod_state_of_other_boot(&in, boot_id, pid_ns) ||
                    !pod_state_pids_are_ours(&in, pid_ns))
                        continue;
                r = pod_state_copy_member(st, &in.members[0]);
                if (r >= 0 && !st->namespace)
                        r = pod_state_set_pod(st, in.namespace, in.pod_name);
                if (r < 0)
                        break;
                added++;
        }
        intake_names_free(names, n);
        return r < 0 ? r : added;
}
