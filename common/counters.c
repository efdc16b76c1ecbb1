/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "fsutil.h"
#include "macro.h"

/* A counter file is one u64 in decimal, or a fixed-point value, or a word. */
#define COUNTER_FILE_MAX 64

static bool has_suffix(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && strcmp(s + n - m, suffix) == 0;
}

void counter_describe(const char *name, enum counter_kind *ret_kind, const char **ret_unit)
{
        *ret_kind = COUNTER_CUMULATIVE;
        *ret_unit = NULL;
        if (strcmp(name, "llc_occupancy") == 0) {
                *ret_kind = COUNTER_GAUGE;
                *ret_unit = "bytes";
        } else if (strncmp(name, "mbm_", 4) == 0 && has_suffix(name, "_bytes"))
                *ret_unit = "bytes";
        else if (strcmp(name, "core_energy") == 0)
                *ret_unit = "joules";
        else if (strcmp(name, "activity") == 0)
                *ret_unit = "farads";
}

static uint64_t pow10_u64(unsigned n)
{
        uint64_t p = 1;

        while (n-- > 0)
                p *= 10;
        return p;
}

/* Accumulates the digits in [s, end) onto *acc. */
static int add_digits(const char *s, const char *end, uint64_t *acc)
{
        for (; s < end; s++) {
                unsigned d;

                if (*s < '0' || *s > '9')
                        return -EINVAL;
                d = (unsigned) (*s - '0');
                if (*acc > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                *acc = *acc * 10 + d;
        }
        return 0;
}

int counter_value_parse(const char *text, struct counter_value *ret)
{
        const char *end = text + strlen(text), *point;
        uint64_t v = 0;
        unsigned scale = 0;
        int r;

        if (end > text && end[-1] == '\n')
                end--;
        point = memchr(text, '.', (size_t) (end - text));
        if (point) {
                scale = (unsigned) (end - point - 1);
                if (scale == 0 || scale > COUNTER_SCALE_MAX)
                        return -EINVAL;
        }
        if ((point ? point : end) == text)
                return -EINVAL;

        r = add_digits(text, point ? point : end, &v);
        if (r >= 0 && point)
                r = add_digits(point + 1, end, &v);
        if (r < 0)
                return r;
        *ret = (struct counter_value){.v = v, .scale = scale};
        return 0;
}

int counter_text_parse(const char *text, enum counter_state *ret_state,
                       struct counter_value *ret_value)
{
        static const struct {
                const char *text;
                enum counter_state state;
        } words[] = {
            {"Unavailable\n", COUNTER_UNAVAILABLE},
            {"Error\n", COUNTER_ERROR},
            {"Unassigned\n", COUNTER_UNASSIGNED},
        };
        size_t len = strlen(text);
        int r;

        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                size_t n = strlen(words[i].text);

                if ((len == n || len == n - 1) && strncmp(text, words[i].text, len) == 0) {
                        *ret_state = words[i].state;
                        return 0;
                }
        }
        r = counter_value_parse(text, ret_value);
        if (r < 0)
                return r;
        *ret_state = COUNTER_OK;
        return 0;
}

int counter_value_format(const struct counter_value *v, char *buf, size_t size)
{
        uint64_t p = pow10_u64(v->scale);
        int n;

        if (v->scale == 0)
                n = snprintf(buf, size, "%" PRIu64, v->v);
        else
                n = snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64, v->v / p, (int) v->scale,
                             v->v % p);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

int counter_value_add(struct counter_value *acc, const struct counter_value *v)
{
        if (acc->scale != v->scale)
                return -EDOM;
        if (acc->v > UINT64_MAX - v->v)
                return -ERANGE;
        acc->v += v->v;
        return 0;
}

int counter_value_sub(const struct counter_value *a, const struct counter_value *b,
                      struct counter_value *ret)
{
        if (a->scale != b->scale)
                return -EDOM;
        if (b->v > a->v)
                return -ERANGE;
        *ret = (struct counter_value){.v = a->v - b->v, .scale = a->scale};
        return 0;
}

double counter_value_to_double(const struct counter_value *v)
{
        return (double) v->v / (double) pow10_u64(v->scale);
}

const char *counter_state_to_string(enum counter_state s)
{
        switch (s) {
        case COUNTER_OK:
                return "ok";
        case COUNTER_UNAVAILABLE:
                return "Unavailable";
        case COUNTER_ERROR:
                return "Error";
        case COUNTER_UNASSIGNED:
                return "Unassigned";
        case COUNTER_UNPARSED:
                return "error";
        }
        return "?";
}

