/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP server of watch --metrics-listen.
 *
 * Listeners: the address given, and, when that is one address of the node
 * but not the loopback, 127.0.0.1 too, the same port: the node's own
 * clients' (kubelet's liveness probe asks there), with an accept queue and
 * connections of its own that no flood from the network can fill, so that
 * none makes kubelet restart a working watch. A request that comes to the
 * loopback gets /healthz without a password: the probe then carries no
 * secret in the DaemonSet's spec. Each listener is a libmicrohttpd daemon
 * of its own.
 *
 * Threads: each daemon's listening thread and one thread per connection
 * (at most METRICS_HTTP_CONNECTIONS, METRICS_HTTP_LOCAL_CONNECTIONS on the
 * loopback's), the reaper and the refresher below; watch's loop only
 * stores the time of each pass's end (an atomic), so nothing a client does
 * can hold it up. The daemons' threads and the reaper work at nice
 * METRICS_HTTP_NICE: within watch's cgroup, the CPU that clients cost (TLS
 * handshakes, bcrypt) yields to watch's joins. The refresher, and so the
 * runs of status, keep watch's priority: status holds the resctrl lock
 * (shared, a pod at a time), which a createRuntime may wait for. A
 * connection thread may block, on a bcrypt check or waiting for status's
 * output, neither of which stops /healthz.
 *
 * /metrics is what `status --prometheus` prints, from a child process
 * (this binary's status --prometheus, with watch's --config), not from
 * status's code in this process: that code is written for a process of
 * its own (rdt.c's hold accounting and log.c's context are static, a
 * failure exits), and in a child a crash or a hang of it (a resctrl that
 * does not answer) costs a scrape, never watch's joins. status holds the
 * resctrl lock shared per pod, each hold within the budget (rdt.h), so a
 * scrape delays a createRuntime by one such hold at most. A run costs what
 * status costs (a fork and exec, about 150 ms at 100 pods); its output is
 * kept for METRICS_CACHE_USEC, and scrapes that come while it runs wait for
 * it: ten scrapers at once cost one run. The refresher thread makes the
 * runs; a scrape waits for one at most until shortly before the timeout
 * Prometheus gives it (X-Prometheus-Scrape-Timeout-Seconds), then gets the
 * last run's output, if it succeeded and ended within METRICS_STALE_USEC,
 * rather than nothing: on a node where status takes longer than the
 * scrape's timeout (but less than its own bound, METRICS_STATUS_USEC) each
 * scrape gets the previous run's numbers, not an error. The body ends with
 * resctrl_metrics_timestamp_seconds, when its run began.
 *
 * Bounds: libmicrohttpd's connection limits, its per-connection memory
 * (which bounds a request's line and headers: 431 or 414 past it) and its
 * idle timeout; and, as libmicrohttpd has no limit on a request's whole
 * time (a client that sends a byte a second is never idle), the reaper
 * shuts down a connection whose request has not come whole within
 * METRICS_HTTP_REQUEST_USEC of its start (or of the last response's end),
 * or whose exchange has gone on for METRICS_HTTP_EXCHANGE_USEC. */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "fsutil.h"
#include "http_libs.h"
#include "log.h"
#include "macro.h"
#include "metrics_http.h"
#include "web_config.h"

#define METRICS_HTTP_CONNECTIONS 32u
/* The loopback's listener's, beside another address (see the top). */
#define METRICS_HTTP_LOCAL_CONNECTIONS 8u
/* Prometheus scrapes over one connection a target; a probe adds one. */
#define METRICS_HTTP_CONNECTIONS_PER_IP 8u
/* The server's threads' nice value (see the top). */
#define METRICS_HTTP_NICE 10
/* libmicrohttpd's: a connection silent this long is closed. */
#define METRICS_HTTP_IDLE_SEC 10u
/* A connection's pool, where a request's line and headers must fit with
 * the response's headers: a scrape's request is well under 1 KiB. */
#define METRICS_HTTP_MEMORY (16u * 1024)
#define METRICS_HTTP_BACKLOG 64
/* The reaper's bounds, see the top. */
#define METRICS_HTTP_REQUEST_USEC (10 * 1000000LL)
#define METRICS_HTTP_EXCHANGE_USEC (60 * 1000000LL)
/* How long status's output is served again. */
#define METRICS_CACHE_USEC (2 * 1000000LL)
/* A run of status that takes longer is killed: 503. */
#define METRICS_STATUS_USEC (30 * 1000000LL)
/* The longest a scrape waits for a run, without a timeout of its own. */
#define METRICS_WAIT_USEC (10 * 1000000LL)
/* The output of a run that ended longer ago is never served (see the top). */
#define METRICS_STALE_USEC (300 * 1000000LL)
/* A scrape's answer goes this long before Prometheus' timeout for it. */
#define METRICS_SCRAPE_MARGIN_USEC (1000000LL)
#define METRICS_TIMEOUT_HEADER "X-Prometheus-Scrape-Timeout-Seconds"
#define METRICS_TIMESTAMP "resctrl_metrics_timestamp_seconds"
/* status's output, at most (a 1,000-pod node prints about 3 MiB). */
#define METRICS_BODY_MAX ((size_t) 32 << 20)
/* /healthz: 503 once the last pass ended more than 2 x interval + this ago. */
#define METRICS_HEALTH_SLACK_USEC (10 * 1000000LL)
#define METRICS_LOG_EVERY_USEC (60 * 1000000LL)
#define METRICS_WHY_MAX 256
#define METRICS_REALM "resctrl-mon-hook"
/* TLS 1.2 and 1.3 only, as exporter-toolkit's default minimum. */
#define METRICS_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_INDEX                                                                              \
        "<!DOCTYPE html>\n"                                                                        \
        "<html>\n"                                                                                 \
        "<head><title>resctrl-mon-hook</title></head>\n"                                           \
        "<body>\n"                                                                                 \
        "<h1>resctrl-mon-hook watch</h1>\n"                                                        \
        "<ul>\n"                                                                                   \
        "<li><a href=\"/metrics\">/metrics</a>: status --prometheus</li>\n"                        \
        "<li><a href=\"/healthz\">/healthz</a>: watch's loop and its gc passes</li>\n"             \
        "</ul>\n"                                                                                  \
        "</body>\n"                                                                                \
        "</html>\n"

/* A connection, from libmicrohttpd's start to its close: its socket and
 * when the reaper shuts it down. */
struct metrics_conn {
        struct metrics_conn *prev, *next;
        int fd;
        int64_t deadline; /* now_usec(); INT64_MAX once shut down */
};

/* A listening socket and its daemon. */
struct metrics_listener {
        struct metrics_http *h;
        struct MHD_Daemon *daemon;
        int fd;     /* until the daemon takes it */
        bool local; /* the loopback's: the node's own clients */
};

/* status's output, shared by the cache and the responses that send it. */
struct metrics_body {
        atomic_uint refs;
        size_t len;
        char data[];
};

struct metrics_http {
        struct metrics_listener listeners[2];
        size_t n_listeners;
        char *exe; /* this binary, by name: status's runs run it */
        char *config_path;
        _Atomic int64_t pass_ended; /* now_usec() */
        pthread_t reaper, refresher;

        pthread_mutex_t lock; /* all below */
        pthread_cond_t reaper_wake;
        pthread_cond_t refresh_wake;
        pthread_cond_t computed;
        struct metrics_conn *conns;
        /* The last run of status: its body (NULL when it failed, with why). */
        struct metrics_body *body;
        int64_t computed_at; /* now_usec() at its end; 0: none yet */
        int64_t logged_at;
        pid_t run_pid; /* the run of status going on, unreaped; 0 */
        int start_r;   /* start_threads' */

        struct web_config web;
        unsigned interval;
        bool auth;
        bool stopping;
        bool reaper_started, refresher_started;
        bool computing;
        bool refresh_wanted;
        atomic_bool starting; /* in start_daemon: its first complaint is kept */
        char why[METRICS_WHY_MAX];
        char start_error[METRICS_WHY_MAX];
};

/* ---- the address ---- */

static int parse_port(const char *s, in_port_t *ret)
{
        unsigned long v;
        char *end;

        if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 5)
                return -EINVAL;
        v = strtoul(s, &end, 10);
        if (v < 1 || v > 65535)
                return -EINVAL;
        *ret = htons((in_port_t) v);
        return 0;
}

int metrics_http_parse_listen(const char *listen, struct metrics_http_addr *ret)
{
        const char *colon = strrchr(listen, ':');
        char host[INET6_ADDRSTRLEN + 2];
        size_t n = colon ? (size_t) (colon - listen) : 0;
        in_port_t port;

        *ret = (struct metrics_http_addr){0};
        if (!colon || n >= sizeof(host) || parse_port(colon + 1, &port) < 0)
                return -EINVAL;
        memcpy(host, listen, n);
        host[n] = '\0';
        if (n == 0 || host[0] == '[') {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *) &ret->sa;

                *a = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = port};
                ret->len = sizeof(*a);
                ret->any = n == 0;
                if (n == 0) /* :PORT */
                        return 0;
                if (n < 3 || host[n - 1] != ']')
                        return -EINVAL;
                host[n - 1] = '\0';
                return inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1 ? 0 : -EINVAL;
        }
        struct sockaddr_in *a = (struct sockaddr_in *) &ret->sa;

        *a = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = port};
        ret->len = sizeof(*a);
        return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -EINVAL;
}

