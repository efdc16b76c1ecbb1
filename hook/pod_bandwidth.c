/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>

#include "log.h"
#include "pod_bandwidth.h"
#include "rdt.h"

int pod_bandwidth_fit(struct pod_session *s, const char *ctrl, struct abmc_assignments *ret)
{
        unsigned want = s->env->config->mbm_events;
        int r;

        assert(ret && rdt_lock_is_held());
        r = abmc_group_assignments(s->env->root_fd, ctrl, s->uid, ret);
        if (r == -ENOENT || r == -EINVAL) /* no ABMC, or its mode is "default" */
                return 0;
        if (r < 0)
                return log_warning_errno(r,
                                         "cannot understand the counters of the group of pod %s in "
                                         "%s (mbm_L3_assignments); left as they are",
                                         s->uid, ctrl_display(ctrl));
        for (int ev = 0; ev < ABMC_EVENTS; ev++) {
                bool held = false;

                for (size_t i = 0; i < ret->n; i++)
                        held |= ret->assigned[ev][i];
                if ((want & (1U << ev)) || !held || s->dry_run)
                        continue;
                r = abmc_group_drop(s->env->root_fd, ctrl, s->uid, ev);
                if (r < 0) {
                        log_warning_errno(r,
                                          "cannot give up the %s counters of the group of pod %s",
                                          abmc_event_name(ev), s->uid);
                        continue;
                }
                for (size_t i = 0; i < ret->n; i++)
                        ret->assigned[ev][i] = false;
        }
        return 1;
}

void pod_bandwidth_missing(const struct pod_session *s, const struct abmc_assignments *a, char *buf,
                           size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (int ev = 0; ev < ABMC_EVENTS; ev++) {
                if (!(s->env->config->mbm_events & (1U << ev)) || !a->listed[ev])
                        continue;
                for (size_t i = 0; i < a->n && len < size; i++)
                        if (!a->assigned[ev][i])
                                len += (size_t) snprintf(buf + len, size - len, "%s%s in domain %u",
                                                         len ? ", " : "", abmc_event_name(ev),
                                                         a->ids[i]);
        }
}
