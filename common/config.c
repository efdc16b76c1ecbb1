/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <yaml.h>

#include "abmc.h"
#include "config.h"
#include "fsutil.h"
#include "macro.h"
#include "string_table.h"

#define CONFIG_MAX (1u << 20)
#define LOCK_TIMEOUT_MS_MAX 600000u
#define REMOVE_DELAY_SEC_MAX 604800u /* a week */
/* Lists and maps are searched linearly; keep that cheap. */
#define CONFIG_ENTRIES_MAX 1024u

static void yaml_event_deletep(yaml_event_t *e)
{
        yaml_event_delete(e);
}

#define _cleanup_yaml_event_ _cleanup_(yaml_event_deletep)

struct cfg_parser {
        yaml_parser_t yaml;
        const char *input;
        size_t len;
        const char *name;
        unsigned depth; /* mappings and lists open at the last event read */
        struct config_problems *problems;
};

/* A problem the parser cannot step over: the rest of the file stays unread.
 * Distinct from -EINVAL, a bad value that ends at the next key. */
#define CFG_UNREADABLE (-EPROTO)

/* A handler reads the value of one key (one or more events) into field. */
typedef int (*value_parser)(struct cfg_parser *p, const char *key, void *field);

struct key_def {
        const char *name;
        value_parser parse;
        size_t offset;
};

int config_problems_add(struct config_problems *l, enum config_problem_kind kind, const char *fmt,
                        ...)
{
        struct config_problem *a;
        va_list ap;
        char *text;
        int n;

        if (!l)
                return 0;
        va_start(ap, fmt);
        n = vasprintf(&text, fmt, ap);
        va_end(ap);
        a = n >= 0 ? reallocarray(l->items, l->n + 1, sizeof(*a)) : NULL;
        if (!a) {
                if (n >= 0)
                        free(text);
                return -ENOMEM;
        }
        a[l->n++] = (struct config_problem){.kind = kind, .text = text};
        l->items = a;
        return 0;
}

void config_problems_done(struct config_problems *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i].text);
        free(l->items);
        *l = (struct config_problems){};
}

bool config_problems_have(const struct config_problems *l, enum config_problem_kind kind)
{
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].kind == kind)
                        return true;
        return false;
}

