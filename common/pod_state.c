/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "macro.h"
#include "pod_state.h"
#include "rdt.h"
#include "statedir.h"

#define STATE_FILE_MAX ((size_t) 1 << 20)

__attribute__((format(printf, 2, 3))) static int bad_state(char **reterr, const char *fmt, ...)
{
        char buf[512];
        va_list ap;

        if (reterr) {
                va_start(ap, fmt);
                (void) vsnprintf(buf, sizeof(buf), fmt, ap);
                va_end(ap);
                *reterr = strdup(buf);
        }
        return -EBADMSG;
}

static int state_file_names(const char *uid, char name[static STATEDIR_NAME_SIZE],
                            char tmp[static STATEDIR_NAME_SIZE])
{
        int r = statedir_name(uid, STATEDIR_MEMBERS, name);

        return r < 0 ? r : statedir_name(uid, STATEDIR_MEMBERS_TMP, tmp);
}

int pod_state_save(int dir_fd, const char *uid, const struct pod_state *s)
{
        _cleanup_free_ char *text = NULL;
        char name[STATEDIR_NAME_SIZE], tmp[STATEDIR_NAME_SIZE];
        int r;

        r = state_file_names(uid, name, tmp);
        if (r < 0)
                return r;
        r = pod_state_format(s, uid, &text);
        if (r < 0)
                return r;
        /* The pod lock makes the temp name ours alone. */
        return write_atomic_at(dir_fd, name, tmp, text, strlen(text), 0600);
}

int pod_state_load(int dir_fd, const char *uid, struct pod_state *ret, char **reterr)
{
        _cleanup_free_ char *text = NULL;
        char name[STATEDIR_NAME_SIZE], tmp[STATEDIR_NAME_SIZE];
        size_t len;
        int r;

        r = state_file_names(uid, name, tmp);
        if (r < 0)
                return r;
        r = read_file_at(dir_fd, name, STATE_FILE_MAX, &text, &len);
        if (r == -EFBIG)
                return bad_state(reterr, "larger than 1 MiB");
        if (r < 0)
                return r;
        return pod_state_parse(text, len, uid, ret, reterr);
}