/* A listening socket on a (every address, IPv6 and IPv4, for :PORT). */
static int open_listener(const struct metrics_http_addr *a, int *ret_fd)
{
        int one = 1, v6only = !a->any;
        _cleanup_close_ int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 && errno == EAFNOSUPPORT && a->any) {
                /* No IPv6 here: every IPv4 address. */
                struct metrics_http_addr v4 = {.len = sizeof(struct sockaddr_in)};
                struct sockaddr_in *in = (struct sockaddr_in *) &v4.sa;

                *in = (struct sockaddr_in){.sin_family = AF_INET,
                                           .sin_port =
                                               ((const struct sockaddr_in6 *) &a->sa)->sin6_port};
                return open_listener(&v4, ret_fd);
        }
        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
                return -errno;
        if (a->sa.ss_family == AF_INET6 &&
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) < 0)
                return -errno;
        if (bind(fd, (const struct sockaddr *) &a->sa, a->len) < 0)
                return -errno;
        if (listen(fd, METRICS_HTTP_BACKLOG) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* ---- responses ---- */

static struct metrics_body *body_ref(struct metrics_body *b)
{
        atomic_fetch_add(&b->refs, 1);
        return b;
}

static void body_unref(void *cls)
{
        struct metrics_body *b = cls;

        if (b && atomic_fetch_sub(&b->refs, 1) == 1)
                free(b);
}

/* Queues response r with status and content type, then lets go of r. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, const char *type,
                             struct MHD_Response *r)
{
        enum MHD_Result q;

        if (!r)
                return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
        (void) sym_MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                (void) sym_MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        q = sym_MHD_queue_response(c, status, r);
        sym_MHD_destroy_response(r);
        return q;
}

static struct MHD_Response *text_response(const char *text)
{
        char *copy = strdup(text);
        struct MHD_Response *r =
            copy ? sym_MHD_create_response_from_buffer(strlen(copy), copy, MHD_RESPMEM_MUST_FREE)
                 : NULL;

        if (!r)
                free(copy);
        return r;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *text)
{
        return queue(c, status, "text/plain; charset=utf-8", text_response(text));
}

/* ---- /metrics ---- */

struct status_run {
        struct metrics_body *body;
        size_t cap;
        char err[METRICS_WHY_MAX]; /* the start of status's stderr */
        size_t err_len;
};

/* Appends n bytes to the body: 0, -EFBIG past METRICS_BODY_MAX, -ENOMEM. */
static int body_append(struct status_run *s, const char *data, size_t n)
{
        if (s->body->len + n > METRICS_BODY_MAX)
                return -EFBIG;
        if (s->body->len + n > s->cap) {
                size_t cap = s->cap * 2 > s->body->len + n ? s->cap * 2 : s->body->len + n;
                struct metrics_body *b = realloc(s->body, sizeof(*b) + cap);

                if (!b)
                        return -ENOMEM;
                s->body = b;
                s->cap = cap;
        }
        memcpy(s->body->data + s->body->len, data, n);
        s->body->len += n;
        return 0;
}

/* Appends what fd has to the body (out) or to err; 0 at EOF, 1 for more,
 * -EFBIG past METRICS_BODY_MAX, -errno. */
static int read_some(struct status_run *s, int fd, bool out)
{
        char chunk[65536];
        ssize_t n = read(fd, chunk, sizeof(chunk));
        int r;

        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 1 : -errno;
        if (n == 0)
                return 0;
        if (!out) {
                size_t take = (size_t) n < sizeof(s->err) - 1 - s->err_len
                                  ? (size_t) n
                                  : sizeof(s->err) - 1 - s->err_len;

                memcpy(s->err + s->err_len, chunk, take);
                s->err_len += take;
                return 1;
        }
        r = body_append(s, chunk, (size_t) n);
        return r < 0 ? r : 1;
}

/* Ends the body with when its run began: a scrape may get a run's output
 * that is older than the scrape (see the top). */
static int append_timestamp(struct status_run *s, const struct timespec *began)
{
        char text[256];
        int n = snprintf(text, sizeof(text),
                         "# HELP " METRICS_TIMESTAMP " When the run of status that made this "
                         "output began (Unix time).\n"
                         "# TYPE " METRICS_TIMESTAMP " gauge\n" METRICS_TIMESTAMP " %lld.%03ld\n",
                         (long long) began->tv_sec, began->tv_nsec / 1000000);

        return n < 0 || (size_t) n >= sizeof(text) ? -EIO : body_append(s, text, (size_t) n);
}

/* Reads the child's stdout and stderr to their ends, by the deadline. */
static int collect(struct status_run *s, int out_fd, int err_fd, int64_t deadline)
{
        struct pollfd fds[] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};

        while (fds[0].fd >= 0 || fds[1].fd >= 0) {
                int64_t left = deadline - now_usec();
                int r;

                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(fds, ELEMENTSOF(fds), (int) ((left + 999) / 1000));
                if (r < 0 && errno != EINTR)
                        return -errno;
                for (size_t i = 0; r > 0 && i < ELEMENTSOF(fds); i++) {
                        int q;

                        if (fds[i].fd < 0 || !fds[i].revents)
                                continue;
                        q = read_some(s, fds[i].fd, i == 0);
                        if (q < 0)
                                return q;
                        if (q == 0)
                                fds[i].fd = -1;
                }
        }
        return 0;
}

