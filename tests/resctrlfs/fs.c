/* SPDX-License-Identifier: Apache-2.0 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "forks.h"
#include "fs.h"
#include "macro.h"

/* Every path names one of these; a node is only valid under the model lock. */
enum node_kind {
        NODE_GROUP_DIR,     /* g; the root is the default group */
        NODE_MON_GROUPS,    /* g's mon_groups/ */
        NODE_MON_DATA,      /* g's mon_data/ */
        NODE_MON_DOMAIN,    /* g's mon_data/mon_<res>_<dom>/ */
        NODE_MON_SUBDOMAIN, /* SNC: mon_L3_<dom>/mon_sub_L3_<node>/, sub = node's index + 1 */
        NODE_GROUP_FILE,    /* group_files[idx] of g */
        NODE_EVENT_FILE,    /* mon_res[res].events[idx] in domain dom of g */
        NODE_INFO_DIR,
        NODE_INFO_RES_DIR, /* info_dirs[res] */
        NODE_INFO_FILE,    /* info_dirs[res].files[idx] */
        NODE_ABMC_FILE,    /* abmc_files[idx], in info/L3_MON with ABMC */
        NODE_LAST_CMD_STATUS,
};

struct node {
        enum node_kind kind;
        struct group *g;
        unsigned res;
        unsigned dom;
        unsigned idx;
        unsigned sub; /* SNC: 1 + the node's index within its L3 domain; 0: the domain's sum */
};

struct file_def {
        const char *name;
        mode_t mode;
};

enum {
        GF_TASKS,
        GF_CPUS,
        GF_CPUS_LIST,
        GF_SCHEMATA,
        GF_MODE,
        GF_SIZE,
        GF_MON_HW_ID,       /* with the debug mount option: the group's RMID */
        GF_CTRL_HW_ID,      /* with the debug mount option: a CTRL_MON group's CLOSID */
        GF_MBM_ASSIGNMENTS, /* with ABMC: the group's counters */
        GF_COUNT
};
/* A MON group has only the first three (RFTYPE_BASE without RFTYPE_CTRL). */
#define MON_GROUP_FILES 3
#define CTRL_GROUP_FILES GF_MON_HW_ID
static const struct file_def group_files[GF_COUNT] = {
    {"tasks", 0644},     {"cpus", 0644},       {"cpus_list", 0644},
    {"schemata", 0644},  {"mode", 0644},       {"size", 0444},
    {"mon_hw_id", 0444}, {"ctrl_hw_id", 0444}, {"mbm_L3_assignments", 0644},
};

enum { ABMC_MODE, ABMC_NUM, ABMC_AVAILABLE, ABMC_ON_MKDIR, ABMC_COUNT };
static const struct file_def abmc_files[ABMC_COUNT] = {
    {"mbm_assign_mode", 0644},
    {"num_mbm_cntrs", 0444},
    {"available_mbm_cntrs", 0444},
    {"mbm_assign_on_mkdir", 0644},
};

enum { RES_L3, RES_PERF_PKG, RES_COUNT };
struct mon_res {
        const char *name;
        unsigned n_events;
        const char *event_names[3];
        enum model_event events[3];
        bool fixed_point;
};
static const struct mon_res mon_res[RES_COUNT] = {
    {"L3",
     3,
     {"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"},
     {EVENT_LLC_OCCUPANCY, EVENT_MBM_TOTAL_BYTES, EVENT_MBM_LOCAL_BYTES},
     false},
    {"PERF_PKG", 2, {"core_energy", "activity"}, {EVENT_CORE_ENERGY, EVENT_ACTIVITY}, true},
};

enum { INFO_L3, INFO_L3_MON, INFO_PERF_PKG_MON, INFO_COUNT };
struct info_dir {
        const char *name;
        unsigned n_files;
        struct file_def files[4];
};
static const struct info_dir info_dirs[INFO_COUNT] = {
    {"L3",
     4,
     {{"num_closids", 0444}, {"cbm_mask", 0444}, {"min_cbm_bits", 0444}, {"shareable_bits", 0444}}},
    {"L3_MON", 3, {{"num_rmids", 0444}, {"mon_features", 0444}, {"max_threshold_occupancy", 0644}}},
    {"PERF_PKG_MON", 2, {{"num_rmids", 0444}, {"mon_features", 0444}}},
};

