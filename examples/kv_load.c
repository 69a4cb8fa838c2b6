/* kv_load: load generator for kv_server, checking every answer.
 *
 *   kv_load [--port N] [--connections N] [--seconds S] [--keys N] [--shutdown]
 *
 * Opens N connections to 127.0.0.1:port (default 7070), one thread each,
 * started together by a latch (park_latch_t). For S seconds (default 1)
 * each thread sends requests one at a time and waits for each reply: one
 * SET in ten, the rest GETs, over keys of its own (so it knows what every
 * GET must answer) and one key every thread reads (written once at the
 * start); then it deletes the keys it set. The threads add their counts
 * to the totals under a mutex (park_mutex_t). Then it compares the
 * server's STATS with what it sent, and with --shutdown asks the server
 * to stop.
 *
 * Prints requests per second and latency; exits 0 if every answer was
 * right, 1 otherwise. */
#define _GNU_SOURCE
#include <park/park.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNECTIONS 256
#define MAX_LINE 1024

static int port = 7070;
static double seconds = 1.0;
static unsigned nkeys = 100;
static park_latch_t start_gate;
static park_time_t deadline;

static park_mutex_t totals_lock = PARK_MUTEX_INIT;
static unsigned long total_requests, total_wrong;
static park_time_t total_wait_ns, max_wait_ns;

struct client {
    int fd;
    char buf[MAX_LINE];
    size_t len; /* bytes of buf received but not yet returned */
};

static int connect_to_server(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        perror("kv_load: connect");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Sends one request line and reads its reply line into reply (without the
 * newline): 0, or -1 if the connection failed. */
static int request(struct client *c, const char *line, char *reply, size_t n)
{
    size_t len = strlen(line);
    if (send(c->fd, line, len, MSG_NOSIGNAL) != (ssize_t)len)
        return -1;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t k = (size_t)(nl - c->buf);
            snprintf(reply, n, "%.*s", (int)k, c->buf);
            memmove(c->buf, nl + 1, c->len - k - 1);
            c->len -= k + 1;
            return 0;
        }
        if (c->len == sizeof c->buf)
            return -1;
        ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
        if (r <= 0 && !(r < 0 && errno == EINTR))
            return -1;
        if (r > 0)
            c->len += (size_t)r;
    }
}

static void *run(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    struct client c = {.fd = connect_to_server()};
    unsigned long done = 0, wrong = 0;
    park_time_t waited = 0, longest = 0;
    unsigned *version = calloc(nkeys, sizeof *version); /* 0: never set */
    uint64_t rng = 0x9e3779b97f4a7c15ull * (id + 1);
    char line[MAX_LINE], reply[MAX_LINE], want[MAX_LINE];

    park_latch_count_down(&start_gate, 1);
    park_latch_wait(&start_gate); /* everybody starts at once */
    while (c.fd >= 0 && version && park_now() < deadline) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; /* xorshift64 */
        unsigned k = (unsigned)(rng >> 32) % nkeys;
        bool shared = rng % 20 == 0;
        if (shared) {
            snprintf(line, sizeof line, "GET shared\n");
            snprintf(want, sizeof want, "VALUE everyone reads this");
        } else if (rng % 10 == 1) {
            version[k]++;
            snprintf(line, sizeof line, "SET c%u-k%u v%u\n", id, k, version[k]);
            snprintf(want, sizeof want, "OK");
        } else {
            snprintf(line, sizeof line, "GET c%u-k%u\n", id, k);
            if (version[k])
                snprintf(want, sizeof want, "VALUE v%u", version[k]);
            else
                snprintf(want, sizeof want, "NOTFOUND");
        }
        park_time_t t0 = park_now();
        if (request(&c, line, reply, sizeof reply) != 0) {
            fprintf(stderr, "kv_load: connection %u: the server went away\n", id);
            wrong++;
            break;
        }
        park_time_t dt = park_now() - t0;
        waited += dt;
        longest = dt > longest ? dt : longest;
        done++;
        if (strcmp(reply, want) != 0) {
            if (wrong < 5)
                fprintf(stderr, "kv_load: %.*s: got \"%s\", expected \"%s\"\n",
                        (int)strcspn(line, "\n"), line, reply, want);
            wrong++;
        }
    }
    if (c.fd >= 0) {
        /* Leave nothing behind: every key this connection set goes. */
        for (unsigned k = 0; k < nkeys && version; k++) {
            if (!version[k])
                continue;
            snprintf(line, sizeof line, "DEL c%u-k%u\n", id, k);
            if (request(&c, line, reply, sizeof reply) != 0 || strcmp(reply, "DELETED") != 0)
                wrong++;
            done++;
        }
        close(c.fd);
    } else {
        wrong++;
    }
    free(version);

    park_mutex_lock(&totals_lock);
    total_requests += done;
    total_wrong += wrong;
    total_wait_ns += waited;
    max_wait_ns = longest > max_wait_ns ? longest : max_wait_ns;
    park_mutex_unlock(&totals_lock);
    return NULL;
}

