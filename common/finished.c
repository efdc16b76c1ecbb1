/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "finished.h"
#include "fsutil.h"
#include "lock.h"
#include "macro.h"

/* Only a holder of the directory's lock writes it: one name does. */
#define FINISHED_TEMP ".record.tmp"
#define NS_PER_SEC INT64_C(1000000000)
/* <uid>.<created_ms, up to 19 digits>.<16 hex digits>, the NUL. */
#define RECORD_NAME_SIZE (POD_UID_LEN + 1 + 19 + 1 + 16 + 1)

/* A record's file, as the directory lists it. */
struct record_file {
        int64_t written_ns; /* its mtime */
        off_t size;
        char name[RECORD_NAME_SIZE];
};

void finished_pod_done(struct finished_pod *f)
{
        free(f->namespace);
        free(f->pod_name);
        free(f->group.ctrl);
        pod_state_group_clear_baseline(&f->group);
        free(f->rd);
        *f = (struct finished_pod){0};
}

static int strdup_or_null(const char *s, char **ret)
{
        *ret = s ? strdup(s) : NULL;
        return s && !*ret ? -ENOMEM : 0;
}

int finished_pod_init(struct finished_pod *f, const char *uid, const struct pod_state *st,
                      const struct group *g)
{
        int r;

        *f = (struct finished_pod){.created_ms = g->created_ms, .removed_ms = now_unix_ms()};
        (void) snprintf(f->uid, sizeof(f->uid), "%s", uid);
        r = strdup_or_null(st->namespace, &f->namespace);
        if (r >= 0)
                r = strdup_or_null(st->pod_name, &f->pod_name);
        if (r >= 0)
                r = strdup_or_null(g->ctrl, &f->group.ctrl);
        for (size_t i = 0; r >= 0 && i < g->n_baseline; i++)
                r = pod_state_group_set_baseline(&f->group, g->baseline[i].key,
                                                 &g->baseline[i].value);
        return r;
}

/* --- the record's text --------------------------------------------------- */

static json_t *json_string_or_null(const char *s)
{
        return s ? json_string(s) : json_null();
}

