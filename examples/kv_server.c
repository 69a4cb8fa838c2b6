/* kv_server: a small line-protocol TCP key-value server on park.
 *
 *   kv_server [--port N] [--threads N] [--max-inflight N] [--port-file FILE]
 *
 * Listens on 127.0.0.1:N (default 7070; 0 picks a free port, printed and
 * written to FILE). One request per line, one reply line per request:
 *
 *   SET key value   OK
 *   GET key         VALUE value | NOTFOUND
 *   DEL key         DELETED | NOTFOUND
 *   STATS           STATS keys=K requests=R connections=C max_inflight=M
 *   QUIT            BYE, and the connection is closed
 *   SHUTDOWN        BYE, and the server stops (as on SIGINT or SIGTERM)
 *
 * How it is built, and which park primitive does what:
 *
 *   - The main thread runs an epoll loop: it accepts connections and, when
 *     one has data, hands it to a work-stealing pool (park_pool_submit).
 *     Each connection is registered with EPOLLONESHOT, so exactly one
 *     worker serves it at a time; the worker reads every complete request,
 *     writes the replies and re-arms the connection.
 *   - A semaphore (park_sem_t) bounds the requests in flight: the loop
 *     takes a permit before it hands a connection to the pool and the
 *     worker gives it back when done. At the limit, the loop parks in
 *     park_sem_acquire and new work waits in the kernel's queues: that is
 *     back-pressure, instead of an unbounded backlog on the pool.
 *   - The table is a hash table behind a reader/writer lock
 *     (park_rwlock_t): GETs share it, SETs and DELs hold it alone; a
 *     waiting writer holds back new readers, so writes are not starved by
 *     a stream of reads.
 *   - Each connection has a mutex (park_mutex_t), held while a worker
 *     serves it: EPOLLONESHOT already keeps workers apart, and the mutex
 *     makes the hand-over from one worker to the next visible to the
 *     memory model (epoll's own is not, for ThreadSanitizer). Another
 *     mutex guards the list of open connections.
 *
 * Try it under load (kv_load is the load generator) and see where threads
 * wait, or where the CPU goes:
 *
 *   kv_server --port 7070 &
 *   kv_load --port 7070 --seconds 5 --connections 16
 *   PARK_PROFILE=1 kv_server                   # contention table at exit
 *   park-run --profile kv_server               # the same, for any program
 *   perf record -g kv_server                   # then perf report
 *
 * Exits 0 after a clean shutdown. */
#define _GNU_SOURCE
#include <park/park.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUCKETS 4096
#define MAX_LINE 1024   /* longest request, newline included */
#define WRITE_WAIT 1000 /* ms a worker waits for a slow reader's socket */

/* ---- the table: a hash table behind a reader/writer lock ------------------ */

struct entry {
    struct entry *next;
    char *value;
    char key[]; /* NUL-terminated */
};

static struct entry *buckets[BUCKETS];
static size_t keys;
static park_rwlock_t table_lock = PARK_RWLOCK_INIT;

static struct entry **bucket_of(const char *key)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (const char *p = key; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return &buckets[h % BUCKETS];
}

/* Copies key's value into out (size n): true, or false if there is none. */
static bool table_get(const char *key, char *out, size_t n)
{
    park_rwlock_read_lock(&table_lock);
    struct entry *e = *bucket_of(key);
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    if (e)
        snprintf(out, n, "%s", e->value);
    park_rwlock_read_unlock(&table_lock);
    return e != NULL;
}

static bool table_set(const char *key, const char *value)
{
    /* Allocate before locking: the write hold stays short. */
    size_t klen = strlen(key) + 1;
    struct entry *fresh = malloc(sizeof *fresh + klen);
    char *copy = strdup(value);
    if (!fresh || !copy) {
        free(fresh);
        free(copy);
        return false;
    }
    memcpy(fresh->key, key, klen);
    fresh->value = copy;

    park_rwlock_write_lock(&table_lock);
    struct entry **slot = bucket_of(key), *e = *slot;
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    char *old = NULL;
    if (e) {
        old = e->value;
        e->value = copy;
    } else {
        fresh->next = *slot;
        *slot = fresh;
        keys++;
        fresh = NULL;
    }
    park_rwlock_write_unlock(&table_lock);
    free(old);
    free(fresh);
    return true;
}

static bool table_del(const char *key)
{
    park_rwlock_write_lock(&table_lock);
    struct entry **p = bucket_of(key);
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    struct entry *e = *p;
    if (e) {
        *p = e->next;
        keys--;
    }
    park_rwlock_write_unlock(&table_lock);
    if (e) {
        free(e->value);
        free(e);
    }
    return e != NULL;
}

