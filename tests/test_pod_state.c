/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "pod_state.h"
#include "text.h"
#include "tmptree.h"

#define UID "u1"

static int dir_fd = -EBADF;
static char dir_path[PATH_MAX];

static void setup(void)
{
        const char *p;

        dir_fd = tmptree_new(&p);
        snprintf(dir_path, sizeof(dir_path), "%s", p);
}

static void teardown(void)
{
        close(dir_fd);
}

static void fill(struct pod_state *s)
{
        char id[32];

        ck_assert_int_eq(pod_state_set_pod(s, "default", "web"), 0);
        ck_assert_int_eq(pod_state_add_group(s, "/", true), 0);
        ck_assert_int_eq(pod_state_add_group(s, "g1", false), 0);
        ck_assert_int_eq(pod_state_add_member(s, "c1", "/", 123, 456, true, NULL), 0);
        ck_assert_int_eq(pod_state_add_member(s, "c2", "g1", 0, 0, false, "out of RMIDs"), 0);
        for (int i = 0; i < 40; i++) {
                snprintf(id, sizeof(id), "many-%d", i);
                ck_assert_int_eq(pod_state_add_member(s, id, "g1", INT_MAX - i,
                                                      (uint64_t) INT64_MAX - (uint64_t) i, true,
                                                      NULL),
                                 0);
        }
}

static void assert_filled(struct pod_state *s)
{
        struct member *m;

        ck_assert_str_eq(s->namespace, "default");
        ck_assert_str_eq(s->pod_name, "web");
        ck_assert_uint_eq(s->n_groups, 2);
        ck_assert_str_eq(s->groups[0].ctrl, "/");
        ck_assert(s->groups[0].owned);
        ck_assert_str_eq(s->groups[1].ctrl, "g1");
        ck_assert(!s->groups[1].owned);
        ck_assert_uint_eq(s->n_members, 42);

        m = pod_state_find_member(s, "c1");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->ctrl, "/");
        ck_assert_int_eq(m->pid, 123);
        ck_assert_uint_eq(m->start_time, 456);
        ck_assert(m->monitored);
        ck_assert_ptr_null(m->reason);

        m = pod_state_find_member(s, "c2");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->ctrl, "g1");
        ck_assert_int_eq(m->pid, 0);
        ck_assert(!m->monitored);
        ck_assert_str_eq(m->reason, "out of RMIDs");

        m = pod_state_find_member(s, "many-39");
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(m->pid, INT_MAX - 39);
        ck_assert_uint_eq(m->start_time, (uint64_t) INT64_MAX - 39);
}

START_TEST(test_round_trip)
{
        struct pod_state s = {}, loaded = {};
        char *err = NULL;
        struct stat st;

        fill(&s);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), 0);
        ck_assert_int_eq(fstatat(dir_fd, UID ".members", &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISREG(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0600);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 1);

        ck_assert_int_eq(pod_state_load(dir_fd, UID, &loaded, &err), 0);
        ck_assert_ptr_null(err);
        assert_filled(&loaded);

        /* Saving again replaces the file. */
        pod_state_drop_member(&loaded, "c2");
        ck_assert_int_eq(pod_state_set_pod(&loaded, NULL, NULL), 0);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &loaded), 0);
        pod_state_done(&loaded);
        ck_assert_ptr_null(loaded.members);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &loaded, &err), 0);
        ck_assert_ptr_null(loaded.namespace);
        ck_assert_ptr_null(loaded.pod_name);
        ck_assert_uint_eq(loaded.n_members, 41);
        ck_assert_ptr_null(pod_state_find_member(&loaded, "c2"));
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 1);

        ck_assert_int_eq(pod_state_remove(dir_fd, UID), 0);
        ck_assert_int_eq(pod_state_remove(dir_fd, UID), 0);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &loaded, &err), -ENOENT);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 0);
        pod_state_done(&s);
        pod_state_done(&loaded);
}
END_TEST

START_TEST(test_format_exact)
{
        struct pod_state s = {};
        char *text = NULL;

        ck_assert_int_eq(pod_state_set_pod(&s, "default", "web"), 0);
        ck_assert_int_eq(pod_state_add_group(&s, "/", true), 0);
        ck_assert_int_eq(pod_state_add_member(&s, "c1", "/", 123, 456, true, NULL), 0);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), 0);
        ck_assert_str_eq(text, "{\"groups\":[{\"ctrl\":\"/\",\"owned\":true}],\"members\":[{"
                               "\"ctrl\":\"/\",\"id\":\"c1\",\"monitored\":true,\"pid\":123,"
                               "\"reason\":null,\"start_time\":456}],\"namespace\":\"default\","
                               "\"pod\":\"web\",\"uid\":\"u1\",\"version\":1}\n");
        free(text);
        pod_state_done(&s);

        ck_assert_int_eq(pod_state_format(&s, UID, &text), 0);
        ck_assert_str_eq(text, "{\"groups\":[],\"members\":[],\"namespace\":null,\"pod\":null,"
                               "\"uid\":\"u1\",\"version\":1}\n");
        free(text);
}
END_TEST

