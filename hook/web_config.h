/* SPDX-License-Identifier: Apache-2.0 */
/* watch --web-config FILE: Prometheus' web configuration file, as
 * exporter-toolkit reads it, so that operators reuse what they have:
 *
 *   tls_server_config:
 *     cert_file: server.crt         # PEM; relative to FILE's directory
 *     key_file: server.key
 *     client_auth_type: NoClientCert   # the only one supported
 *   basic_auth_users:
 *     prometheus: $2y$10$...        # bcrypt (htpasswd -nBC 10 prometheus)
 *
 * Any other key, a client CA (client certificates are not supported), a
 * tls_server_config without both files, or a hash that is not bcrypt's, is
 * refused: watch then serves nothing rather than serving in the clear or
 * to anyone. Never logs: what is wrong comes back as text. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Bounds of what is read: no web config, certificate or key is larger. */
#define WEB_CONFIG_FILE_MAX (1u << 20)

struct web_user {
        char *name;
        char *hash;     /* bcrypt: $2y$, $2b$ or $2a$ */
        char *verified; /* a cheap salted digest of the password last found right; NULL */
};

struct web_config {
        char *cert_pem; /* NULL: plain HTTP */
        char *key_pem;
        struct web_user *users; /* none: no authentication */
        size_t n_users;
        pthread_mutex_t lock; /* users' verified */
        /* One bcrypt check at a time: it costs tens of milliseconds of CPU
         * by design, and clients that guess passwords get one core at most
         * (at watch's HTTP server's low priority). */
        pthread_mutex_t bcrypt_lock;
};

/* Reads the web config at path into *ret, which web_config_done frees
 * whatever this returns. libcrypt must be loaded (http_libs_load) where
 * basic_auth_users is used. 0; -EINVAL, -ENOENT, ... with what is wrong in
 * *reterr_why, one line naming the key and the file (the caller frees it). */
int web_config_load(const char *path, struct web_config *ret, char **reterr_why);

void web_config_done(struct web_config *c);

/* Whether user's password is the one the file's hash says, compared in
 * constant time; an unknown user costs the same as a known one. A right
 * password is remembered as a salted SHA-256-crypt digest (a millisecond
 * to check, where bcrypt takes tens), as exporter-toolkit caches it, and
 * checked without waiting for the bcrypt checks of others.
 * Thread-safe. 1 right, 0 wrong, -errno. */
int web_config_check(struct web_config *c, const char *user, const char *password);