const char *counter_kind_to_string(enum counter_kind k)
{
        return k == COUNTER_GAUGE ? "gauge" : "cumulative";
}

struct reading_list {
        struct counter_reading *items;
        size_t n;
};

static int read_one(int domain_fd, const char *domain, const char *name, bool cumulative_only,
                    struct reading_list *list)
{
        _cleanup_free_ char *text = NULL;
        struct counter_reading rd = {0};
        struct counter_reading *a;
        int r;

        counter_describe(name, &rd.kind, &rd.unit);
        if (cumulative_only && rd.kind != COUNTER_CUMULATIVE)
                return 0;
        if (list->n >= COUNTERS_MAX)
                return -E2BIG;

        /* kernfs: one read(2) for the whole value. A directory (SNC's
         * mon_sub_L3_*) fails the read with EISDIR: cheaper than a stat of
         * every entry where d_type is unknown (FUSE). */
        r = read_small_file_at(domain_fd, name, COUNTER_FILE_MAX, &text);
        if (r == -EISDIR)
                return 0;
        if (r < 0 && r != -EFBIG)
                return r;
        /* What no kernel writes (a file of another tool's, a change of
         * format) costs this counter only, never its group's others. */
        if (r < 0 || counter_text_parse(text, &rd.state, &rd.value) < 0)
                rd.state = COUNTER_UNPARSED;
        snprintf(rd.domain, sizeof(rd.domain), "%s", domain);
        snprintf(rd.name, sizeof(rd.name), "%s", name);

        a = realloc(list->items, (list->n + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        a[list->n++] = rd;
        list->items = a;
        return 0;
}

/* Reads the regular files of one domain directory. */
static int read_domain(int mon_data_fd, const char *domain, bool cumulative_only,
                       struct reading_list *list)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        r = opendir_at(mon_data_fd, domain, &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (!name_is_valid(de->d_name) || de->d_type == DT_DIR)
                        continue; /* ".", "..", SNC's mon_sub_L3_* */
                r = read_one(dirfd(d), domain, de->d_name, cumulative_only, list);
                if (r < 0)
                        return r;
        }
        return -errno;
}

static int reading_compare(const void *a, const void *b)
{
        const struct counter_reading *x = a, *y = b;
        int c = strcmp(x->domain, y->domain);

        return c != 0 ? c : strcmp(x->name, y->name);
}

int counters_read(int group_fd, bool cumulative_only, struct counter_reading **ret, size_t *ret_n)
{
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ struct counter_reading *items = NULL;
        struct reading_list list = {0};
        struct dirent *de;
        int r;

        r = opendir_at(group_fd, "mon_data", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (strncmp(de->d_name, "mon_", 4) != 0)
                        continue;
                r = read_domain(dirfd(d), de->d_name, cumulative_only, &list);
                if (r == -ENOTDIR)
                        continue;
                if (r < 0)
                        break;
        }
        items = list.items;
        if (r == 0)
                r = -errno;
        if (r < 0)
                return r;

        if (list.n > 0)
                qsort(items, list.n, sizeof(*items), reading_compare);
        *ret = TAKE_PTR(items);
        *ret_n = list.n;
        return 0;
}

int counter_read_key(int group_fd, const char *key, struct counter_reading *ret)
{
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ struct counter_reading *items = NULL;
        struct reading_list list = {0};
        const char *slash = strchr(key, '/');
        char domain[NAME_MAX + 1];
        int r;

        if (!slash || (size_t) (slash - key) > NAME_MAX)
                return -EINVAL;
        (void) snprintf(domain, sizeof(domain), "%.*s", (int) (slash - key), key);
        if (!name_is_valid(domain) || !name_is_valid(slash + 1))
                return -EINVAL;
        r = opendir_at(group_fd, "mon_data", &d);
        if (r >= 0) {
                _cleanup_(closedirp) DIR *dom = NULL;

                r = opendir_at(dirfd(d), domain, &dom);
                if (r >= 0)
                        r = read_one(dirfd(dom), domain, slash + 1, false, &list);
        }
        items = list.items;
        if (r < 0)
                return r;
        if (list.n != 1)
                return -ENOENT; /* a directory */
        *ret = items[0];
        return 0;
}
