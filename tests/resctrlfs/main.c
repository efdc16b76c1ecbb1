/* SPDX-License-Identifier: Apache-2.0 */
/* resctrlfs: a FUSE imitation of the kernel's resctrl filesystem, for tests. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "macro.h"
#include "model.h"
#include "rdt.h"

static void usage(FILE *f)
{
        fprintf(
            f, "usage: resctrlfs [-f] [--num-rmids N] [--num-closids N] [--ctrl-groups A,B,...]\n"
               "                 [--l3-domains N] [--perf-pkg-domains N] [--limbo-ms MS]\n"
               "                 [--mbm-counters N] [--mon-groups-per-ctrl N] [--snc N] [--debug]\n"
               "                 [--perf-pkg-by-cpu] [--no-fork-tracking] MOUNTPOINT\n");
}

static int parse_unsigned(const char *s, unsigned min, unsigned max, unsigned *ret)
{
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int create_ctrl_groups(struct model *m, const char *list)
{
        _cleanup_free_ char *copy = strdup(list);
        char *p = copy;

        if (!copy)
                return -ENOMEM;
        while (p) {
                const char *name = strsep(&p, ",");
                int r;

                if (strcmp(name, "/") == 0 || !rdt_ctrl_group_is_valid(name) ||
                    model_find_ctrl(m, name)) {
                        fprintf(stderr, "resctrlfs: bad control group name '%s'\n", name);
                        return -EINVAL;
                }
                r = model_mkdir_ctrl(m, name, 0755, 0, 0, NULL);
                if (r < 0) {
                        fprintf(stderr, "resctrlfs: cannot create control group '%s': %s", name,
                                model_status(m));
                        return r;
                }
        }
        model_status_clear(m);
        return 0;
}

int main(int argc, char *argv[])
{
        static const struct option options[] = {
            {"num-rmids", required_argument, NULL, 'r'},
            {"num-closids", required_argument, NULL, 'c'},
            {"ctrl-groups", required_argument, NULL, 'g'},
            {"l3-domains", required_argument, NULL, 'l'},
            {"perf-pkg-domains", required_argument, NULL, 'p'},
            {"limbo-ms", required_argument, NULL, 'm'},
            {"mbm-counters", required_argument, NULL, 'M'},
            {"mon-groups-per-ctrl", required_argument, NULL, 'P'},
            {"snc", required_argument, NULL, 'S'},
            {"debug", no_argument, NULL, 'd'},
            {"no-fork-tracking", no_argument, NULL, 'F'},
            {"perf-pkg-by-cpu", no_argument, NULL, 'C'},
            {"help", no_argument, NULL, 'h'},
            {},
        };
        struct model_config cfg = {
            .num_rmids = 64,
            .num_closids = 16,
            .l3_domains = 1,
            .track_forks = true,
        };
        const char *ctrl_groups = NULL;
        struct model *m = NULL;
        bool foreground = false;
        int c, r = 0;

        while ((c = getopt_long(argc, argv, "fh", options, NULL)) >= 0) {
                switch (c) {
                case 'f':
                        foreground = true;
                        break;
                case 'r':
                        r = parse_unsigned(optarg, 1, 1U << 16, &cfg.num_rmids);
                        break;
                case 'c':
                        r = parse_unsigned(optarg, 1, 1U << 12, &cfg.num_closids);
                        break;
                case 'g':
                        ctrl_groups = optarg;
                        break;
                case 'l':
                        r = parse_unsigned(optarg, 1, 100, &cfg.l3_domains);
                        break;
                case 'p':
                        r = parse_unsigned(optarg, 0, 100, &cfg.perf_pkg_domains);
                        break;
                case 'm':
                        r = parse_unsigned(optarg, 0, 3600 * 1000, &cfg.limbo_ms);
                        break;
                case 'M':
                        r = parse_unsigned(optarg, 1, 1024, &cfg.mbm_counters);
                        break;
                case 'P':
                        r = parse_unsigned(optarg, 1, 1U << 16, &cfg.mon_groups_per_ctrl);
                        break;
                case 'S':
                        r = parse_unsigned(optarg, 2, 8, &cfg.snc_nodes);
                        break;
                case 'd':
                        cfg.debug = true;
                        break;
                case 'F':
                        cfg.track_forks = false;
                        break;
                case 'C':
                        cfg.perf_pkg_by_cpu = true;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                default:
                        usage(stderr);
                        return EXIT_FAILURE;
                }
                if (r < 0) {
                        fprintf(stderr, "resctrlfs: bad value '%s'\n", optarg);
                        return EXIT_FAILURE;
                }
        }
        if (optind != argc - 1) {
                usage(stderr);
                return EXIT_FAILURE;
        }
        /* MPAM's num_rmids: the PMGs (one for each control group's own
         * monitoring, N for its MON groups) times the PARTIDs. */
        if (cfg.mon_groups_per_ctrl > 0)
                cfg.num_rmids = (cfg.mon_groups_per_ctrl + 1) * cfg.num_closids;

        r = model_new(&cfg, &m);
        if (r < 0) {
                fprintf(stderr, "resctrlfs: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (ctrl_groups)
                r = create_ctrl_groups(m, ctrl_groups);
        if (r == 0) {
                r = fs_run(m, argv[optind], foreground);
                if (r < 0)
                        fprintf(stderr, "resctrlfs: cannot serve '%s'\n", argv[optind]);
        }
        model_free(m);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
