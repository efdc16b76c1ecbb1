/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fsutil.h"
#include "macro.h"
#include "oci.h"
#include "rdt.h"

#define OCI_CONFIG_MAX (4u << 20)

static int set_error(char **reterr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* -EINVAL with a malloc'd one-line reason, or -ENOMEM when even that fails. */
static int set_error(char **reterr, const char *fmt, ...)
{
        va_list ap;
        char *s;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        if (reterr)
                *reterr = s;
        else
                free(s);
        return -EINVAL;
}

static int json_parse_error(const json_error_t *jerr, const char *what, char **reterr)
{
        if (json_error_code(jerr) == json_error_out_of_memory)
                return -ENOMEM;
        return set_error(reterr, "%s: invalid JSON at line %d column %d: %s", what, jerr->line,
                         jerr->column, jerr->text);
}

static int state_check_annotations(json_t *root, json_t **ret, char **reterr)
{
        json_t *a = json_object_get(root, "annotations");
        const char *key;
        json_t *value;

        if (!a) {
                /* The root owns it, so callers borrow annotations the same way either way. */
                a = json_object();
                if (!a || json_object_set_new(root, "annotations", a) < 0)
                        return -ENOMEM;
        }
        if (!json_is_object(a))
                return set_error(reterr, "state: 'annotations' is not an object");
        json_object_foreach(a, key, value)
                if (!json_is_string(value))
                        return set_error(reterr, "state: annotation '%s' is not a string", key);
        *ret = a;
        return 0;
}

static int state_check(json_t *root, struct oci_state *ret, char **reterr)
{
        json_t *id = json_object_get(root, "id");
        json_t *pid = json_object_get(root, "pid");
        json_t *bundle = json_object_get(root, "bundle");
        json_t *annotations = NULL;
        int r;

        if (!id)
                return set_error(reterr, "state: 'id' is missing");
        if (!json_is_string(id) || !name_is_valid(json_string_value(id)))
                return set_error(reterr, "state: 'id' is not a valid path component");
        /* Go runtimes omit a zero pid (omitempty): runc at poststop, crun sends 0. */
        if (pid && (!json_is_integer(pid) || json_integer_value(pid) < 0 ||
                    json_integer_value(pid) > INT_MAX))
                return set_error(reterr, "state: 'pid' is not an integer in [0, %d]", INT_MAX);
        if (bundle && (!json_is_string(bundle) || json_string_value(bundle)[0] != '/'))
                return set_error(reterr, "state: 'bundle' is not an absolute path");
        r = state_check_annotations(root, &annotations, reterr);
        if (r < 0)
                return r;

        *ret = (struct oci_state){
            .root = root,
            .id = json_string_value(id),
            .pid = pid ? (int) json_integer_value(pid) : 0,
            .bundle = bundle ? json_string_value(bundle) : NULL,
            .annotations = annotations,
        };
        return 0;
}

int oci_state_parse(const char *buf, size_t len, struct oci_state *ret, char **reterr)
{
        json_auto_t *root = NULL;
        json_error_t jerr;
        int r;

        /* Without JSON_ALLOW_NUL, jansson refuses NUL bytes and \u0000; it also
         * refuses invalid UTF-8 and nesting deeper than JSON_PARSER_MAX_DEPTH. */
        root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return json_parse_error(&jerr, "state", reterr);
        if (!json_is_object(root))
                return set_error(reterr, "state: not a JSON object");

        r = state_check(root, ret, reterr);
        if (r < 0)
                return r;
        root = NULL; /* now owned by *ret */
        return 0;
}

void oci_state_done(struct oci_state *s)
{
        json_decref(s->root);
        *s = (struct oci_state){};
}

const char *pod_runtime_to_string(enum pod_runtime r)
{
        switch (r) {
        case POD_RUNTIME_CRIO:
                return "cri-o";
        case POD_RUNTIME_CONTAINERD:
                return "containerd";
        case POD_RUNTIME_OTHER:
                return "other";
        }
        return "unknown";
}

int pod_uid_canonicalise(const char *in, char out[POD_UID_LEN + 1])
{
        size_t len = in ? strnlen(in, POD_UID_LEN + 1) : 0;
        char buf[POD_UID_LEN + 1];
        size_t j = 0;

        if (len != POD_UID_LEN && len != 32)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                bool dash_here = j == 8 || j == 13 || j == 18 || j == 23;

                if (dash_here) {
                        buf[j++] = '-';
                        /* Static pods have md5 hex UIDs without dashes. */
                        if (len == POD_UID_LEN) {
                                if (in[i] != '-')
                                        return -EINVAL;
                                continue;
                        }
                }
                if (!isxdigit((unsigned char) in[i]))
                        return -EINVAL;
                buf[j++] = (char) tolower((unsigned char) in[i]);
        }
        buf[j] = '\0';
        memcpy(out, buf, sizeof(buf));
        return 0;
}

