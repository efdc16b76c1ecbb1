/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abmc.h"
#include "fsutil.h"
#include "macro.h"
#include "rdt.h"
#include "string_table.h"

/* mbm_L3_assignments is two short lines per domain list; the info files one. */
#define ABMC_FILE_MAX 8192

static const char *const event_names[ABMC_EVENTS] = {
    [ABMC_TOTAL] = "mbm_total_bytes",
    [ABMC_LOCAL] = "mbm_local_bytes",
};
static const char *const bandwidth_names[] = {
    [ABMC_FULL] = "full",
    [ABMC_PARTIAL] = "partial",
    [ABMC_NONE] = "none",
};

DEFINE_STRING_TABLE_TO_STRING(abmc_event_name, event_names, enum abmc_event)
DEFINE_STRING_TABLE_FROM_STRING(abmc_event_from_name, event_names)
DEFINE_STRING_TABLE_TO_STRING(abmc_bandwidth_name, bandwidth_names, enum abmc_bandwidth)

/* A decimal number of at most 9 digits up to *end: 0 or -EBADMSG. */
static int parse_number(const char *s, const char *end, unsigned *ret)
{
        unsigned v = 0;

        if (s == end || end - s > 9)
                return -EBADMSG;
        for (; s < end; s++) {
                if (*s < '0' || *s > '9')
                        return -EBADMSG;
                v = v * 10 + (unsigned) (*s - '0');
        }
        *ret = v;
        return 0;
}

/* The text up to its one trailing newline, which must be the only one. */
static int one_line(const char *text, size_t *ret_len)
{
        const char *nl = strchr(text, '\n');

        if (!nl || nl[1] != '\0' || nl == text)
                return -EBADMSG;
        *ret_len = (size_t) (nl - text);
        return 0;
}

/* Calls fn for each "<id>=<value>" of a ';'-separated list in [s, end). */
typedef int (*item_fn)(unsigned id, const char *value, const char *value_end, void *userdata);
static int foreach_item(const char *s, const char *end, item_fn fn, void *userdata)
{
        while (s < end) {
                const char *semi = memchr(s, ';', (size_t) (end - s));
                const char *item_end = semi ? semi : end;
                const char *eq = memchr(s, '=', (size_t) (item_end - s));
                unsigned id;
                int r;

                if (!eq || parse_number(s, eq, &id) < 0)
                        return -EBADMSG;
                r = fn(id, eq + 1, item_end, userdata);
                if (r < 0)
                        return r;
                if (!semi)
                        return 0;
                s = semi + 1;
                if (s == end) /* a trailing ';' */
                        return -EBADMSG;
        }
        return -EBADMSG; /* nothing */
}

static int count_item(unsigned id, const char *value, const char *value_end, void *userdata)
{
        struct abmc_counts *c = userdata;

        if (c->n == ABMC_DOMAINS_MAX)
                return -E2BIG;
        c->ids[c->n] = id;
        if (parse_number(value, value_end, &c->counts[c->n]) < 0)
                return -EBADMSG;
        c->n++;
        return 0;
}

int abmc_parse_counts(const char *text, struct abmc_counts *ret)
{
        size_t len;
        int r;

        *ret = (struct abmc_counts){0};
        r = one_line(text, &len);
        return r < 0 ? r : foreach_item(text, text + len, count_item, ret);
}

int abmc_parse_mode(const char *text, bool *ret_mbm_event)
{
        int active = -1;

        for (const char *line = text; *line;) {
                const char *nl = strchr(line, '\n');
                size_t len;

                if (!nl)
                        return -EBADMSG;
                len = (size_t) (nl - line);
                if (len > 2 && line[0] == '[' && line[len - 1] == ']') {
                        if (active >= 0)
                                return -EBADMSG; /* two active modes */
                        active =
                            len == strlen("[mbm_event]") && memcmp(line, "[mbm_event]", len) == 0;
                        if (!active &&
                            !(len == strlen("[default]") && memcmp(line, "[default]", len) == 0))
                                return -EBADMSG; /* a mode this hook does not know */
                }
                line = nl + 1;
        }
        if (active < 0)
                return -EBADMSG;
        *ret_mbm_event = active;
        return 0;
}

struct assignments_line {
        struct abmc_assignments *a;
        int ev;     /* -1: an event this hook does not know */
        bool first; /* the first known line: it sets the domains */
        size_t i;   /* the domain's position */
};

