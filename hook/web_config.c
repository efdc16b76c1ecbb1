/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "fsutil.h"
#include "http_libs.h"
#include "macro.h"
#include "web_config.h"

/* What the right password is remembered as: SHA-256-crypt at its fewest
 * rounds, salted afresh each time, about a millisecond. */
#define WEB_CONFIG_VERIFIED_PREFIX "$5$"
#define WEB_CONFIG_VERIFIED_ROUNDS 1000

/* A load in progress: the file, its directory (for relative paths), the
 * document and what was found wrong first. */
struct web_load {
        const char *path;
        char *dir;
        yaml_document_t doc;
        char *why;
};

__attribute__((format(printf, 2, 3))) static int load_fail(struct web_load *l, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        free(l->why);
        if (asprintf(&l->why, "'%s': %s", l->path, msg) < 0)
                l->why = NULL;
        return -EINVAL;
}

/* A regular file's content, NUL-terminated; symlinks followed (a
 * Kubernetes Secret's files are links), at most WEB_CONFIG_FILE_MAX. */
static int read_whole(const char *path, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if (st.st_size > (off_t) WEB_CONFIG_FILE_MAX)
                return -EFBIG;
        return read_all_fd(fd, WEB_CONFIG_FILE_MAX, ret, ret_len);
}

static const char *scalar_of(const yaml_node_t *n)
{
        return n && n->type == YAML_SCALAR_NODE ? (const char *) n->data.scalar.value : NULL;
}

/* A scalar that is YAML's null: "", "~", "null". */
static bool is_null(const yaml_node_t *n)
{
        const char *s = scalar_of(n);

        return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
                strcmp(s, "NULL") == 0);
}

/* Mapping m's pairs, each key a scalar, each once; NULL after the last. */
static int next_pair(struct web_load *l, const yaml_node_t *m, size_t *i, const char *section,
                     const char **ret_key, yaml_node_t **ret_value)
{
        const yaml_node_pair_t *pairs = m->data.mapping.pairs.start;
        size_t n = (size_t) (m->data.mapping.pairs.top - pairs);

        *ret_key = NULL;
        if (*i >= n)
                return 0;
        *ret_key = scalar_of(yaml_document_get_node(&l->doc, pairs[*i].key));
        *ret_value = yaml_document_get_node(&l->doc, pairs[*i].value);
        if (!*ret_key)
                return load_fail(l, "%s%sa key that is not a string", section,
                                 *section ? ": " : "");
        for (size_t j = 0; j < *i; j++) {
                const char *k = scalar_of(yaml_document_get_node(&l->doc, pairs[j].key));

                if (k && strcmp(k, *ret_key) == 0)
                        return load_fail(l, "%s%skey '%s' given twice", section,
                                         *section ? ": " : "", *ret_key);
        }
        (*i)++;
        return 1;
}

