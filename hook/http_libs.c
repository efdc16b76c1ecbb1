/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "http_libs.h"
#include "macro.h"

/* NOLINTNEXTLINE(bugprone-macro-parentheses): a declaration */
#define HTTP_LIBS_DEFINE(name) __typeof__(name) *sym_##name

HTTP_LIBS_DEFINE(MHD_start_daemon);
HTTP_LIBS_DEFINE(MHD_stop_daemon);
HTTP_LIBS_DEFINE(MHD_is_feature_supported);
HTTP_LIBS_DEFINE(MHD_get_connection_info);
HTTP_LIBS_DEFINE(MHD_queue_response);
HTTP_LIBS_DEFINE(MHD_create_response_from_buffer);
HTTP_LIBS_DEFINE(MHD_create_response_from_buffer_with_free_callback_cls);
HTTP_LIBS_DEFINE(MHD_add_response_header);
HTTP_LIBS_DEFINE(MHD_destroy_response);
HTTP_LIBS_DEFINE(MHD_basic_auth_get_username_password);
HTTP_LIBS_DEFINE(MHD_queue_basic_auth_fail_response);
HTTP_LIBS_DEFINE(MHD_free);
HTTP_LIBS_DEFINE(MHD_lookup_connection_value);
HTTP_LIBS_DEFINE(crypt_rn);
HTTP_LIBS_DEFINE(crypt_checksalt);
HTTP_LIBS_DEFINE(crypt_gensalt_rn);

#if HTTP_LIBS_DLOPEN
#include <dlfcn.h>

struct http_sym {
        const char *name;
        void **ptr;
};
/* POSIX's way to store what dlsym returns into a function pointer. */
#define HTTP_SYM(name)                                                                             \
        {                                                                                          \
#name, (void **) &sym_##name                                                       \
        }

/* The failure of the last dl* call, as *reterr_why. -ENOENT. */
static int dl_failed(char **reterr_why)
{
        const char *e = dlerror();

        if (asprintf(reterr_why, "%s", e ? e : "unknown dlopen error") < 0)
                *reterr_why = NULL;
        return -ENOENT;
}

/* Opens soname and resolves each of syms; never closed once it has them
 * all: watch uses them until it exits. */
static int open_lib(const char *soname, const struct http_sym *syms, size_t n, char **reterr_why)
{
        void *dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

        if (!dl)
                return dl_failed(reterr_why);
        for (size_t i = 0; i < n; i++) {
                *syms[i].ptr = dlsym(dl, syms[i].name);
                if (!*syms[i].ptr) {
                        int r = dl_failed(reterr_why);

                        (void) dlclose(dl);
                        return r;
                }
        }
        return 0;
}

int http_libs_load(char **reterr_why)
{
        static const struct http_sym mhd[] = {
            HTTP_SYM(MHD_start_daemon),
            HTTP_SYM(MHD_stop_daemon),
            HTTP_SYM(MHD_is_feature_supported),
            HTTP_SYM(MHD_get_connection_info),
            HTTP_SYM(MHD_queue_response),
            HTTP_SYM(MHD_create_response_from_buffer),
            HTTP_SYM(MHD_create_response_from_buffer_with_free_callback_cls),
            HTTP_SYM(MHD_add_response_header),
            HTTP_SYM(MHD_destroy_response),
            HTTP_SYM(MHD_basic_auth_get_username_password),
            HTTP_SYM(MHD_queue_basic_auth_fail_response),
            HTTP_SYM(MHD_free),
            HTTP_SYM(MHD_lookup_connection_value),
        };
        static const struct http_sym crypt[] = {
            HTTP_SYM(crypt_rn),
            HTTP_SYM(crypt_checksalt),
            HTTP_SYM(crypt_gensalt_rn),
        };
        static bool loaded;
        int r;

        *reterr_why = NULL;
        if (loaded)
                return 0;
        r = open_lib(HTTP_LIBS_MHD_SONAME, mhd, ELEMENTSOF(mhd), reterr_why);
        if (r == 0)
                r = open_lib(HTTP_LIBS_CRYPT_SONAME, crypt, ELEMENTSOF(crypt), reterr_why);
        loaded = r == 0;
        return r;
}
#else
int http_libs_load(char **reterr_why)
{
        *reterr_why = NULL;
        return -EOPNOTSUPP;
}
#endif