START_TEST(test_format_refuses)
{
        struct pod_state s = {};
        char *text = NULL;

        ck_assert_int_eq(pod_state_format(&s, "..", &text), -EINVAL);
        ck_assert_int_eq(pod_state_format(&s, "", &text), -EINVAL);
        ck_assert_int_eq(pod_state_add_member(&s, "c1", "/", 1, 1, false, NULL), 0);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), -EINVAL);
        pod_state_done(&s);
        ck_assert_int_eq(pod_state_add_member(&s, "a/b", "/", 1, 1, true, NULL), 0);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        pod_state_done(&s);
        ck_assert_int_eq(pod_state_add_member(&s, "c1", "/", -1, 1, true, NULL), 0);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        pod_state_done(&s);
        ck_assert_int_eq(pod_state_add_member(&s, "c1", "/", 1, UINT64_MAX, true, NULL), 0);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        pod_state_done(&s);
        ck_assert_int_eq(pod_state_add_group(&s, "info", true), 0);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        pod_state_done(&s);
        ck_assert_int_eq(pod_state_add_group(&s, "g1", true), 0);
        ck_assert_int_eq(pod_state_add_group(&s, "g1", false), 0);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        pod_state_done(&s);

        ck_assert_ptr_null(text);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 0);
}
END_TEST

START_TEST(test_add_find_drop)
{
        struct pod_state s = {};

        ck_assert_ptr_null(pod_state_find_member(&s, "c1"));
        ck_assert_ptr_null(pod_state_find_group(&s, "/"));
        ck_assert_int_eq(pod_state_add_member(&s, "c1", "/", 1, 10, true, NULL), 0);
        ck_assert_int_eq(pod_state_add_member(&s, "c2", "/", 2, 20, true, NULL), 0);
        ck_assert_int_eq(pod_state_add_member(&s, "c3", "g1", 3, 30, false, "why"), 0);
        ck_assert_int_eq(pod_state_add_group(&s, "/", true), 0);
        ck_assert_int_eq(pod_state_add_group(&s, "g1", true), 0);

        pod_state_drop_member(&s, "c2");
        pod_state_drop_member(&s, "absent");
        ck_assert_uint_eq(s.n_members, 2);
        ck_assert_ptr_null(pod_state_find_member(&s, "c2"));
        ck_assert_int_eq(pod_state_find_member(&s, "c1")->pid, 1);
        ck_assert_str_eq(pod_state_find_member(&s, "c3")->reason, "why");
        pod_state_drop_member(&s, "c3");
        pod_state_drop_member(&s, "c1");
        ck_assert_uint_eq(s.n_members, 0);

        pod_state_drop_group(&s, "/");
        pod_state_drop_group(&s, "absent");
        ck_assert_uint_eq(s.n_groups, 1);
        ck_assert_ptr_null(pod_state_find_group(&s, "/"));
        ck_assert(pod_state_find_group(&s, "g1")->owned);
        pod_state_done(&s);
        ck_assert_uint_eq(s.n_groups, 0);
        ck_assert_ptr_null(s.groups);
}
END_TEST

/* A state file with the given groups and members; the rest is valid. */
#define STATE(groups, members)                                                                     \
        "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,\"groups\":[" groups        \
        "],\"members\":[" members "]}"
#define MEMBER(id, ctrl, pid, start_time, monitored, reason)                                       \
        "{\"id\":" id ",\"ctrl\":" ctrl ",\"pid\":" pid ",\"start_time\":" start_time              \
        ",\"monitored\":" monitored ",\"reason\":" reason "}"
#define OK_MEMBER MEMBER("\"c1\"", "\"/\"", "1", "2", "true", "null")