struct fs {
        struct model *m;
        pthread_mutex_t lock;
        struct fork_watch *forks; /* NULL without the proc connector */
        struct timespec mount_time;
        unsigned ncpus;
};

/* What an open file keeps: readable content is rendered once at open, so small
 * reads see one consistent snapshot; the group is named by id, since it may be
 * removed while the file is open. */
struct handle {
        struct node node;
        uint64_t group_id;
        struct stat st;
        char *data;
        size_t len;
};

static struct fs *fs_get(void)
{
        return fuse_get_context()->private_data;
}

static pthread_mutex_t *fs_lock(struct fs *fs)
{
        (void) pthread_mutex_lock(&fs->lock);
        fork_watch_catch_up(fs->forks);
        return &fs->lock;
}

static void unlockp(pthread_mutex_t **l)
{
        (void) pthread_mutex_unlock(*l);
}

#define FS_LOCKED(fs)                                                                              \
        _cleanup_(unlockp) __attribute__((unused)) pthread_mutex_t *_locked = fs_lock(fs)

static unsigned res_domains(const struct fs *fs, unsigned res)
{
        const struct model_config *cfg = model_config(fs->m);

        return res == RES_L3 ? cfg->l3_domains : cfg->perf_pkg_domains;
}

static bool node_is_dir(const struct node *n)
{
        switch (n->kind) {
        case NODE_GROUP_DIR:
        case NODE_MON_GROUPS:
        case NODE_MON_DATA:
        case NODE_MON_DOMAIN:
        case NODE_MON_SUBDOMAIN:
        case NODE_INFO_DIR:
        case NODE_INFO_RES_DIR:
                return true;
        default:
                return false;
        }
}

/* info/ has no rdtgroup behind it (kernfs_to_rdtgroup() returns NULL). */
static bool node_is_info(const struct node *n)
{
        return n->kind == NODE_INFO_DIR || n->kind == NODE_INFO_RES_DIR ||
               n->kind == NODE_INFO_FILE || n->kind == NODE_ABMC_FILE ||
               n->kind == NODE_LAST_CMD_STATUS;
}

/* ---- the tree ---- */

typedef int (*child_fn)(void *userdata, const char *name, const struct node *child);

#define EMIT(name, ...)                                                                            \
        do {                                                                                       \
                int _r = fn(userdata, (name), &(struct node){__VA_ARGS__});                        \
                if (_r != 0)                                                                       \
                        return _r;                                                                 \
        } while (0)

static int group_dir_children(struct fs *fs, struct group *g, child_fn fn, void *userdata)
{
        struct group *root = model_root(fs->m);
        unsigned n_files = g->type == GROUP_CTRL ? CTRL_GROUP_FILES : MON_GROUP_FILES;

        for (unsigned i = 0; i < n_files; i++)
                EMIT(group_files[i].name, .kind = NODE_GROUP_FILE, .g = g, .idx = i);
        if (model_config(fs->m)->debug) {
                EMIT(group_files[GF_MON_HW_ID].name, .kind = NODE_GROUP_FILE, .g = g,
                     .idx = GF_MON_HW_ID);
                if (g->type == GROUP_CTRL)
                        EMIT(group_files[GF_CTRL_HW_ID].name, .kind = NODE_GROUP_FILE, .g = g,
                             .idx = GF_CTRL_HW_ID);
        }
        if (model_abmc(fs->m))
                EMIT(group_files[GF_MBM_ASSIGNMENTS].name, .kind = NODE_GROUP_FILE, .g = g,
                     .idx = GF_MBM_ASSIGNMENTS);
        if (g == root)
                EMIT("info", .kind = NODE_INFO_DIR);
        if (g->type == GROUP_CTRL)
                EMIT("mon_groups", .kind = NODE_MON_GROUPS, .g = g);
        EMIT("mon_data", .kind = NODE_MON_DATA, .g = g);
        if (g == root)
                for (struct group *c = root->next; c; c = c->next)
                        if (c->type == GROUP_CTRL)
                                EMIT(c->name, .kind = NODE_GROUP_DIR, .g = c);
        return 0;
}

static int mon_data_children(struct fs *fs, struct group *g, child_fn fn, void *userdata)
{
        for (unsigned res = 0; res < RES_COUNT; res++)
                for (unsigned dom = 0; dom < res_domains(fs, res); dom++) {
                        char name[32];

                        (void) snprintf(name, sizeof(name), "mon_%s_%02u", mon_res[res].name, dom);
                        EMIT(name, .kind = NODE_MON_DOMAIN, .g = g, .res = res, .dom = dom);
                }
        return 0;
}

