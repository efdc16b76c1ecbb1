/* SPDX-License-Identifier: Apache-2.0 */
/* watch --web-config: Prometheus' web configuration file as
 * hook/web_config.h reads it, and its bcrypt checks. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_libs.h"
#include "macro.h"
#include "tmptree.h"
#include "web_config.h"

/* htpasswd -nbBC 4 u secret, and the same as Python's crypt makes it ($2b$). */
#define HASH_SECRET "$2y$04$SfFQu4wP2JJLSoQxOlTNy.OuJdVky383L/byIuLgqqQKwR5zIlkzy"
#define HASH_SECRET_2B "$2b$04$4gQ79G00UF8kcfDEUIVUpOB37m4Jw4Ce7cXRQ5lR9s70u/UhVynNq"
#define CERT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define KEY "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"

static const char *dir;

/* A directory with a certificate and a key, and web.yml holding text. */
static void setup(const char *text)
{
        _cleanup_close_ int fd = tmptree_new(&dir);
        char *why = NULL;

        ck_assert_int_eq(http_libs_load(&why), 0);
        free(why);
        tmptree_mkdir(fd, "tls");
        tmptree_put(fd, "tls/server.crt", CERT);
        tmptree_put(fd, "tls/server.key", KEY);
        tmptree_put(fd, "web.yml", text);
}

/* Loads dir/web.yml: its result, its message in *why (or NULL). */
static int load(struct web_config *c, char **why)
{
        char path[4096];

        (void) snprintf(path, sizeof(path), "%s/web.yml", dir);
        return web_config_load(path, c, why);
}

START_TEST(test_valid)
{
        struct web_config c;
        char *why = NULL;

        setup("tls_server_config:\n"
              "  cert_file: tls/server.crt   # relative to the file's directory\n"
              "  key_file: tls/server.key\n"
              "  client_auth_type: NoClientCert\n"
              "basic_auth_users:\n"
              "  prometheus: " HASH_SECRET "\n"
              "  other: '" HASH_SECRET_2B "'\n");
        ck_assert_int_eq(load(&c, &why), 0);
        ck_assert_ptr_null(why);
        ck_assert_str_eq(c.cert_pem, CERT);
        ck_assert_str_eq(c.key_pem, KEY);
        ck_assert_uint_eq(c.n_users, 2);
        ck_assert_str_eq(c.users[0].name, "prometheus");
        ck_assert_str_eq(c.users[1].hash, HASH_SECRET_2B);
        web_config_done(&c);
}
END_TEST

/* No TLS, no users: plain HTTP without authentication, as exporter-toolkit
 * takes an empty file. */
START_TEST(test_empty)
{
        static const char *const texts[] = {"", "# nothing\n", "basic_auth_users:\n",
                                            "basic_auth_users: {}\n"};

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                struct web_config c;
                char *why = NULL;

                setup(texts[i]);
                ck_assert_int_eq(load(&c, &why), 0);
                ck_assert_ptr_null(c.cert_pem);
                ck_assert_uint_eq(c.n_users, 0);
                web_config_done(&c);
        }
}
END_TEST

START_TEST(test_passwords)
{
        struct web_config c;
        char *why = NULL;

        setup("basic_auth_users:\n  prometheus: " HASH_SECRET "\n  py: " HASH_SECRET_2B "\n");
        ck_assert_int_eq(load(&c, &why), 0);
        ck_assert_int_eq(web_config_check(&c, "prometheus", "wrong"), 0);
        ck_assert_ptr_null(c.users[0].verified);
        ck_assert_int_eq(web_config_check(&c, "prometheus", "secret"), 1);
        /* Remembered, salted: the next right one is checked cheaply... */
        ck_assert_ptr_nonnull(c.users[0].verified);
        ck_assert(strncmp(c.users[0].verified, "$5$", 3) == 0);
        ck_assert_ptr_null(strstr(c.users[0].verified, "secret"));
        ck_assert_int_eq(web_config_check(&c, "prometheus", "secret"), 1);
        /* ...and a wrong one is still wrong, a prefix or an extension too. */
        ck_assert_int_eq(web_config_check(&c, "prometheus", "secre"), 0);
        ck_assert_int_eq(web_config_check(&c, "prometheus", "secret2"), 0);
        ck_assert_int_eq(web_config_check(&c, "prometheus", ""), 0);
        ck_assert_int_eq(web_config_check(&c, "py", "secret"), 1);
        /* A user the file does not name, even with a user's password. */
        ck_assert_int_eq(web_config_check(&c, "nobody", "secret"), 0);
        ck_assert_int_eq(web_config_check(&c, "", "secret"), 0);
        ck_assert_int_eq(web_config_check(&c, "Prometheus", "secret"), 0);
        web_config_done(&c);
}
END_TEST

/* A remembered password is checked while another check holds bcrypt's
 * turn (as a client guessing passwords would): it does not wait for it. */
START_TEST(test_remembered_beside_bcrypt)
{
        struct web_config c;
        char *why = NULL;

        setup("basic_auth_users:\n  prometheus: " HASH_SECRET "\n");
        ck_assert_int_eq(load(&c, &why), 0);
        ck_assert_int_eq(web_config_check(&c, "prometheus", "secret"), 1);
        ck_assert_int_eq(pthread_mutex_lock(&c.bcrypt_lock), 0);
        ck_assert_int_eq(web_config_check(&c, "prometheus", "secret"), 1);
        ck_assert_int_eq(pthread_mutex_unlock(&c.bcrypt_lock), 0);
        web_config_done(&c);
}
END_TEST