/* status's command line: watch's config and --log-level err, so that its
 * stderr holds what went wrong. Writable strings, as execve's type wants
 * them. */
struct status_argv {
        char name[sizeof("resctrl-mon-hook")], config[sizeof("--config")],
            level[sizeof("--log-level")], err[sizeof("err")], status[sizeof("status")],
            prometheus[sizeof("--prometheus")];
        char *argv[8];
};

static void status_argv(const struct metrics_http *h, struct status_argv *a)
{
        size_t n = 0;

        *a = (struct status_argv){.name = "resctrl-mon-hook",
                                  .config = "--config",
                                  .level = "--log-level",
                                  .err = "err",
                                  .status = "status",
                                  .prometheus = "--prometheus"};
        a->argv[n++] = a->name;
        if (h->config_path) {
                a->argv[n++] = a->config;
                a->argv[n++] = h->config_path;
        }
        a->argv[n++] = a->level;
        a->argv[n++] = a->err;
        a->argv[n++] = a->status;
        a->argv[n++] = a->prometheus;
        a->argv[n] = NULL;
}

/* The child's way to exec status, with async-signal-safe calls alone (watch
 * has threads): it dies with the thread that started it, the refresher, so
 * that a watch that is killed (SIGTERM's default, SIGKILL) leaves no run
 * behind; stdin /dev/null, stdout and stderr the pipes, no other descriptor
 * of watch's (one it inherited without O_CLOEXEC), no signal blocked or
 * handled. The descriptors go above 2 first, so that none is where another
 * goes. */
static _Noreturn void exec_status(const char *exe, char **argv, int out_w, int err_w, pid_t parent)
{
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        int in = open("/dev/null", O_RDONLY);
        sigset_t none;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent || in < 0)
                _exit(127);
        in = fcntl(in, F_DUPFD, STDERR_FILENO + 1);
        out_w = fcntl(out_w, F_DUPFD, STDERR_FILENO + 1);
        err_w = fcntl(err_w, F_DUPFD, STDERR_FILENO + 1);
        if (in < 0 || out_w < 0 || err_w < 0 || dup2(in, STDIN_FILENO) < 0 ||
            dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0 ||
            close_range(STDERR_FILENO + 1, ~0U, 0) < 0)
                _exit(127);
        for (int sig = 1; sig < NSIG; sig++)
                (void) sigaction(sig, &dfl, NULL);
        (void) sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) execve(exe, argv, environ);
        _exit(127);
}