bool pod_uid_is_canonical(const char *s)
{
        char canonical[POD_UID_LEN + 1];

        return pod_uid_canonicalise(s, canonical) == 0 && strcmp(s, canonical) == 0;
}

static const char *annotation(const struct oci_state *s, const char *key)
{
        return json_string_value(json_object_get(s->annotations, key));
}

/* A namespace, pod or container name as Kubernetes makes them, at most a
 * DNS subdomain long; anything longer is no such name and is not kept (it
 * would grow every member file and log line). */
static const char *name_annotation(const struct oci_state *s, const char *key)
{
        const char *v = annotation(s, key);

        return v && strlen(v) <= POD_NAME_MAX ? v : NULL;
}

int oci_pod_identity(const struct oci_state *s, struct pod_identity *ret)
{
        struct pod_identity id = {};
        const char *manager = annotation(s, "io.container.manager");
        const char *uid;

        /* containerd always writes io.kubernetes.cri.* after pass-through
         * annotations, and CRI-O strips io.kubernetes.cri.container-type from
         * pod annotations, so that key tells containerd first: a containerd
         * admin passing every pod annotation through cannot let a pod claim
         * io.container.manager=cri-o. CRI-O always overwrites
         * io.container.manager and the kubelet's io.kubernetes.* keys. Trust
         * only the detected runtime's keys. */
        if (annotation(s, "io.kubernetes.cri.container-type"))
                id.runtime = POD_RUNTIME_CONTAINERD;
        else if (manager && strcmp(manager, "cri-o") == 0)
                id.runtime = POD_RUNTIME_CRIO;
        else
                id.runtime = POD_RUNTIME_OTHER;

        if (id.runtime == POD_RUNTIME_CONTAINERD) {
                const char *type = annotation(s, "io.kubernetes.cri.container-type");

                id.sandbox = strcmp(type, "sandbox") == 0;
                uid = annotation(s, "io.kubernetes.cri.sandbox-uid");
                id.namespace = name_annotation(s, "io.kubernetes.cri.sandbox-namespace");
                id.pod_name = name_annotation(s, "io.kubernetes.cri.sandbox-name");
                id.container_name = name_annotation(s, "io.kubernetes.cri.container-name");
        } else {
                uid = annotation(s, "io.kubernetes.pod.uid");
                id.namespace = name_annotation(s, "io.kubernetes.pod.namespace");
                id.pod_name = name_annotation(s, "io.kubernetes.pod.name");
                id.container_name = name_annotation(s, "io.kubernetes.container.name");
        }
        /* CRI-O's infra container: ContainerType "sandbox"; CRI-O sets it to
         * "container" for every other container, over any pod annotation. */
        if (id.runtime == POD_RUNTIME_CRIO) {
                const char *type = annotation(s, "io.kubernetes.cri-o.ContainerType");

                id.sandbox = type && strcmp(type, "sandbox") == 0;
        }
        if (!uid)
                return 0;
        if (pod_uid_canonicalise(uid, id.uid) < 0)
                return -EINVAL;

        *ret = id;
        return 1;
}