/* Each refused file, and what its one line must name. */
static const struct {
        const char *text;
        const char *says;
} bad_cases[] = {
    {"http_server_config:\n  http2: false\n", "unknown key 'http_server_config'"},
    {"tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/server.key\n"
     "  min_version: TLS13\n",
     "tls_server_config: unknown key 'min_version'"},
    {"tls_server_config:\n  cert_file: tls/server.crt\n", "tls_server_config: key_file is missing"},
    {"tls_server_config:\n  key_file: tls/server.key\n", "tls_server_config: cert_file is missing"},
    /* TLS asked for with nothing under it: never served in the clear. */
    {"tls_server_config:\n", "tls_server_config: cert_file is missing"},
    {"tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/missing.key\n",
     "key_file '"},
    {"tls_server_config:\n  cert_file: tls\n  key_file: tls/server.key\n", "not a regular file"},
    {"tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/server.key\n"
     "  client_auth_type: RequireAndVerifyClientCert\n",
     "client_auth_type 'RequireAndVerifyClientCert' is not supported"},
    {"tls_server_config:\n  cert_file: tls/server.crt\n  key_file: tls/server.key\n"
     "  client_ca_file: tls/server.crt\n",
     "client_ca_file is not supported"},
    {"tls_server_config: yes\n", "tls_server_config is not a mapping"},
    {"basic_auth_users:\n  prometheus: secret\n", "'prometheus': not a bcrypt hash"},
    /* An MD5 and a SHA-512 crypt: hashes, but not bcrypt's. */
    {"basic_auth_users:\n  a: $1$abc$2mVpOVhyR3wHgc5bK9Mkg/\n", "'a': not a bcrypt hash"},
    {"basic_auth_users:\n  a: $6$salt$IxDD3jeSOb5eB1CX5LBsqZFVkJdido3OUILO5Ifz5iwMuTS4XMS130MTSu"
     "GDbzvmZSs0kOaqvqOiQAqeFwRL6.\n",
     "'a': not a bcrypt hash"},
    /* bcrypt's form with a cost out of range, one character short, $2x$. */
    {"basic_auth_users:\n  a: $2y$03$SfFQu4wP2JJLSoQxOlTNy.OuJdVky383L/byIuLgqqQKwR5zIlkzy\n",
     "not a bcrypt hash"},
    {"basic_auth_users:\n  a: $2y$04$SfFQu4wP2JJLSoQxOlTNy.OuJdVky383L/byIuLgqqQKwR5zIlkz\n",
     "not a bcrypt hash"},
    {"basic_auth_users:\n  a: $2x$04$SfFQu4wP2JJLSoQxOlTNy.OuJdVky383L/byIuLgqqQKwR5zIlkzy\n",
     "not a bcrypt hash"},
    {"basic_auth_users:\n  a: [" HASH_SECRET "]\n", "'a': not a bcrypt hash"},
    {"basic_auth_users:\n  'a:b': " HASH_SECRET "\n", "user 'a:b' is empty or has a ':'"},
    {"basic_auth_users:\n  a: " HASH_SECRET "\n  a: " HASH_SECRET "\n", "key 'a' given twice"},
    {"basic_auth_users: [a]\n", "basic_auth_users is not a mapping"},
    {"- tls_server_config\n", "not a mapping"},
    {"tls_server_config: {cert_file: [\n", "not YAML"},
    /* One document: what would follow is not ignored. */
    {"basic_auth_users:\n  a: " HASH_SECRET "\n---\nbasic_auth_users:\n  b: " HASH_SECRET "\n",
     "line 3: a second YAML document"},
    {"basic_auth_users:\n  a: " HASH_SECRET "\n---\n[\n", "not YAML"},
};

START_TEST(test_bad)
{
        struct web_config c;
        char *why = NULL;

        setup(bad_cases[_i].text);
        ck_assert_int_lt(load(&c, &why), 0);
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(strstr(why, bad_cases[_i].says), "'%s' does not say '%s'", why,
                      bad_cases[_i].says);
        /* One line, naming the file. */
        ck_assert_ptr_null(strchr(why, '\n'));
        ck_assert_ptr_nonnull(strstr(why, "/web.yml'"));
        free(why);
        web_config_done(&c);
}
END_TEST

/* A --- that ends the file starts no document: taken, as exporter-toolkit
 * takes it. */
START_TEST(test_trailing_document_start)
{
        struct web_config c;
        char *why = NULL;

        setup("basic_auth_users:\n  prometheus: " HASH_SECRET "\n---\n");
        ck_assert_int_eq(load(&c, &why), 0);
        ck_assert_ptr_null(why);
        ck_assert_int_eq(web_config_check(&c, "prometheus", "secret"), 1);
        web_config_done(&c);
}
END_TEST

START_TEST(test_missing_file)
{
        struct web_config c;
        char *why = NULL;

        setup("");
        ck_assert_int_eq(web_config_load("/nonexistent/web.yml", &c, &why), -EINVAL);
        ck_assert_ptr_nonnull(strstr(why, "'/nonexistent/web.yml': No such file or directory"));
        free(why);
        web_config_done(&c);
}
END_TEST

static Suite *web_config_suite(void)
{
        Suite *s = suite_create("web_config");
        TCase *tc = tcase_create("web_config");

        tcase_add_test(tc, test_valid);
        tcase_add_test(tc, test_empty);
        tcase_add_test(tc, test_passwords);
        tcase_add_test(tc, test_remembered_beside_bcrypt);
        tcase_add_test(tc, test_trailing_document_start);
        tcase_add_loop_test(tc, test_bad, 0, ELEMENTSOF(bad_cases));
        tcase_add_test(tc, test_missing_file);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(web_config_suite());
}