/* Starts status with its stdout and stderr on pipes (exec_status). */
static int spawn_status(const struct metrics_http *h, pid_t *ret_pid, int *ret_out, int *ret_err)
{
        _cleanup_close_ int out_r = -EBADF, out_w = -EBADF, err_r = -EBADF, err_w = -EBADF;
        struct status_argv argv;
        pid_t parent = getpid(), pid;
        int fds[2];

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        out_r = fds[0], out_w = fds[1];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        err_r = fds[0], err_w = fds[1];
        status_argv(h, &argv);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                exec_status(h->exe, argv.argv, out_w, err_w, parent);
        *ret_pid = pid;
        *ret_out = TAKE_FD(out_r);
        *ret_err = TAKE_FD(err_r);
        return 0;
}

/* What status's end says: 0 for exit 0, else -EIO with why. */
static int judge(int wstatus, const struct status_run *s, char why[static METRICS_WHY_MAX])
{
        /* The first line of its stderr, cut to fit. */
        int n = (int) strcspn(s->err, "\n");

        if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
                return 0;
        if (WIFEXITED(wstatus))
                (void) snprintf(why, METRICS_WHY_MAX,
                                "status --prometheus exited with status %d%s%.*s",
                                WEXITSTATUS(wstatus), n ? ": " : "", n, s->err);
        else
                (void) snprintf(why, METRICS_WHY_MAX, "status --prometheus was killed by signal %d",
                                WTERMSIG(wstatus));
        return -EIO;
}

/* Waits for the child's end by deadline, killing it there whatever its
 * pipes did: one that closed them and hangs (its exit waiting on a FUSE
 * resctrl that does not answer, a binary swapped under watch) never holds
 * the server past the bound. The child is left unreaped, so that its pid
 * still names it. 0, or -ETIMEDOUT when it was killed. */
static int exited_by(pid_t pid, int64_t deadline)
{
        siginfo_t info;

        for (;;) {
                info.si_pid = 0;
                if (waitid(P_PID, (id_t) pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0
                        ? info.si_pid == pid
                        : errno != EINTR)
                        return 0;
                if (now_usec() >= deadline) {
                        (void) kill(pid, SIGKILL);
                        return -ETIMEDOUT;
                }
                (void) nanosleep(&(struct timespec){.tv_nsec = 10L * 1000 * 1000}, NULL);
        }
}

/* The run going on, for metrics_http_stop to kill: under h->lock. A run
 * that starts once the server stops is killed at once. */
static void run_started(struct metrics_http *h, pid_t pid)
{
        (void) pthread_mutex_lock(&h->lock);
        h->run_pid = pid;
        if (h->stopping)
                (void) kill(pid, SIGKILL);
        (void) pthread_mutex_unlock(&h->lock);
}

/* Before the run is reaped: its pid is never another's while it is kept. */
static void run_ended(struct metrics_http *h)
{
        (void) pthread_mutex_lock(&h->lock);
        h->run_pid = 0;
        (void) pthread_mutex_unlock(&h->lock);
}

/* One run of status --prometheus: 0 with *ret (one reference), or -errno
 * with why. */
static int run_status(struct metrics_http *h, struct metrics_body **ret,
                      char why[static METRICS_WHY_MAX])
{
        struct status_run s = {.cap = 65536};
        _cleanup_close_ int out_fd = -EBADF, err_fd = -EBADF;
        int wstatus = 0, r;
        struct timespec began;
        int64_t deadline;
        pid_t pid = 0;

        s.body = malloc(sizeof(*s.body) + s.cap);
        if (!s.body)
                return -ENOMEM;
        *s.body = (struct metrics_body){.refs = 1};
        (void) clock_gettime(CLOCK_REALTIME, &began);
        r = spawn_status(h, &pid, &out_fd, &err_fd);
        if (r < 0) {
                free(s.body);
                (void) snprintf(why, METRICS_WHY_MAX, "cannot run status --prometheus: %s",
                                strerror(-r));
                return r;
        }
        run_started(h, pid);
        deadline = now_usec() + METRICS_STATUS_USEC;
        r = collect(&s, out_fd, err_fd, deadline);
        if (r < 0)
                (void) kill(pid, SIGKILL);
        else
                r = exited_by(pid, deadline);
        run_ended(h);
        while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
                ;
        if (r == -ETIMEDOUT)
                (void) snprintf(why, METRICS_WHY_MAX,
                                "status --prometheus did not finish within %lld s, killed",
                                METRICS_STATUS_USEC / 1000000);
        else if (r == -EFBIG)
                (void) snprintf(why, METRICS_WHY_MAX,
                                "status --prometheus printed more than %zu MiB, killed",
                                METRICS_BODY_MAX >> 20);
        else if (r < 0)
                (void) snprintf(why, METRICS_WHY_MAX, "cannot read status --prometheus: %s",
                                strerror(-r));
        else
                r = judge(wstatus, &s, why);
        if (r == 0)
                r = append_timestamp(&s, &began);
        if (r < 0) {
                free(s.body);
                return r;
        }
        *ret = s.body;
        return 0;
}
static bool fresh(const struct metrics_http *h, int64_t now)
{
        return h->computed_at != 0 && now - h->computed_at < METRICS_CACHE_USEC;
}

/* Keeps a run's result, wakes those who wait for it. Under h->lock. */
static void keep(struct metrics_http *h, struct metrics_body *b, int r, const char *why)
{
        body_unref(h->body);
        h->body = r < 0 ? NULL : b;
        (void) snprintf(h->why, sizeof(h->why), "%s", why);
        h->computed_at = now_usec();
        (void) pthread_cond_broadcast(&h->computed);
        if (r < 0 && !h->stopping && h->computed_at - h->logged_at >= METRICS_LOG_EVERY_USEC) {
                h->logged_at = h->computed_at;
                log_warning("cannot serve /metrics: %s (said once a minute at most)", why);
        }
}

/* The refresher: one run of status each time a scrape asks for one. */
static void *refresher_main(void *arg)
{
        struct metrics_http *h = arg;

        (void) pthread_mutex_lock(&h->lock);
        while (!h->stopping) {
                struct metrics_body *b = NULL;
                char why[METRICS_WHY_MAX] = "";
                int r;

                if (!h->refresh_wanted) {
                        (void) pthread_cond_wait(&h->refresh_wake, &h->lock);
                        continue;
                }
                h->refresh_wanted = false;
                h->computing = true;
                (void) pthread_mutex_unlock(&h->lock);
                r = run_status(h, &b, why);
                (void) pthread_mutex_lock(&h->lock);
                h->computing = false;
                keep(h, b, r, why);
        }
        (void) pthread_mutex_unlock(&h->lock);
        return NULL;
}

/* The body of /metrics (a reference), or NULL with why: the last run's
 * while fresh; else a new run's, waited for until deadline; past it, the
 * last run's if it did not fail and ended within METRICS_STALE_USEC. */
static struct metrics_body *metrics_body(struct metrics_http *h, int64_t deadline,
                                         char why[static METRICS_WHY_MAX])
{
        struct metrics_body *b = NULL;
        int64_t now;

        (void) pthread_mutex_lock(&h->lock);
        for (;;) {
                now = now_usec();
                if (fresh(h, now) || h->stopping)
                        break;
                if (!h->computing && !h->refresh_wanted) {
                        h->refresh_wanted = true;
                        (void) pthread_cond_signal(&h->refresh_wake);
                }
                if (now >= deadline)
                        break;
                /* now_usec() is CLOCK_MONOTONIC, the condition's clock. */
                (void) pthread_cond_timedwait(
                    &h->computed, &h->lock,
                    &(struct timespec){.tv_sec = deadline / 1000000,
                                       .tv_nsec = (deadline % 1000000) * 1000});
        }
        if (h->body && now - h->computed_at < METRICS_STALE_USEC)
                b = body_ref(h->body);
        else if (h->computed_at != 0 && !h->body)
                (void) snprintf(why, METRICS_WHY_MAX, "%s", h->why);
        else
                (void) snprintf(why, METRICS_WHY_MAX, "%s",
                                h->stopping ? "watch is stopping"
                                            : "status --prometheus has not finished in time");
        (void) pthread_mutex_unlock(&h->lock);
        return b;
}

/* Until when a scrape may wait for a run of status: shortly before the
 * timeout Prometheus says it has, METRICS_WAIT_USEC at most. */
static int64_t scrape_deadline(struct MHD_Connection *c)
{
        const char *v = sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND, METRICS_TIMEOUT_HEADER);
        int64_t wait = METRICS_WAIT_USEC, now = now_usec();
        char *end;
        double t;

        if (v) {
                errno = 0;
                t = strtod(v, &end);
                if (errno == 0 && end != v && *end == '\0' && t > 0 && t < 3600)
                        wait = (int64_t) (t * 1e6) - METRICS_SCRAPE_MARGIN_USEC;
        }
        if (wait > METRICS_WAIT_USEC)
                wait = METRICS_WAIT_USEC;
        return now + (wait > 0 ? wait : 0);
}