static size_t table_keys(void)
{
    park_rwlock_read_lock(&table_lock);
    size_t n = keys;
    park_rwlock_read_unlock(&table_lock);
    return n;
}

static void table_free(void)
{
    for (size_t i = 0; i < BUCKETS; i++) {
        while (buckets[i]) {
            struct entry *e = buckets[i];
            buckets[i] = e->next;
            free(e->value);
            free(e);
        }
    }
}

/* ---- connections ----------------------------------------------------------- */

struct conn {
    int fd;
    park_mutex_t lock; /* held by the worker serving the connection */
    size_t len;        /* bytes in in[] */
    char in[MAX_LINE];
    struct conn *prev, *next; /* the list of open connections */
};

static struct conn *conns;
static park_mutex_t conns_lock = PARK_MUTEX_INIT;

static park_pool_t *pool;
static int epfd, stopfd;
static park_sem_t inflight; /* permits: requests that may be in flight */
static atomic_uint busy, max_busy;
static atomic_ulong requests, connections;

static struct conn *conn_open(int fd)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    park_mutex_init(&c->lock);
    park_mutex_lock(&conns_lock);
    c->next = conns;
    if (conns)
        conns->prev = c;
    conns = c;
    park_mutex_unlock(&conns_lock);
    atomic_fetch_add(&connections, 1);
    return c;
}

static void conn_close(struct conn *c)
{
    park_mutex_lock(&conns_lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    park_mutex_unlock(&conns_lock);
    close(c->fd); /* also leaves the epoll set */
    free(c);
}

/* Writes all of buf, waiting for a slow reader at most WRITE_WAIT ms at a
 * time: 0, or -1 if the connection is gone or stuck. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w > 0) {
            buf += w;
            n -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, WRITE_WAIT) <= 0)
                return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Serves one request line (NUL-terminated, without its newline); appends
 * the reply to out. Returns false if the connection is to be closed. */
static bool serve_line(char *line, char *out, size_t n)
{
    char *save = NULL, *cmd = strtok_r(line, " ", &save);
    char *key = cmd ? strtok_r(NULL, " ", &save) : NULL;
    char *value = key ? strtok_r(NULL, "", &save) : NULL;
    char buf[MAX_LINE];
    atomic_fetch_add_explicit(&requests, 1, memory_order_relaxed);
    if (!cmd) {
        snprintf(out, n, "ERROR empty request\n");
    } else if (strcmp(cmd, "GET") == 0 && key) {
        if (table_get(key, buf, sizeof buf))
            snprintf(out, n, "VALUE %s\n", buf);
        else
            snprintf(out, n, "NOTFOUND\n");
    } else if (strcmp(cmd, "SET") == 0 && key && value) {
        snprintf(out, n, table_set(key, value) ? "OK\n" : "ERROR out of memory\n");
    } else if (strcmp(cmd, "DEL") == 0 && key) {
        snprintf(out, n, table_del(key) ? "DELETED\n" : "NOTFOUND\n");
    } else if (strcmp(cmd, "STATS") == 0) {
        snprintf(out, n, "STATS keys=%zu requests=%lu connections=%lu max_inflight=%u\n",
                 table_keys(), atomic_load(&requests), atomic_load(&connections),
                 atomic_load(&max_busy));
    } else if (strcmp(cmd, "QUIT") == 0) {
        snprintf(out, n, "BYE\n");
        return false;
    } else if (strcmp(cmd, "SHUTDOWN") == 0) {
        snprintf(out, n, "BYE\n");
        uint64_t one = 1;
        if (write(stopfd, &one, sizeof one) != sizeof one)
            perror("kv_server: eventfd");
        return false;
    } else {
        snprintf(out, n, "ERROR unknown request\n");
    }
    return true;
}

/* Runs on a worker of the pool: reads what the connection has, serves
 * every complete line, and re-arms the connection (or closes it). */
static void serve(void *arg)
{
    struct conn *c = arg;
    park_mutex_lock(&c->lock);
    bool open = true;
    for (;;) {
        ssize_t r = recv(c->fd, c->in + c->len, sizeof c->in - c->len, 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
            open = false; /* closed by the client, or broken */
            break;
        }
        if (r < 0 && errno == EAGAIN)
            break;
        if (r < 0)
            continue;
        c->len += (size_t)r;

        char out[4 * MAX_LINE];
        size_t used = 0, start = 0;
        for (size_t i = 0; i < c->len && open; i++) {
            if (c->in[i] != '\n')
                continue;
            c->in[i] = '\0';
            if (i > start && c->in[i - 1] == '\r')
                c->in[i - 1] = '\0';
            if (sizeof out - used < MAX_LINE + 64) { /* room for the longest reply */
                open = write_all(c->fd, out, used) == 0;
                used = 0;
            }
            open = serve_line(c->in + start, out + used, sizeof out - used) && open;
            used += strlen(out + used);
            start = i + 1;
        }
        if (used && write_all(c->fd, out, used) != 0)
            open = false;
        memmove(c->in, c->in + start, c->len - start);
        c->len -= start;
        if (c->len == sizeof c->in) { /* a line longer than MAX_LINE */
            write_all(c->fd, "ERROR line too long\n", 20);
            open = false;
        }
        if (!open)
            break;
    }
    park_mutex_unlock(&c->lock);

    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c};
    if (!open || epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
        conn_close(c);
    atomic_fetch_sub(&busy, 1);
    park_sem_release(&inflight, 1); /* the loop may hand out the next one */
}

/* ---- the accept loop ------------------------------------------------------- */

static void accept_all(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                perror("kv_server: accept");
            if (errno != EINTR && errno != ECONNABORTED)
                return;
            continue;
        }
        struct conn *c = conn_open(fd);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c};
        if (!c) {
            close(fd);
        } else if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            perror("kv_server: epoll_ctl");
            conn_close(c);
        }
    }
}