START_TEST(test_parse_refuses)
{
        static const char *const bad[] = {
            "",
            "not json",
            "[]",
            /* Valid but for the duplicate key, whichever copy a parser kept. */
            "{\"version\":1,\"uid\":\"u1\",\"uid\":\"u1\",\"namespace\":null,\"pod\":null,"
            "\"groups\":[],\"members\":[]}",
            "{\"uid\":\"u1\"}",
            "{\"version\":\"1\",\"uid\":\"u1\",\"namespace\":null,\"pod\":null,"
            "\"groups\":[],\"members\":[]}",
            "{\"version\":2,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,"
            "\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"uid\":\"u2\",\"namespace\":null,\"pod\":null,"
            "\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"namespace\":null,\"pod\":null,\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"uid\":\"u1\",\"pod\":null,\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":5,\"pod\":null,"
            "\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":[],"
            "\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,"
            "\"groups\":{},\"members\":[]}",
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,"
            "\"groups\":[],\"members\":null}",
            STATE("1", ""),
            STATE("{\"ctrl\":\"info\",\"owned\":true}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":1}", ""),
            STATE("{\"ctrl\":\"/\"}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true},{\"ctrl\":\"/\",\"owned\":false}", ""),
            STATE("", "1"),
            STATE("", OK_MEMBER "," OK_MEMBER),
            STATE("", MEMBER("\"..\"", "\"/\"", "1", "2", "true", "null")),
            STATE("", MEMBER("\"a\\nb\"", "\"/\"", "1", "2", "true", "null")),
            STATE("", MEMBER("null", "\"/\"", "1", "2", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"a/b\"", "1", "2", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"mon_groups\"", "1", "2", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "-1", "2", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "2147483648", "2", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1.0", "2", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1", "-2", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1", "\"2\"", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1", "99999999999999999999", "true", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1", "2", "1", "null")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1", "2", "true", "5")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1", "2", "true", "\"x\"")),
            STATE("", MEMBER("\"c1\"", "\"/\"", "1", "2", "false", "null")),
            STATE("", "{\"id\":\"c1\",\"ctrl\":\"/\",\"pid\":1,\"start_time\":2,"
                      "\"monitored\":true}"),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"emptied_at\":-1}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"emptied_at\":null}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"emptied_at\":1.5}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"emptied_at\":\"1\"}", ""),
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,\"pid_ns\":0,"
            "\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,\"pid_ns\":-5,"
            "\"groups\":[],\"members\":[]}",
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,\"pid_ns\":\"x\","
            "\"groups\":[],\"members\":[]}",
        };
        struct pod_state s = {};

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *err = NULL;

                ck_assert_msg(pod_state_parse(bad[i], strlen(bad[i]), UID, &s, &err) == -EBADMSG,
                              "accepted %zu: %s", i, bad[i]);
                ck_assert_msg(err && *err, "no reason for %zu", i);
                free(err);
                /* Without reterr the verdict is the same. */
                ck_assert_int_eq(pod_state_parse(bad[i], strlen(bad[i]), UID, &s, NULL), -EBADMSG);
        }
        ck_assert_ptr_null(s.members);
        ck_assert_ptr_null(s.groups);

        ck_assert_int_eq(
            pod_state_parse(STATE("", OK_MEMBER), strlen(STATE("", OK_MEMBER)), UID, &s, NULL), 0);
        ck_assert_uint_eq(s.n_members, 1);
        pod_state_done(&s);
        ck_assert_int_eq(
            pod_state_parse(STATE("", OK_MEMBER), strlen(STATE("", OK_MEMBER)), "..", &s, NULL),
            -EINVAL);
}
END_TEST

/* The reason quotes the file: escaped as every printed string is, it makes
 * one line of printable text whatever bytes the file holds. */
/* A newer version's keys, at every level, are ignored: the file is read, what
 * this binary knows of it is as written, and a save drops the rest. */
START_TEST(test_parse_ignores_unknown_keys)
{
        static const char text[] =
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":\"ns\",\"pod\":null,\"future\":[1],"
            "\"groups\":[{\"ctrl\":\"/\",\"owned\":false,\"bandwidth\":\"partial\"}],"
            "\"members\":[{\"id\":\"c1\",\"ctrl\":\"/\",\"pid\":7,\"start_time\":8,"
            "\"monitored\":true,\"reason\":null,\"sandbox\":\"/kubepods/pod1/c1\"}]}";
        _cleanup_(pod_state_done) struct pod_state s = {};
        _cleanup_free_ char *saved = NULL;

        ck_assert_int_eq(pod_state_parse(text, strlen(text), UID, &s, NULL), 0);
        ck_assert_str_eq(s.namespace, "ns");
        ck_assert_uint_eq(s.n_groups, 1);
        ck_assert(!s.groups[0].owned);
        ck_assert_uint_eq(s.n_members, 1);
        ck_assert_int_eq(s.members[0].pid, 7);
        ck_assert(s.members[0].monitored);
        ck_assert_int_eq(pod_state_format(&s, UID, &saved), 0);
        ck_assert_ptr_null(strstr(saved, "future"));
        ck_assert_ptr_null(strstr(saved, "sandbox"));
        ck_assert_ptr_nonnull(strstr(saved, "\"owned\":false"));
}
END_TEST

/* 0.3's records of a member's cgroup and the pod's, kept through a save; a
 * file without them (0.2's), or with a null pod_cgroup, reads as unrecorded. */