static int info_children(struct fs *fs, child_fn fn, void *userdata)
{
        EMIT("last_cmd_status", .kind = NODE_LAST_CMD_STATUS);
        for (unsigned i = 0; i < INFO_COUNT; i++)
                if (i != INFO_PERF_PKG_MON || res_domains(fs, RES_PERF_PKG) > 0)
                        EMIT(info_dirs[i].name, .kind = NODE_INFO_RES_DIR, .res = i);
        return 0;
}

/* Calls fn for each entry of dir until fn returns non-zero, and returns that. */
static int for_each_child(struct fs *fs, const struct node *dir, child_fn fn, void *userdata)
{
        switch (dir->kind) {
        case NODE_GROUP_DIR:
                return group_dir_children(fs, dir->g, fn, userdata);
        case NODE_MON_GROUPS:
                for (struct group *c = model_groups(fs->m); c; c = c->next)
                        if (c->parent == dir->g)
                                EMIT(c->name, .kind = NODE_GROUP_DIR, .g = c);
                return 0;
        case NODE_MON_DATA:
                return mon_data_children(fs, dir->g, fn, userdata);
        case NODE_MON_DOMAIN:
        case NODE_MON_SUBDOMAIN:
                for (unsigned i = 0; i < mon_res[dir->res].n_events; i++)
                        EMIT(mon_res[dir->res].event_names[i], .kind = NODE_EVENT_FILE, .g = dir->g,
                             .res = dir->res, .dom = dir->dom, .idx = i, .sub = dir->sub);
                if (dir->kind == NODE_MON_DOMAIN && dir->res == RES_L3)
                        for (unsigned k = 0; k < model_config(fs->m)->snc_nodes; k++) {
                                char name[32];

                                (void) snprintf(name, sizeof(name), "mon_sub_L3_%02u",
                                                dir->dom * model_config(fs->m)->snc_nodes + k);
                                EMIT(name, .kind = NODE_MON_SUBDOMAIN, .g = dir->g, .res = dir->res,
                                     .dom = dir->dom, .sub = k + 1);
                        }
                return 0;
        case NODE_INFO_DIR:
                return info_children(fs, fn, userdata);
        case NODE_INFO_RES_DIR:
                for (unsigned i = 0; i < info_dirs[dir->res].n_files; i++)
                        EMIT(info_dirs[dir->res].files[i].name, .kind = NODE_INFO_FILE,
                             .res = dir->res, .idx = i);
                if (dir->res == INFO_L3_MON && model_abmc(fs->m))
                        for (unsigned i = 0; i < ABMC_COUNT; i++)
                                EMIT(abmc_files[i].name, .kind = NODE_ABMC_FILE, .idx = i);
                return 0;
        default:
                return -ENOTDIR;
        }
}

struct lookup {
        const char *name;
        struct node found;
};

static int lookup_match(void *userdata, const char *name, const struct node *child)
{
        struct lookup *l = userdata;

        if (strcmp(name, l->name) != 0)
                return 0;
        l->found = *child;
        return 1;
}

static int node_child(struct fs *fs, const struct node *dir, const char *name, struct node *ret)
{
        struct lookup l = {.name = name};
        int r;

        /* Every other directory has a few entries (control groups: at most
         * one per CLOSID); mon_groups has one per RMID, looked up by index. */
        if (dir->kind == NODE_MON_GROUPS) {
                struct group *g = model_find_mon(fs->m, dir->g, name);

                if (!g)
                        return -ENOENT;
                *ret = (struct node){.kind = NODE_GROUP_DIR, .g = g};
                return 0;
        }
        r = for_each_child(fs, dir, lookup_match, &l);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;
        *ret = l.found;
        return 0;
}

static int resolve(struct fs *fs, const char *path, struct node *ret)
{
        struct node n = {.kind = NODE_GROUP_DIR, .g = model_root(fs->m)};
        _cleanup_free_ char *copy = strdup(path);
        char *save = NULL;

        if (!copy)
                return -ENOMEM;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int r = node_child(fs, &n, c, &n);

                if (r < 0)
                        return r;
        }
        *ret = n;
        return 0;
}