/* One request on a connection of its own: 0 and the reply, or -1. */
static int one_request(const char *line, char *reply, size_t n)
{
    struct client c = {.fd = connect_to_server()};
    if (c.fd < 0)
        return -1;
    int err = request(&c, line, reply, n);
    close(c.fd);
    return err;
}

static int usage(void)
{
    fprintf(stderr, "usage: kv_load [--port N] [--connections N] [--seconds S] [--keys N] "
                    "[--shutdown]\n");
    return 2;
}

int main(int argc, char **argv)
{
    unsigned connections = 8;
    bool shutdown_server = false;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--port") == 0)
            port = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--connections") == 0)
            connections = (unsigned)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--keys") == 0)
            nkeys = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--shutdown") == 0)
            shutdown_server = true;
        else
            return usage();
    }
    if (connections == 0 || connections > MAX_CONNECTIONS || nkeys == 0 || seconds <= 0)
        return usage();

    char reply[MAX_LINE];
    if (one_request("SET shared everyone reads this\n", reply, sizeof reply) != 0 ||
        strcmp(reply, "OK") != 0) {
        fprintf(stderr, "kv_load: cannot SET on 127.0.0.1:%d\n", port);
        return 1;
    }

    park_latch_init(&start_gate, connections);
    deadline = park_now() + (park_time_t)(seconds * 1e9);
    pthread_t threads[MAX_CONNECTIONS];
    for (unsigned i = 0; i < connections; i++)
        pthread_create(&threads[i], NULL, run, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < connections; i++)
        pthread_join(threads[i], NULL);

    printf("kv_load: %lu requests in %.1f s on %u connections: %.0f requests/s, "
           "latency mean %.1f us, max %.1f us; %lu wrong answers\n",
           total_requests, seconds, connections, total_requests / seconds,
           total_requests ? total_wait_ns / 1e3 / total_requests : 0.0, max_wait_ns / 1e3,
           total_wrong);

    /* The server counted at least what was sent. */
    unsigned long served = 0;
    size_t keys_left = 0;
    if (one_request("STATS\n", reply, sizeof reply) != 0 ||
        sscanf(reply, "STATS keys=%zu requests=%lu", &keys_left, &served) != 2) {
        fprintf(stderr, "kv_load: STATS failed: %s\n", reply);
        total_wrong++;
    } else {
        printf("kv_load: server: %s\n", reply);
        if (served < total_requests) {
            fprintf(stderr, "kv_load: the server counted %lu requests, fewer than sent\n", served);
            total_wrong++;
        }
    }
    if (shutdown_server &&
        (one_request("SHUTDOWN\n", reply, sizeof reply) != 0 || strcmp(reply, "BYE") != 0)) {
        fprintf(stderr, "kv_load: SHUTDOWN failed\n");
        total_wrong++;
    }
    return total_wrong == 0 && total_requests > 0 ? 0 : 1;
}