START_TEST(test_cgroups_recorded)
{
        static const char text[] =
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,\"groups\":[],"
            "\"pod_cgroup\":{\"hierarchy\":\"unified\",\"path\":\"/kubelet/kubepods/pod1\"},"
            "\"members\":[{\"id\":\"c1\",\"ctrl\":\"/\",\"pid\":7,\"start_time\":8,"
            "\"monitored\":true,\"reason\":null,"
            "\"cgroup\":{\"hierarchy\":\"pids\",\"path\":\"/kubelet/kubepods/pod1/c1\"}},"
            "{\"id\":\"c2\",\"ctrl\":\"/\",\"pid\":9,\"start_time\":8,"
            "\"monitored\":true,\"reason\":null}]}";
        static const char nulled[] =
            "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,\"pod\":null,"
            "\"groups\":[],\"pod_cgroup\":null,\"members\":[{\"id\":\"c1\",\"ctrl\":\"/\","
            "\"pid\":7,\"start_time\":8,\"monitored\":true,\"reason\":null,\"cgroup\":null}]}";
        _cleanup_(pod_state_done) struct pod_state s = {}, again = {};
        _cleanup_free_ char *saved = NULL;

        ck_assert_int_eq(pod_state_parse(text, strlen(text), UID, &s, NULL), 0);
        ck_assert(s.has_pod_cgroup);
        ck_assert_int_eq(s.pod_cgroup.kind, CGROUP_V2);
        ck_assert_str_eq(s.pod_cgroup.path, "/kubelet/kubepods/pod1");
        ck_assert(s.members[0].has_cgroup);
        ck_assert_int_eq(s.members[0].cgroup.kind, CGROUP_V1);
        ck_assert_str_eq(s.members[0].cgroup.controller, "pids");
        ck_assert_str_eq(s.members[0].cgroup.path, "/kubelet/kubepods/pod1/c1");
        ck_assert(!s.members[1].has_cgroup);
        ck_assert_int_eq(pod_state_format(&s, UID, &saved), 0);
        ck_assert_int_eq(pod_state_parse(saved, strlen(saved), UID, &again, NULL), 0);
        ck_assert_str_eq(again.pod_cgroup.path, "/kubelet/kubepods/pod1");
        ck_assert_str_eq(again.members[0].cgroup.path, "/kubelet/kubepods/pod1/c1");
        ck_assert(!again.members[1].has_cgroup);
        pod_state_done(&again);
        free(TAKE_PTR(saved));

        s.has_pod_cgroup = false;
        ck_assert_int_eq(pod_state_format(&s, UID, &saved), 0);
        ck_assert_ptr_null(strstr(saved, "pod_cgroup"));
        ck_assert_int_eq(pod_state_parse(nulled, strlen(nulled), UID, &again, NULL), 0);
        ck_assert(!again.has_pod_cgroup);
        ck_assert(!again.members[0].has_cgroup);
}
END_TEST

START_TEST(test_cgroups_invalid)
{
        static const char *const bad[] = {
            "\"pod_cgroup\":{\"hierarchy\":\"cpuset\",\"path\":\"/a\"}",
            "\"pod_cgroup\":{\"hierarchy\":\"unified\",\"path\":\"/a/../b\"}",
            "\"pod_cgroup\":{\"hierarchy\":\"unified\",\"path\":\"a\"}",
            "\"pod_cgroup\":{\"hierarchy\":\"unified\"}",
            "\"pod_cgroup\":\"/a\"",
            "\"members\":[{\"id\":\"c1\",\"ctrl\":\"/\",\"pid\":7,\"start_time\":8,"
            "\"monitored\":true,\"reason\":null,\"cgroup\":{\"hierarchy\":\"pids\","
            "\"path\":\"/a\\nb\"}}]",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(pod_state_done) struct pod_state s = {};
                _cleanup_free_ char *text = NULL, *why = NULL;

                ck_assert_int_ge(asprintf(&text,
                                          "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,"
                                          "\"pod\":null,\"groups\":[],%s%s}",
                                          bad[i],
                                          strstr(bad[i], "members") ? "" : ",\"members\":[]"),
                                 0);
                ck_assert_int_eq(pod_state_parse(text, strlen(text), UID, &s, &why), -EBADMSG);
                ck_assert_ptr_nonnull(strstr(why, "cgroup"));
        }
}
END_TEST

/* The boot a file was written in: kept through a save and a load; anything
 * but the kernel's lowercase UUID refused. */