static int cfg_report(struct cfg_parser *p, enum config_problem_kind kind, const yaml_mark_t *m,
                      const char *key, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

/* Records "NAME:LINE: key 'KEY': problem" (-ENOMEM if it cannot). */
static int cfg_report(struct cfg_parser *p, enum config_problem_kind kind, const yaml_mark_t *m,
                      const char *key, const char *fmt, va_list ap)
{
        _cleanup_free_ char *what = NULL;

        if (vasprintf(&what, fmt, ap) < 0)
                return -ENOMEM;
        if (key)
                return config_problems_add(p->problems, kind, "%s:%zu: key '%s': %s", p->name,
                                           m->line + 1, key, what);
        return config_problems_add(p->problems, kind, "%s:%zu: %s", p->name, m->line + 1, what);
}

static int cfg_fail(struct cfg_parser *p, const yaml_mark_t *m, const char *key, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

/* A bad value of key: recorded, and -EINVAL, so that the key keeps its
 * default and reading goes on at the next key. */
static int cfg_fail(struct cfg_parser *p, const yaml_mark_t *m, const char *key, const char *fmt,
                    ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = cfg_report(p, CONFIG_PROBLEM_BAD_VALUE, m, key, fmt, ap);
        va_end(ap);
        return r < 0 ? r : -EINVAL;
}

static int cfg_fail_file(struct cfg_parser *p, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What ends the reading: recorded, and CFG_UNREADABLE. */
static int cfg_fail_file(struct cfg_parser *p, const yaml_mark_t *m, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = cfg_report(p, CONFIG_PROBLEM_INCOMPLETE, m, NULL, fmt, ap);
        va_end(ap);
        return r < 0 ? r : CFG_UNREADABLE;
}

static int cfg_syntax_error(struct cfg_parser *p)
{
        const yaml_parser_t *y = &p->yaml;
        yaml_mark_t m = y->problem_mark;

        if (y->error == YAML_MEMORY_ERROR)
                return -ENOMEM;
        /* The reader (bad UTF-8, control characters) reports a byte offset, not a mark. */
        if (y->error == YAML_READER_ERROR) {
                m = (yaml_mark_t){};
                for (size_t i = 0; i < y->problem_offset && i < p->len; i++)
                        m.line += p->input[i] == '\n';
        }
        return cfg_fail_file(p, &m, "%s", y->problem ? y->problem : "syntax error");
}

static const char *event_anchor(const yaml_event_t *e)
{
        switch (e->type) {
        case YAML_SCALAR_EVENT:
                return (const char *) e->data.scalar.anchor;
        case YAML_SEQUENCE_START_EVENT:
                return (const char *) e->data.sequence_start.anchor;
        case YAML_MAPPING_START_EVENT:
                return (const char *) e->data.mapping_start.anchor;
        default:
                return NULL;
        }
}

static const char *event_tag(const yaml_event_t *e)
{
        switch (e->type) {
        case YAML_SCALAR_EVENT:
                return (const char *) e->data.scalar.tag;
        case YAML_SEQUENCE_START_EVENT:
                return (const char *) e->data.sequence_start.tag;
        case YAML_MAPPING_START_EVENT:
                return (const char *) e->data.mapping_start.tag;
        default:
                return NULL;
        }
}

/* The next event, whatever it is, keeping count of the depth. */
static int cfg_next_raw(struct cfg_parser *p, yaml_event_t *ret)
{
        if (!yaml_parser_parse(&p->yaml, ret))
                return cfg_syntax_error(p);
        if (ret->type == YAML_SEQUENCE_START_EVENT || ret->type == YAML_MAPPING_START_EVENT)
                p->depth++;
        else if (ret->type == YAML_SEQUENCE_END_EVENT || ret->type == YAML_MAPPING_END_EVENT)
                p->depth--;
        return 0;
}

/* Reads on until depth events are open again: the rest of a value whose
 * parser gave up on it. Nothing in it is looked at (an alias is never
 * expanded by the event parser, so a skipped alias bomb costs nothing). */
static int cfg_skip_to_depth(struct cfg_parser *p, unsigned depth)
{
        while (p->depth > depth) {
                _cleanup_yaml_event_ yaml_event_t e = {};
                int r = cfg_next_raw(p, &e);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* Skips one whole value: a scalar, or a list or mapping with all it holds. */
static int cfg_skip_value(struct cfg_parser *p)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        unsigned depth = p->depth;
        int r = cfg_next_raw(p, &e);

        return r < 0 ? r : cfg_skip_to_depth(p, depth);
}

/* The next event, refusing aliases and anchors outright so that no alias
 * bomb can be built, and tags, which would change what a value means. */
static int cfg_next(struct cfg_parser *p, const char *key, yaml_event_t *ret)
{
        yaml_event_t e;
        int r;

        r = cfg_next_raw(p, &e);
        if (r < 0)
                return r;
        if (e.type == YAML_ALIAS_EVENT || event_anchor(&e) || event_tag(&e)) {
                r = cfg_fail(p, &e.start_mark, key, "%s are not allowed",
                             event_tag(&e) ? "tags" : "anchors and aliases");

                yaml_event_delete(&e);
                return r;
        }
        *ret = e;
        return 0;
}

static const char *event_kind(const yaml_event_t *e)
{
        switch (e->type) {
        case YAML_SEQUENCE_START_EVENT:
                return "a list";
        case YAML_MAPPING_START_EVENT:
                return "a mapping";
        default:
                return "a scalar";
        }
}

/* A scalar usable as a C string: present, and without the NUL a "\0" escape makes. */
static int cfg_check_scalar(struct cfg_parser *p, const char *key, const char *what,
                            const yaml_event_t *e)
{
        if (e->type != YAML_SCALAR_EVENT)
                return cfg_fail(p, &e->start_mark, key, "expected %s, found %s", what,
                                event_kind(e));
        if (e->data.scalar.length == 0 && e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                return cfg_fail(p, &e->start_mark, key, "expected %s, found no value", what);
        if (memchr(e->data.scalar.value, '\0', e->data.scalar.length))
                return cfg_fail(p, &e->start_mark, key, "contains a NUL character");
        return 0;
}

static int cfg_next_scalar(struct cfg_parser *p, const char *key, const char *what,
                           yaml_event_t *ret)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        int r;

        r = cfg_next(p, key, &e);
        if (r < 0)
                return r;
        r = cfg_check_scalar(p, key, what, &e);
        if (r < 0)
                return r;
        *ret = e;
        e = (yaml_event_t){};
        return 0;
}

static const char *scalar(const yaml_event_t *e)
{
        return (const char *) e->data.scalar.value;
}

static bool scalar_is_plain(const yaml_event_t *e)
{
        return e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static int parse_path(struct cfg_parser *p, const char *key, void *field)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        char **path = field, *copy;
        int r;

        r = cfg_next_scalar(p, key, "an absolute path", &e);
        if (r < 0)
                return r;
        if (scalar(&e)[0] != '/')
                return cfg_fail(p, &e.start_mark, key, "'%s' is not an absolute path", scalar(&e));
        copy = strdup(scalar(&e));
        if (!copy)
                return -ENOMEM;
        free(*path);
        *path = copy;
        return 0;
}

/* YAML 1.2 core schema booleans only: "yes", "on" and "1" are refused, not guessed at. */
static int parse_bool(struct cfg_parser *p, const char *key, void *field)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        bool *b = field;
        int r;

        r = cfg_next_scalar(p, key, "true or false", &e);
        if (r < 0)
                return r;
        if (!scalar_is_plain(&e))
                return cfg_fail(p, &e.start_mark, key, "expected true or false, found a string");
        if (strcmp(scalar(&e), "true") == 0)
                *b = true;
        else if (strcmp(scalar(&e), "false") == 0)
                *b = false;
        else
                return cfg_fail(p, &e.start_mark, key, "'%s' is not true or false", scalar(&e));
        return 0;
}

/* A decimal integer in [min, max]: digits only, no sign, no 0x, and no
 * leading 0 (octal in YAML 1.1). max has at most 6 digits. */
static int parse_uint(struct cfg_parser *p, const char *key, unsigned min, unsigned max,
                      unsigned *ret)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        unsigned long v = 0;
        const char *s;
        int r;

        r = cfg_next_scalar(p, key, "an integer", &e);
        if (r < 0)
                return r;
        s = scalar(&e);
        if (!scalar_is_plain(&e))
                return cfg_fail(p, &e.start_mark, key, "expected an integer, found a string");
        if ((s[0] == '0' && s[1] != '\0') || strspn(s, "0123456789") != strlen(s) ||
            strlen(s) > 6 || (v = strtoul(s, NULL, 10)) > max || v < min)
                return cfg_fail(p, &e.start_mark, key, "'%s' is not an integer in [%u, %u]", s, min,
                                max);
        *ret = (unsigned) v;
        return 0;
}

static int parse_lock_timeout(struct cfg_parser *p, const char *key, void *field)
{
        return parse_uint(p, key, 1, LOCK_TIMEOUT_MS_MAX, field);
}

/* removeDelaySeconds, emptyPodLingerSeconds and finalCountersSeconds. */
static int parse_remove_delay(struct cfg_parser *p, const char *key, void *field)
{
        return parse_uint(p, key, 0, REMOVE_DELAY_SEC_MAX, field);
}

/* One of a table's two or three names (string_table.h): its index. */
static int parse_choice(struct cfg_parser *p, const char *key, const char *const names[], size_t n)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        int r;

        r = cfg_next_scalar(p, key, "a string", &e);
        if (r < 0)
                return r;
        r = string_table_index(names, n, scalar(&e));
        if (r >= 0)
                return r;
        return cfg_fail(p, &e.start_mark, key, "'%s' is not %s%s%s or %s", scalar(&e), names[0],
                        n > 2 ? ", " : "", n > 2 ? names[1] : "", names[n - 1]);
}

/* A value_parser of the enum type whose names are table. */
#define DEFINE_CHOICE_PARSER(fn, table, type)                                                      \
        static int fn(struct cfg_parser *p, const char *key, void *field)                          \
        {                                                                                          \
                int r = parse_choice(p, key, table, ELEMENTSOF(table));                            \
                                                                                                   \
                if (r < 0)                                                                         \
                        return r;                                                                  \
                *(type *) field = (type) r;                                                        \
                return 0;                                                                          \
        }

static const char *const failure_policy_names[] = {
    [FAILURE_POLICY_IGNORE] = "ignore",
    [FAILURE_POLICY_FAIL] = "fail",
};
DEFINE_CHOICE_PARSER(parse_failure_policy, failure_policy_names, enum failure_policy)

static const char *const rmid_budget_names[] = {
    [RMID_BUDGET_AUTO] = "auto",
    [RMID_BUDGET_NODE] = "node",
    [RMID_BUDGET_CTRL_GROUP] = "ctrlGroup",
};
DEFINE_CHOICE_PARSER(parse_rmid_budget, rmid_budget_names, enum rmid_budget)

static const char *const runtime_monitoring_names[] = {
    [RUNTIME_MONITORING_SKIP] = "skip",
    [RUNTIME_MONITORING_OVERRIDE] = "override",
};
DEFINE_CHOICE_PARSER(parse_runtime_monitoring, runtime_monitoring_names, enum runtime_monitoring)

static int parse_log_level(struct cfg_parser *p, const char *key, void *field)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        int *level = field;
        int r;

        r = cfg_next_scalar(p, key, "a log level", &e);
        if (r < 0)
                return r;
        r = log_level_from_string(scalar(&e));
        if (r < 0)
                return cfg_fail(p, &e.start_mark, key,
                                "'%s' is not err, error, warn, warning, info or debug", scalar(&e));
        *level = r;
        return 0;
}