static enum MHD_Result serve_metrics(struct metrics_http *h, struct MHD_Connection *c)
{
        char why[METRICS_WHY_MAX], text[METRICS_WHY_MAX + 1];
        struct metrics_body *b = metrics_body(h, scrape_deadline(c), why);
        struct MHD_Response *r;

        if (!b) {
                (void) snprintf(text, sizeof(text), "%s\n", why);
                return respond(c, MHD_HTTP_SERVICE_UNAVAILABLE, text);
        }
        r = sym_MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, body_unref,
                                                                       b);
        if (!r)
                body_unref(b);
        return queue(c, MHD_HTTP_OK, METRICS_CONTENT_TYPE, r);
}

/* ---- /healthz ---- */

static enum MHD_Result serve_health(struct metrics_http *h, struct MHD_Connection *c)
{
        int64_t age = now_usec() - atomic_load(&h->pass_ended);
        char text[160];

        if (age <= 2 * (int64_t) h->interval * 1000000 + METRICS_HEALTH_SLACK_USEC)
                return respond(c, MHD_HTTP_OK, "ok\n");
        (void) snprintf(text, sizeof(text),
                        "watch's last gc pass ended %lld s ago; one is due every %u s\n",
                        (long long) (age / 1000000), h->interval);
        return respond(c, MHD_HTTP_SERVICE_UNAVAILABLE, text);
}

/* ---- requests ---- */

static bool authorized(struct metrics_http *h, struct MHD_Connection *c)
{
        char *password = NULL;
        char *user = sym_MHD_basic_auth_get_username_password(c, &password);
        bool ok = user && password && web_config_check(&h->web, user, password) == 1;

        if (password)
                explicit_bzero(password, strlen(password));
        sym_MHD_free(password);
        sym_MHD_free(user);
        return ok;
}

/* Ours of c: NULL when on_connection could not make it. */
static struct metrics_conn *conn_of(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *i =
            sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return i ? i->socket_context : NULL;
}

/* The request's line and headers are in: the reaper gives the exchange
 * METRICS_HTTP_EXCHANGE_USEC from now. */