/* Splits "/a/b" into the parent node and "b". */
static int resolve_parent(struct fs *fs, const char *path, struct node *ret, const char **ret_name)
{
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *parent = NULL;
        int r;

        if (!slash)
                return -EINVAL;
        parent = strndup(path, (size_t) (slash - path));
        if (!parent)
                return -ENOMEM;
        r = resolve(fs, parent, ret);
        if (r < 0)
                return r;
        if (!node_is_dir(ret))
                return -ENOTDIR;
        *ret_name = slash + 1;
        return 0;
}

/* ---- attributes ---- */

static mode_t node_mode(const struct node *n)
{
        switch (n->kind) {
        case NODE_GROUP_DIR:
        case NODE_MON_GROUPS:
        case NODE_MON_DATA:
        case NODE_MON_DOMAIN:
        case NODE_MON_SUBDOMAIN:
                /* mon_groups/, mon_data/ and mon_*_NN/ copy the group's mode. */
                return S_IFDIR | n->g->mode;
        case NODE_INFO_DIR:
        case NODE_INFO_RES_DIR:
                return S_IFDIR | 0555;
        case NODE_GROUP_FILE:
                return S_IFREG | group_files[n->idx].mode;
        case NODE_INFO_FILE:
                return S_IFREG | info_dirs[n->res].files[n->idx].mode;
        case NODE_ABMC_FILE:
                return S_IFREG | abmc_files[n->idx].mode;
        case NODE_EVENT_FILE:
        case NODE_LAST_CMD_STATUS:
                break;
        }
        return S_IFREG | 0444;
}

static void node_stat(const struct fs *fs, const struct node *n, struct stat *st)
{
        *st = (struct stat){
            .st_mode = node_mode(n),
            .st_nlink = node_is_dir(n) ? 2 : 1,
            .st_uid = n->g ? n->g->uid : 0,
            .st_gid = n->g ? n->g->gid : 0,
            .st_blksize = 4096,
            .st_atim = fs->mount_time,
            .st_mtim = fs->mount_time,
            .st_ctim = fs->mount_time,
        };
}

/* ---- file contents ---- */

/* "%*pb": 32-bit hex chunks, most significant first, the first one only as
 * wide as the bits it holds. Groups only ever have all CPUs or none. */
static void print_cpumask(FILE *f, unsigned nbits, bool full)
{
        unsigned chunk = nbits % 32 ? nbits % 32 : 32;

        for (unsigned i = (nbits + 31) / 32; i > 0; i--) {
                uint32_t v = full ? (uint32_t) (UINT32_MAX >> (32 - chunk)) : 0;

                fprintf(f, "%s%0*x", i == (nbits + 31) / 32 ? "" : ",", (int) (chunk + 3) / 4, v);
                chunk = 32;
        }
        fputc('\n', f);
}

static void print_domains(FILE *f, unsigned n, const char *value)
{
        fputs("L3:", f);
        for (unsigned d = 0; d < n; d++)
                fprintf(f, "%s%u=%s", d ? ";" : "", d, value);
        fputc('\n', f);
}

static int render_group_file(struct fs *fs, const struct node *n, FILE *f)
{
        const struct model_config *cfg = model_config(fs->m);
        bool all_cpus = n->g == model_root(fs->m);
        _cleanup_free_ char *tasks = NULL;
        int r;

        switch (n->idx) {
        case GF_TASKS:
                r = model_tasks_read(fs->m, n->g, &tasks);
                if (r < 0)
                        return r;
                fputs(tasks, f);
                break;
        case GF_CPUS:
                print_cpumask(f, fs->ncpus, all_cpus);
                break;
        case GF_CPUS_LIST:
                if (all_cpus && fs->ncpus > 1)
                        fprintf(f, "0-%u", fs->ncpus - 1);
                else if (all_cpus)
                        fputs("0", f);
                fputc('\n', f);
                break;
        case GF_SCHEMATA:
                print_domains(f, cfg->l3_domains, "fff");
                break;
        case GF_MODE:
                fputs("shareable\n", f);
                break;
        case GF_SIZE:
                print_domains(f, cfg->l3_domains, "12582912");
                break;
        case GF_MON_HW_ID:
                fprintf(f, "%u\n", n->g->rmid);
                break;
        case GF_CTRL_HW_ID:
                fprintf(f, "%u\n", n->g->closid);
                break;
        case GF_MBM_ASSIGNMENTS:
                r = model_assignments_read(fs->m, n->g, &tasks);
                if (r < 0)
                        return r;
                fputs(tasks, f);
                break;
        }
        return 0;
}

