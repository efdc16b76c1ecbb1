/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "filter.h"

static bool list_contains(const struct string_list *l, const char *s)
{
        for (size_t i = 0; s && i < l->n; i++)
                if (strcmp(l->items[i], s) == 0)
                        return true;
        return false;
}

/* Every key of the selector is in obj with exactly that string value. */
static bool map_matches(const struct string_map *m, const json_t *obj)
{
        for (size_t i = 0; i < m->n; i++) {
                const char *v = json_string_value(json_object_get(obj, m->keys[i]));

                if (!v || strcmp(v, m->values[i]) != 0)
                        return false;
        }
        return true;
}

static bool labels_match(const struct string_map *selector, const struct oci_state *s)
{
        const char *blob =
            json_string_value(json_object_get(s->annotations, "io.kubernetes.cri-o.Labels"));
        json_auto_t *labels = NULL;

        if (!blob)
                return false;
        labels = json_loads(blob, JSON_REJECT_DUPLICATES, NULL);
        return json_is_object(labels) && map_matches(selector, labels);
}

bool pod_filter_match(const struct config *c, const struct oci_state *s,
                      const struct pod_identity *id, const char **ret_reason)
{
        const char *reason = NULL;

        if (c->namespaces.n > 0 && !list_contains(&c->namespaces, id->namespace))
                reason = "namespace not selected";
        else if (list_contains(&c->exclude_namespaces, id->namespace))
                reason = "namespace excluded";
        else if (c->label_selector.n > 0 && id->runtime != POD_RUNTIME_CRIO)
                reason = "labels not exposed by this runtime";
        else if (c->label_selector.n > 0 && !labels_match(&c->label_selector, s))
                reason = "labels do not match";
        else if (!map_matches(&c->annotation_selector, s->annotations))
                reason = "annotations do not match";

        if (!reason)
                return true;
        if (ret_reason)
                *ret_reason = reason;
        return false;
}
