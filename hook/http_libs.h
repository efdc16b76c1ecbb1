/* SPDX-License-Identifier: Apache-2.0 */
/* libmicrohttpd and libcrypt, opened with dlopen(3) by the one command that
 * serves HTTP (watch --metrics-listen), the way systemd opens its optional
 * libraries. Linked in, libmicrohttpd would bring GnuTLS and its nine
 * libraries into every run of the binary, GnuTLS's constructor included:
 * about 1.2 ms of CPU at each createRuntime, a third of the hook's own. The
 * symbols are called through the sym_ pointers below, typed from the
 * libraries' own headers. */
#pragma once

#include <crypt.h>
#include <microhttpd.h>

/* NOLINTNEXTLINE(bugprone-macro-parentheses): a declaration */
#define HTTP_LIBS_SYM(name) extern __typeof__(name) *sym_##name

HTTP_LIBS_SYM(MHD_start_daemon);
HTTP_LIBS_SYM(MHD_stop_daemon);
HTTP_LIBS_SYM(MHD_is_feature_supported);
HTTP_LIBS_SYM(MHD_get_connection_info);
HTTP_LIBS_SYM(MHD_queue_response);
HTTP_LIBS_SYM(MHD_create_response_from_buffer);
HTTP_LIBS_SYM(MHD_create_response_from_buffer_with_free_callback_cls);
HTTP_LIBS_SYM(MHD_add_response_header);
HTTP_LIBS_SYM(MHD_destroy_response);
HTTP_LIBS_SYM(MHD_basic_auth_get_username_password);
HTTP_LIBS_SYM(MHD_queue_basic_auth_fail_response);
HTTP_LIBS_SYM(MHD_free);
HTTP_LIBS_SYM(MHD_lookup_connection_value);
HTTP_LIBS_SYM(crypt_rn);
HTTP_LIBS_SYM(crypt_checksalt);
HTTP_LIBS_SYM(crypt_gensalt_rn);

/* Opens both libraries and resolves every sym_ pointer, once: call it
 * before any thread starts. 0; -EOPNOTSUPP in a static build (which has no
 * dlopen: deploy/Containerfile's copy for the nodes), or -ENOENT with
 * dlerror(3)'s text in *reterr_why (the caller frees it) when a library
 * or a symbol is missing. */
int http_libs_load(char **reterr_why);