static void request_in(struct metrics_http *h, struct MHD_Connection *c)
{
        struct metrics_conn *mc = conn_of(c);

        if (!mc)
                return;
        (void) pthread_mutex_lock(&h->lock);
        if (mc->deadline != INT64_MAX)
                mc->deadline = now_usec() + METRICS_HTTP_EXCHANGE_USEC;
        (void) pthread_mutex_unlock(&h->lock);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
        const struct metrics_listener *l = cls;
        struct metrics_http *h = l->h;

        (void) version; /* libmicrohttpd answers what it does not speak */
        (void) upload_data;
        if (!*req_cls) {
                /* The first call, the line and headers in. A method that
                 * is not ours is answered now, which makes libmicrohttpd
                 * read no body and close the connection; the others wait
                 * for the request's end, so that it stays open for the
                 * next (Prometheus keeps one alive between scrapes). */
                *req_cls = h;
                request_in(h, c);
                if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
                    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                        return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
                return MHD_YES;
        }
        if (*upload_data_size > 0) { /* a GET with a body: dropped */
                *upload_data_size = 0;
                return MHD_YES;
        }
        /* The node's own /healthz needs no password (see the top). */
        if (h->auth && !(l->local && strcmp(url, "/healthz") == 0) && !authorized(h, c)) {
                struct MHD_Response *r = text_response("unauthorized\n");
                enum MHD_Result q;

                if (!r)
                        return MHD_NO;
                (void) sym_MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                                   "text/plain; charset=utf-8");
                q = sym_MHD_queue_basic_auth_fail_response(c, METRICS_REALM, r);
                sym_MHD_destroy_response(r);
                return q;
        }
        if (strcmp(url, "/metrics") == 0)
                return serve_metrics(h, c);
        if (strcmp(url, "/healthz") == 0)
                return serve_health(h, c);
        if (strcmp(url, "/") == 0)
                return queue(c, MHD_HTTP_OK, "text/html; charset=utf-8",
                             text_response(METRICS_INDEX));
        return respond(c, MHD_HTTP_NOT_FOUND, "not found: see /\n");
}

/* ---- connections and the reaper ---- */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
        struct metrics_http *h = ((const struct metrics_listener *) cls)->h;
        struct metrics_conn *mc = *socket_context;

        if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *i =
                    sym_MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

                mc = i ? calloc(1, sizeof(*mc)) : NULL;
                if (!mc) /* left to libmicrohttpd's idle timeout */
                        return;
                mc->fd = i->connect_fd;
                (void) pthread_mutex_lock(&h->lock);
                mc->deadline = now_usec() + METRICS_HTTP_REQUEST_USEC;
                mc->next = h->conns;
                if (h->conns)
                        h->conns->prev = mc;
                h->conns = mc;
                (void) pthread_cond_signal(&h->reaper_wake);
                (void) pthread_mutex_unlock(&h->lock);
                *socket_context = mc;
                return;
        }
        /* Closed: libmicrohttpd closes the socket after this returns, so
         * the reaper, under the lock, never shuts down a reused number. */
        if (!mc)
                return;
        (void) pthread_mutex_lock(&h->lock);
        if (mc->prev)
                mc->prev->next = mc->next;
        else
                h->conns = mc->next;
        if (mc->next)
                mc->next->prev = mc->prev;
        (void) pthread_mutex_unlock(&h->lock);
        free(mc);
        *socket_context = NULL;
}

/* A response has gone: the next request on the connection has
 * METRICS_HTTP_REQUEST_USEC to come whole. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
        struct metrics_http *h = ((const struct metrics_listener *) cls)->h;
        struct metrics_conn *mc = conn_of(c);

        (void) toe; /* whatever ended it, the next request has its time */
        *req_cls = NULL;
        if (!mc)
                return;
        (void) pthread_mutex_lock(&h->lock);
        if (mc->deadline != INT64_MAX)
                mc->deadline = now_usec() + METRICS_HTTP_REQUEST_USEC;
        /* Sooner than the one the reaper may sleep towards. */
        (void) pthread_cond_signal(&h->reaper_wake);
        (void) pthread_mutex_unlock(&h->lock);
}

/* Shuts down the connections past their deadlines (their threads see the
 * end and close them); the soonest deadline left. Under the lock. */
static int64_t reap(struct metrics_http *h)
{
        int64_t now = now_usec(), next = INT64_MAX;

        for (struct metrics_conn *mc = h->conns; mc; mc = mc->next) {
                if (mc->deadline <= now) {
                        (void) shutdown(mc->fd, SHUT_RDWR);
                        mc->deadline = INT64_MAX;
                }
                if (mc->deadline < next)
                        next = mc->deadline;
        }
        return next;
}

static void *reaper_main(void *arg)
{
        struct metrics_http *h = arg;

        (void) pthread_mutex_lock(&h->lock);
        while (!h->stopping) {
                int64_t next = reap(h);

                if (next == INT64_MAX) {
                        (void) pthread_cond_wait(&h->reaper_wake, &h->lock);
                } else {
                        /* now_usec() is CLOCK_MONOTONIC, the condition's clock. */
                        struct timespec ts = {.tv_sec = next / 1000000,
                                              .tv_nsec = (next % 1000000) * 1000};

                        (void) pthread_cond_timedwait(&h->reaper_wake, &h->lock, &ts);
                }
        }
        (void) pthread_mutex_unlock(&h->lock);
        return NULL;
}

/* ---- starting and stopping ---- */

/* libmicrohttpd's messages: the first one while it starts is the reason
 * start_daemon failed; later ones (a connection refused at the limit) are
 * debug lines. */
__attribute__((format(printf, 2, 0))) static void on_log(void *cls, const char *fmt, va_list ap)
{
        struct metrics_http *h = cls;
        char msg[METRICS_WHY_MAX];
        size_t n;

        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        n = strlen(msg);
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
                msg[--n] = '\0';
        if (h->starting && !h->start_error[0])
                (void) snprintf(h->start_error, sizeof(h->start_error), "%s", msg);
        else
                log_debug("libmicrohttpd: %s", msg);
}

