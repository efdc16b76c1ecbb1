/* SPDX-License-Identifier: Apache-2.0 */
/* The OCI state JSON a runtime hands a hook on stdin, and the pod identity in its annotations. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Canonical pod UID: lowercase dashed 8-4-4-4-12. */
#define POD_UID_LEN 36

struct oci_state {
        json_t *root;        /* owns everything below */
        const char *id;      /* container id, a valid path component (name_is_valid) */
        int pid;             /* > 0, or 0 when absent or 0 (runc and crun at poststop) */
        const char *bundle;  /* absolute path, or NULL when absent */
        json_t *annotations; /* borrowed object, never NULL (empty when absent) */
};

/* Parses and validates a state document. Unknown keys, any "status" and any
 * "ociVersion" are accepted. Rejects: not an object, duplicate keys, an "id"
 * that is missing or not a valid path component, a "pid" that is not an
 * integer in [0, INT_MAX], a non-string "bundle" or a relative one, an
 * "annotations" that is not an object of strings.
 * 0 on success (free with oci_state_done); -EINVAL with *reterr (malloc'd
 * one-line reason) on failure. */
int oci_state_parse(const char *buf, size_t len, struct oci_state *ret, char **reterr);
void oci_state_done(struct oci_state *s);

enum pod_runtime {
        POD_RUNTIME_CRIO,
        POD_RUNTIME_CONTAINERD,
        POD_RUNTIME_OTHER, /* Podman, manual runc/crun: io.kubernetes.pod.uid if present */
};

/* The longest name Kubernetes gives a pod (a DNS subdomain); namespaces and
 * container names are shorter still. */
#define POD_NAME_MAX 253

struct pod_identity {
        char uid[POD_UID_LEN + 1];
        enum pod_runtime runtime;
        /* Borrowed from the state's annotations; NULL when that runtime's key is
         * absent or longer than POD_NAME_MAX. */
        const char *namespace;
        const char *pod_name;
        const char *container_name;
        /* The pod's sandbox (containerd's pause, CRI-O's infra container):
         * no hook runs for it, so it is no member of the pod's, whoever
         * meets it. */
        bool sandbox;
};

/* Finds the pod identity per runtime: containerd (io.kubernetes.cri.container-type
 * present) uses io.kubernetes.cri.sandbox-uid; CRI-O (io.container.manager =
 * cri-o) uses io.kubernetes.pod.uid; anything else io.kubernetes.pod.uid. Only the detected
 * runtime's keys are consulted, so a user-added key of another runtime cannot spoof identity. 1 and
 * *ret when the container belongs to a pod; 0 when it has no pod UID (not ours); -EINVAL when the
 * UID is present but malformed. */
int oci_pod_identity(const struct oci_state *s, struct pod_identity *ret);

/* Accepts a 36-char dashed or 32-hex UID in any case; writes the lowercase
 * dashed form. 0 or -EINVAL. */
int pod_uid_canonicalise(const char *in, char out[POD_UID_LEN + 1]);

/* Whether s is a pod UID in the form the hook names files and groups by:
 * canonical (lowercase, dashed). */
bool pod_uid_is_canonical(const char *s);

const char *pod_runtime_to_string(enum pod_runtime r);

/* linux.intelRdt of the container's <bundle>/config.json. */
struct oci_intel_rdt {
        bool present;           /* linux.intelRdt is set */
        char *ctrl_group;       /* "/" for the root; closID, or the container id when closID
                                 * is unset (the runtime then makes a group of that name);
                                 * NULL when !present. Owned; free with oci_intel_rdt_done. */
        bool enable_monitoring; /* linux.intelRdt.enableMonitoring */
};

void oci_intel_rdt_done(struct oci_intel_rdt *r);

/* What the hook reads of the container's <bundle>/config.json. */
struct oci_bundle {
        struct oci_intel_rdt intel_rdt;
        char *cgroups_path; /* linux.cgroupsPath as given; NULL when unset or empty */
};

/* Reads <bundle>/config.json (at most 4 MiB). 0 on success (intel_rdt.present
 * false when there is no linux.intelRdt); -ENOENT when there is no
 * config.json; -EINVAL with *reterr for malformed JSON, a closID that is not
 * "/" and not a valid control group name (rdt_ctrl_group_is_valid), or a
 * cgroupsPath that is not a string. Nothing is set on failure. */
int oci_bundle_read(const char *bundle, const char *container_id, struct oci_bundle *ret,
                    char **reterr);
void oci_bundle_done(struct oci_bundle *b);
