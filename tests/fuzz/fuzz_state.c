/* SPDX-License-Identifier: Apache-2.0 */
/* The createRuntime decision on untrusted input: state JSON through
 * oci_state_parse, oci_pod_identity and pod_filter_match, under two fixed
 * configs (namespace lists; label and annotation selectors). */
#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "filter.h"
#include "fsutil.h"
#include "fuzz.h"
#include "oci.h"

static const char *const configs_yaml[] = {
    "namespaces: [default, prod]\nexcludeNamespaces: [kube-system]\n",
    "labelSelector: {app: web, tier: front}\n"
    "annotationSelector: {io.kubernetes.container.name: app}\n",
};

static struct config configs[ELEMENTSOF(configs_yaml)];

static void configs_done(void)
{
        for (size_t i = 0; i < ELEMENTSOF(configs); i++)
                config_done(&configs[i]);
}

static void configs_init(void)
{
        static bool done;

        if (done)
                return;
        /* Kept for every input; freed at exit so that memcheck sees no leak. */
        if (atexit(configs_done) != 0)
                abort();
        for (size_t i = 0; i < ELEMENTSOF(configs); i++) {
                const char *y = configs_yaml[i];

                if (config_init(&configs[i]) < 0 ||
                    config_parse(&configs[i], y, strlen(y), "fuzz", NULL) < 0)
                        abort();
        }
        done = true;
}

static void check_uid(const char *uid)
{
        assert(strlen(uid) == POD_UID_LEN);
        for (size_t i = 0; i < POD_UID_LEN; i++) {
                if (i == 8 || i == 13 || i == 18 || i == 23)
                        assert(uid[i] == '-');
                else
                        assert(isxdigit((unsigned char) uid[i]) &&
                               !isupper((unsigned char) uid[i]));
        }
        assert(name_is_valid(uid));
}

static void check_decision(const struct oci_state *s)
{
        struct pod_identity id;
        int r = oci_pod_identity(s, &id);

        assert(r == 0 || r == 1 || r == -EINVAL);
        if (r <= 0)
                return;
        check_uid(id.uid);
        for (size_t i = 0; i < ELEMENTSOF(configs); i++) {
                const char *reason = NULL;

                if (!pod_filter_match(&configs[i], s, &id, &reason))
                        assert(reason);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct oci_state s = {0};
        char *why = NULL;
        int r;

        configs_init();
        r = oci_state_parse((const char *) data, size, &s, &why);
        if (r < 0) {
                assert(r == -ENOMEM || (r == -EINVAL && fuzz_one_line(why)));
                free(why);
                return 0;
        }
        assert(!why);
        assert(name_is_valid(s.id));
        assert(s.pid >= 0);
        assert(!s.bundle || s.bundle[0] == '/');
        assert(json_is_object(s.annotations));
        check_decision(&s);
        oci_state_done(&s);
        return 0;
}
