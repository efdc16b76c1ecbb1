/* SPDX-License-Identifier: Apache-2.0 */
/* Linked only into sanitizer builds (ENABLE_SANITIZERS). Runtimes run a hook
 * with the environment of its hook entry alone, so no ASAN_OPTIONS reaches
 * it, and runc and Podman only warn about a failing poststop: a report on
 * stderr would go unseen. Reports go to files in the build tree instead,
 * which scripts/test.sh requires to stay empty. ASAN_OPTIONS and
 * UBSAN_OPTIONS in the environment still override these. */

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *__asan_default_options(void)
{
        return "log_path=" SANITIZER_REPORT_DIR "/hook";
}

const char *__ubsan_default_options(void)
{
        return "log_path=" SANITIZER_REPORT_DIR "/hook:print_stacktrace=1";
}