START_TEST(test_boot_id)
{
        static const char *const bad[] = {
            "\"0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5\"",   /* one short */
            "\"0F9B2A57-5D8E-4C1B-9B7E-3A1F0C2D4E5F\"",  /* upper case */
            "\"0f9b2a57x5d8e-4c1b-9b7e-3a1f0c2d4e5f\"",  /* no dash */
            "\"0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f0\"", /* one long */
            "36",
        };
        _cleanup_(pod_state_done) struct pod_state s = {}, back = {};
        _cleanup_free_ char *text = NULL;

        ck_assert(boot_id_is_valid("0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f"));
        memcpy(s.boot_id, "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f", BOOT_ID_LEN + 1);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "\"boot_id\":\"0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f\""));
        ck_assert_int_eq(pod_state_parse(text, strlen(text), UID, &back, NULL), 0);
        ck_assert_str_eq(back.boot_id, s.boot_id);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(pod_state_done) struct pod_state p = {};
                _cleanup_free_ char *t = NULL, *why = NULL;

                ck_assert_int_ge(
                    asprintf(&t,
                             "{\"version\":1,\"uid\":\"u1\",\"namespace\":null,"
                             "\"pod\":null,\"groups\":[],\"members\":[],\"boot_id\":%s}",
                             bad[i]),
                    0);
                ck_assert_int_eq(pod_state_parse(t, strlen(t), UID, &p, &why), -EBADMSG);
                ck_assert_ptr_nonnull(strstr(why, "boot_id"));
        }
}
END_TEST

/* Whose pids a file's are, and which boot it is of: never taken for ours
 * where our own pid namespace is unknown. */
START_TEST(test_pid_ns_and_boot)
{
        struct pod_state s = {.pid_ns = 4026531836};
        const char *now = "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f";

        ck_assert(pod_state_pids_are_ours(&s, 4026531836));
        ck_assert(!pod_state_pids_are_ours(&s, 4026532000));
        ck_assert(!pod_state_pids_are_ours(&s, 0));
        s.pid_ns = 0; /* written before pid_ns was recorded */
        ck_assert(pod_state_pids_are_ours(&s, 4026531836));
        ck_assert(pod_state_pids_are_ours(&s, 0));

        memcpy(s.boot_id, "1f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f", BOOT_ID_LEN + 1);
        s.pid_ns = 4026531836;
        ck_assert(pod_state_of_other_boot(&s, now, 4026531836));
        ck_assert(!pod_state_of_other_boot(&s, now, 4026532000)); /* another namespace's /proc */
        ck_assert(!pod_state_of_other_boot(&s, now, 0));
        ck_assert(!pod_state_of_other_boot(&s, "", 4026531836));
        memcpy(s.boot_id, now, BOOT_ID_LEN + 1);
        ck_assert(!pod_state_of_other_boot(&s, now, 4026531836));
}
END_TEST

START_TEST(test_parse_reason_one_line)
{
        static const char *const bad[] = {
            "{\"version\":1,\"uid\"\f1}",
            "{\"version\":1,\"uid\":\"u1\n\x1b[31mforged\"}",
            "{\"version\":1,\"uid\"\x7f:1}",
        };
        struct pod_state s = {};

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *err = NULL;
                char safe[TEXT_ESCAPED_SIZE];

                ck_assert_int_eq(pod_state_parse(bad[i], strlen(bad[i]), UID, &s, &err), -EBADMSG);
                ck_assert_ptr_nonnull(err);
                text_escape(safe, sizeof(safe), err);
                for (const char *c = safe; *c; c++)
                        ck_assert_msg((unsigned char) *c >= 0x20 && *c != 0x7f,
                                      "control character in reason %zu: %s", i, safe);
        }
}
END_TEST

START_TEST(test_load_refuses)
{
        struct pod_state s = {};
        size_t len = 1024 * 1024 + 1;
        char *big = malloc(len + 1), *err = NULL;

        tmptree_put(dir_fd, UID ".members", "{\"version\":2}\n");
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, &err), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(err, "version"));
        free(err);
        err = NULL;

        /* Over the cap, even when the content would be valid. */
        ck_assert_ptr_nonnull(big);
        memset(big, ' ', len);
        big[len] = '\0';
        memcpy(big, STATE("", OK_MEMBER), strlen(STATE("", OK_MEMBER)));
        tmptree_put(dir_fd, UID ".members", big);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, &err), -EBADMSG);
        ck_assert_ptr_nonnull(err);
        free(err);
        big[len - 1] = '\0';
        tmptree_put(dir_fd, UID ".members", big);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, NULL), 0);
        pod_state_done(&s);
        free(big);

        ck_assert_int_eq(pod_state_load(dir_fd, "..", &s, NULL), -EINVAL);
        ck_assert_int_eq(unlinkat(dir_fd, UID ".members", 0), 0);
        ck_assert_int_eq(symlinkat(dir_path, dir_fd, UID ".members"), 0);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, NULL), -ELOOP);
        ck_assert_ptr_null(s.members);
}
END_TEST

