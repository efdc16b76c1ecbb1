/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "fsutil.h"
#include "macro.h"
#include "rdt.h"

bool rdt_ctrl_group_is_valid(const char *ctrl)
{
        static const char *const reserved[] = {"info", "mon_groups", "mon_data"};

        if (ctrl && strcmp(ctrl, "/") == 0)
                return true;
        if (!name_is_valid(ctrl))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                if (strcmp(ctrl, reserved[i]) == 0)
                        return false;
        return true;
}