/* "0=32;1=32": a per-domain count, as num_mbm_cntrs and available_mbm_cntrs show it. */
static void render_abmc_file(struct fs *fs, const struct node *n, FILE *f)
{
        const struct model_config *cfg = model_config(fs->m);

        switch (n->idx) {
        case ABMC_MODE:
                fputs("[mbm_event]\ndefault\n", f);
                break;
        case ABMC_NUM:
        case ABMC_AVAILABLE:
                for (unsigned d = 0; d < cfg->l3_domains; d++)
                        fprintf(f, "%s%u=%u", d ? ";" : "", d,
                                n->idx == ABMC_NUM ? cfg->mbm_counters
                                                   : model_mbm_available(fs->m, d));
                fputc('\n', f);
                break;
        case ABMC_ON_MKDIR:
                fprintf(f, "%d\n", model_mbm_on_mkdir(fs->m));
                break;
        }
}

static void render_info_file(struct fs *fs, const struct node *n, FILE *f)
{
        const struct model_config *cfg = model_config(fs->m);
        const char *name = info_dirs[n->res].files[n->idx].name;
        const struct mon_res *res = &mon_res[n->res == INFO_L3_MON ? RES_L3 : RES_PERF_PKG];

        if (strcmp(name, "num_closids") == 0)
                fprintf(f, "%u\n", cfg->num_closids);
        else if (strcmp(name, "cbm_mask") == 0)
                fputs("fff\n", f);
        else if (strcmp(name, "min_cbm_bits") == 0)
                fputs("1\n", f);
        else if (strcmp(name, "shareable_bits") == 0)
                fputs("0\n", f);
        else if (strcmp(name, "num_rmids") == 0)
                fprintf(f, "%u\n", cfg->num_rmids);
        else if (strcmp(name, "max_threshold_occupancy") == 0)
                fprintf(f, "%u\n", model_max_threshold(fs->m));
        else if (strcmp(name, "mon_features") == 0)
                for (unsigned i = 0; i < res->n_events; i++)
                        fprintf(f, "%s\n", res->event_names[i]);
}

static int render_event_file(struct fs *fs, const struct node *n, FILE *f)
{
        const struct mon_res *res = &mon_res[n->res];
        uint64_t v;
        char buf[64];
        int r;

        model_refresh(fs->m);
        if (n->res == RES_L3 && n->idx > 0 && model_abmc(fs->m)) {
                /* mbm_total_bytes, mbm_local_bytes: what the group's counters count. */
                if (model_mbm_value(fs->m, n->g, n->idx - 1, n->dom, &v) < 0) {
                        fputs("Unassigned\n", f);
                        return 0;
                }
        } else if (n->res == RES_PERF_PKG) {
                if (model_pkg_event_value(fs->m, n->g, res->events[n->idx], n->dom, &v) < 0) {
                        fputs("Unavailable\n", f);
                        return 0;
                }
        } else
                v = model_event_value(fs->m, n->g, res->events[n->idx]);
        if (n->sub > 0) {
                /* SNC: the domain's files sum its nodes'; the first takes the remainder. */
                unsigned nodes = model_config(fs->m)->snc_nodes;

                v = v / nodes + (n->sub == 1 ? v % nodes : 0);
        }
        if (!res->fixed_point) {
                fprintf(f, "%llu\n", (unsigned long long) v);
                return 0;
        }
        r = model_format_fixed_point(v, MODEL_FIXED_POINT_BITS, buf, sizeof(buf));
        if (r < 0)
                return r;
        fputs(buf, f);
        return 0;
}