/* Baselines: kept exact per key, omitted when empty, re-read as written. */
START_TEST(test_baseline_round_trip)
{
        struct pod_state s = {}, back = {};
        struct counter_value big = {UINT64_MAX, 0}, energy = {1500000, 6}, zero = {0, 0};
        const struct counter_value *v;
        char *text = NULL;
        struct group *g;

        ck_assert_int_eq(pod_state_add_group(&s, "/", true), 0);
        ck_assert_int_eq(pod_state_add_group(&s, "gold", true), 0);
        g = pod_state_find_group(&s, "gold");
        ck_assert_int_eq(pod_state_group_set_baseline(g, "mon_L3_00/mbm_total_bytes", &zero), 0);
        ck_assert_int_eq(pod_state_group_set_baseline(g, "mon_L3_00/mbm_total_bytes", &big), 0);
        ck_assert_int_eq(pod_state_group_set_baseline(g, "mon_PERF_PKG_01/core_energy", &energy),
                         0);
        ck_assert_uint_eq(g->n_baseline, 2);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), 0);
        ck_assert_str_eq(text, "{\"groups\":[{\"ctrl\":\"/\",\"owned\":true},{\"baseline\":{"
                               "\"mon_L3_00/mbm_total_bytes\":\"18446744073709551615\","
                               "\"mon_PERF_PKG_01/core_energy\":\"1.500000\"},\"ctrl\":\"gold\","
                               "\"owned\":true}],\"members\":[],\"namespace\":null,\"pod\":null,"
                               "\"uid\":\"u1\",\"version\":1}\n");

        ck_assert_int_eq(pod_state_parse(text, strlen(text), UID, &back, NULL), 0);
        g = pod_state_find_group(&back, "gold");
        v = pod_state_group_baseline(g, "mon_L3_00/mbm_total_bytes");
        ck_assert_ptr_nonnull(v);
        ck_assert_uint_eq(v->v, UINT64_MAX);
        v = pod_state_group_baseline(g, "mon_PERF_PKG_01/core_energy");
        ck_assert_uint_eq(v->v, 1500000);
        ck_assert_uint_eq(v->scale, 6);
        ck_assert_ptr_null(pod_state_group_baseline(g, "mon_L3_01/mbm_total_bytes"));
        ck_assert_uint_eq(pod_state_find_group(&back, "/")->n_baseline, 0);

        /* Dropping and clearing free the entries (ASan checks). */
        pod_state_group_clear_baseline(g);
        ck_assert_ptr_null(pod_state_group_baseline(g, "mon_PERF_PKG_01/core_energy"));
        pod_state_drop_group(&s, "gold");
        free(text);
        pod_state_done(&s);
        pod_state_done(&back);
}
END_TEST

/* Keys pending their baseline: kept sorted, one a key, never beside a
 * baseline of theirs; setting the baseline takes the key off; re-read as
 * written; bad lists refused. */
START_TEST(test_baseline_pending)
{
        static const char *const bad[] = {
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline_pending\":{}}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline_pending\":[1]}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline_pending\":[\"x/y\"]}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline_pending\":[\"mon_L3_00/a/b\"]}", ""),
        };
        struct pod_state s = {}, back = {};
        struct counter_value one = {1, 0};
        char *text = NULL;
        struct group *g;

        ck_assert_int_eq(pod_state_add_group(&s, "/", true), 0);
        g = pod_state_find_group(&s, "/");
        ck_assert_int_eq(pod_state_group_set_baseline(g, "mon_L3_00/mbm_total_bytes", &one), 0);
        ck_assert_int_eq(pod_state_group_add_pending(g, "mon_PERF_PKG_01/core_energy"), 0);
        ck_assert_int_eq(pod_state_group_add_pending(g, "mon_PERF_PKG_00/core_energy"), 0);
        ck_assert_int_eq(pod_state_group_add_pending(g, "mon_PERF_PKG_00/core_energy"), 0);
        ck_assert_int_eq(pod_state_group_add_pending(g, "mon_L3_00/mbm_total_bytes"), 0);
        ck_assert_int_eq(pod_state_group_add_pending(g, "core_energy"), -EINVAL);
        ck_assert_uint_eq(g->n_pending, 2);
        ck_assert_int_eq(pod_state_format(&s, UID, &text), 0);
        ck_assert_str_eq(text, "{\"groups\":[{\"baseline\":{\"mon_L3_00/mbm_total_bytes\":\"1\"},"
                               "\"baseline_pending\":[\"mon_PERF_PKG_00/core_energy\","
                               "\"mon_PERF_PKG_01/core_energy\"],\"ctrl\":\"/\",\"owned\":true}],"
                               "\"members\":[],\"namespace\":null,\"pod\":null,\"uid\":\"u1\","
                               "\"version\":1}\n");
        ck_assert_int_eq(pod_state_parse(text, strlen(text), UID, &back, NULL), 0);
        g = pod_state_find_group(&back, "/");
        ck_assert_uint_eq(g->n_pending, 2);
        ck_assert_int_eq(pod_state_group_set_baseline(g, "mon_PERF_PKG_00/core_energy", &one), 0);
        ck_assert_uint_eq(g->n_pending, 1);
        ck_assert_str_eq(g->pending[0], "mon_PERF_PKG_01/core_energy");
        pod_state_group_clear_baseline(g);
        ck_assert_uint_eq(g->n_pending, 0);
        pod_state_done(&back);
        back = (struct pod_state){};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(pod_state_parse(bad[i], strlen(bad[i]), UID, &back, NULL) == -EBADMSG,
                              "state %zu accepted", i);
        free(text);
        pod_state_done(&s);
        pod_state_done(&back);
}
END_TEST