/* path, or the config file's directory joined with it when relative. */
static int resolve(struct web_load *l, const char *path, char **ret)
{
        if (path[0] == '/')
                *ret = strdup(path);
        else if (asprintf(ret, "%s/%s", l->dir, path) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

/* tls_server_config's key (cert_file or key_file) into *ret, read. */
static int load_pem(struct web_load *l, const char *key, const yaml_node_t *v, char **ret)
{
        _cleanup_free_ char *path = NULL;
        const char *s = scalar_of(v);
        size_t len = 0;
        int r;

        if (!s || is_null(v))
                return load_fail(l, "tls_server_config: %s is not a file name", key);
        if (*ret)
                return load_fail(l, "tls_server_config: %s given twice", key);
        r = resolve(l, s, &path);
        if (r < 0)
                return r;
        r = read_whole(path, ret, &len);
        if (r < 0)
                return load_fail(l, "tls_server_config: %s '%s': %s", key, path,
                                 r == -EINVAL ? "not a regular file" : strerror(-r));
        if (len == 0 || strlen(*ret) != len)
                return load_fail(l, "tls_server_config: %s '%s': not a PEM file", key, path);
        return 0;
}

static int load_tls(struct web_load *l, const yaml_node_t *m, struct web_config *c)
{
        const char *key;
        yaml_node_t *v;
        size_t i = 0;
        int r;

        if (m->type != YAML_MAPPING_NODE && !is_null(m))
                return load_fail(l, "tls_server_config is not a mapping");
        while (m->type == YAML_MAPPING_NODE &&
               (r = next_pair(l, m, &i, "tls_server_config", &key, &v)) > 0) {
                if (strcmp(key, "cert_file") == 0)
                        r = load_pem(l, key, v, &c->cert_pem);
                else if (strcmp(key, "key_file") == 0)
                        r = load_pem(l, key, v, &c->key_pem);
                else if (strcmp(key, "client_auth_type") == 0)
                        r = is_null(v) ||
                                    (scalar_of(v) && strcmp(scalar_of(v), "NoClientCert") == 0)
                                ? 0
                                : load_fail(l,
                                            "tls_server_config: client_auth_type '%s' is not "
                                            "supported (only NoClientCert: client certificates "
                                            "are not)",
                                            scalar_of(v) ? scalar_of(v) : "");
                else if (strcmp(key, "client_ca_file") == 0)
                        r = load_fail(l, "tls_server_config: client_ca_file is not supported "
                                         "(client certificates are not)");
                else
                        r = load_fail(l,
                                      "tls_server_config: unknown key '%s' (supported: "
                                      "cert_file, key_file, client_auth_type: NoClientCert)",
                                      key);
                if (r < 0)
                        return r;
        }
        if (m->type == YAML_MAPPING_NODE && r < 0)
                return r;
        /* TLS was asked for: never served in the clear for want of a file. */
        if (!c->cert_pem || !c->key_pem)
                return load_fail(l, "tls_server_config: %s is missing",
                                 !c->cert_pem ? "cert_file" : "key_file");
        return 0;
}

/* bcrypt's modular crypt format: $2y$ (or $2b$, $2a$), a cost of 04 to 31,
 * then 22 characters of salt and 31 of hash in its base64. */
static bool is_bcrypt(const char *h)
{
        int cost;

        if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("yba", h[2]) || h[3] != '$' ||
            h[6] != '$' || h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9')
                return false;
        cost = (h[4] - '0') * 10 + (h[5] - '0');
        if (cost < 4 || cost > 31)
                return false;
        if (strspn(h + 7, "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != 53)
                return false;
        /* And libcrypt takes it: a distribution may disable a method. */
        return sym_crypt_checksalt(h) == CRYPT_SALT_OK;
}

static int load_users(struct web_load *l, const yaml_node_t *m, struct web_config *c)
{
        size_t n, i = 0;
        const char *user;
        yaml_node_t *v;
        int r;

        if (is_null(m))
                return 0;
        if (m->type != YAML_MAPPING_NODE)
                return load_fail(l, "basic_auth_users is not a mapping of users to bcrypt hashes");
        n = (size_t) (m->data.mapping.pairs.top - m->data.mapping.pairs.start);
        c->users = calloc(n, sizeof(*c->users));
        if (n > 0 && !c->users)
                return -ENOMEM;
        while ((r = next_pair(l, m, &i, "basic_auth_users", &user, &v)) > 0) {
                const char *hash = scalar_of(v);

                /* Basic auth ends a user's name at its first colon. */
                if (!*user || strchr(user, ':'))
                        return load_fail(l, "basic_auth_users: user '%s' is empty or has a ':'",
                                         user);
                if (!hash || !is_bcrypt(hash))
                        return load_fail(l,
                                         "basic_auth_users: '%s': not a bcrypt hash ($2y$, $2b$ "
                                         "or $2a$, cost 04 to 31; htpasswd -nBC 10 USER makes one)",
                                         user);
                c->users[c->n_users] =
                    (struct web_user){.name = strdup(user), .hash = strdup(hash)};
                if (!c->users[c->n_users].name || !c->users[c->n_users].hash)
                        return -ENOMEM;
                c->n_users++;
        }
        return r;
}

static int load_root(struct web_load *l, struct web_config *c)
{
        const yaml_node_t *root = yaml_document_get_root_node(&l->doc);
        const char *key;
        yaml_node_t *v;
        size_t i = 0;
        int r;

        if (!root || is_null(root)) /* an empty file: plain HTTP, no authentication */
                return 0;
        if (root->type != YAML_MAPPING_NODE)
                return load_fail(l, "not a mapping of tls_server_config and basic_auth_users");
        while ((r = next_pair(l, root, &i, "", &key, &v)) > 0) {
                if (strcmp(key, "tls_server_config") == 0)
                        r = load_tls(l, v, c);
                else if (strcmp(key, "basic_auth_users") == 0)
                        r = load_users(l, v, c);
                else
                        r = load_fail(l,
                                      "unknown key '%s' (supported: tls_server_config, "
                                      "basic_auth_users)",
                                      key);
                if (r < 0)
                        return r;
        }
        return r;
}

/* The file's text as a YAML document into l->doc; true once it has one. */
static int parse(struct web_load *l, const char *text, size_t len, bool *ret_loaded)
{
        yaml_parser_t parser;
        int r = 0;

        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, len);
        *ret_loaded = yaml_parser_load(&parser, &l->doc);
        if (!*ret_loaded)
                r = load_fail(l, "line %zu: not YAML: %s", parser.problem_mark.line + 1,
                              parser.problem ? parser.problem : "cannot be parsed");
        else {
                /* One document: a second one (after ---) would be ignored.
                 * An empty one (a --- that ends the file) is no document. */
                yaml_document_t next;
                const yaml_node_t *root;

                if (!yaml_parser_load(&parser, &next))
                        r = load_fail(l, "line %zu: not YAML: %s", parser.problem_mark.line + 1,
                                      parser.problem ? parser.problem : "cannot be parsed");
                else {
                        root = yaml_document_get_root_node(&next);
                        if (root &&
                            !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0))
                                r = load_fail(l,
                                              "line %zu: a second YAML document; the file "
                                              "must hold one",
                                              next.start_mark.line + 1);
                        yaml_document_delete(&next);
                }
        }
        yaml_parser_delete(&parser);
        return r;
}

int web_config_load(const char *path, struct web_config *ret, char **reterr_why)
{
        _cleanup_free_ char *text = NULL, *copy = strdup(path);
        struct web_load l = {.path = path};
        bool loaded = false;
        size_t len = 0;
        int r;

        *ret = (struct web_config){0};
        *reterr_why = NULL;
        (void) pthread_mutex_init(&ret->lock, NULL);
        (void) pthread_mutex_init(&ret->bcrypt_lock, NULL);
        if (!copy || !(l.dir = strdup(dirname(copy))))
                return -ENOMEM;
        r = read_whole(path, &text, &len);
        if (r < 0)
                r = load_fail(&l, "%s", r == -EINVAL ? "not a regular file" : strerror(-r));
        if (r >= 0)
                r = parse(&l, text, len, &loaded);
        if (r >= 0)
                r = load_root(&l, ret);
        if (loaded)
                yaml_document_delete(&l.doc);
        free(l.dir);
        if (r < 0 && !l.why && r != -ENOMEM)
                (void) load_fail(&l, "%s", strerror(-r));
        *reterr_why = l.why;
        return r;
}

/* Overwrites secrets before they are freed. */
static void free_secret(char *s)
{
        if (s)
                explicit_bzero(s, strlen(s));
        free(s);
}

void web_config_done(struct web_config *c)
{
        for (size_t i = 0; i < c->n_users; i++) {
                free(c->users[i].name);
                free(c->users[i].hash);
                free_secret(c->users[i].verified);
        }
        free(c->users);
        free(c->cert_pem);
        free_secret(c->key_pem);
        (void) pthread_mutex_destroy(&c->lock);
        (void) pthread_mutex_destroy(&c->bcrypt_lock);
        *c = (struct web_config){0};
}

/* a and b equal, in a time that depends on their lengths only. */
static bool equal_in_constant_time(const char *a, const char *b)
{
        size_t n = strlen(a), m = strlen(b);
        unsigned char diff = n != m;

        for (size_t i = 0; i < n && i < m; i++)
                diff |= (unsigned char) (a[i] ^ b[i]);
        return diff == 0;
}

/* libcrypt's scratch space for one check, wiped after it. */
static void crypt_data_freep(struct crypt_data **d)
{
        if (*d)
                explicit_bzero(*d, sizeof(**d));
        free(*d);
}

/* password hashed with setting (a whole hash, whose salt it takes) equals
 * hash. */
static bool matches(struct crypt_data *d, const char *password, const char *hash)
{
        const char *out = sym_crypt_rn(password, hash, d, sizeof(*d));

        /* libcrypt fails with a string starting with '*', never a match. */
        return out && out[0] != '*' && equal_in_constant_time(out, hash);
}

/* Whether password is the one last found right for u. */
static bool matches_verified(struct web_config *c, struct crypt_data *d, struct web_user *u,
                             const char *password)
{
        char *verified;
        bool right;

        (void) pthread_mutex_lock(&c->lock);
        verified = u->verified ? strdup(u->verified) : NULL;
        (void) pthread_mutex_unlock(&c->lock);
        right = verified && matches(d, password, verified);
        free_secret(verified);
        return right;
}

/* Remembers password as user u's right one: a fresh salt, a cheap hash. */
static void remember(struct web_config *c, struct crypt_data *d, struct web_user *u,
                     const char *password)
{
        char setting[CRYPT_GENSALT_OUTPUT_SIZE];
        const char *out;
        char *verified = NULL;

        if (!sym_crypt_gensalt_rn(WEB_CONFIG_VERIFIED_PREFIX, WEB_CONFIG_VERIFIED_ROUNDS, NULL, 0,
                                  setting, sizeof(setting)))
                return; /* the next check is bcrypt's again */
        out = sym_crypt_rn(password, setting, d, sizeof(*d));
        if (out && out[0] != '*')
                verified = strdup(out);
        (void) pthread_mutex_lock(&c->lock);
        free_secret(u->verified);
        u->verified = verified;
        (void) pthread_mutex_unlock(&c->lock);
}

int web_config_check(struct web_config *c, const char *user, const char *password)
{
        _cleanup_(crypt_data_freep) struct crypt_data *d = calloc(1, sizeof(*d));
        struct web_user *u = NULL, *t;
        bool right;

        if (!d)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_users; i++)
                if (strcmp(c->users[i].name, user) == 0)
                        u = &c->users[i];
        if (c->n_users == 0)
                return 0;
        /* An unknown user costs what the first user does, both checks: who
         * is a user is not told by time. A remembered password never
         * waits for the bcrypt checks of others (clients that guess, say). */
        t = u ? u : &c->users[0];
        if (matches_verified(c, d, t, password) && u)
                return 1;
        (void) pthread_mutex_lock(&c->bcrypt_lock);
        right = matches(d, password, t->hash) && u;
        (void) pthread_mutex_unlock(&c->bcrypt_lock);
        if (right)
                remember(c, d, u, password);
        return right;
}