int pod_state_remove_temp(int dir_fd, const char *uid)
{
        char name[STATEDIR_NAME_SIZE], tmp[STATEDIR_NAME_SIZE];
        int r;

        r = state_file_names(uid, name, tmp);
        if (r < 0)
                return r;
        if (unlinkat(dir_fd, tmp, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 1;
}

int pod_state_remove(int dir_fd, const char *uid)
{
        char name[STATEDIR_NAME_SIZE], tmp[STATEDIR_NAME_SIZE];
        int r;

        r = state_file_names(uid, name, tmp);
        if (r < 0)
                return r;
        if (unlinkat(dir_fd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

static void member_done(struct member *m)
{
        free(m->id);
        free(m->ctrl);
        free(m->reason);
}

static void group_done(struct group *g)
{
        pod_state_group_clear_baseline(g);
        free(g->ctrl);
}

void pod_state_done(struct pod_state *s)
{
        for (size_t i = 0; i < s->n_members; i++)
                member_done(&s->members[i]);
        for (size_t i = 0; i < s->n_groups; i++)
                group_done(&s->groups[i]);
        free(s->members);
        free(s->groups);
        free(s->namespace);
        free(s->pod_name);
        *s = (struct pod_state){};
}

struct member *pod_state_find_member(struct pod_state *s, const char *id)
{
        for (size_t i = 0; i < s->n_members; i++)
                if (strcmp(s->members[i].id, id) == 0)
                        return &s->members[i];
        return NULL;
}

struct group *pod_state_find_group(struct pod_state *s, const char *ctrl)
{
        for (size_t i = 0; i < s->n_groups; i++)
                if (strcmp(s->groups[i].ctrl, ctrl) == 0)
                        return &s->groups[i];
        return NULL;
}

int pod_state_add_member(struct pod_state *s, const char *id, const char *ctrl, int pid,
                         uint64_t start_time, bool monitored, const char *reason)
{
        struct member m = {
            .id = strdup(id),
            .ctrl = strdup(ctrl),
            .pid = pid,
            .start_time = start_time,
            .monitored = monitored,
            .reason = reason ? strdup(reason) : NULL,
        };
        struct member *a;

        if (!m.id || !m.ctrl || (reason && !m.reason))
                goto fail;
        a = realloc(s->members, (s->n_members + 1) * sizeof(*a));
        if (!a)
                goto fail;
        a[s->n_members++] = m;
        s->members = a;
        return 0;

fail:
        member_done(&m);
        return -ENOMEM;
}

int pod_state_copy_member(struct pod_state *s, const struct member *m)
{
        int r =
            pod_state_add_member(s, m->id, m->ctrl, m->pid, m->start_time, m->monitored, m->reason);

        if (r < 0)
                return r;
        s->members[s->n_members - 1].has_cgroup = m->has_cgroup;
        s->members[s->n_members - 1].cgroup = m->cgroup;
        return 0;
}

int pod_state_add_group(struct pod_state *s, const char *ctrl, bool owned)
{
        struct group g = {.ctrl = strdup(ctrl), .owned = owned};
        struct group *a;

        if (!g.ctrl)
                return -ENOMEM;
        a = realloc(s->groups, (s->n_groups + 1) * sizeof(*a));
        if (!a) {
                free(g.ctrl);
                return -ENOMEM;
        }
        a[s->n_groups++] = g;
        s->groups = a;
        return 0;
}

void pod_state_drop_member(struct pod_state *s, const char *id)
{
        struct member *m = pod_state_find_member(s, id);

        if (!m)
                return;
        member_done(m);
        memmove(m, m + 1, (size_t) (s->members + s->n_members - (m + 1)) * sizeof(*m));
        s->n_members--;
}

void pod_state_drop_group(struct pod_state *s, const char *ctrl)
{
        struct group *g = pod_state_find_group(s, ctrl);

        if (!g)
                return;
        group_done(g);
        memmove(g, g + 1, (size_t) (s->groups + s->n_groups - (g + 1)) * sizeof(*g));
        s->n_groups--;
}

/* "<domain>/<event>": two path components, the first a mon_data domain. */
static bool baseline_key_is_valid(const char *key)
{
        const char *slash = strchr(key, '/');
        char domain[NAME_MAX + 1];

        if (!slash || (size_t) (slash - key) > NAME_MAX || strncmp(key, "mon_", 4) != 0)
                return false;
        snprintf(domain, sizeof(domain), "%.*s", (int) (slash - key), key);
        return name_is_valid(domain) && name_is_valid(slash + 1);
}

static void drop_pending(struct group *g, const char *key)
{
        for (size_t i = 0; i < g->n_pending; i++)
                if (strcmp(g->pending[i], key) == 0) {
                        free(g->pending[i]);
                        g->pending[i] = g->pending[--g->n_pending];
                        return;
                }
}

int pod_state_group_add_pending(struct group *g, const char *key)
{
        char **a, *k;

        if (!baseline_key_is_valid(key))
                return -EINVAL;
        if (pod_state_group_baseline(g, key))
                return 0;
        for (size_t i = 0; i < g->n_pending; i++)
                if (strcmp(g->pending[i], key) == 0)
                        return 0;
        if (g->n_pending >= STATE_BASELINE_MAX)
                return -E2BIG;
        k = strdup(key);
        a = k ? reallocarray(g->pending, g->n_pending + 1, sizeof(*a)) : NULL;
        if (!a) {
                free(k);
                return -ENOMEM;
        }
        a[g->n_pending++] = k;
        g->pending = a;
        return 0;
}

int pod_state_group_set_baseline(struct group *g, const char *key, const struct counter_value *v)
{
        struct baseline *b, *a;
        char *k;

        if (!baseline_key_is_valid(key) || v->scale > COUNTER_SCALE_MAX)
                return -EINVAL;
        drop_pending(g, key);
        for (size_t i = 0; i < g->n_baseline; i++)
                if (strcmp(g->baseline[i].key, key) == 0) {
                        g->baseline[i].value = *v;
                        return 0;
                }
        if (g->n_baseline >= STATE_BASELINE_MAX)
                return -E2BIG;

        k = strdup(key);
        a = k ? realloc(g->baseline, (g->n_baseline + 1) * sizeof(*a)) : NULL;
        if (!a) {
                free(k);
                return -ENOMEM;
        }
        b = &a[g->n_baseline++];
        *b = (struct baseline){.key = k, .value = *v};
        g->baseline = a;
        return 0;
}

void pod_state_group_clear_baseline(struct group *g)
{
        for (size_t i = 0; i < g->n_baseline; i++)
                free(g->baseline[i].key);
        free(g->baseline);
        g->baseline = NULL;
        g->n_baseline = 0;
        for (size_t i = 0; i < g->n_pending; i++)
                free(g->pending[i]);
        free(g->pending);
        g->pending = NULL;
        g->n_pending = 0;
}

const struct counter_value *pod_state_group_baseline(const struct group *g, const char *key)
{
        for (size_t i = 0; i < g->n_baseline; i++)
                if (strcmp(g->baseline[i].key, key) == 0)
                        return &g->baseline[i].value;
        return NULL;
}

int pod_state_set_pod(struct pod_state *s, const char *namespace, const char *pod_name)
{
        char *ns = namespace ? strdup(namespace) : NULL;
        char *pod = pod_name ? strdup(pod_name) : NULL;

        if ((namespace && !ns) || (pod_name && !pod)) {
                free(ns);
                free(pod);
                return -ENOMEM;
        }
        free(s->namespace);
        free(s->pod_name);
        s->namespace = ns;
        s->pod_name = pod;
        return 0;
}

/* What load enforces beyond JSON types; format checks the same, so that save
 * never writes a file that load would refuse. Invalid names are not quoted:
 * they may hold control characters. */
static bool cgroup_is_valid(const struct cgroup_ref *cg)
{
        struct cgroup_ref hierarchy;

        return cgroup_hierarchy_parse(cgroup_hierarchy_name(cg), &hierarchy) == 0 &&
               hierarchy.kind == cg->kind && cgroup_path_is_valid(cg->path, strlen(cg->path));
}

static int pod_state_check(const struct pod_state *s, char **reterr)
{
        if (s->pid_ns > INT64_MAX)
                return bad_state(reterr, "pid_ns out of range");
        if (s->has_pod_cgroup && !cgroup_is_valid(&s->pod_cgroup))
                return bad_state(reterr, "invalid pod_cgroup");
        if (s->boot_id[0] && !boot_id_is_valid(s->boot_id))
                return bad_state(reterr, "invalid boot_id");
        for (size_t i = 0; i < s->n_groups; i++) {
                if (!rdt_ctrl_group_is_valid(s->groups[i].ctrl))
                        return bad_state(reterr, "group %zu: invalid ctrl", i);
                if (s->groups[i].emptied && s->groups[i].emptied_at > INT64_MAX)
                        return bad_state(reterr, "group %zu: emptied_at out of range", i);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(s->groups[i].ctrl, s->groups[j].ctrl) == 0)
                                return bad_state(reterr, "group %zu: duplicate ctrl '%s'", i,
                                                 s->groups[i].ctrl);
        }
        for (size_t i = 0; i < s->n_members; i++) {
                const struct member *m = &s->members[i];

                if (!name_is_valid(m->id))
                        return bad_state(reterr, "member %zu: invalid id", i);
                if (!rdt_ctrl_group_is_valid(m->ctrl))
                        return bad_state(reterr, "member %zu: invalid ctrl", i);
                if (m->pid < 0 || m->start_time > INT64_MAX)
                        return bad_state(reterr, "member %zu: pid or start_time out of range", i);
                if (m->has_cgroup && !cgroup_is_valid(&m->cgroup))
                        return bad_state(reterr, "member %zu: invalid cgroup", i);
                if (m->monitored != !m->reason)
                        return bad_state(reterr, "member %zu: reason must be set iff not monitored",
                                         i);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(m->id, s->members[j].id) == 0)
                                return bad_state(reterr, "member %zu: duplicate id '%s'", i, m->id);
        }
        return 0;
}

json_t *pod_state_baseline_to_json(const struct group *g)
{
        json_auto_t *o = json_object();

        if (!o)
                return NULL;
        for (size_t i = 0; i < g->n_baseline; i++) {
                char text[COUNTER_VALUE_STRLEN];

                if (counter_value_format(&g->baseline[i].value, text, sizeof(text)) < 0 ||
                    json_object_set_new(o, g->baseline[i].key, json_string(text)) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

/* Sorted, so that the file says the same whatever order they left in. */
static int string_compare(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static json_t *format_pending(const struct group *g)
{
        json_auto_t *a = json_array();
        _cleanup_free_ char **keys = reallocarray(NULL, g->n_pending, sizeof(*keys));

        if (!a || !keys)
                return NULL;
        memcpy(keys, g->pending, g->n_pending * sizeof(*keys));
        qsort(keys, g->n_pending, sizeof(*keys), string_compare);
        for (size_t i = 0; i < g->n_pending; i++)
                if (json_array_append_new(a, json_string(keys[i])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static json_t *format_group(const struct group *g)
{
        json_auto_t *o = json_pack("{s:s, s:b}", "ctrl", g->ctrl, "owned", g->owned);

        if (!o)
                return NULL;
        if (g->emptied &&
            json_object_set_new(o, "emptied_at", json_integer((json_int_t) g->emptied_at)) < 0)
                return NULL;
        if (g->created_ms > 0 &&
            json_object_set_new(o, "created_ms", json_integer((json_int_t) g->created_ms)) < 0)
                return NULL;
        if (g->n_baseline > 0 &&
            json_object_set_new(o, "baseline", pod_state_baseline_to_json(g)) < 0)
                return NULL;
        if (g->n_pending > 0 && json_object_set_new(o, "baseline_pending", format_pending(g)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_t *format_groups(const struct pod_state *s)
{
        json_auto_t *a = json_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < s->n_groups; i++)
                if (json_array_append_new(a, format_group(&s->groups[i])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static json_t *format_cgroup(const struct cgroup_ref *cg)
{
        return json_pack("{s:s, s:s}", "hierarchy", cgroup_hierarchy_name(cg), "path", cg->path);
}

static json_t *format_members(const struct pod_state *s)
{
        json_auto_t *a = json_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < s->n_members; i++) {
                const struct member *m = &s->members[i];
                json_t *o =
                    json_pack("{s:s, s:s, s:i, s:I, s:b, s:s?}", "id", m->id, "ctrl", m->ctrl,
                              "pid", m->pid, "start_time", (json_int_t) m->start_time, "monitored",
                              m->monitored, "reason", m->reason);

                if (o && m->has_cgroup &&
                    json_object_set_new(o, "cgroup", format_cgroup(&m->cgroup)) < 0) {
                        json_decref(o);
                        return NULL;
                }
                if (json_array_append_new(a, o) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

int pod_state_format(const struct pod_state *s, const char *uid, char **ret)
{
        json_auto_t *root = NULL;
        char *text, *p;
        size_t len;

        if (!name_is_valid(uid) || pod_state_check(s, NULL) < 0)
                return -EINVAL;

        root = json_pack("{s:i, s:s, s:s?, s:s?}", "version", STATE_VERSION, "uid", uid,
                         "namespace", s->namespace, "pod", s->pod_name);
        if (!root || json_object_set_new(root, "groups", format_groups(s)) < 0 ||
            json_object_set_new(root, "members", format_members(s)) < 0)
                return -ENOMEM;
        if (s->pid_ns != 0 &&
            json_object_set_new(root, "pid_ns", json_integer((json_int_t) s->pid_ns)) < 0)
                return -ENOMEM;
        if (s->has_pod_cgroup &&
            json_object_set_new(root, "pod_cgroup", format_cgroup(&s->pod_cgroup)) < 0)
                return -ENOMEM;
        if (s->boot_id[0] && json_object_set_new(root, "boot_id", json_string(s->boot_id)) < 0)
                return -ENOMEM;

        text = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        len = strlen(text);
        p = realloc(text, len + 2);
        if (!p) {
                free(text);
                return -ENOMEM;
        }
        p[len] = '\n';
        p[len + 1] = '\0';
        *ret = p;
        return 0;
}

static int parse_string_or_null(json_t *v, const char *what, char **ret, char **reterr)
{
        if (json_is_null(v)) {
                *ret = NULL;
                return 0;
        }
        if (!json_is_string(v))
                return bad_state(reterr, "%s must be a string or null", what);
        *ret = strdup(json_string_value(v));
        return *ret ? 0 : -ENOMEM;
}

int pod_state_baseline_from_json(json_t *o, const char *what, struct group *g, char **reterr)
{
        const char *key;
        json_t *v;

        if (!json_is_object(o))
                return bad_state(reterr, "%s: baseline must be an object", what);
        if (json_object_size(o) > STATE_BASELINE_MAX)
                return bad_state(reterr, "%s: too many baseline entries", what);
        json_object_foreach(o, key, v) {
                struct counter_value cv;
                int r;

                if (!json_is_string(v) || counter_value_parse(json_string_value(v), &cv) < 0 ||
                    strchr(json_string_value(v), '\n'))
                        return bad_state(reterr, "%s: baseline values must be counter text", what);
                r = pod_state_group_set_baseline(g, key, &cv);
                if (r == -EINVAL)
                        return bad_state(reterr, "%s: invalid baseline key", what);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_pending(json_t *a, const char *what, struct group *g, char **reterr)
{
        size_t i;
        json_t *v;

        if (!json_is_array(a))
                return bad_state(reterr, "%s: baseline_pending must be an array", what);
        if (json_array_size(a) > STATE_BASELINE_MAX)
                return bad_state(reterr, "%s: too many baseline_pending entries", what);
        json_array_foreach(a, i, v) {
                int r = json_is_string(v) ? pod_state_group_add_pending(g, json_string_value(v))
                                          : -EINVAL;

                if (r == -EINVAL)
                        return bad_state(reterr, "%s: invalid baseline_pending key", what);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool is_uint(const json_t *v)
{
        return json_is_integer(v) && json_integer_value(v) >= 0;
}

static int parse_groups(json_t *groups, struct pod_state *s, char **reterr)
{
        size_t i;
        json_t *g;

        if (!json_is_array(groups))
                return bad_state(reterr, "groups must be an array");
        json_array_foreach(groups, i, g) {
                json_t *baseline = NULL, *emptied_at = NULL, *created_ms = NULL, *pending = NULL;
                json_error_t jerr;
                const char *ctrl;
                char what[32];
                int owned, r;

                if (json_unpack_ex(g, &jerr, 0, "{s:s, s:b, s?o, s?o, s?o, s?o}", "ctrl", &ctrl,
                                   "owned", &owned, "emptied_at", &emptied_at, "created_ms",
                                   &created_ms, "baseline", &baseline, "baseline_pending",
                                   &pending) < 0)
                        return bad_state(reterr, "group %zu: %s", i, jerr.text);
                if (emptied_at && !is_uint(emptied_at))
                        return bad_state(reterr, "group %zu: emptied_at must be an integer >= 0",
                                         i);
                if (created_ms && !is_uint(created_ms))
                        return bad_state(reterr, "group %zu: created_ms must be an integer >= 0",
                                         i);
                (void) snprintf(what, sizeof(what), "group %zu", i);
                r = pod_state_add_group(s, ctrl, owned);
                if (r >= 0 && baseline)
                        r = pod_state_baseline_from_json(baseline, what,
                                                         &s->groups[s->n_groups - 1], reterr);
                if (r >= 0 && pending)
                        r = parse_pending(pending, what, &s->groups[s->n_groups - 1], reterr);
                if (r < 0)
                        return r;
                if (created_ms)
                        s->groups[s->n_groups - 1].created_ms = json_integer_value(created_ms);
                if (emptied_at) {
                        s->groups[s->n_groups - 1].emptied = true;
                        s->groups[s->n_groups - 1].emptied_at =
                            (uint64_t) json_integer_value(emptied_at);
                }
        }
        return 0;
}

/* {"hierarchy": ..., "path": ...}; what it holds is checked by pod_state_check. */
static int parse_cgroup(json_t *o, const char *what, struct cgroup_ref *ret, char **reterr)
{
        const char *hierarchy, *path;
        json_error_t jerr;

        if (json_unpack_ex(o, &jerr, 0, "{s:s, s:s}", "hierarchy", &hierarchy, "path", &path) < 0)
                return bad_state(reterr, "%s: %s", what, jerr.text);
        if (cgroup_hierarchy_parse(hierarchy, ret) < 0 || strlen(path) >= sizeof(ret->path))
                return bad_state(reterr, "%s: invalid hierarchy or path", what);
        memcpy(ret->path, path, strlen(path) + 1);
        return 0;
}

static int parse_member(json_t *o, size_t i, struct pod_state *s, char **reterr)
{
        json_int_t pid, start_time;
        const char *id, *ctrl;
        json_t *reason, *cgroup = NULL;
        json_error_t jerr;
        struct cgroup_ref cg = {0};
        char what[48];
        int monitored, r;

        if (json_unpack_ex(o, &jerr, 0, "{s:s, s:s, s:I, s:I, s:b, s:o, s?o}", "id", &id, "ctrl",
                           &ctrl, "pid", &pid, "start_time", &start_time, "monitored", &monitored,
                           "reason", &reason, "cgroup", &cgroup) < 0)
                return bad_state(reterr, "member %zu: %s", i, jerr.text);
        (void) snprintf(what, sizeof(what), "member %zu: cgroup", i);
        if (json_is_null(cgroup)) /* as absent, as pod_cgroup's */
                cgroup = NULL;
        if (cgroup && (r = parse_cgroup(cgroup, what, &cg, reterr)) < 0)
                return r;
        if (pid < 0 || pid > INT_MAX)
                return bad_state(reterr, "member %zu: pid out of range", i);
        if (start_time < 0)
                return bad_state(reterr, "member %zu: negative start_time", i);
        if (!json_is_null(reason) && !json_is_string(reason))
                return bad_state(reterr, "member %zu: reason must be a string or null", i);
        r = pod_state_add_member(s, id, ctrl, (int) pid, (uint64_t) start_time, monitored,
                                 json_string_value(reason));
        if (r >= 0 && cgroup) {
                s->members[s->n_members - 1].has_cgroup = true;
                s->members[s->n_members - 1].cgroup = cg;
        }
        return r;
}

static int parse_members(json_t *members, struct pod_state *s, char **reterr)
{
        size_t i;
        json_t *m;

        if (!json_is_array(members))
                return bad_state(reterr, "members must be an array");
        json_array_foreach(members, i, m) {
                int r = parse_member(m, i, s, reterr);

                if (r < 0)
                        return r;
        }
        return 0;
}

bool pod_state_pids_are_ours(const struct pod_state *s, uint64_t pid_ns)
{
        return s->pid_ns == 0 || s->pid_ns == pid_ns;
}

bool pod_state_of_other_boot(const struct pod_state *s, const char *boot_id, uint64_t pid_ns)
{
        return s->boot_id[0] && boot_id[0] && strcmp(s->boot_id, boot_id) != 0 &&
               pod_state_pids_are_ours(s, pid_ns);
}

int pod_state_parse(const char *text, size_t len, const char *uid, struct pod_state *ret,
                    char **reterr)
{
        _cleanup_(pod_state_done) struct pod_state s = {};
        json_t *namespace, *pod, *groups, *members, *pid_ns = NULL, *pod_cgroup = NULL,
                                                    *boot_id = NULL;
        json_auto_t *root = NULL;
        json_int_t version;
        json_error_t jerr;
        const char *file_uid;
        int r;

        if (!name_is_valid(uid))
                return -EINVAL;
        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return bad_state(reterr, "line %d: %s", jerr.line, jerr.text);

        /* The version first, so that a newer format is named as such. */
        if (json_unpack_ex(root, &jerr, 0, "{s:I}", "version", &version) < 0)
                return bad_state(reterr, "%s", jerr.text);
        if (version != STATE_VERSION)
                return bad_state(reterr, "unsupported version %" JSON_INTEGER_FORMAT, version);
        if (json_unpack_ex(root, &jerr, 0, "{s:I, s:s, s:o, s:o, s:o, s:o, s?o, s?o, s?o}",
                           "version", &version, "uid", &file_uid, "namespace", &namespace, "pod",
                           &pod, "groups", &groups, "members", &members, "pid_ns", &pid_ns,
                           "pod_cgroup", &pod_cgroup, "boot_id", &boot_id) < 0)
                return bad_state(reterr, "%s", jerr.text);
        if (strcmp(file_uid, uid) != 0)
                return bad_state(reterr, "uid does not match the file name");
        if (pid_ns && (!is_uint(pid_ns) || json_integer_value(pid_ns) == 0))
                return bad_state(reterr, "pid_ns must be an integer > 0");
        s.pid_ns = pid_ns ? (uint64_t) json_integer_value(pid_ns) : 0;
        if (boot_id && !(json_is_string(boot_id) && boot_id_is_valid(json_string_value(boot_id))))
                return bad_state(reterr, "boot_id must be a boot id (a lowercase UUID)");
        if (boot_id)
                memcpy(s.boot_id, json_string_value(boot_id), BOOT_ID_LEN + 1);
        s.has_pod_cgroup = pod_cgroup && !json_is_null(pod_cgroup);
        if (s.has_pod_cgroup &&
            (r = parse_cgroup(pod_cgroup, "pod_cgroup", &s.pod_cgroup, reterr)) < 0)
                return r;

        r = parse_string_or_null(namespace, "namespace", &s.namespace, reterr);
        if (r >= 0)
                r = parse_string_or_null(pod, "pod", &s.pod_name, reterr);
        if (r >= 0)
                r = parse_groups(groups, &s, reterr);
        if (r >= 0)
                r = parse_members(members, &s, reterr);
        if (r >= 0)
                r = pod_state_check(&s, reterr);
        if (r < 0)
                return r;

        *ret = s;
        s = (struct pod_state){};
        return 0;
}
