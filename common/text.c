/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

static bool byte_is_plain(unsigned char c)
{
        return c >= 0x20 && c < 0x7f;
}

static size_t escaped_width(unsigned char c)
{
        return byte_is_plain(c) ? 1 : 4;
}

char *text_escape(char *dst, size_t dst_size, const char *src)
{
        static const char ellipsis[] = "...";
        const unsigned char *p = (const unsigned char *) src;
        size_t n = 0, total = 0, room;

        for (const unsigned char *q = p; *q && total < dst_size; q++)
                total += escaped_width(*q);
        /* Cut text ends with "...": leave room for it. */
        room = total < dst_size ? dst_size : dst_size - (sizeof(ellipsis) - 1);
        for (; *p && n + escaped_width(*p) < room; p++) {
                if (byte_is_plain(*p))
                        dst[n] = (char) *p;
                else
                        (void) snprintf(dst + n, 5, "\\x%02x", *p);
                n += escaped_width(*p);
        }
        if (*p)
                memcpy(dst + n, ellipsis, sizeof(ellipsis));
        else
                dst[n] = '\0';
        return dst;
}