static int cfg_expect(struct cfg_parser *p, const char *key, yaml_event_type_t type,
                      const char *what)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        int r;

        r = cfg_next(p, key, &e);
        if (r < 0)
                return r;
        if (e.type != type)
                return cfg_fail(p, &e.start_mark, key, "expected %s, found %s", what,
                                event_kind(&e));
        return 0;
}

/* The next list item or mapping key: 1 and *ret, or 0 at the end of the collection. */
static int cfg_next_item(struct cfg_parser *p, const char *key, yaml_event_type_t end,
                         const char *what, yaml_event_t *ret)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        int r;

        r = cfg_next(p, key, &e);
        if (r < 0)
                return r;
        if (e.type == end)
                return 0;
        r = cfg_check_scalar(p, key, what, &e);
        if (r < 0)
                return r;
        *ret = e;
        e = (yaml_event_t){};
        return 1;
}

static int string_list_push(struct string_list *l, const char *s)
{
        char **items, *copy;

        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        items = reallocarray(l->items, l->n + 1, sizeof(*items));
        if (!items) {
                free(copy);
                return -ENOMEM;
        }
        items[l->n++] = copy;
        l->items = items;
        return 0;
}

static void string_list_done(struct string_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
        free(l->items);
        *l = (struct string_list){};
}