static int render(struct fs *fs, const struct node *n, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        FILE *f;
        int r = 0;

        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        if (n->kind == NODE_GROUP_FILE)
                r = render_group_file(fs, n, f);
        else if (n->kind == NODE_EVENT_FILE)
                r = render_event_file(fs, n, f);
        else if (n->kind == NODE_INFO_FILE)
                render_info_file(fs, n, f);
        else if (n->kind == NODE_ABMC_FILE)
                render_abmc_file(fs, n, f);
        else if (n->kind == NODE_LAST_CMD_STATUS)
                fputs(model_status(fs->m), f);
        if (fclose(f) != 0)
                return -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

/* ---- FUSE operations ---- */

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        /* Nothing cached in the kernel: every lookup, stat and read reaches the
         * model, and every write(2) arrives as exactly one FUSE write. */
        cfg->entry_timeout = 0;
        cfg->negative_timeout = 0;
        cfg->attr_timeout = 0;
        cfg->direct_io = 1;
        cfg->kernel_cache = 0;
        cfg->auto_cache = 0;
        cfg->hard_remove = 1;
        /* With no lock capability the kernel keeps flock(2) and fcntl locks
         * local, which is what kernfs does too. */
        conn->want &= ~(unsigned) (FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_POSIX_LOCKS);
        if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
                conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
        return fuse_get_context()->private_data;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        struct fs *fs = fs_get();
        FS_LOCKED(fs);
        struct node n;
        int r;

        if (!path) {
                if (!fi || !fi->fh)
                        return -ENOENT;
                *st = ((const struct handle *) (uintptr_t) fi->fh)->st;
                return 0;
        }
        r = resolve(fs, path, &n);
        if (r < 0)
                return r;
        node_stat(fs, &n, st);
        return 0;
}

struct fill {
        void *buf;
        fuse_fill_dir_t filler;
};

static int fill_one(void *userdata, const char *name, const struct node *child)
{
        struct fill *f = userdata;

        (void) f->filler(f->buf, name, NULL, 0, 0);
        return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
        struct fs *fs = fs_get();
        FS_LOCKED(fs);
        struct fill f = {.buf = buf, .filler = filler};
        struct node n;
        int r;

        r = resolve(fs, path, &n);
        if (r < 0)
                return r;
        if (!node_is_dir(&n))
                return -ENOTDIR;
        (void) filler(buf, ".", NULL, 0, 0);
        (void) filler(buf, "..", NULL, 0, 0);
        return for_each_child(fs, &n, fill_one, &f);
}

static void handle_free(struct handle *h)
{
        if (h) {
                free(h->data);
                free(h);
        }
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
        struct fs *fs = fs_get();
        FS_LOCKED(fs);
        struct handle *h;
        struct node n;
        int r;

        r = resolve(fs, path, &n);
        if (r < 0)
                return r;
        if (node_is_dir(&n))
                return -EISDIR;
        /* kernfs_fop_open(): no write access to a file without S_IWUGO, even for root. */
        if ((fi->flags & O_ACCMODE) != O_RDONLY && !(node_mode(&n) & 0222))
                return -EACCES;
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->node = n;
        h->group_id = n.g ? n.g->id : 0;
        node_stat(fs, &n, &h->st);
        if ((fi->flags & O_ACCMODE) != O_WRONLY) {
                r = render(fs, &n, &h->data, &h->len);
                if (r < 0) {
                        handle_free(h);
                        return r;
                }
        }
        fi->direct_io = 1;
        fi->keep_cache = 0;
        fi->fh = (uintptr_t) h;
        return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t offset,
                   struct fuse_file_info *fi)
{
        const struct handle *h = (const struct handle *) (uintptr_t) fi->fh;
        size_t n;

        if (!h->data)
                return -EBADF;
        if (offset < 0 || (size_t) offset >= h->len)
                return 0;
        n = h->len - (size_t) offset < size ? h->len - (size_t) offset : size;
        memcpy(buf, h->data + offset, n);
        return (int) n;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t offset,
                    struct fuse_file_info *fi)
{
        struct fs *fs = fs_get();
        FS_LOCKED(fs);
        const struct handle *h = (const struct handle *) (uintptr_t) fi->fh;
        struct group *g = h->group_id ? model_group_by_id(fs->m, h->group_id) : NULL;
        char text[4096 + 1];
        int r;