START_TEST(test_baseline_refuses)
{
        static const char *const bad_keys[] = {"mbm_total_bytes",
                                               "L3_00/mbm_total_bytes",
                                               "mon_L3_00/",
                                               "mon_L3_00/a/b",
                                               "mon_L3_00/..",
                                               "mon_L3_00/a\nb",
                                               ""};
        static const char *const bad[] = {
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":[]}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{\"mon_L3_00/x\":1}}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{\"mon_L3_00/x\":\"-1\"}}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{\"mon_L3_00/x\":\"1\\n\"}}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{\"mon_L3_00/x\":\"Unavailable\"}}",
                  ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{\"x/y\":\"1\"}}", ""),
            STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{\"mon_L3_00/x\":null}}", ""),
        };
        struct counter_value one = {1, 0};
        struct group g = {};
        struct pod_state s = {};

        for (size_t i = 0; i < ELEMENTSOF(bad_keys); i++)
                ck_assert_msg(pod_state_group_set_baseline(&g, bad_keys[i], &one) == -EINVAL,
                              "key %zu accepted", i);
        ck_assert_uint_eq(g.n_baseline, 0);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(pod_state_parse(bad[i], strlen(bad[i]), UID, &s, NULL) == -EBADMSG,
                              "state %zu accepted", i);
        ck_assert_int_eq(
            pod_state_parse(STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{}}", ""),
                            strlen(STATE("{\"ctrl\":\"/\",\"owned\":true,\"baseline\":{}}", "")),
                            UID, &s, NULL),
            0);
        pod_state_done(&s);
}
END_TEST

START_TEST(test_remove_temp)
{
        struct pod_state s = {};

        ck_assert_int_eq(pod_state_remove_temp(dir_fd, UID), 0);
        tmptree_put(dir_fd, UID ".members.tmp", "{\"half");
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, NULL), -ENOENT);
        ck_assert_int_eq(pod_state_remove_temp(dir_fd, UID), 1);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 0);

        /* Loading leaves a temp file alone: it may be a live save's own. */
        fill(&s);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), 0);
        pod_state_done(&s);
        tmptree_put(dir_fd, UID ".members.tmp", "{\"half");
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, NULL), 0);
        assert_filled(&s);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 2);
        ck_assert_int_eq(pod_state_remove_temp(dir_fd, UID), 1);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 1);
        ck_assert_int_eq(pod_state_remove_temp(dir_fd, ".."), -EINVAL);
        pod_state_done(&s);
}
END_TEST

/* pid_ns and emptied_at are optional: written when set, read back exactly. */
START_TEST(test_optional_fields)
{
        struct pod_state s = {}, loaded = {};
        char *text = NULL;

        ck_assert_int_eq(pod_state_add_group(&s, "/", true), 0);
        ck_assert_int_eq(pod_state_add_group(&s, "g1", true), 0);
        s.groups[1].emptied = true;
        s.groups[1].emptied_at = 0; /* boot second 0 is still a time */
        s.pid_ns = 4026531836u;
        ck_assert_int_eq(pod_state_format(&s, UID, &text), 0);
        ck_assert_str_eq(text, "{\"groups\":[{\"ctrl\":\"/\",\"owned\":true},{\"ctrl\":\"g1\","
                               "\"emptied_at\":0,\"owned\":true}],\"members\":[],\"namespace\":"
                               "null,\"pid_ns\":4026531836,\"pod\":null,\"uid\":\"u1\","
                               "\"version\":1}\n");
        ck_assert_int_eq(pod_state_parse(text, strlen(text), UID, &loaded, NULL), 0);
        ck_assert_uint_eq(loaded.pid_ns, 4026531836u);
        ck_assert(!loaded.groups[0].emptied);
        ck_assert(loaded.groups[1].emptied);
        ck_assert_uint_eq(loaded.groups[1].emptied_at, 0);
        free(text);
        pod_state_done(&loaded);

        s.groups[1].emptied_at = INT64_MAX;
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), 0);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &loaded, NULL), 0);
        ck_assert_uint_eq(loaded.groups[1].emptied_at, INT64_MAX);
        pod_state_done(&loaded);

        s.groups[1].emptied_at = (uint64_t) INT64_MAX + 1;
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        s.groups[1].emptied = false; /* the time only counts when emptied */
        ck_assert_int_eq(pod_state_format(&s, UID, &text), 0);
        ck_assert_ptr_null(strstr(text, "emptied_at"));
        free(text);
        s.pid_ns = (uint64_t) INT64_MAX + 1;
        ck_assert_int_eq(pod_state_format(&s, UID, &text), -EINVAL);
        pod_state_done(&s);
}
END_TEST