static int parse_string_list(struct cfg_parser *p, const char *key, void *field)
{
        struct string_list *out = field, l = {};
        int r;

        r = cfg_expect(p, key, YAML_SEQUENCE_START_EVENT, "a list");
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_yaml_event_ yaml_event_t e = {};

                r = cfg_next_item(p, key, YAML_SEQUENCE_END_EVENT, "a string", &e);
                if (r <= 0)
                        break;
                if (l.n >= CONFIG_ENTRIES_MAX) {
                        r = cfg_fail(p, &e.start_mark, key, "more than %u entries",
                                     CONFIG_ENTRIES_MAX);
                        break;
                }
                r = string_list_push(&l, scalar(&e));
                if (r < 0)
                        break;
        }
        if (r < 0) {
                string_list_done(&l);
                return r;
        }
        string_list_done(out);
        *out = l;
        return 0;
}

/* mbmEvents: a list of distinct bandwidth event names, as a mask of enum abmc_event. */
static int parse_mbm_events(struct cfg_parser *p, const char *key, void *field)
{
        unsigned *out = field, mask = 0;
        int r;

        r = cfg_expect(p, key, YAML_SEQUENCE_START_EVENT, "a list");
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_yaml_event_ yaml_event_t e = {};
                int ev;

                r = cfg_next_item(p, key, YAML_SEQUENCE_END_EVENT, "a string", &e);
                if (r <= 0)
                        break;
                ev = abmc_event_from_name(scalar(&e));
                if (ev < 0)
                        return cfg_fail(p, &e.start_mark, key,
                                        "'%s' is not mbm_total_bytes or mbm_local_bytes",
                                        scalar(&e));
                if (mask & (1U << ev))
                        return cfg_fail(p, &e.start_mark, key, "'%s' is listed twice", scalar(&e));
                mask |= 1U << ev;
        }
        if (r < 0)
                return r;
        *out = mask;
        return 0;
}

