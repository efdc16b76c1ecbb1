/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "runstate.h"

#define RUNSTATE_FILE_MAX ((size_t) 1 << 20)

static int refuse(char **reterr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(char **reterr, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(reterr, fmt, ap) < 0)
                *reterr = NULL;
        va_end(ap);
        return -EBADMSG;
}

/* <dir_fd>/<name> as a trusted JSON object: 0, -ENOENT, -EBADMSG. */
static int load_trusted(int dir_fd, const char *id, const char *name, json_t **ret, char **reterr)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        json_error_t jerr;
        struct stat st;
        size_t len;
        int r;

        fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return -ENOENT;
        if (fd < 0)
                return refuse(reterr, "%s/%s: %s", id, name, strerror(errno));
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return refuse(reterr, "%s/%s is not a regular file", id, name);
        if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return refuse(reterr, "%s/%s is owned by uid %u, mode %04o: not trusted", id, name,
                              (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        r = read_all_fd(fd, RUNSTATE_FILE_MAX, &text, &len);
        if (r < 0)
                return refuse(reterr, "%s/%s: %s", id, name, strerror(-r));
        *ret = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!*ret || !json_is_object(*ret)) {
                json_decref(*ret);
                return refuse(reterr, "%s/%s is not a JSON object: %s", id, name,
                              *ret ? "" : jerr.text);
        }
        return 0;
}

static bool is_uint(const json_t *v)
{
        return json_is_integer(v) && json_integer_value(v) > 0;
}

/* runc: the annotations and the bundle, both among config.labels. */
static int from_runc(json_t *st, const char *id, json_t *out, uint64_t *ret_start, char **reterr)
{
        json_t *pid = json_object_get(st, "init_process_pid");
        json_t *start = json_object_get(st, "init_process_start");
        json_t *labels = json_object_get(json_object_get(st, "config"), "labels");
        json_t *annotations = json_object_get(out, "annotations"), *v;
        size_t i;

        if (!is_uint(pid) || !is_uint(start) || (labels && !json_is_array(labels)))
                return refuse(reterr, "%s/state.json: no init_process_pid and start", id);
        json_array_foreach(labels, i, v) {
                const char *label = json_string_value(v), *eq = label ? strchr(label, '=') : NULL;
                json_t *value;

                if (!eq)
                        continue;
                value = json_string(eq + 1);
                if (strncmp(label, "bundle=", 7) == 0)
                        (void) json_object_set_new(out, "bundle", value);
                else
                        (void) json_object_setn_new(annotations, label, (size_t) (eq - label),
                                                    value);
        }
        *ret_start = (uint64_t) json_integer_value(start);
        return json_object_set(out, "pid", pid) < 0 ? -ENOMEM : 0;
}

/* crun: status, and the annotations of its copy of config.json. */
static int from_crun(int dir_fd, json_t *st, const char *id, json_t *out, uint64_t *ret_start,
                     char **reterr)
{
        json_auto_t *config = NULL;
        json_t *pid = json_object_get(st, "pid"),
               *start = json_object_get(st, "process-start-time");
        json_t *annotations;
        int r;

        if (!is_uint(pid) || !is_uint(start))
                return refuse(reterr, "%s/status: no pid and process-start-time", id);
        r = load_trusted(dir_fd, id, "config.json", &config, reterr);
        if (r < 0 && r != -ENOENT)
                return r;
        annotations = json_object_get(config, "annotations");
        if (json_is_object(annotations) && json_object_set(out, "annotations", annotations) < 0)
                return -ENOMEM;
        if (json_object_get(st, "bundle") &&
            json_object_set(out, "bundle", json_object_get(st, "bundle")) < 0)
                return -ENOMEM;
        *ret_start = (uint64_t) json_integer_value(start);
        return json_object_set(out, "pid", pid) < 0 ? -ENOMEM : 0;
}

int runstate_open_root(const char *root, int *ret_fd)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return -EPERM;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Is the bundle a record (runstate_read's JSON) names there, where it names
 * one? adopt takes no container whose bundle it cannot see. */
static bool bundle_is_there(const char *record)
{
        json_auto_t *st = json_loads(record, 0, NULL);
        const char *bundle = json_string_value(json_object_get(st, "bundle"));

        return st && (!bundle || access(bundle, F_OK) == 0);
}

int runstate_count(int root_fd, int *ret_readable)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int n = 0, readable = 0, r;

        r = opendir_at(root_fd, ".", &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_free_ char *record = NULL, *why = NULL;
                uint64_t start;

                r = runstate_read(root_fd, de->d_name, &record, &start, &why);
                if (r == -ENOENT) /* no container's directory */
                        continue;
                n++;
                readable += r >= 0 && bundle_is_there(record);
        }
        *ret_readable = readable;
        return n;
}

int runstate_read(int root_fd, const char *id, char **ret, uint64_t *ret_start_time, char **reterr)
{
        _cleanup_close_ int dir_fd = -EBADF;
        json_auto_t *st = NULL, *out = NULL;
        uint64_t start = 0;
        char *text;
        int r;

        *reterr = NULL;
        if (!name_is_valid(id))
                return -ENOENT;
        dir_fd = openat(root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0)
                return errno == ENOTDIR || errno == ELOOP || errno == ENOENT ? -ENOENT : -errno;
        out = json_pack("{s:s, s:s, s:s, s:{}}", "ociVersion", "1.0.2", "id", id, "status",
                        "running", "annotations");
        if (!out)
                return -ENOMEM;
        r = load_trusted(dir_fd, id, "state.json", &st, reterr);
        if (r >= 0)
                r = from_runc(st, id, out, &start, reterr);
        else if (r == -ENOENT) {
                r = load_trusted(dir_fd, id, "status", &st, reterr);
                if (r >= 0)
                        r = from_crun(dir_fd, st, id, out, &start, reterr);
        }
        if (r < 0)
                return r;
        text = json_dumps(out, JSON_COMPACT);
        if (!text)
                return -ENOMEM;
        *ret = text;
        *ret_start_time = start;
        return 0;
}
