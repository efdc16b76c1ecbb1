/* SPDX-License-Identifier: Apache-2.0 */
/* watch --metrics-listen: /metrics (what `status --prometheus` prints),
 * /healthz (watch's loop alive, its passes on time) and an index, served by
 * libmicrohttpd from threads of its own, beside watch's loop and never in
 * its way. */
#pragma once

#include <stdbool.h>
#include <sys/socket.h>

struct metrics_http;

struct metrics_http_options {
        const char *listen;      /* IPv4:PORT, [IPv6]:PORT or :PORT */
        const char *web_config;  /* --web-config FILE; NULL for none */
        const char *config_path; /* watch's --config, for status's runs; NULL: the default */
        unsigned interval;       /* watch's, in seconds: when /healthz says the passes are late */
};

/* An address to listen on, parsed from listen. */
struct metrics_http_addr {
        struct sockaddr_storage sa;
        socklen_t len;
        bool any; /* :PORT: every address, IPv6 and IPv4 */
};

/* Parses IPv4:PORT, [IPv6]:PORT or :PORT (port 1 to 65535). 0, -EINVAL. */
int metrics_http_parse_listen(const char *listen, struct metrics_http_addr *ret);

/* Loads the libraries and the web config, listens and serves. 0 with *ret;
 * -EINVAL for what the command line or the web config got wrong (a usage
 * error), another -errno when it cannot serve (the address in use, no
 * libmicrohttpd, a key that does not fit its certificate); logged, one
 * line. Nothing is served on failure. */
int metrics_http_start(const struct metrics_http_options *o, struct metrics_http **ret);

/* watch's loop ended a gc pass: /healthz is 200 for 2 x interval + 10 s
 * more. Lock-free, for watch's loop; h may be NULL. */
void metrics_http_pass_ended(struct metrics_http *h);

/* Stops serving: every connection closed, every thread joined, h freed.
 * NULL is fine. */
void metrics_http_stop(struct metrics_http *h);