static void string_map_done(struct string_map *m)
{
        for (size_t i = 0; i < m->n; i++) {
                free(m->keys[i]);
                free(m->values[i]);
        }
        free(m->keys);
        free(m->values);
        *m = (struct string_map){};
}

static bool string_map_has(const struct string_map *m, const char *key)
{
        for (size_t i = 0; i < m->n; i++)
                if (strcmp(m->keys[i], key) == 0)
                        return true;
        return false;
}

static int string_map_push(struct string_map *m, const char *key, const char *value)
{
        _cleanup_free_ char *k = strdup(key), *v = strdup(value);
        char **keys, **values;

        if (!k || !v)
                return -ENOMEM;
        keys = reallocarray(m->keys, m->n + 1, sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        m->keys = keys;
        values = reallocarray(m->values, m->n + 1, sizeof(*values));
        if (!values)
                return -ENOMEM;
        m->values = values;
        m->keys[m->n] = TAKE_PTR(k);
        m->values[m->n++] = TAKE_PTR(v);
        return 0;
}

/* One "key: value" of a string map: 1, or 0 at the end of the mapping. */
static int parse_string_map_entry(struct cfg_parser *p, const char *key, struct string_map *m)
{
        _cleanup_yaml_event_ yaml_event_t k = {}, v = {};
        int r;

        r = cfg_next_item(p, key, YAML_MAPPING_END_EVENT, "a string key", &k);
        if (r <= 0)
                return r;
        if (m->n >= CONFIG_ENTRIES_MAX)
                return cfg_fail(p, &k.start_mark, key, "more than %u entries", CONFIG_ENTRIES_MAX);
        if (string_map_has(m, scalar(&k)))
                return cfg_fail(p, &k.start_mark, key, "duplicate key '%s'", scalar(&k));
        r = cfg_next_scalar(p, key, "a string", &v);
        if (r < 0)
                return r;
        r = string_map_push(m, scalar(&k), scalar(&v));
        return r < 0 ? r : 1;
}

static int parse_string_map(struct cfg_parser *p, const char *key, void *field)
{
        struct string_map *out = field, m = {};
        int r;

        r = cfg_expect(p, key, YAML_MAPPING_START_EVENT, "a mapping");
        if (r < 0)
                return r;
        do
                r = parse_string_map_entry(p, key, &m);
        while (r > 0);
        if (r < 0) {
                string_map_done(&m);
                return r;
        }
        string_map_done(out);
        *out = m;
        return 0;
}

/* Parses the value of one known key; a bad value is skipped to its end, so
 * that the key keeps what it had (its default) and the next key is read. */
static int parse_value(struct cfg_parser *p, const struct key_def *def, const char *name,
                       void *base)
{
        unsigned depth = p->depth;
        int r = def->parse(p, name, (char *) base + def->offset);

        if (r != -EINVAL)
                return r;
        /* A path says where the hook writes: guessing it leaves the config incomplete. */
        if (def->parse == parse_path && p->problems)
                p->problems->items[p->problems->n - 1].kind = CONFIG_PROBLEM_INCOMPLETE;
        return cfg_skip_to_depth(p, depth);
}

static int cfg_skip_key(struct cfg_parser *p, enum config_problem_kind kind, const yaml_mark_t *m,
                        const char *name, const char *what)
{
        int r = config_problems_add(p->problems, kind, "%s:%zu: key '%s': %s", p->name, m->line + 1,
                                    name, what);

        return r < 0 ? r : cfg_skip_value(p);
}

/* The keys of a mapping whose START event has been read, then its END. A key
 * this binary does not know (a newer one's, or a typo) is reported and
 * skipped, and so is a second copy of a key; a bad value costs its key only. */
static int parse_mapping_body(struct cfg_parser *p, const char *prefix, const struct key_def *keys,
                              size_t n, void *base)
{
        unsigned seen = 0;

        for (;;) {
                _cleanup_yaml_event_ yaml_event_t k = {};
                _cleanup_free_ char *name = NULL;
                unsigned depth = p->depth;
                size_t i;
                int r;

                r = cfg_next_item(p, prefix, YAML_MAPPING_END_EVENT, "a key", &k);
                if (r == -EINVAL) { /* a key that is no string: skip it and its value */
                        r = cfg_skip_to_depth(p, depth);
                        if (r >= 0)
                                r = cfg_skip_value(p);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r <= 0)
                        return r;
                if (prefix)
                        r = asprintf(&name, "%s.%s", prefix, scalar(&k));
                else
                        r = asprintf(&name, "%s", scalar(&k));
                if (r < 0)
                        return -ENOMEM;

                for (i = 0; i < n && strcmp(keys[i].name, scalar(&k)) != 0; i++)
                        ;
                if (i == n)
                        r = cfg_skip_key(p, CONFIG_PROBLEM_UNKNOWN_KEY, &k.start_mark, name,
                                         "unknown key, skipped");
                else if (seen & (1u << i))
                        r = cfg_skip_key(p, CONFIG_PROBLEM_BAD_VALUE, &k.start_mark, name,
                                         "duplicate key, skipped");
                else {
                        seen |= 1u << i;
                        r = parse_value(p, &keys[i], name, base);
                }
                if (r < 0)
                        return r;
        }
}
static const struct key_def log_keys[] = {
    {"level", parse_log_level, offsetof(struct config, log_level)},
    {"syslog", parse_bool, offsetof(struct config, log_syslog)},
    {"stderr", parse_bool, offsetof(struct config, log_stderr)},
};

static int parse_log(struct cfg_parser *p, const char *key, void *field)
{
        int r;

        r = cfg_expect(p, key, YAML_MAPPING_START_EVENT, "a mapping");
        if (r < 0)
                return r;
        return parse_mapping_body(p, key, log_keys, ELEMENTSOF(log_keys), field);
}

static const struct key_def config_keys[] = {
    {"resctrlPath", parse_path, offsetof(struct config, resctrl_path)},
    {"stateDir", parse_path, offsetof(struct config, state_dir)},
    {"requireResctrlFs", parse_bool, offsetof(struct config, require_resctrl_fs)},
    {"namespaces", parse_string_list, offsetof(struct config, namespaces)},
    {"excludeNamespaces", parse_string_list, offsetof(struct config, exclude_namespaces)},
    {"labelSelector", parse_string_map, offsetof(struct config, label_selector)},
    {"annotationSelector", parse_string_map, offsetof(struct config, annotation_selector)},
    {"runtimeRoots", parse_string_list, offsetof(struct config, runtime_roots)},
    {"failurePolicy", parse_failure_policy, offsetof(struct config, failure_policy)},
    {"runtimeMonitoring", parse_runtime_monitoring, offsetof(struct config, runtime_monitoring)},
    {"lockTimeoutMs", parse_lock_timeout, offsetof(struct config, lock_timeout_ms)},
    {"removeDelaySeconds", parse_remove_delay, offsetof(struct config, remove_delay_sec)},
    {"emptyPodLingerSeconds", parse_remove_delay, offsetof(struct config, empty_pod_linger_sec)},
    {"finalCountersSeconds", parse_remove_delay, offsetof(struct config, final_counters_sec)},
    {"mbmEvents", parse_mbm_events, offsetof(struct config, mbm_events)},
    {"rmidBudget", parse_rmid_budget, offsetof(struct config, rmid_budget)},
    {"log", parse_log, 0},
};

/* The root node of the one document: a mapping, or nothing at all ("---" alone). */
static int parse_root(struct cfg_parser *p, struct config *c)
{
        _cleanup_yaml_event_ yaml_event_t e = {};
        int r;

        r = cfg_next(p, NULL, &e);
        if (r < 0)
                return r;
        if (e.type == YAML_MAPPING_START_EVENT)
                return parse_mapping_body(p, NULL, config_keys, ELEMENTSOF(config_keys), c);
        if (e.type == YAML_SCALAR_EVENT && e.data.scalar.length == 0 && scalar_is_plain(&e))
                return 0;
        return cfg_fail_file(p, &e.start_mark, "expected a mapping at the top level, found %s",
                             event_kind(&e));
}

/* A stream without documents (empty, or only comments) leaves every default. */
static int parse_stream(struct cfg_parser *p, struct config *c)
{
        int r;

        r = cfg_expect(p, NULL, YAML_STREAM_START_EVENT, "a stream");
        if (r < 0)
                return r;
        for (unsigned docs = 0;; docs++) {
                _cleanup_yaml_event_ yaml_event_t e = {};

                r = cfg_next(p, NULL, &e);
                if (r < 0)
                        return r;
                if (e.type == YAML_STREAM_END_EVENT)
                        return 0;
                if (docs > 0)
                        return cfg_fail_file(p, &e.start_mark,
                                             "more than one YAML document; the first is used");
                r = parse_root(p, c);
                if (r < 0)
                        return r;
                r = cfg_expect(p, NULL, YAML_DOCUMENT_END_EVENT, "the end of the document");
                if (r < 0)
                        return r;
        }
}

void config_done(struct config *c)
{
        free(c->resctrl_path);
        free(c->state_dir);
        string_list_done(&c->namespaces);
        string_list_done(&c->exclude_namespaces);
        string_map_done(&c->label_selector);
        string_map_done(&c->annotation_selector);
        string_list_done(&c->runtime_roots);
        *c = (struct config){};
}

static const char *const default_runtime_roots[] = {
    "/run/runc",
    "/run/containerd/runc/k8s.io",
    "/run/crun",
};

int config_init(struct config *c)
{
        struct config d = {
            .resctrl_path = strdup(CONFIG_DEFAULT_RESCTRL_PATH),
            .state_dir = strdup(CONFIG_DEFAULT_STATE_DIR),
            .require_resctrl_fs = true,
            .failure_policy = FAILURE_POLICY_IGNORE,
            .runtime_monitoring = RUNTIME_MONITORING_SKIP,
            .lock_timeout_ms = CONFIG_DEFAULT_LOCK_TIMEOUT_MS,
            .empty_pod_linger_sec = CONFIG_DEFAULT_EMPTY_POD_LINGER_SEC,
            .final_counters_sec = CONFIG_DEFAULT_FINAL_COUNTERS_SEC,
            .rmid_budget = RMID_BUDGET_AUTO,
            .mbm_events = ABMC_ALL_EVENTS,
            .log_level = LOG_INFO,
            .log_syslog = true,
            .log_stderr = false,
        };
        int r = 0;

        /* Where runc (CRI-O, Podman), containerd's runc shim and crun keep state. */
        for (size_t i = 0; r == 0 && i < ELEMENTSOF(default_runtime_roots); i++)
                r = string_list_push(&d.runtime_roots, default_runtime_roots[i]);
        if (r < 0 || !d.resctrl_path || !d.state_dir) {
                config_done(&d);
                return -ENOMEM;
        }
        *c = d;
        return 0;
}

int config_parse(struct config *c, const char *yaml, size_t len, const char *name,
                 struct config_problems *problems)
{
        struct cfg_parser p = {.input = yaml, .len = len, .name = name, .problems = problems};
        int r;

        if (len > CONFIG_MAX)
                return -EFBIG;
        if (!yaml_parser_initialize(&p.yaml))
                return -ENOMEM;
        yaml_parser_set_input_string(&p.yaml, (const unsigned char *) yaml, len);
        r = parse_stream(&p, c);
        yaml_parser_delete(&p.yaml);
        /* Every key recovers from a bad value of its own: what reaches the top
         * is the document's own shape (not a mapping, an anchor on it). */
        if (r == -EINVAL && problems && problems->n > 0)
                problems->items[problems->n - 1].kind = CONFIG_PROBLEM_INCOMPLETE;
        return r == -ENOMEM ? r : 0;
}

int config_load(struct config *c, const char *path, struct config_problems *problems)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_all_fd(fd, CONFIG_MAX, &buf, &len);
        if (r < 0)
                return r;
        return config_parse(c, buf, len, path, problems);
}

int log_level_from_string(const char *s)
{
        static const struct {
                const char *name;
                int level;
        } levels[] = {
            {"err", LOG_ERR},         {"error", LOG_ERR}, {"warn", LOG_WARNING},
            {"warning", LOG_WARNING}, {"info", LOG_INFO}, {"debug", LOG_DEBUG},
        };

        for (size_t i = 0; s && i < ELEMENTSOF(levels); i++)
                if (strcmp(s, levels[i].name) == 0)
                        return levels[i].level;
        return -EINVAL;
}
