/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "macro.h"
#include "proc.h"
#include "statedir.h"
#include "watch_state.h"

#define WATCH_STATE_VERSION 1
#define WATCH_STATE_MAX 4096

int watch_state_save(int state_fd, const struct watch_state *ws)
{
        json_auto_t *root = json_pack(
            "{s:i, s:i, s:I, s:b, s:{s:I, s:I}, s:I, s:I}", "version", WATCH_STATE_VERSION, "pid",
            (int) ws->pid, "start_time", (json_int_t) ws->start_time, "events", ws->events, "joins",
            "watch", (json_int_t) ws->joins_watch, "gc", (json_int_t) ws->joins_gc, "lost_events",
            (json_int_t) ws->lost_events, "passes", (json_int_t) ws->passes);
        _cleanup_free_ char *text = NULL;

        if (root && ws->boot_id[0] != '\0' &&
            json_object_set_new(root, "boot_id", json_string(ws->boot_id)) < 0)
                return -ENOMEM;
        if (!root || !(text = json_dumps(root, JSON_COMPACT)))
                return -ENOMEM;
        return write_atomic_at(state_fd, STATEDIR_WATCH_STATE, STATEDIR_WATCH_STATE ".tmp", text,
                               strlen(text), 0644);
}

/* A counter: absent reads 0; else a non-negative integer. */
static bool counter(json_t *o, const char *key, uint64_t *ret)
{
        json_t *v = json_object_get(o, key);

        *ret = 0;
        if (!v)
                return true;
        if (!json_is_integer(v) || json_integer_value(v) < 0)
                return false;
        *ret = (uint64_t) json_integer_value(v);
        return true;
}

int watch_state_load(int state_fd, struct watch_state *ret)
{
        _cleanup_free_ char *text = NULL;
        json_auto_t *root = NULL;
        json_t *pid, *events, *joins, *boot_id;
        int r = read_small_file_at(state_fd, STATEDIR_WATCH_STATE, WATCH_STATE_MAX, &text);

        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        root = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
        pid = json_object_get(root, "pid");
        events = json_object_get(root, "events");
        joins = json_object_get(root, "joins");
        boot_id = json_object_get(root, "boot_id");
        *ret = (struct watch_state){0};
        if (!json_is_object(root) || !json_is_integer(json_object_get(root, "version")) ||
            !json_is_integer(pid) || json_integer_value(pid) < 1 ||
            json_integer_value(pid) > INT32_MAX || !json_is_boolean(events) ||
            !(joins == NULL || json_is_object(joins)) ||
            !(boot_id == NULL ||
              (json_is_string(boot_id) && boot_id_is_valid(json_string_value(boot_id)))) ||
            !counter(root, "start_time", &ret->start_time) ||
            !counter(joins, "watch", &ret->joins_watch) || !counter(joins, "gc", &ret->joins_gc) ||
            !counter(root, "lost_events", &ret->lost_events) ||
            !counter(root, "passes", &ret->passes))
                return -EBADMSG;
        ret->pid = (pid_t) json_integer_value(pid);
        ret->events = json_is_true(events);
        if (boot_id)
                (void) snprintf(ret->boot_id, sizeof(ret->boot_id), "%s",
                                json_string_value(boot_id));
        return 0;
}

int watch_state_is_live(int proc_fd, const struct watch_state *ws)
{
        char boot_id[BOOT_ID_LEN + 1];
        uint64_t start;
        bool running;
        int r;

        if (ws->boot_id[0] != '\0' && proc_boot_id(proc_fd, boot_id) >= 0 &&
            strcmp(boot_id, ws->boot_id) != 0)
                return 0;
        r = proc_start_time_running(proc_fd, ws->pid, &start, &running);

        if (r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        return start == ws->start_time && running;
}