static struct MHD_Daemon *start_daemon(struct metrics_http *h, struct metrics_listener *l)
{
        static char priorities[] = METRICS_TLS_PRIORITIES;
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                         MHD_USE_POLL | MHD_USE_ERROR_LOG | (h->web.cert_pem ? MHD_USE_TLS : 0);
        /* TLS's options, or none (the list ends at the first MHD_OPTION_END). */
        struct MHD_OptionItem tls[] = {
            {MHD_OPTION_HTTPS_MEM_CERT, 0, h->web.cert_pem},
            {MHD_OPTION_HTTPS_MEM_KEY, 0, h->web.key_pem},
            {MHD_OPTION_HTTPS_PRIORITIES, 0, priorities},
            {MHD_OPTION_END, 0, NULL},
        };

        /* The logger first: libmicrohttpd's messages about the options
         * after it come to it. */
        /* The daemon's from now on, failing or not: it closes it (but for
         * a failure before it takes it, in a process about to exit). */
        return sym_MHD_start_daemon(
            flags, 0, NULL, NULL, on_request, l, MHD_OPTION_EXTERNAL_LOGGER, on_log, h,
            MHD_OPTION_LISTEN_SOCKET, TAKE_FD(l->fd), MHD_OPTION_NOTIFY_CONNECTION, on_connection,
            l, MHD_OPTION_NOTIFY_COMPLETED, on_completed, l, MHD_OPTION_CONNECTION_LIMIT,
            l->local && h->n_listeners > 1 ? METRICS_HTTP_LOCAL_CONNECTIONS
                                           : METRICS_HTTP_CONNECTIONS,
            MHD_OPTION_PER_IP_CONNECTION_LIMIT, METRICS_HTTP_CONNECTIONS_PER_IP,
            MHD_OPTION_CONNECTION_TIMEOUT, METRICS_HTTP_IDLE_SEC,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) METRICS_HTTP_MEMORY,
            MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_ARRAY,
            h->web.cert_pem ? tls : &tls[ELEMENTSOF(tls) - 1], MHD_OPTION_END);
}

static int init_sync(struct metrics_http *h)
{
        pthread_condattr_t ca;
        int r;

        r = pthread_condattr_init(&ca);
        if (r == 0)
                r = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        if (r == 0)
                r = pthread_cond_init(&h->reaper_wake, &ca);
        if (r == 0)
                r = pthread_cond_init(&h->computed, &ca);
        if (r == 0)
                r = pthread_cond_init(&h->refresh_wake, NULL);
        if (r == 0)
                r = pthread_mutex_init(&h->lock, NULL);
        (void) pthread_condattr_destroy(&ca);
        return -r;
}

/* The libraries and the web config, logged when they fail. */
static int load(const struct metrics_http_options *o, struct metrics_http *h)
{
        _cleanup_free_ char *why = NULL;
        int r = http_libs_load(&why);

        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "--metrics-listen: this binary is linked statically "
                                          "and has no HTTP server (use a dynamically linked "
                                          "build)");
        if (r < 0)
                return log_error_errno(r,
                                       "--metrics-listen: cannot load libmicrohttpd or "
                                       "libcrypt: %s",
                                       why ? why : "?");
        if (!sym_MHD_is_feature_supported(MHD_FEATURE_THREADS) ||
            (o->web_config && !sym_MHD_is_feature_supported(MHD_FEATURE_TLS)))
                return log_error_errno(-EOPNOTSUPP, "--metrics-listen: this libmicrohttpd has no "
                                                    "threads or no TLS");
        if (!o->web_config)
                return 0;
        r = web_config_load(o->web_config, &h->web, &why);
        if (r < 0) {
                log_error("--web-config %s", why ? why : strerror(-r));
                return r == -ENOMEM ? r : -EINVAL;
        }
        h->auth = h->web.n_users > 0;
        return 0;
}

/* The reaper and the daemons, from a thread at nice METRICS_HTTP_NICE,
 * which they and their threads inherit. h->start_r: 0 (a daemon may still
 * have failed), or -errno. */
static void *start_threads(void *arg)
{
        struct metrics_http *h = arg;
        int r;

        if (setpriority(PRIO_PROCESS, (id_t) gettid(), METRICS_HTTP_NICE) < 0)
                log_debug("cannot lower the HTTP server's priority: %m");
        r = pthread_create(&h->reaper, NULL, reaper_main, h);
        if (r != 0) {
                h->start_r = -r;
                return NULL;
        }
        h->reaper_started = true;
        (void) pthread_setname_np(h->reaper, "http-reaper");
        for (size_t i = 0; i < h->n_listeners; i++) {
                h->starting = true;
                h->listeners[i].daemon = start_daemon(h, &h->listeners[i]);
                h->starting = false;
                if (!h->listeners[i].daemon)
                        break;
        }
        return NULL;
}

/* Whether a is a loopback address. */
static bool is_loopback(const struct metrics_http_addr *a)
{
        if (a->sa.ss_family == AF_INET)
                return ntohl(((const struct sockaddr_in *) &a->sa)->sin_addr.s_addr) >> 24 == 127;
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *) &a->sa)->sin6_addr);
}

/* The node's own clients' listener beside one on a (see the top):
 * 127.0.0.1, a's port, where kubelet's probe asks whatever a's family (an
 * IPv6-only node has it too). None (false) for every address, which takes
 * the loopback's clients itself, or for a loopback address. */