static json_t *format_counters(const struct finished_pod *f)
{
        json_auto_t *o = json_object();

        for (size_t i = 0; o && i < f->n_rd; i++) {
                const struct counter_reading *rd = &f->rd[i];
                char key[2 * NAME_MAX + 2], text[COUNTER_VALUE_STRLEN];

                /* A text that did not parse has no word a reader of
                 * another version knows: it would cost the whole record. */
                if (rd->state == COUNTER_UNPARSED)
                        continue;
                (void) snprintf(key, sizeof(key), "%s/%s", rd->domain, rd->name);
                if (rd->state != COUNTER_OK)
                        (void) snprintf(text, sizeof(text), "%s",
                                        counter_state_to_string(rd->state));
                else if (counter_value_format(&rd->value, text, sizeof(text)) < 0)
                        return NULL;
                if (json_object_set_new(o, key, json_string(text)) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

int finished_format(const struct finished_pod *f, char **ret)
{
        json_auto_t *o = NULL;
        char *text;

        o = json_pack("{s:i, s:s, s:o, s:o, s:s, s:o, s:I, s:o, s:o}", "version", FINISHED_VERSION,
                      "uid", f->uid, "namespace", json_string_or_null(f->namespace), "pod",
                      json_string_or_null(f->pod_name), "ctrl", f->group.ctrl, "created_ms",
                      f->created_ms > 0 ? json_integer(f->created_ms) : json_null(), "removed_ms",
                      (json_int_t) f->removed_ms, "counters", format_counters(f), "baseline",
                      pod_state_baseline_to_json(&f->group));
        if (!o)
                return -ENOMEM;
        text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        *ret = text;
        return 0;
}

__attribute__((format(printf, 2, 3))) static int bad_record(char **reterr, const char *fmt, ...)
{
        va_list ap;

        if (reterr) {
                va_start(ap, fmt);
                if (vasprintf(reterr, fmt, ap) < 0)
                        *reterr = NULL;
                va_end(ap);
        }
        return -EBADMSG;
}

static int compare_readings(const void *a, const void *b)
{
        const struct counter_reading *x = a, *y = b;
        int c = strcmp(x->domain, y->domain);

        return c ? c : strcmp(x->name, y->name);
}

/* "<domain>/<event>": "<the kernel's text>" into a reading. */
static int parse_reading(const char *key, json_t *v, struct counter_reading *rd)
{
        const char *slash = strchr(key, '/');
        size_t domain_len = slash ? (size_t) (slash - key) : 0;

        if (!slash || domain_len > NAME_MAX || strlen(slash + 1) > NAME_MAX || !json_is_string(v))
                return -EINVAL;
        memcpy(rd->domain, key, domain_len);
        rd->domain[domain_len] = '\0';
        (void) snprintf(rd->name, sizeof(rd->name), "%s", slash + 1);
        if (!name_is_valid(rd->domain) || !name_is_valid(rd->name) ||
            strchr(json_string_value(v), '\n') ||
            counter_text_parse(json_string_value(v), &rd->state, &rd->value) < 0)
                return -EINVAL;
        counter_describe(rd->name, &rd->kind, &rd->unit);
        return 0;
}

static int parse_counters(json_t *o, struct finished_pod *f, char **reterr)
{
        const char *key;
        json_t *v;

        if (!json_is_object(o))
                return bad_record(reterr, "counters must be an object");
        if (json_object_size(o) > COUNTERS_MAX)
                return bad_record(reterr, "too many counters");
        f->rd = calloc(json_object_size(o) + 1, sizeof(*f->rd));
        if (!f->rd)
                return -ENOMEM;
        json_object_foreach(o, key, v) {
                if (parse_reading(key, v, &f->rd[f->n_rd]) < 0)
                        return bad_record(
                            reterr, "counter '%s' is not <domain>/<event>: counter text", key);
                f->n_rd++;
        }
        qsort(f->rd, f->n_rd, sizeof(*f->rd), compare_readings);
        return 0;
}

static int dup_string_or_null(json_t *v, const char *what, char **ret, char **reterr)
{
        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return bad_record(reterr, "%s must be a string or null", what);
        return strdup_or_null(json_string_value(v), ret);
}

static int parse_record(json_t *o, struct finished_pod *f, char **reterr)
{
        json_t *namespace = NULL, *pod = NULL, *created_ms = NULL, *counters, *baseline = NULL;
        json_int_t version, removed_ms;
        const char *uid, *ctrl;
        json_error_t jerr;
        int r;

        if (json_unpack_ex(o, &jerr, 0, "{s:I, s:s, s?o, s?o, s:s, s?o, s:I, s:o, s?o}", "version",
                           &version, "uid", &uid, "namespace", &namespace, "pod", &pod, "ctrl",
                           &ctrl, "created_ms", &created_ms, "removed_ms", &removed_ms, "counters",
                           &counters, "baseline", &baseline) < 0)
                return bad_record(reterr, "%s", jerr.text);
        if (version != FINISHED_VERSION)
                return bad_record(reterr, "version %" JSON_INTEGER_FORMAT " is not %d", version,
                                  FINISHED_VERSION);
        if (pod_uid_canonicalise(uid, f->uid) < 0 || strcmp(uid, f->uid) != 0)
                return bad_record(reterr, "uid '%s' is not a canonical pod UID", uid);
        if (created_ms && !json_is_null(created_ms) &&
            (!json_is_integer(created_ms) || json_integer_value(created_ms) <= 0))
                return bad_record(reterr, "created_ms must be an integer > 0 or null");
        if (removed_ms <= 0)
                return bad_record(reterr, "removed_ms must be an integer > 0");
        f->created_ms = json_is_integer(created_ms) ? json_integer_value(created_ms) : 0;
        f->removed_ms = removed_ms;
        r = strdup_or_null(ctrl, &f->group.ctrl);
        if (r >= 0)
                r = dup_string_or_null(namespace, "namespace", &f->namespace, reterr);
        if (r >= 0)
                r = dup_string_or_null(pod, "pod", &f->pod_name, reterr);
        if (r >= 0)
                r = parse_counters(counters, f, reterr);
        if (r >= 0 && baseline)
                r = pod_state_baseline_from_json(baseline, "record", &f->group, reterr);
        return r;
}

int finished_parse(const char *text, size_t len, struct finished_pod *ret, char **reterr)
{
        json_auto_t *o = NULL;
        json_error_t jerr;
        int r;

        *ret = (struct finished_pod){0};
        o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!o)
                return bad_record(reterr, "not JSON: %s", jerr.text);
        r = parse_record(o, ret, reterr);
        if (r < 0)
                finished_pod_done(ret);
        return r;
}

/* --- the directory -------------------------------------------------------- */

/* FNV-1a: a ctrl group's name (up to NAME_MAX bytes) in a file name. */
static uint64_t ctrl_hash(const char *ctrl)
{
        uint64_t h = UINT64_C(14695981039346656037);

        for (const unsigned char *p = (const unsigned char *) ctrl; *p; p++)
                h = (h ^ *p) * UINT64_C(1099511628211);
        return h;
}

static void record_name(const struct finished_pod *f, char buf[static RECORD_NAME_SIZE])
{
        (void) snprintf(buf, RECORD_NAME_SIZE, "%s.%" PRId64 ".%016" PRIx64, f->uid, f->created_ms,
                        ctrl_hash(f->group.ctrl));
}

/* <canonical uid>.<digits>.<16 hex digits>: a record's name. */
static bool is_record_name(const char *name)
{
        char uid[POD_UID_LEN + 1];
        size_t digits, len = strlen(name);

        if (len <= POD_UID_LEN + 1 || name[POD_UID_LEN] != '.')
                return false;
        memcpy(uid, name, POD_UID_LEN);
        uid[POD_UID_LEN] = '\0';
        if (!pod_uid_is_canonical(uid))
                return false;
        name += POD_UID_LEN + 1;
        digits = strspn(name, "0123456789");
        return digits > 0 && digits <= 19 && name[digits] == '.' &&
               strlen(name + digits + 1) == 16 &&
               strspn(name + digits + 1, "0123456789abcdef") == 16;
}

static int compare_files(const void *a, const void *b)
{
        const struct record_file *x = a, *y = b;

        if (x->written_ns != y->written_ns)
                return x->written_ns < y->written_ns ? -1 : 1;
        return strcmp(x->name, y->name);
}

static int add_file(struct record_file **files, size_t *n, size_t *room, const char *name,
                    const struct stat *st)
{
        if (*n == *room) {
                size_t grown = *room ? 2 * *room : 64;
                struct record_file *a = reallocarray(*files, grown, sizeof(*a));

                if (!a)
                        return -ENOMEM;
                *files = a;
                *room = grown;
        }
        (*files)[*n] = (struct record_file){
            .written_ns = (int64_t) st->st_mtim.tv_sec * NS_PER_SEC + st->st_mtim.tv_nsec,
            .size = st->st_size,
        };
        (void) snprintf((*files)[*n].name, sizeof((*files)[*n].name), "%s", name);
        (*n)++;
        return 0;
}

/* The records of dir_fd, oldest first; *ret_temp when a temp file is there. */
static int list_records(int dir_fd, struct record_file **ret, size_t *ret_n, bool *ret_temp)
{
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ struct record_file *files = NULL;
        size_t n = 0, room = 0;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, ".", &d);
        if (r < 0)
                return r;
        *ret_temp = false;
        while ((errno = 0, de = readdir(d))) {
                struct stat st;

                *ret_temp |= strcmp(de->d_name, FINISHED_TEMP) == 0;
                if (!is_record_name(de->d_name) ||
                    fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                r = add_file(&files, &n, &room, de->d_name, &st);
                if (r < 0)
                        return r;
        }
        if (errno != 0)
                return -errno;
        if (n > 0)
                qsort(files, n, sizeof(*files), compare_files);
        *ret = TAKE_PTR(files);
        *ret_n = n;
        return 0;
}

/* Retention 0 keeps none: a record written this very millisecond too. */
static bool expired(const struct record_file *f, int64_t now_ns, unsigned retention_sec)
{
        return retention_sec == 0 || f->written_ns < now_ns - (int64_t) retention_sec * NS_PER_SEC;
}

/* Under the lock: expired records, then the oldest until one more of
 * incoming bytes fits the limits, and a killed writer's temp file. */
static int prune_locked(int dir_fd, const struct finished_limits *l, size_t incoming)
{
        _cleanup_free_ struct record_file *files = NULL;
        int64_t now_ns = now_unix_ms() * 1000000;
        size_t n = 0, total = incoming;
        int removed = 0, r;
        bool temp;

        r = list_records(dir_fd, &files, &n, &temp);
        if (r < 0)
                return r;
        if (temp && unlinkat(dir_fd, FINISHED_TEMP, 0) == 0)
                removed++;
        for (size_t i = 0; i < n; i++)
                total += (size_t) files[i].size;
        for (size_t i = 0; i < n; i++) {
                size_t left = n - i + (incoming > 0);

                if (!expired(&files[i], now_ns, l->retention_sec) && total <= l->max_bytes &&
                    left <= l->max_records)
                        break;
                if (unlinkat(dir_fd, files[i].name, 0) < 0 && errno != ENOENT)
                        return -errno;
                total -= (size_t) files[i].size;
                removed++;
        }
        return removed;
}

/* flock(2) on the directory itself: every writer opens it anew. dir_fd, for
 * _cleanup_(lock_fd_unlockp), or -errno. */
static int lock_dir(int dir_fd, int64_t deadline)
{
        int r = lock_fd_until(dir_fd, LOCK_EX, deadline);

        return r < 0 ? r : dir_fd;
}

int finished_prune(int dir_fd, const struct finished_limits *l, int64_t deadline)
{
        _cleanup_(lock_fd_unlockp) int locked = -EBADF;

        assert(dir_fd >= 0 && l);
        locked = lock_dir(dir_fd, deadline);
        if (locked < 0)
                return locked;
        return prune_locked(dir_fd, l, 0);
}

int finished_save(int dir_fd, const struct finished_pod *f, const struct finished_limits *l,
                  int64_t deadline)
{
        _cleanup_(lock_fd_unlockp) int locked = -EBADF;
        _cleanup_free_ char *text = NULL;
        char name[RECORD_NAME_SIZE];
        size_t len;
        int r;

        assert(dir_fd >= 0 && f && l);
        r = finished_format(f, &text);
        if (r < 0)
                return r;
        len = strlen(text);
        if (len > l->max_bytes || l->max_records == 0)
                return -EFBIG;
        record_name(f, name);

        locked = lock_dir(dir_fd, deadline);
        if (locked < 0)
                return locked;
        r = prune_locked(dir_fd, l, len);
        if (r < 0)
                return r;
        r = write_atomic_at(dir_fd, name, FINISHED_TEMP, text, len, 0600);
        return r < 0 ? r : 0;
}

int finished_remove(int dir_fd, const struct finished_pod *f)
{
        char name[RECORD_NAME_SIZE];

        record_name(f, name);
        return unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

bool finished_pod_is_of(const struct finished_pod *f, const struct group *g)
{
        /* A group whose making 0.2 dropped may be any of the records. */
        return (g->created_ms == 0 || f->created_ms == g->created_ms) &&
               strcmp(f->group.ctrl, g->ctrl) == 0;
}

static int load_record(int dir_fd, const char *name, struct finished_pod *ret)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = read_file_at(dir_fd, name, FINISHED_RECORD_MAX, &text, &len);
        if (r < 0)
                return r;
        return finished_parse(text, len, ret, NULL);
}

int finished_load(int dir_fd, unsigned retention_sec, struct finished_pod **ret, size_t *ret_n,
                  unsigned *ret_bad)
{
        _cleanup_free_ struct record_file *files = NULL;
        int64_t now_ns = now_unix_ms() * 1000000;
        struct finished_pod *pods;
        size_t n = 0, k = 0;
        bool temp;
        int r;

        *ret = NULL;
        *ret_n = 0;
        *ret_bad = 0;
        r = list_records(dir_fd, &files, &n, &temp);
        if (r < 0 || n == 0)
                return r;
        pods = calloc(n, sizeof(*pods));
        if (!pods)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (expired(&files[i], now_ns, retention_sec))
                        continue; /* the next writer removes it */
                r = load_record(dir_fd, files[i].name, &pods[k]);
                if (r == -ENOENT) /* pruned meanwhile */
                        continue;
                if (r == -ENOMEM) {
                        while (k > 0)
                                finished_pod_done(&pods[--k]);
                        free(pods);
                        return r;
                }
                if (r < 0)
                        (*ret_bad)++;
                else
                        k++;
        }
        if (k == 0) /* all past the window, or bad */
                free(TAKE_PTR(pods));
        *ret = pods;
        *ret_n = k;
        return 0;
}