        /* kernfs refuses writes over atomic_write_len (PAGE_SIZE) before resctrl sees them. */
        if (size > 4096)
                return -E2BIG;
        if (h->group_id && !g)
                return -ENOENT;
        if (h->node.kind == NODE_GROUP_FILE && h->node.idx == GF_TASKS)
                return (int) model_tasks_write(fs->m, g, buf, size, fuse_get_context()->pid);
        if (h->node.kind == NODE_GROUP_FILE && h->node.idx == GF_MBM_ASSIGNMENTS)
                return (int) model_assignments_write(fs->m, g, buf, size);
        if (h->node.kind == NODE_GROUP_FILE) {
                /* cpus, cpus_list, schemata, mode: accepted and ignored. */
                model_status_clear(fs->m);
                return (int) size;
        }
        memcpy(text, buf, size);
        text[size] = '\0';
        if (h->node.kind == NODE_ABMC_FILE && h->node.idx == ABMC_ON_MKDIR) {
                r = model_mbm_on_mkdir_set(fs->m, text);
                return r < 0 ? r : (int) size;
        }
        if (h->node.kind == NODE_ABMC_FILE) {
                /* The mode is fixed here, as on systems that cannot switch it. */
                model_status_clear(fs->m);
                model_status_printf(fs->m, "Counter assignment mode is fixed\n");
                return -EINVAL;
        }
        if (h->node.kind != NODE_INFO_FILE)
                return -EACCES;
        r = model_max_threshold_set(fs->m, text);
        return r < 0 ? r : (int) size;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
        handle_free((struct handle *) (uintptr_t) fi->fh);
        return 0;
}

static int fs_mkdir(const char *path, mode_t mode)
{
        struct fs *fs = fs_get();
        FS_LOCKED(fs);
        const struct fuse_context *ctx = fuse_get_context();
        /* rdtgroup_kn_set_ugid(): chowned only when the creator is not root:root. */
        bool chown = ctx->uid != 0 || ctx->gid != 0;
        uid_t uid = chown ? ctx->uid : 0;
        gid_t gid = chown ? ctx->gid : 0;
        struct node dir, child;
        const char *name;
        int r;

        r = resolve_parent(fs, path, &dir, &name);
        if (r < 0)
                return r;
        if (strlen(name) > NAME_MAX)
                return -ENAMETOOLONG;
        if (node_child(fs, &dir, name, &child) == 0)
                return -EEXIST;
        /* rdtgroup_mkdir(): before anything else, and without touching the status. */
        if (strchr(name, '\n'))
                return -EINVAL;
        /* The kernel applied the umask already (no FUSE_CAP_DONT_MASK). */
        mode &= 01777;
        if (dir.kind == NODE_INFO_DIR || dir.kind == NODE_INFO_RES_DIR)
                return -ENODEV;
        if (dir.kind == NODE_GROUP_DIR && dir.g == model_root(fs->m))
                return model_mkdir_ctrl(fs->m, name, mode, uid, gid, NULL);
        if (dir.kind == NODE_MON_GROUPS && strcmp(name, "mon_groups") != 0)
                return model_mkdir_mon(fs->m, dir.g, name, mode, uid, gid, NULL);
        /* is_mon_groups() failed: EPERM with a cleared status ("ok"). */
        model_status_clear(fs->m);
        return -EPERM;
}

static int fs_rmdir(const char *path)
{
        struct fs *fs = fs_get();
        FS_LOCKED(fs);
        struct node n;
        int r;

        r = resolve(fs, path, &n);
        if (r < 0)
                return r;
        if (n.kind != NODE_GROUP_DIR || n.g == model_root(fs->m))
                return -EPERM;
        model_rmdir(fs->m, n.g);
        return 0;
}

/* rdtgroup_rename(): only a MON group, only into some mon_groups/. */
static int fs_rename(const char *from, const char *to, unsigned int flags)
{
        struct fs *fs = fs_get();
        FS_LOCKED(fs);
        struct node src, dst;
        const char *name;
        int r;

        if (flags)
                return -EINVAL;
        r = resolve(fs, from, &src);
        if (r < 0)
                return r;
        r = resolve_parent(fs, to, &dst, &name);
        if (r < 0)
                return r;
        if (node_is_info(&src) || node_is_info(&dst))
                return -ENOENT;
        if (!node_is_dir(&src)) {
                model_status_clear(fs->m);
                model_status_printf(fs->m, "Source and destination must be directories");
                return -EPERM;
        }
        return model_rename_mon(fs->m, src.kind == NODE_GROUP_DIR ? src.g : NULL,
                                dst.kind == NODE_MON_GROUPS ? dst.g : NULL, name);
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
        /* O_TRUNC from a shell redirection: kernfs accepts and ignores it. */
        return 0;
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
        return 0;
}

static int fs_eperm(void)
{
        return -EPERM;
}

static int fs_unlink(const char *path)
{
        return fs_eperm();
}