static bool loopback_beside(const struct metrics_http_addr *a, struct metrics_http_addr *ret)
{
        in_port_t port = a->sa.ss_family == AF_INET
                             ? ((const struct sockaddr_in *) &a->sa)->sin_port
                             : ((const struct sockaddr_in6 *) &a->sa)->sin6_port;

        if (a->any || is_loopback(a))
                return false;
        *ret = (struct metrics_http_addr){.len = sizeof(struct sockaddr_in)};
        *(struct sockaddr_in *) &ret->sa = (struct sockaddr_in){
            .sin_family = AF_INET, .sin_port = port, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        return true;
}

/* The listening sockets for o->listen; logged when they cannot be. */
static int listen_on(const struct metrics_http_options *o, struct metrics_http *h)
{
        struct metrics_http_addr a, lo;
        int r;

        if (metrics_http_parse_listen(o->listen, &a) < 0) {
                log_error("--metrics-listen '%s': not IPv4:PORT, [IPv6]:PORT or :PORT (numeric, "
                          "port 1 to 65535)",
                          o->listen);
                return -EINVAL;
        }
        r = open_listener(&a, &h->listeners[0].fd);
        if (r < 0)
                return log_error_errno(r, "--metrics-listen '%s': cannot listen", o->listen);
        h->listeners[0].local = !a.any && is_loopback(&a);
        h->n_listeners = 1;
        if (!loopback_beside(&a, &lo))
                return 0;
        r = open_listener(&lo, &h->listeners[1].fd);
        if (r < 0)
                return log_error_errno(r,
                                       "--metrics-listen '%s': cannot listen on 127.0.0.1, "
                                       "port %s, for this node's own clients",
                                       o->listen, strrchr(o->listen, ':') + 1);
        h->listeners[1].local = true;
        h->n_listeners = 2;
        return 0;
}

/* The server up on o->listen; logged when it cannot be. */
static int serve(const struct metrics_http_options *o, struct metrics_http *h)
{
        pthread_t starter;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(h->listeners); i++)
                h->listeners[i].h = h;
        r = listen_on(o, h);
        if (r < 0)
                return r;
        /* From this thread: status's runs keep watch's priority. */
        r = pthread_create(&h->refresher, NULL, refresher_main, h);
        if (r != 0)
                return log_error_errno(-r, "cannot start the HTTP server's threads");
        h->refresher_started = true;
        (void) pthread_setname_np(h->refresher, "http-refresher");
        r = pthread_create(&starter, NULL, start_threads, h);
        if (r == 0)
                r = pthread_join(starter, NULL);
        if (r != 0 || h->start_r < 0)
                return log_error_errno(r != 0 ? -r : h->start_r,
                                       "cannot start the HTTP server's threads");
        for (size_t i = 0; i < h->n_listeners; i++)
                if (!h->listeners[i].daemon) {
                        log_error("--metrics-listen '%s': cannot serve: %s", o->listen,
                                  h->start_error[0] ? h->start_error : "libmicrohttpd failed");
                        return -EIO;
                }
        return 0;
}

int metrics_http_start(const struct metrics_http_options *o, struct metrics_http **ret)
{
        struct metrics_http *h = calloc(1, sizeof(*h));
        int r;

        if (!h)
                return log_error_errno(-ENOMEM, "out of memory");
        h->interval = o->interval;
        h->listeners[0].fd = h->listeners[1].fd = -EBADF;
        atomic_store(&h->pass_ended, now_usec()); /* the first pass has its time too */
        /* By the name /proc/self/exe gives now rather than that link at
         * each run: under valgrind the link is valgrind's own binary, and
         * the name reads as the hook's. A package upgrade renames a new
         * binary over it: later runs are the new one's. */
        h->exe = realpath("/proc/self/exe", NULL);
        if (!h->exe)
                h->exe = strdup("/proc/self/exe");
        if (init_sync(h) < 0 || !h->exe ||
            (o->config_path && !(h->config_path = strdup(o->config_path)))) {
                metrics_http_stop(h);
                return log_error_errno(-ENOMEM, "out of memory");
        }
        /* status's runs are waited for by pid: a SIGCHLD that an ignoring
         * parent left ignored would have the kernel reap them first. */
        if (signal(SIGCHLD, SIG_DFL) == SIG_ERR)
                log_debug("cannot set SIGCHLD to its default: %m");
        r = load(o, h);
        if (r == 0)
                r = serve(o, h);
        if (r < 0) {
                metrics_http_stop(h);
                return r;
        }
        log_info("serving /metrics and /healthz on %s%s (%s%s)", o->listen,
                 h->n_listeners > 1 ? " and, for this node's own clients, on 127.0.0.1" : "",
                 h->web.cert_pem ? "TLS" : "plain HTTP", h->auth ? ", basic auth" : "");
        *ret = h;
        return 0;
}

void metrics_http_pass_ended(struct metrics_http *h)
{
        if (h)
                atomic_store(&h->pass_ended, now_usec());
}

void metrics_http_stop(struct metrics_http *h)
{
        if (!h)
                return;
        /* Every thread that waits told, the run of status killed; then
         * the daemons: their connections close, each removed from the
         * list, and no thread of theirs runs after this. Then ours. */
        (void) pthread_mutex_lock(&h->lock);
        h->stopping = true;
        (void) pthread_cond_broadcast(&h->computed);
        (void) pthread_cond_signal(&h->reaper_wake);
        (void) pthread_cond_signal(&h->refresh_wake);
        if (h->run_pid > 0)
                (void) kill(h->run_pid, SIGKILL);
        (void) pthread_mutex_unlock(&h->lock);
        for (size_t i = 0; i < h->n_listeners; i++) {
                if (h->listeners[i].daemon)
                        sym_MHD_stop_daemon(h->listeners[i].daemon);
                safe_close(h->listeners[i].fd);
        }
        if (h->reaper_started)
                (void) pthread_join(h->reaper, NULL);
        if (h->refresher_started)
                (void) pthread_join(h->refresher, NULL);
        body_unref(h->body);
        web_config_done(&h->web);
        free(h->config_path);
        free(h->exe);
        (void) pthread_cond_destroy(&h->reaper_wake);
        (void) pthread_cond_destroy(&h->computed);
        (void) pthread_cond_destroy(&h->refresh_wake);
        (void) pthread_mutex_destroy(&h->lock);
        free(h);
}