/* Hands a readable connection to the pool, once a permit is free. */
static void dispatch(struct conn *c)
{
    park_sem_acquire(&inflight); /* at the limit: wait for a worker to finish */
    unsigned now = atomic_fetch_add(&busy, 1) + 1, seen = atomic_load(&max_busy);
    while (now > seen && !atomic_compare_exchange_weak(&max_busy, &seen, now)) {
    }
    if (park_pool_submit(pool, serve, c) != 0) {
        atomic_fetch_sub(&busy, 1);
        park_sem_release(&inflight, 1);
        conn_close(c);
    }
}

static int listen_on(int port, const char *port_file)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 512) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
        perror("kv_server: listen");
        return -1;
    }
    port = ntohs(addr.sin_port);
    if (port_file) { /* written whole, then renamed: a reader never sees half */
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) != 0 || rename(tmp, port_file) != 0) {
            perror("kv_server: port file");
            return -1;
        }
    }
    printf("kv_server: listening on 127.0.0.1:%d\n", port);
    return fd;
}

static int usage(void)
{
    fprintf(stderr, "usage: kv_server [--port N] [--threads N] [--max-inflight N] "
                    "[--port-file FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int port = 7070;
    unsigned threads = 0, max_inflight = 64;
    const char *port_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--port") == 0)
            port = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
            threads = (unsigned)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--max-inflight") == 0)
            max_inflight = (unsigned)atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--port-file") == 0)
            port_file = argv[++i];
        else
            return usage();
    }
    if (port < 0 || port > 65535 || park_sem_init(&inflight, max_inflight, max_inflight) != 0)
        return usage();
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* SIGINT and SIGTERM arrive through a signalfd in the loop; blocked
     * before the pool starts, so that its workers inherit the mask. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

    park_pool_config_t cfg = {.threads = threads};
    int lfd = listen_on(port, port_file);
    int sigfd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    stopfd = eventfd(0, EFD_CLOEXEC);
    if (lfd < 0 || sigfd < 0 || epfd < 0 || stopfd < 0 || park_pool_create(&pool, &cfg) != 0) {
        perror("kv_server: setup");
        return 1;
    }
    printf("kv_server: %u workers, at most %u requests in flight\n", park_pool_threads(pool),
           max_inflight);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &lfd};
    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.ptr = &stopfd;
    epoll_ctl(epfd, EPOLL_CTL_ADD, stopfd, &ev);
    ev.data.ptr = &sigfd;
    epoll_ctl(epfd, EPOLL_CTL_ADD, sigfd, &ev);

    for (bool running = true; running;) {
        struct epoll_event events[64];
        int n = epoll_wait(epfd, events, 64, -1);
        if (n < 0 && errno != EINTR) {
            perror("kv_server: epoll_wait");
            break;
        }
        for (int i = 0; i < n; i++) {
            void *p = events[i].data.ptr;
            if (p == &lfd)
                accept_all(lfd);
            else if (p == &stopfd || p == &sigfd)
                running = false;
            else
                dispatch(p);
        }
    }

    /* Stop: no new connections; the pool serves what it was given, then
     * the connections still open are closed. */
    close(lfd);
    park_pool_destroy(pool);
    while (conns)
        conn_close(conns);
    printf("kv_server: %lu connections, %lu requests, at most %u in flight (limit %u), "
           "%zu keys\n",
           atomic_load(&connections), atomic_load(&requests), atomic_load(&max_busy), max_inflight,
           table_keys());
    table_free();
    close(epfd);
    close(stopfd);
    close(sigfd);
    return park_sem_destroy(&inflight) == 0 && park_rwlock_destroy(&table_lock) == 0 ? 0 : 1;
}