/* A save that fails at any step leaves the previous file as it was. */
static char *save_old(void)
{
        struct pod_state s = {};

        fill(&s);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), 0);
        pod_state_done(&s);
        return tmptree_get(dir_fd, UID ".members");
}

static void assert_old(const char *old)
{
        struct pod_state s = {};
        char *now = tmptree_get(dir_fd, UID ".members");

        ck_assert_str_eq(now, old);
        free(now);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, NULL), 0);
        assert_filled(&s);
        pod_state_done(&s);
}

START_TEST(test_save_fails_midway)
{
        struct rlimit rl = {.rlim_cur = 64, .rlim_max = RLIM_INFINITY};
        struct pod_state s = {};
        char *old = save_old();

        ck_assert_int_eq(pod_state_add_member(&s, "new", "/", 1, 1, true, NULL), 0);
        fill(&s);
        /* The write of the temp file stops after 64 bytes. */
        signal(SIGXFSZ, SIG_IGN);
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), -EFBIG);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 1);
        assert_old(old);
        pod_state_done(&s);
        free(old);
}
END_TEST

START_TEST(test_save_blocked_tmp)
{
        struct pod_state s = {};
        char *old = save_old();

        /* Something the save cannot clear away sits at the temp name. */
        tmptree_mkdir(dir_fd, UID ".members.tmp");
        tmptree_put(dir_fd, UID ".members.tmp/x", "");
        ck_assert_int_eq(pod_state_add_member(&s, "new", "/", 1, 1, true, NULL), 0);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), -EEXIST);
        assert_old(old);
        pod_state_done(&s);
        free(old);
}
END_TEST

START_TEST(test_save_tmp_symlink_not_followed)
{
        const char *outside_path;
        int outside_fd = tmptree_new(&outside_path);
        struct pod_state s = {};
        char target[PATH_MAX], *old = save_old(), *victim;
        struct stat st;

        tmptree_put(outside_fd, "victim", "keep");
        snprintf(target, sizeof(target), "%s/victim", outside_path);
        ck_assert_int_eq(symlinkat(target, dir_fd, UID ".members.tmp"), 0);

        ck_assert_int_eq(pod_state_add_member(&s, "new", "/", 1, 1, true, NULL), 0);
        ck_assert_int_eq(pod_state_save(dir_fd, UID, &s), 0);
        victim = tmptree_get(outside_fd, "victim");
        ck_assert_str_eq(victim, "keep");
        ck_assert_int_eq(fstatat(dir_fd, UID ".members", &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISREG(st.st_mode));
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 1);
        pod_state_done(&s);
        ck_assert_int_eq(pod_state_load(dir_fd, UID, &s, NULL), 0);
        ck_assert_uint_eq(s.n_members, 1);
        pod_state_done(&s);
        free(victim);
        free(old);
        close(outside_fd);
}
END_TEST

static Suite *members_suite(void)
{
        Suite *s = suite_create("pod_state");
        TCase *tc = tcase_create("pod_state");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_format_exact);
        tcase_add_test(tc, test_format_refuses);
        tcase_add_test(tc, test_add_find_drop);
        tcase_add_test(tc, test_parse_refuses);
        tcase_add_test(tc, test_parse_reason_one_line);
        tcase_add_test(tc, test_parse_ignores_unknown_keys);
        tcase_add_test(tc, test_cgroups_recorded);
        tcase_add_test(tc, test_cgroups_invalid);
        tcase_add_test(tc, test_pid_ns_and_boot);
        tcase_add_test(tc, test_boot_id);
        tcase_add_test(tc, test_load_refuses);
        tcase_add_test(tc, test_remove_temp);
        tcase_add_test(tc, test_optional_fields);
        tcase_add_test(tc, test_save_fails_midway);
        tcase_add_test(tc, test_save_blocked_tmp);
        tcase_add_test(tc, test_save_tmp_symlink_not_followed);
        tcase_add_test(tc, test_baseline_round_trip);
        tcase_add_test(tc, test_baseline_refuses);
        tcase_add_test(tc, test_baseline_pending);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(members_suite());
}
