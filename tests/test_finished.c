/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "finished.h"
#include "fsutil.h"
#include "macro.h"
#include "statedir.h"
#include "tmptree.h"

#define UID_A "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define UID_B "9b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define NO_WAIT (now_usec() + 1000000)

static const struct finished_limits HOUR = {3600, FINISHED_MAX_BYTES, FINISHED_MAX_RECORDS};
static const struct finished_limits NONE = {0, FINISHED_MAX_BYTES, FINISHED_MAX_RECORDS};

static int state_fd = -EBADF, dir_fd = -EBADF;

static void setup(void)
{
        state_fd = tmptree_new(NULL);
        ck_assert_int_eq(statedir_open_finished(state_fd, true, &dir_fd), 0);
}

static void teardown(void)
{
        close(dir_fd);
        close(state_fd);
}

/* A record of uid's group in ctrl made at created_ms: two domains of
 * mbm_total_bytes, core_energy, one Unavailable, a baseline for one. */
static void make_record(struct finished_pod *f, const char *uid, const char *ctrl,
                        int64_t created_ms)
{
        static const struct {
                const char *domain, *name, *text;
        } readings[] = {
            {"mon_L3_00", "mbm_total_bytes", "123456"},
            {"mon_L3_01", "mbm_total_bytes", "Unavailable"},
            {"mon_PERF_PKG_00", "core_energy", "12.500000"},
        };
        char namespace[] = "shop", pod_name[] = "web", ctrl_copy[NAME_MAX + 1];
        struct pod_state st = {.namespace = namespace, .pod_name = pod_name};
        struct group g = {.ctrl = ctrl_copy, .created_ms = created_ms};
        struct counter_value base = {1000, 0};

        snprintf(ctrl_copy, sizeof(ctrl_copy), "%s", ctrl);
        ck_assert_int_eq(pod_state_group_set_baseline(&g, "mon_L3_00/mbm_total_bytes", &base), 0);
        ck_assert_int_eq(finished_pod_init(f, uid, &st, &g), 0);
        pod_state_group_clear_baseline(&g);
        f->removed_ms = created_ms + 2;
        f->rd = calloc(ELEMENTSOF(readings), sizeof(*f->rd));
        ck_assert_ptr_nonnull(f->rd);
        for (size_t i = 0; i < ELEMENTSOF(readings); i++) {
                struct counter_reading *rd = &f->rd[f->n_rd++];

                snprintf(rd->domain, sizeof(rd->domain), "%s", readings[i].domain);
                snprintf(rd->name, sizeof(rd->name), "%s", readings[i].name);
                counter_describe(rd->name, &rd->kind, &rd->unit);
                ck_assert_int_eq(counter_text_parse(readings[i].text, &rd->state, &rd->value), 0);
        }
}

static off_t dir_bytes(int fd)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        off_t total = 0;

        ck_assert_int_eq(opendir_at(fd, ".", &d), 0);
        while ((de = readdir(d))) {
                struct stat st;

                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                        total += st.st_size;
        }
        return total;
}

/* Sets every file's mtime seconds ago. */
static void age_records(int fd, time_t seconds)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct timespec then[2] = {{.tv_sec = time(NULL) - seconds},
                                   {.tv_sec = time(NULL) - seconds}};
        struct dirent *de;

        ck_assert_int_eq(opendir_at(fd, ".", &d), 0);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        ck_assert_int_eq(utimensat(fd, de->d_name, then, AT_SYMLINK_NOFOLLOW), 0);
}

START_TEST(test_round_trip)
{
        _cleanup_(finished_pod_done) struct finished_pod f = {0}, back = {0};
        _cleanup_free_ char *text = NULL, *again = NULL;

        make_record(&f, UID_A, "gold", 1764000000);
        ck_assert_int_eq(finished_format(&f, &text), 0);
        ck_assert_int_eq(finished_parse(text, strlen(text), &back, NULL), 0);
        ck_assert_str_eq(back.uid, UID_A);
        ck_assert_str_eq(back.namespace, "shop");
        ck_assert_str_eq(back.pod_name, "web");
        ck_assert_str_eq(back.group.ctrl, "gold");
        ck_assert_int_eq(back.created_ms, 1764000000);
        ck_assert_int_eq(back.removed_ms, 1764000002);
        ck_assert_uint_eq(back.n_rd, 3);
        ck_assert_str_eq(back.rd[1].domain, "mon_L3_01");
        ck_assert_int_eq(back.rd[1].state, COUNTER_UNAVAILABLE);
        ck_assert_str_eq(back.rd[2].name, "core_energy");
        ck_assert_str_eq(back.rd[2].unit, "joules");
        ck_assert_uint_eq(back.rd[2].value.v, 12500000);
        ck_assert_uint_eq(back.rd[2].value.scale, 6);
        ck_assert_uint_eq(pod_state_group_baseline(&back.group, "mon_L3_00/mbm_total_bytes")->v,
                          1000);
        ck_assert_int_eq(finished_format(&back, &again), 0);
        ck_assert_str_eq(again, text);
}
END_TEST

