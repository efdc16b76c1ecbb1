/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "prom.h"

struct prom_family {
        char *name;
        char *help;
        char *type;
        char *samples; /* "name{labels} value\n" lines */
        size_t len;
};

void prom_writer_done(struct prom_writer *w)
{
        for (size_t i = 0; i < w->n; i++) {
                free(w->families[i].name);
                free(w->families[i].help);
                free(w->families[i].type);
                free(w->families[i].samples);
        }
        free(w->families);
        *w = (struct prom_writer){0};
}

static bool name_char_ok(char c, bool first)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
               (!first && c >= '0' && c <= '9');
}

static bool metric_name_is_valid(const char *name)
{
        if (!name || !*name)
                return false;
        for (const char *c = name; *c; c++)
                if (!name_char_ok(*c, c == name))
                        return false;
        return true;
}

/* Writes s with backslash, newline and (in label values) double quote escaped. */
static void put_escaped(FILE *f, const char *s, bool quote)
{
        for (; *s; s++) {
                if (*s == '\\')
                        fputs("\\\\", f);
                else if (*s == '\n')
                        fputs("\\n", f);
                else if (quote && *s == '"')
                        fputs("\\\"", f);
                else
                        fputc(*s, f);
        }
}

static struct prom_family *family_get(struct prom_writer *w, const char *name, const char *type,
                                      const char *help)
{
        struct prom_family f, *a;

        for (size_t i = 0; i < w->n; i++)
                if (strcmp(w->families[i].name, name) == 0)
                        return &w->families[i];

        f = (struct prom_family){.name = strdup(name), .help = strdup(help), .type = strdup(type)};
        a = f.name && f.help && f.type ? realloc(w->families, (w->n + 1) * sizeof(*a)) : NULL;
        if (!a) {
                free(f.name);
                free(f.help);
                free(f.type);
                return NULL;
        }
        a[w->n] = f;
        w->families = a;
        return &a[w->n++];
}

/* Appends one sample line to the family. */
static int family_append(struct prom_family *fam, const char *const *labels, const char *value)
{
        _cleanup_free_ char *line = NULL;
        size_t len = 0;
        char *p;
        FILE *f;

        f = open_memstream(&line, &len);
        if (!f)
                return -ENOMEM;
        fputs(fam->name, f);
        for (size_t i = 0; labels && labels[i]; i += 2) {
                fprintf(f, "%s%s=\"", i == 0 ? "{" : ",", labels[i]);
                put_escaped(f, labels[i + 1] ? labels[i + 1] : "", true);
                fputc('"', f);
        }
        fprintf(f, "%s %s\n", labels && labels[0] ? "}" : "", value);
        if (fclose(f) != 0 || !line)
                return -ENOMEM;

        p = realloc(fam->samples, fam->len + len + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p + fam->len, line, len + 1);
        fam->samples = p;
        fam->len += len;
        return 0;
}

int prom_add(struct prom_writer *w, const char *name, const char *type, const char *help,
             const char *const *labels, const char *value)
{
        struct prom_family *fam;

        if (!metric_name_is_valid(name) ||
            (strcmp(type, "gauge") != 0 && strcmp(type, "counter") != 0))
                return -EINVAL;
        for (size_t i = 0; labels && labels[i]; i += 2)
                if (!metric_name_is_valid(labels[i]) || strchr(labels[i], ':'))
                        return -EINVAL;

        fam = family_get(w, name, type, help);
        if (!fam)
                return -ENOMEM;
        if (strcmp(fam->type, type) != 0)
                return -EINVAL;
        return family_append(fam, labels, value);
}

int prom_render(const struct prom_writer *w, char **ret)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < w->n; i++) {
                const struct prom_family *fam = &w->families[i];

                fprintf(f, "# HELP %s ", fam->name);
                put_escaped(f, fam->help, false);
                fprintf(f, "\n# TYPE %s %s\n", fam->name, fam->type);
                if (fam->samples)
                        fputs(fam->samples, f);
        }
        if (fclose(f) != 0 || !text) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}

/* "..._<unit>": the event name already says its unit (mbm_total_bytes). */
static bool ends_with_unit(const char *s, size_t n, const char *suffix)
{
        size_t m = strlen(suffix);

        return n > m && s[n - m - 1] == '_' && strncmp(s + n - m, suffix, m) == 0;
}

int prom_counter_name(const char *prefix, const char *event, enum counter_kind kind,
                      const char *unit, char **ret)
{
        size_t n = strlen(event);
        char *name, *p;

        if (asprintf(&name, "%s%s%s%s%s", prefix, event,
                     unit && !ends_with_unit(event, n, unit) ? "_" : "",
                     unit && !ends_with_unit(event, n, unit) ? unit : "",
                     kind == COUNTER_CUMULATIVE ? "_total" : "") < 0)
                return -ENOMEM;
        for (p = name + strlen(prefix); p < name + strlen(prefix) + n; p++)
                if (!name_char_ok(*p, false) || *p == ':')
                        *p = '_';
        *ret = name;
        return 0;
}
