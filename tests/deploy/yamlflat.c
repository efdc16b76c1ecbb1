/* SPDX-License-Identifier: Apache-2.0 */
/* yamlflat FILE: prints every scalar of every YAML document of FILE as one line,
 * DOC.KEY.INDEX...=VALUE (documents and sequence items counted from 0), so that
 * shell tests can check manifests with grep. A backslash and a newline in a value
 * are written \\ and \n, as printf %b reads them. Exits 1, naming the line, on
 * malformed YAML. JSON parses too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "macro.h"

#define PATH_MAX_LEN 1024

static void yaml_parser_deletep(yaml_parser_t *p)
{
        yaml_parser_delete(p);
}

static void yaml_document_deletep(yaml_document_t *d)
{
        yaml_document_delete(d);
}

static void print_scalar(const char *path, const unsigned char *value, size_t len)
{
        printf("%s=", path);
        for (size_t i = 0; i < len; i++) {
                if (value[i] == '\n')
                        fputs("\\n", stdout);
                else if (value[i] == '\\')
                        fputs("\\\\", stdout);
                else
                        putchar(value[i]);
        }
        putchar('\n');
}

static void print_node(yaml_document_t *doc, yaml_node_t *node, char *path, size_t len, int depth)
{
        /* An alias can name its own ancestor: bound the depth. */
        if (!node || depth > 64 || len >= PATH_MAX_LEN - 1)
                return;

        if (node->type == YAML_SCALAR_NODE) {
                print_scalar(path, node->data.scalar.value, node->data.scalar.length);
        } else if (node->type == YAML_SEQUENCE_NODE) {
                int i = 0;

                for (yaml_node_item_t *it = node->data.sequence.items.start;
                     it < node->data.sequence.items.top; it++, i++) {
                        int n = snprintf(path + len, PATH_MAX_LEN - len, ".%d", i);

                        print_node(doc, yaml_document_get_node(doc, *it), path, len + (size_t) n,
                                   depth + 1);
                }
        } else if (node->type == YAML_MAPPING_NODE) {
                for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
                     p < node->data.mapping.pairs.top; p++) {
                        yaml_node_t *key = yaml_document_get_node(doc, p->key);
                        int n;

                        if (!key || key->type != YAML_SCALAR_NODE)
                                continue;
                        n = snprintf(path + len, PATH_MAX_LEN - len, ".%.*s",
                                     (int) key->data.scalar.length,
                                     (const char *) key->data.scalar.value);
                        print_node(doc, yaml_document_get_node(doc, p->value), path,
                                   len + (size_t) n, depth + 1);
                }
        }
        path[len] = '\0';
}

int main(int argc, char **argv)
{
        _cleanup_(yaml_parser_deletep) yaml_parser_t parser = {0};
        _cleanup_fclose_ FILE *f = NULL;
        char path[PATH_MAX_LEN];

        if (argc != 2) {
                fprintf(stderr, "usage: yamlflat FILE\n");
                return 2;
        }
        f = fopen(argv[1], "re");
        if (!f) {
                perror(argv[1]);
                return 1;
        }
        if (!yaml_parser_initialize(&parser))
                return 1;
        yaml_parser_set_input_file(&parser, f);

        for (int i = 0;; i++) {
                _cleanup_(yaml_document_deletep) yaml_document_t doc = {0};
                yaml_node_t *root;

                if (!yaml_parser_load(&parser, &doc)) {
                        fprintf(stderr, "%s:%zu:%zu: %s\n", argv[1], parser.problem_mark.line + 1,
                                parser.problem_mark.column + 1,
                                parser.problem ? parser.problem : "malformed YAML");
                        return 1;
                }
                root = yaml_document_get_root_node(&doc);
                if (!root)
                        return 0; /* the end of the stream */
                snprintf(path, sizeof(path), "%d", i);
                print_node(&doc, root, path, strlen(path), 0);
        }
}
