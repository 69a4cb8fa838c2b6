/* lib/pool/timer.c: the pool's timer, a pool service that the task layer
 * arms for park_task_delay and deadlines with a callback of its own (so
 * that park_pool_destroy can stop it without calling up a layer).
 *
 * A binary min-heap of {when, fire, arg} under pool->timer_lock, served by
 * one thread that the first arming starts; until then the timer costs
 * nothing, and with nothing armed its thread sleeps without a deadline.
 * The thread sleeps in lib/wait under the address of `gen` until the
 * earliest deadline; arming an earlier one bumps `gen` (timer_lock held)
 * and unparks it, and its validate re-reads `gen` with the bucket locked,
 * so a new earliest deadline is never slept through. Firing calls the
 * callback outside the lock. */
#include <errno.h>
#include <stdlib.h>

#include "pool/pool.h"
#include "wait/wait.h"

typedef struct entry {
    park_time_t when;
    void (*fire)(void *arg, int err);
    void *arg;
} entry_t;

struct park__timer {
    pthread_t thread;
    park_pool_t *pool;
    bool stopping;
    _Atomic uint32_t gen;
    entry_t *heap;
    size_t n, cap;
};

static void sift_up(entry_t *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].when <= h[i].when)
            break;
        entry_t tmp = h[p];
        h[p] = h[i];
        h[i] = tmp;
        i = p;
    }
}

static void sift_down(entry_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].when < h[m].when)
            m = l;
        if (r < n && h[r].when < h[m].when)
            m = r;
        if (m == i)
            return;
        entry_t tmp = h[m];
        h[m] = h[i];
        h[i] = tmp;
        i = m;
    }
}

static entry_t heap_pop(struct park__timer *tm)
{
    entry_t top = tm->heap[0];
    tm->heap[0] = tm->heap[--tm->n];
    sift_down(tm->heap, tm->n, 0);
    return top;
}

typedef struct sleep_ctx {
    struct park__timer *tm;
    uint32_t gen;
} sleep_ctx_t;

static bool sleep_validate(void *ctx)
{
    sleep_ctx_t *s = ctx;
    /* relaxed: bumped under timer_lock before the unpark that would wake us. */
    return atomic_load_explicit(&s->tm->gen, memory_order_relaxed) == s->gen;
}

static const park__wait_ops_t sleep_ops = {.validate = sleep_validate};

static void *timer_main(void *arg)
{
    struct park__timer *tm = arg;
    park_pool_t *pool = tm->pool;
    park__lock(&pool->timer_lock);
    while (!tm->stopping) {
        park_time_t now = park_now();
        if (tm->n && tm->heap[0].when <= now) {
            entry_t e = heap_pop(tm);
            park__unlock(&pool->timer_lock);
            e.fire(e.arg, 0);
            park__lock(&pool->timer_lock);
            continue;
        }
        sleep_ctx_t ctx = {tm, atomic_load_explicit(&tm->gen, memory_order_relaxed)};
        park_time_t deadline = tm->n ? tm->heap[0].when : PARK_FOREVER;
        park__unlock(&pool->timer_lock);
        park__waiter_t w;
        park__waiter_init(&w, 0);
        park__waiter_idle(&w);
        park__wait(&tm->gen, &w, 0, &sleep_ops, &ctx, deadline);
        park__lock(&pool->timer_lock);
    }
    park__unlock(&pool->timer_lock);
    return NULL;
}

int park__timer_arm(park_pool_t *pool, park_time_t when, void (*fire)(void *arg, int err),
                    void *arg)
{
    park__lock(&pool->timer_lock);
    /* Closing is set before park__timer_shutdown takes this lock. */
    if (park__pool_closing(pool)) {
        park__unlock(&pool->timer_lock);
        return EPIPE;
    }
    struct park__timer *tm = pool->timer;
    if (!tm) {
        tm = calloc(1, sizeof *tm);
        if (!tm) {
            park__unlock(&pool->timer_lock);
            return ENOMEM;
        }
        tm->pool = pool;
        atomic_init(&tm->gen, 0);
        if (pthread_create(&tm->thread, NULL, timer_main, tm) != 0) {
            free(tm);
            park__unlock(&pool->timer_lock);
            return ENOMEM;
        }
        pool->timer = tm;
    }
    if (tm->n == tm->cap) {
        size_t cap = tm->cap ? 2 * tm->cap : 16;
        entry_t *h = realloc(tm->heap, cap * sizeof *h);
        if (!h) {
            park__unlock(&pool->timer_lock);
            return ENOMEM;
        }
        tm->heap = h;
        tm->cap = cap;
    }
    size_t i = tm->n++;
    tm->heap[i] = (entry_t){.when = when, .fire = fire, .arg = arg};
    sift_up(tm->heap, i);
    bool earliest = tm->heap[0].arg == arg && tm->heap[0].when == when;
    if (earliest)
        atomic_fetch_add_explicit(&tm->gen, 1, memory_order_relaxed);
    park__unlock(&pool->timer_lock);
    if (earliest)
        park__unpark_all(&tm->gen);
    return 0;
}

void park__timer_shutdown(park_pool_t *pool)
{
    park__lock(&pool->timer_lock);
    struct park__timer *tm = pool->timer;
    pool->timer = NULL;
    if (tm) {
        tm->stopping = true;
        atomic_fetch_add_explicit(&tm->gen, 1, memory_order_relaxed);
    }
    park__unlock(&pool->timer_lock);
    if (!tm)
        return;
    park__unpark_all(&tm->gen);
    pthread_join(tm->thread, NULL);
    for (size_t i = 0; i < tm->n; i++)
        tm->heap[i].fire(tm->heap[i].arg, ECANCELED);
    free(tm->heap);
    free(tm);
}