static int assignment_item(unsigned id, const char *value, const char *value_end, void *userdata)
{
        struct assignments_line *l = userdata;
        struct abmc_assignments *a = l->a;

        if (value_end - value != 1 || (*value != 'e' && *value != '_'))
                return -EBADMSG;
        if (l->first) {
                if (a->n == ABMC_DOMAINS_MAX)
                        return -E2BIG;
                a->ids[a->n++] = id;
        } else if (l->i >= a->n || a->ids[l->i] != id) {
                return -EBADMSG; /* the events list other domains */
        }
        if (l->ev >= 0)
                a->assigned[l->ev][l->i] = *value == 'e';
        l->i++;
        return 0;
}

int abmc_parse_assignments(const char *text, struct abmc_assignments *ret)
{
        bool seen[ABMC_EVENTS] = {false}, any = false;

        *ret = (struct abmc_assignments){0};
        for (const char *line = text; *line;) {
                const char *nl = strchr(line, '\n');
                const char *colon = nl ? memchr(line, ':', (size_t) (nl - line)) : NULL;
                _cleanup_free_ char *name = NULL;
                struct assignments_line l = {.a = ret, .first = !any};
                int r;

                if (!colon)
                        return -EBADMSG;
                name = strndup(line, (size_t) (colon - line));
                if (!name)
                        return -ENOMEM;
                l.ev = abmc_event_from_name(name);
                if (l.ev >= 0 && seen[l.ev])
                        return -EBADMSG;
                r = foreach_item(colon + 1, nl, assignment_item, &l);
                if (r < 0)
                        return r;
                if (!l.first && l.i != ret->n)
                        return -EBADMSG;
                if (l.ev >= 0)
                        seen[l.ev] = true;
                any = true;
                line = nl + 1;
        }
        for (int ev = 0; ev < ABMC_EVENTS; ev++)
                ret->listed[ev] = seen[ev];
        return seen[ABMC_TOTAL] || seen[ABMC_LOCAL] ? 0 : -EBADMSG;
}

enum abmc_bandwidth abmc_bandwidth(const struct abmc_assignments *a, unsigned mask)
{
        size_t wanted = 0, have = 0;

        for (int ev = 0; ev < ABMC_EVENTS; ev++) {
                if (!(mask & (1U << ev)) || !a->listed[ev])
                        continue;
                for (size_t i = 0; i < a->n; i++) {
                        wanted++;
                        have += a->assigned[ev][i];
                }
        }
        return have == wanted ? ABMC_FULL : have == 0 ? ABMC_NONE : ABMC_PARTIAL;
}

int abmc_active(int root_fd)
{
        _cleanup_free_ char *text = NULL;
        bool mbm_event;
        int r;

        r = rdt_read_info_file(root_fd, "L3_MON", "mbm_assign_mode", &text);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = abmc_parse_mode(text, &mbm_event);
        return r < 0 ? r : mbm_event;
}

int abmc_counters(int root_fd, struct abmc_counts *ret_total, struct abmc_counts *ret_available)
{
        _cleanup_free_ char *total = NULL, *available = NULL;
        int r;

        r = rdt_read_info_file(root_fd, "L3_MON", "num_mbm_cntrs", &total);
        if (r >= 0)
                r = rdt_read_info_file(root_fd, "L3_MON", "available_mbm_cntrs", &available);
        if (r >= 0)
                r = abmc_parse_counts(total, ret_total);
        if (r >= 0)
                r = abmc_parse_counts(available, ret_available);
        return r;
}

int abmc_group_assignments(int root_fd, const char *ctrl, const char *name,
                           struct abmc_assignments *ret)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        int r;

        r = rdt_mon_group_open(root_fd, ctrl, name, &fd);
        if (r >= 0)
                r = read_small_file_at(fd, "mbm_L3_assignments", ABMC_FILE_MAX, &text);
        return r < 0 ? r : abmc_parse_assignments(text, ret);
}

static int write_assignment(int root_fd, const char *ctrl, const char *name, const char *line)
{
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        int r;

        assert(rdt_lock_is_held());
        r = rdt_mon_group_open(root_fd, ctrl, name, &dir_fd);
        if (r < 0)
                return r;
        fd = openat(dir_fd, "mbm_L3_assignments", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return write_all(fd, line, strlen(line));
}

int abmc_group_set(int root_fd, const char *ctrl, const char *name, enum abmc_event ev,
                   unsigned dom, bool assign)
{
        const char *event = abmc_event_name(ev);
        char line[64];

        assert(event);
        (void) snprintf(line, sizeof(line), "%s:%u=%c\n", event, dom, assign ? 'e' : '_');
        return write_assignment(root_fd, ctrl, name, line);
}

int abmc_group_drop(int root_fd, const char *ctrl, const char *name, enum abmc_event ev)
{
        const char *event = abmc_event_name(ev);
        char line[64];

        assert(event);
        (void) snprintf(line, sizeof(line), "%s:*=_\n", event);
        return write_assignment(root_fd, ctrl, name, line);
}
