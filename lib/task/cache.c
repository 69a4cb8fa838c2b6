/* lib/task/cache.c: the blocks that tasks, continuation nodes and
 * acquisitions are made of: a per-thread cache, so that making and freeing
 * a task costs no malloc and no lock, and a depot that passes whole
 * batches from threads that free more than they make (workers that run
 * what producers submitted) to threads that make more than they free.
 *
 *   alloc   cache -> caller; empty: a batch from the depot; none: malloc
 *   free    caller -> cache; over CACHE_MAX: a batch to the depot; depot
 *           full: the batch goes back to malloc
 *
 * The cache is the thread's own (no atomics); the depot is guarded by an
 * internal lock (lib/wait/lock.h), taken once per BATCH_BLOCKS blocks. */
#include <pthread.h>
#include <stdlib.h>

#include "task/task.h"
#include "wait/lock.h"

#define CACHE_MAX 512 /* blocks a thread keeps before passing a batch on */

typedef union block {
    union block *next;
    _Alignas(64) unsigned char bytes[PARK__BLOCK_SIZE];
} block_t;

typedef struct cache {
    block_t *head;
    unsigned n;
} cache_t;

static _Thread_local cache_t cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_drain(void *arg)
{
    cache_t *c = arg;
    while (c->head) {
        block_t *b = c->head;
        c->head = b->next;
        free(b);
    }
    c->n = 0;
}

static void cache_key_create(void)
{
    (void)pthread_key_create(&cache_key, cache_drain);
}

/* The depot: whole batches of blocks that threads with too many (workers
 * that free what producers made) pass to threads with none (producers),
 * one lock round trip per BATCH_BLOCKS blocks instead of a malloc and a
 * free per task. */
#define BATCH_BLOCKS 64
#define DEPOT_MAX 64 /* batches kept; beyond, blocks go back to malloc */

static park__lock_t depot_lock = PARK__LOCK_INIT;
static block_t *depot[DEPOT_MAX]; /* chains of BATCH_BLOCKS blocks */
static unsigned depot_n;

static void cache_register(void)
{
    /* The first block cached on this thread: free the cache when it exits. */
    pthread_once(&cache_once, cache_key_create);
    pthread_setspecific(cache_key, &cache);
}

void *park__block_alloc(void)
{
    block_t *b = cache.head;
    if (PARK__LIKELY(b)) {
        cache.head = b->next;
        cache.n--;
        return b;
    }
    park__lock(&depot_lock);
    b = depot_n ? depot[--depot_n] : NULL;
    park__unlock(&depot_lock);
    if (b) {
        cache_register();
        cache.head = b->next;
        cache.n = BATCH_BLOCKS - 1;
        return b;
    }
    if (posix_memalign((void **)&b, 64, sizeof *b) != 0)
        return NULL;
    return b;
}

void park__block_free(void *p)
{
    block_t *b = p;
    if (PARK__UNLIKELY(cache.n >= CACHE_MAX)) {
        /* Pass a batch to the depot (or to malloc if the depot is full). */
        block_t *chain = cache.head, *last = chain;
        for (unsigned i = 1; i < BATCH_BLOCKS; i++)
            last = last->next;
        cache.head = last->next;
        cache.n -= BATCH_BLOCKS;
        last->next = NULL;
        park__lock(&depot_lock);
        bool kept = depot_n < DEPOT_MAX;
        if (kept)
            depot[depot_n++] = chain;
        park__unlock(&depot_lock);
        if (!kept) {
            cache_t spill = {chain, BATCH_BLOCKS};
            cache_drain(&spill);
        }
    }
    if (PARK__UNLIKELY(!cache.head && cache.n == 0))
        cache_register();
    b->next = cache.head;
    cache.head = b;
    cache.n++;
}