static int read_bundle_config(const char *bundle, char **ret, size_t *ret_len)
{
        _cleanup_close_ int dir_fd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (dir_fd < 0)
                return -errno;
        return read_file_at(dir_fd, "config.json", OCI_CONFIG_MAX, ret, ret_len);
}

/* Field types follow runtime-spec's Go structs (omitempty), as runc reads them. */
static int intel_rdt_from_json(json_t *rdt, const char *container_id, struct oci_intel_rdt *ret,
                               char **reterr)
{
        json_t *clos = json_object_get(rdt, "closID");
        json_t *mon = json_object_get(rdt, "enableMonitoring");
        const char *group = container_id;
        char *copy;

        if (!json_is_object(rdt))
                return set_error(reterr, "config.json: 'linux.intelRdt' is not an object");
        if (clos && !json_is_null(clos) && !json_is_string(clos))
                return set_error(reterr, "config.json: 'linux.intelRdt.closID' is not a string");
        /* An empty closID is unset for runc too: the group is named by the container id. */
        if (json_string_length(clos) > 0)
                group = json_string_value(clos);
        if (!rdt_ctrl_group_is_valid(group))
                return set_error(reterr, "config.json: '%s' is not a valid resctrl group name",
                                 group);
        if (mon && !json_is_null(mon) && !json_is_boolean(mon))
                return set_error(reterr,
                                 "config.json: 'linux.intelRdt.enableMonitoring' is not a boolean");

        copy = strdup(group);
        if (!copy)
                return -ENOMEM;
        *ret = (struct oci_intel_rdt){
            .present = true,
            .ctrl_group = copy,
            .enable_monitoring = json_is_true(mon),
        };
        return 0;
}

int oci_bundle_read(const char *bundle, const char *container_id, struct oci_bundle *ret,
                    char **reterr)
{
        _cleanup_free_ char *buf = NULL, *cgroups_path = NULL;
        json_auto_t *root = NULL;
        json_error_t jerr;
        json_t *linux_, *rdt, *cg;
        size_t len = 0;
        int r;

        if (!bundle || bundle[0] != '/')
                return set_error(reterr, "config.json: bundle is not an absolute path");
        r = read_bundle_config(bundle, &buf, &len);
        if (r < 0)
                return r;

        /* No JSON_REJECT_DUPLICATES: the runtime's own parser took the last value. */
        root = json_loadb(buf, len, 0, &jerr);
        if (!root)
                return json_parse_error(&jerr, "config.json", reterr);
        if (!json_is_object(root))
                return set_error(reterr, "config.json: not a JSON object");
        linux_ = json_object_get(root, "linux");
        if (linux_ && !json_is_null(linux_) && !json_is_object(linux_))
                return set_error(reterr, "config.json: 'linux' is not an object");

        cg = json_object_get(linux_, "cgroupsPath");
        if (cg && !json_is_null(cg) && !json_is_string(cg))
                return set_error(reterr, "config.json: 'linux.cgroupsPath' is not a string");
        if (json_string_length(cg) > 0 && !(cgroups_path = strdup(json_string_value(cg))))
                return -ENOMEM;

        /* A null intelRdt is a nil pointer in Go: unset. */
        rdt = json_object_get(linux_, "intelRdt");
        if (!rdt || json_is_null(rdt))
                ret->intel_rdt = (struct oci_intel_rdt){};
        else if ((r = intel_rdt_from_json(rdt, container_id, &ret->intel_rdt, reterr)) < 0)
                return r;
        ret->cgroups_path = TAKE_PTR(cgroups_path);
        return 0;
}

void oci_intel_rdt_done(struct oci_intel_rdt *r)
{
        free(r->ctrl_group);
        *r = (struct oci_intel_rdt){};
}

void oci_bundle_done(struct oci_bundle *b)
{
        oci_intel_rdt_done(&b->intel_rdt);
        free(b->cgroups_path);
        b->cgroups_path = NULL;
}