START_TEST(test_unknown_creation)
{
        _cleanup_(finished_pod_done) struct finished_pod f = {0}, back = {0};
        _cleanup_free_ char *text = NULL;

        make_record(&f, UID_A, "/", 0);
        f.removed_ms = 1764000000;
        ck_assert_int_eq(finished_format(&f, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "\"created_ms\":null"));
        ck_assert_int_eq(finished_parse(text, strlen(text), &back, NULL), 0);
        ck_assert_int_eq(back.created_ms, 0);
}
END_TEST

START_TEST(test_parse_refuses)
{
        static const char *const bad[] = {
            "",
            "[]",
            "{\"version\":2,\"uid\":\"" UID_A "\",\"ctrl\":\"/\",\"removed_ms\":1,\"counters\":{}}",
            "{\"version\":1,\"uid\":\"" UID_A "\",\"ctrl\":\"/\",\"removed_ms\":0,\"counters\":{}}",
            "{\"version\":1,\"uid\":\"NOT-A-UID\",\"ctrl\":\"/\",\"removed_ms\":1,\"counters\":{}}",
            "{\"version\":1,\"uid\":\"" UID_A "\",\"ctrl\":\"/\",\"removed_ms\":1,"
            "\"counters\":{\"mbm_total_bytes\":\"1\"}}",
            "{\"version\":1,\"uid\":\"" UID_A "\",\"ctrl\":\"/\",\"removed_ms\":1,"
            "\"counters\":{\"mon_L3_00/mbm_total_bytes\":\"-1\"}}",
            "{\"version\":1,\"uid\":\"" UID_A "\",\"ctrl\":\"/\",\"removed_ms\":1,"
            "\"counters\":{\"../x/mbm_total_bytes\":\"1\"}}",
            "{\"version\":1,\"uid\":\"" UID_A "\",\"ctrl\":\"/\",\"removed_ms\":1,"
            "\"created_ms\":\"yesterday\",\"counters\":{}}",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(finished_pod_done) struct finished_pod f = {0};
                _cleanup_free_ char *why = NULL;

                ck_assert_msg(finished_parse(bad[i], strlen(bad[i]), &f, &why) == -EBADMSG,
                              "accepted: %s", bad[i]);
                ck_assert_ptr_nonnull(why);
        }
}
END_TEST

START_TEST(test_save_load_replace_remove)
{
        _cleanup_(finished_pod_done) struct finished_pod a = {0}, b = {0}, gold = {0};
        struct finished_pod *got = NULL;
        char root[] = "/";
        struct group g = {.ctrl = root, .created_ms = 100};
        unsigned bad;
        size_t n;

        make_record(&a, UID_A, "/", 100);
        make_record(&gold, UID_A, "gold", 100);
        make_record(&b, UID_B, "/", 200);
        ck_assert_int_eq(finished_save(dir_fd, &a, &HOUR, NO_WAIT), 0);
        ck_assert_int_eq(finished_save(dir_fd, &gold, &HOUR, NO_WAIT), 0);
        ck_assert_int_eq(finished_save(dir_fd, &b, &HOUR, NO_WAIT), 0);
        /* The same group again (a removal killed before its rmdir, redone): replaced. */
        a.rd[0].value.v = 200000;
        ck_assert_int_eq(finished_save(dir_fd, &a, &HOUR, NO_WAIT), 0);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 3);

        ck_assert_int_eq(finished_load(dir_fd, 3600, &got, &n, &bad), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(bad, 0);
        for (size_t i = 0; i < n; i++) {
                if (strcmp(got[i].uid, UID_A) == 0 && strcmp(got[i].group.ctrl, "/") == 0)
                        ck_assert_uint_eq(got[i].rd[0].value.v, 200000);
                finished_pod_done(&got[i]);
        }
        free(got);

        ck_assert(finished_pod_is_of(&a, &g));
        g.created_ms = 101; /* the group made anew */
        ck_assert(!finished_pod_is_of(&a, &g));
        g.created_ms = 100;
        ck_assert(!finished_pod_is_of(&gold, &g));
        g.created_ms = 0; /* 0.2 saved the pod since: its making unknown */
        ck_assert(finished_pod_is_of(&a, &g));

        ck_assert_int_eq(finished_remove(dir_fd, &a), 0);
        ck_assert_int_eq(finished_remove(dir_fd, &a), 0); /* gone already */
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 2);
}
END_TEST