static int fs_link(const char *from, const char *to)
{
        return fs_eperm();
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
        return fs_eperm();
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
        return fs_eperm();
}

/* kernfs has no ->create: the VFS answers EACCES for a new regular file. */
static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
        return -EACCES;
}

static int fs_mknod(const char *path, mode_t mode, dev_t dev)
{
        return S_ISREG(mode) ? -EACCES : -EPERM;
}

static const struct fuse_operations fs_operations = {
    .init = fs_init,
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .release = fs_release,
    .mkdir = fs_mkdir,
    .rmdir = fs_rmdir,
    .rename = fs_rename,
    .truncate = fs_truncate,
    .utimens = fs_utimens,
    .unlink = fs_unlink,
    .symlink = fs_link,
    .link = fs_link,
    .chmod = fs_chmod,
    .chown = fs_chown,
    .create = fs_create,
    .mknod = fs_mknod,
};

static int fs_serve(struct fs *fs, struct fuse *fuse, const char *mountpoint, bool foreground)
{
        struct fuse_session *se = fuse_get_session(fuse);
        struct fuse_loop_config *loop;
        _cleanup_close_ int forks_fd = -EBADF;
        int r;

        /* The kernel's resctrl code runs in its caller's context, at once.
         * This daemon is a process of its own, and every answer waits for a
         * CPU: on a machine busy with other work, each would wait its turn
         * behind every runnable process, and a hold of the resctrl lock
         * would measure the machine's queue. Its threads (those made from
         * here on inherit it) ask for a CPU first. */
        if (setpriority(PRIO_PROCESS, 0, -20) < 0)
                fprintf(stderr,
                        "resctrlfs: cannot run at nice -20 (%s): on a busy machine its answers "
                        "wait behind every runnable process\n",
                        strerror(errno));

        /* Without fork tracking the events still spare looking up every
         * task in /proc; where there are none, the model looks. */
        r = fork_watch_open(&forks_fd);
        if (r < 0 && model_config(fs->m)->track_forks) {
                fprintf(stderr,
                        "resctrlfs: cannot watch forks (proc connector: %s); "
                        "--no-fork-tracking runs without\n",
                        strerror(-r));
                return r;
        }
        if (fuse_mount(fuse, mountpoint) != 0)
                return -EIO;
        /* Detach only now, so whoever started us finds the mount in place. */
        r = fuse_daemonize(foreground) == 0 ? 0 : -EIO;
        if (r == 0 && forks_fd >= 0)
                r = fork_watch_start(TAKE_FD(forks_fd), fs->m, &fs->lock, &fs->forks);
        if (r == 0 && fuse_set_signal_handlers(se) != 0)
                r = -EIO;
        if (r == 0) {
                loop = fuse_loop_cfg_create();
                r = loop && fuse_loop_mt(fuse, loop) == 0 ? 0 : -EIO;
                if (loop)
                        fuse_loop_cfg_destroy(loop);
                fuse_remove_signal_handlers(se);
        }
        fuse_unmount(fuse);
        fork_watch_stop(fs->forks);
        fs->forks = NULL;
        return r;
}

int fs_run(struct model *m, const char *mountpoint, bool foreground)
{
        struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
        struct fs fs = {.m = m, .lock = PTHREAD_MUTEX_INITIALIZER};
        struct fuse *fuse;
        long ncpus = sysconf(_SC_NPROCESSORS_CONF);
        int r;

        fs.ncpus = ncpus > 0 ? (unsigned) ncpus : 1;
        (void) clock_gettime(CLOCK_REALTIME, &fs.mount_time);
        /* allow_other: root in another user or mount namespace may use it too;
         * default_permissions: the kernel checks modes, as for kernfs. */
        if (fuse_opt_add_arg(&args, "resctrlfs") != 0 || fuse_opt_add_arg(&args, "-o") != 0 ||
            fuse_opt_add_arg(&args, "allow_other,default_permissions,fsname=resctrl,"
                                    "subtype=resctrlfs") != 0) {
                fuse_opt_free_args(&args);
                return -ENOMEM;
        }
        fuse = fuse_new(&args, &fs_operations, sizeof(fs_operations), &fs);
        fuse_opt_free_args(&args);
        if (!fuse)
                return -EINVAL;
        r = fs_serve(&fs, fuse, mountpoint, foreground);
        fuse_destroy(fuse);
        return r;
}
