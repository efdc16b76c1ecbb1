/* SPDX-License-Identifier: Apache-2.0 */
/* Who owns a pod's group (hook/pod_ownership.h, pod_ownership_claim and pod_ownership_release),
 * row by row of the table in docs/design.md, on plain directories standing
 * in for resctrl and stateDir: no root, no FUSE. A plain directory cannot
 * run out of RMIDs nor remove a group with files in it: those rows are the
 * crash and integration suites'. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "pod_ownership.h"
#include "tmptree.h"

#define UID "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define GROUP "mon_groups/" UID

static struct config config;
static struct pod_env env = POD_ENV_INIT;

static void setup(void)
{
        ck_assert_int_eq(config_init(&config), 0);
        env.config = &config;
        env.root_fd = tmptree_new(NULL);
        env.state_fd = tmptree_new(NULL);
        tmptree_mkdir(env.root_fd, "mon_groups");
}

static void teardown(void)
{
        pod_env_close(&env);
        config_done(&config);
}

/* The pod's state as a session under its lock finds it, with a member in
 * ctrl "/" when there is a group record. */
static void open_session(struct pod_session *s)
{
        ck_assert_int_eq(pod_session_lock(&env, UID, 1000, s), 0);
        ck_assert_int_ge(pod_session_load(s, NULL), 0);
}

/* pod_ownership_claim of ctrl "/" under the resctrl lock, as its callers make it. */
static int claim(struct pod_session *s)
{
        _cleanup_(rdt_unlockp) int locked = pod_env_lock_resctrl(&env);

        ck_assert_int_ge(locked, 0);
        return pod_ownership_claim(s, "/", &(char *){NULL});
}

/* A record of the group as the last save left it: -1 none, else owned. */
static int saved_owned(void)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};
        struct group *g;

        if (pod_state_load(env.state_fd, UID, &st, NULL) < 0)
                return -1;
        g = pod_state_find_group(&st, "/");
        return g ? g->owned : -1;
}

static bool group_exists(void)
{
        struct stat st;

        return fstatat(env.root_fd, GROUP, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A record of the group, owned or not, with one member holding it, in place
 * of any before. */
static void record(bool owned)
{
        struct pod_session s;

        open_session(&s);
        pod_state_drop_group(&s.st, "/");
        pod_state_drop_member(&s.st, "c1");
        ck_assert_int_eq(pod_state_add_group(&s.st, "/", owned), 0);
        ck_assert_int_eq(pod_state_add_member(&s.st, "c1", "/", 1, 1, true, NULL), 0);
        s.dirty = true;
        ck_assert_int_eq(pod_session_close(&s), 0);
}

/* no record --group missing--> owned: true, saved, then mkdir (made) */
START_TEST(test_made)
{
        struct pod_session s;

        open_session(&s);
        ck_assert_int_eq(pod_state_add_member(&s.st, "c1", "/", 1, 1, false,
                                              unmonitored_text(UNMONITORED_PENDING)),
                         0);
        ck_assert_int_eq(claim(&s), 1);
        ck_assert_int_eq(saved_owned(), 1); /* saved before pod_session_close */
        ck_assert(group_exists());
        ck_assert_int_eq(pod_session_close(&s), 0);
}
END_TEST

/* no record --group exists--> owned: false, saved (adopted) */
START_TEST(test_adopted)
{
        struct pod_session s;

        tmptree_mkdir(env.root_fd, GROUP);
        open_session(&s);
        ck_assert_int_eq(pod_state_add_member(&s.st, "c1", "/", 1, 1, false,
                                              unmonitored_text(UNMONITORED_PENDING)),
                         0);
        ck_assert_int_eq(claim(&s), 0);
        ck_assert_int_eq(saved_owned(), 0);
        ck_assert_int_eq(pod_session_close(&s), 0);
}
END_TEST

/* owned: false --group missing--> owned: true, saved, then mkdir (re-made:
 * the hook's now); owned: true --group missing--> saved, then mkdir again */
START_TEST(test_remade)
{
        for (int owned = 0; owned <= 1; owned++) {
                struct pod_session s;

                record(owned);
                open_session(&s);
                ck_assert_int_eq(claim(&s), 1);
                ck_assert_int_eq(saved_owned(), 1);
                ck_assert(group_exists());
                ck_assert_int_eq(pod_session_close(&s), 0);
                ck_assert_int_eq(unlinkat(env.root_fd, GROUP, AT_REMOVEDIR), 0);
        }
}
END_TEST

/* either --group exists--> unchanged, and nothing written */
START_TEST(test_unchanged)
{
        for (int owned = 0; owned <= 1; owned++) {
                struct pod_session s;
                struct stat before, after;

                record(owned);
                tmptree_mkdir(env.root_fd, GROUP);
                ck_assert_int_eq(fstatat(env.state_fd, UID ".members", &before, 0), 0);
                open_session(&s);
                ck_assert_int_eq(claim(&s), 0);
                ck_assert(!s.dirty);
                ck_assert_int_eq(pod_session_close(&s), 0);
                ck_assert_int_eq(fstatat(env.state_fd, UID ".members", &after, 0), 0);
                ck_assert_uint_eq(before.st_ino, after.st_ino);
                ck_assert_int_eq(saved_owned(), owned);
                ck_assert_int_eq(unlinkat(env.root_fd, GROUP, AT_REMOVEDIR), 0);
        }
}
END_TEST

/* last member gone: an adopted group is forgotten and left in resctrl; an
 * owned one lingers for removeDelaySeconds first. */
START_TEST(test_released)
{
        struct pod_session s;

        record(false);
        tmptree_mkdir(env.root_fd, GROUP);
        open_session(&s);
        pod_state_drop_member(&s.st, "c1");
        ck_assert_int_eq(pod_ownership_release(&s, NULL, "/"), GROUP_FORGOTTEN);
        ck_assert_int_eq(pod_session_close(&s), 1); /* nothing left to remember */
        ck_assert(group_exists());
        ck_assert_int_eq(saved_owned(), -1);

        config.remove_delay_sec = 60;
        record(true);
        open_session(&s);
        pod_state_drop_member(&s.st, "c1");
        ck_assert_int_eq(pod_ownership_release(&s, NULL, "/"), GROUP_LINGERS);
        ck_assert(pod_state_find_group(&s.st, "/")->emptied);
        ck_assert_int_eq(pod_session_close(&s), 0);
        ck_assert_int_eq(saved_owned(), 1);
        ck_assert(group_exists());
}
END_TEST

static Suite *ownership_suite(void)
{
        Suite *s = suite_create("ownership");
        TCase *tc = tcase_create("ownership");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_made);
        tcase_add_test(tc, test_adopted);
        tcase_add_test(tc, test_remade);
        tcase_add_test(tc, test_unchanged);
        tcase_add_test(tc, test_released);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(ownership_suite());
}