START_TEST(test_load_passes_over)
{
        _cleanup_(finished_pod_done) struct finished_pod a = {0};
        struct finished_pod *got = NULL;
        unsigned bad;
        size_t n;

        make_record(&a, UID_A, "/", 100);
        ck_assert_int_eq(finished_save(dir_fd, &a, &HOUR, NO_WAIT), 0);
        tmptree_put(dir_fd, UID_B ".5.0123456789abcdef", "{\"version\":1,"); /* not ours: torn */
        tmptree_put(dir_fd, "README", "not a record");
        tmptree_put(dir_fd, ".record.tmp", "{");
        ck_assert_int_eq(finished_load(dir_fd, 3600, &got, &n, &bad), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(bad, 1);
        ck_assert_str_eq(got[0].uid, UID_A);
        finished_pod_done(&got[0]);
        free(got);
}
END_TEST

START_TEST(test_prune)
{
        _cleanup_(finished_pod_done) struct finished_pod a = {0}, b = {0};
        struct finished_pod *got = NULL;
        unsigned bad;
        size_t n;

        make_record(&a, UID_A, "/", 100);
        make_record(&b, UID_B, "/", 100);
        ck_assert_int_eq(finished_save(dir_fd, &a, &HOUR, NO_WAIT), 0);
        tmptree_put(dir_fd, ".record.tmp", "{\"version\""); /* a writer killed mid-write */
        ck_assert_int_eq(finished_prune(dir_fd, &HOUR, NO_WAIT), 1);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 1);

        /* Written an hour and a second ago: past the window, not loaded, and pruned. */
        age_records(dir_fd, 3601);
        ck_assert_int_eq(finished_load(dir_fd, 3600, &got, &n, &bad), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(finished_save(dir_fd, &b, &HOUR, NO_WAIT), 0);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 1); /* a went, b came */
        ck_assert_int_eq(finished_prune(dir_fd, &HOUR, NO_WAIT), 0);
        /* finalCountersSeconds 0: gc's prune takes everything. */
        ck_assert_int_eq(finished_prune(dir_fd, &NONE, NO_WAIT), 1);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 0);
}
END_TEST

/* 10,000 finished pods: the records never take more than the cap (a small
 * one, so that the test lists few files), in bytes or in files, and the
 * newest stay. */
static void save_many(const struct finished_limits *l)
{
        _cleanup_(finished_pod_done) struct finished_pod f = {0};
        struct finished_pod *got = NULL;
        bool newest = false;
        off_t most = 0;
        unsigned bad;
        size_t n;

        make_record(&f, UID_A, "/", 1);
        for (int i = 1; i <= 10000; i++) {
                off_t bytes;

                f.created_ms = i; /* another group each time */
                ck_assert_int_eq(finished_save(dir_fd, &f, l, NO_WAIT), 0);
                bytes = dir_bytes(dir_fd);
                ck_assert_int_le(bytes, (off_t) l->max_bytes);
                ck_assert_int_le(tmptree_count(dir_fd, "."), (int) l->max_records);
                most = bytes > most ? bytes : most;
        }
        ck_assert_int_eq(finished_load(dir_fd, 3600, &got, &n, &bad), 0);
        ck_assert_uint_gt(n, 5);
        for (size_t i = 0; i < n; i++) {
                newest |= got[i].created_ms == 10000;
                finished_pod_done(&got[i]);
        }
        free(got);
        ck_assert(newest);
}

START_TEST(test_cap_bytes)
{
        save_many(&(const struct finished_limits){3600, 16 * 1024, 100000});
        ck_assert_int_gt(dir_bytes(dir_fd), 8 * 1024);
}
END_TEST

START_TEST(test_cap_records)
{
        save_many(&(const struct finished_limits){3600, 1 << 20, 16});
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 16);
}
END_TEST

/* A record larger than the cap is refused, and a file whose name only
 * resembles a record's (too many digits) is neither counted nor touched. */
START_TEST(test_cap_refuses)
{
        _cleanup_(finished_pod_done) struct finished_pod f = {0};
        struct finished_pod *got = NULL;
        unsigned bad;
        size_t n;

        make_record(&f, UID_A, "/", 1);
        ck_assert_int_eq(
            finished_save(dir_fd, &f, &(const struct finished_limits){3600, 10, 10}, NO_WAIT),
            -EFBIG);
        tmptree_put(dir_fd, UID_B ".00000000000000000000000001.0123456789abcdef", "{}");
        ck_assert_int_eq(
            finished_save(dir_fd, &f, &(const struct finished_limits){3600, 4096, 1}, NO_WAIT), 0);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 2);
        ck_assert_int_eq(finished_load(dir_fd, 3600, &got, &n, &bad), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(bad, 0);
        finished_pod_done(&got[0]);
        free(got);
}
END_TEST

static Suite *finished_suite(void)
{
        Suite *s = suite_create("finished");
        TCase *tc = tcase_create("finished");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_unknown_creation);
        tcase_add_test(tc, test_parse_refuses);
        tcase_add_test(tc, test_save_load_replace_remove);
        tcase_add_test(tc, test_load_passes_over);
        tcase_add_test(tc, test_prune);
        tcase_add_test(tc, test_cap_bytes);
        tcase_add_test(tc, test_cap_records);
        tcase_add_test(tc, test_cap_refuses);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(finished_suite());
}
