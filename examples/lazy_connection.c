/* lazy_connection: an asynchronous lazy connection that fails once.
 *
 * The connection is made on first use by a factory (park_lazy_init_async)
 * that starts the connection attempt as a task on the pool. Callers ask for
 * it with park_lazy_get_async: each gets a task of its own that completes
 * with the connection, or with the error of the attempt it waited for.
 *
 * The first attempt is refused (ECONNREFUSED). Three callers arrive while
 * it runs; they share that one attempt and all get its error. The error is
 * not cached: the next caller starts a second attempt, which succeeds, and
 * every caller from then on gets the same connection. The factory ran
 * exactly twice.
 *
 * No timing is involved: the first attempt lasts until the main thread,
 * having queued all three callers behind it, lets it finish.
 *
 * Exits 0 if all that holds, 1 otherwise. */
#include <park/park.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define CALLERS 3

struct connection {
    int attempt; /* the attempt that made it */
};

static park_pool_t *pool;
static park_lazy_t connection;
static park_task_t *first_attempt_may_end; /* completed by main */
static atomic_int factory_runs;
static int failures;

static void check(bool ok, const char *what)
{
    if (!ok) {
        printf("FAILED: %s\n", what);
        failures++;
    }
}

/* The connection attempt, run on the pool by the factory's task. The
 * first one stands for a slow connect that is refused; the others
 * succeed. */
static int connect_to(void *server, void **result)
{
    int attempt = atomic_load(&factory_runs);
    if (attempt == 1) {
        /* A worker that waits runs other work of its pool meanwhile. */
        park_task_wait(first_attempt_may_end, NULL);
        printf("attempt %d: %s refused the connection\n", attempt, (const char *)server);
        return ECONNREFUSED;
    }
    struct connection *c = malloc(sizeof *c);
    if (!c)
        return ENOMEM;
    c->attempt = attempt;
    printf("attempt %d: connected to %s\n", attempt, (const char *)server);
    *result = c;
    return 0;
}

/* The factory: called by the caller that finds the lazy idle, on that
 * caller's thread; returns the task of the run. */
static park_task_t *open_connection(void *server, park_pool_t *on)
{
    int run = atomic_fetch_add(&factory_runs, 1) + 1;
    printf("factory: run %d starts connecting to %s\n", run, (const char *)server);
    return park_task_run(on, connect_to, server);
}

/* Asks for the connection CALLERS times; each caller's task goes in ts. */
static void ask(park_task_t *ts[CALLERS], const char *round)
{
    for (int i = 0; i < CALLERS; i++) {
        ts[i] = park_lazy_get_async(&connection, pool);
        if (!ts[i]) {
            printf("FAILED: park_lazy_get_async: out of memory\n");
            exit(1);
        }
        printf("%s caller %d asks: %s\n", round, i + 1,
               park_task_done(ts[i]) ? "answered at once" : "waits for the run");
    }
}

/* Waits for each caller's answer: how many got err. The value of those
 * that succeeded (one and the same) goes in *value. */
static int answers(park_task_t *ts[CALLERS], const char *round, int err, void **value)
{
    int matching = 0;
    for (int i = 0; i < CALLERS; i++) {
        void *v = NULL;
        int got = park_task_wait(ts[i], &v);
        park_task_release(ts[i]);
        if (got == 0) {
            printf("%s caller %d: connection from attempt %d\n", round, i + 1,
                   ((struct connection *)v)->attempt);
            if (*value && v != *value)
                check(false, "two callers got different connections");
            *value = v;
        } else {
            printf("%s caller %d: error %d%s\n", round, i + 1, got,
                   got == ECONNREFUSED ? " (ECONNREFUSED)" : "");
        }
        matching += got == err;
    }
    return matching;
}

int main(void)
{
    park_pool_config_t cfg = {.threads = 2};
    if (park_pool_create(&pool, &cfg) != 0) {
        printf("FAILED: park_pool_create\n");
        return 1;
    }
    first_attempt_may_end = park_task_new();
    if (!first_attempt_may_end) {
        printf("FAILED: park_task_new\n");
        return 1;
    }
    park_lazy_init_async(&connection, pool, open_connection, "db.example:5432");

    /* Round 1: the first caller starts the run; the others join it. */
    park_task_t *first[CALLERS];
    ask(first, "first");
    for (int i = 0; i < CALLERS; i++)
        check(!park_task_done(first[i]), "a caller of the first run was answered early");
    park_task_complete(first_attempt_may_end, 0, NULL);
    void *unused = NULL;
    check(answers(first, "first", ECONNREFUSED, &unused) == CALLERS,
          "not every caller of the first run got ECONNREFUSED");
    check(!park_lazy_ready(&connection), "a failed run left the lazy initialised");

    /* Round 2: the failure was rolled back, so asking again starts a new
     * run, which succeeds; everyone gets the same connection. */
    park_task_t *second[CALLERS];
    ask(second, "second");
    void *conn = NULL;
    check(answers(second, "second", 0, &conn) == CALLERS,
          "not every caller of the second run got the connection");

    /* From now on the value is there: a blocking get is one load. */
    void *again = NULL;
    check(park_lazy_ready(&connection), "the lazy is not initialised after a success");
    check(park_lazy_get(&connection, &again) == 0 && again == conn,
          "a later get did not return the same connection");

    park_task_release(first_attempt_may_end);
    park_pool_destroy(pool);

    int runs = atomic_load(&factory_runs);
    check(runs == 2, "the factory did not run exactly twice");
    printf("factory ran %d times; everyone shares the connection of attempt %d\n", runs,
           conn ? ((struct connection *)conn)->attempt : 0);
    free(conn);
    printf("%s\n", failures == 0 ? "OK" : "FAILED");
    return failures == 0 ? 0 : 1;
}
