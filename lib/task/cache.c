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
 * internal lock (lib/wait/lock.h), taken once per BATCH_BLOCKS blocks.
 *
 * Lifetime checks: the cache hands out the block freed last first, so a
 * task used after its release would be a new task by then, and ASan would
 * see nothing wrong. In PARK_DEBUG and ASan builds a freed block waits in
 * the freeing thread's quarantine, a ring of QUARANTINE_BLOCKS, before it
 * goes to the cache; under ASan it is poisoned meanwhile, so a use after
 * release is reported at the use, and in PARK_DEBUG builds the task's
 * magic (task.c) says "released" to the next public call on it. */
#include <pthread.h>
#include <stdlib.h>

#include "task/task.h"
#include "wait/lock.h"

#if defined(__SANITIZE_ADDRESS__)
#define PARK__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PARK__ASAN 1
#endif
#endif

#ifdef PARK__ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#if defined(PARK__ASAN) || defined(PARK_DEBUG)
#define QUARANTINE_BLOCKS 256 /* 64 KiB per thread */
#endif

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

#ifdef QUARANTINE_BLOCKS
typedef struct quarantine {
    block_t *slot[QUARANTINE_BLOCKS]; /* NULL: empty */
    unsigned next;                    /* the oldest, replaced next */
    bool registered;                  /* the thread-exit destructor is set */
} quarantine_t;

static _Thread_local quarantine_t quarantine;

/* Holds b back from reuse (poisoned) and lets the oldest block out: the
 * block to cache now (unpoisoned), or NULL while the ring fills. */
static block_t *quarantine_swap(block_t *b)
{
    POISON(b, sizeof *b);
    block_t *out = quarantine.slot[quarantine.next];
    quarantine.slot[quarantine.next] = b;
    quarantine.next = (quarantine.next + 1) % QUARANTINE_BLOCKS;
    if (out)
        UNPOISON(out, sizeof *out);
    return out;
}

static void quarantine_drain(void)
{
    for (unsigned i = 0; i < QUARANTINE_BLOCKS; i++) {
        block_t *b = quarantine.slot[i];
        quarantine.slot[i] = NULL;
        if (b) {
            UNPOISON(b, sizeof *b);
            free(b);
        }
    }
    quarantine.registered = false;
}
#endif

static _Thread_local bool cache_registered; /* cache_register ran on this thread */

/* At thread exit: the thread's blocks go back to malloc. A block cached
 * after this (by a later thread-exit destructor) registers again, so this
 * runs again for it, within the PTHREAD_DESTRUCTOR_ITERATIONS rounds; one
 * cached in the last round is not freed. */
static void thread_exit(void *arg)
{
#ifdef QUARANTINE_BLOCKS
    quarantine_drain();
#endif
    cache_drain(arg);
    cache_registered = false;
}

static bool cache_key_ok; /* pthread_key_create succeeded */

static void cache_key_create(void)
{
    cache_key_ok = pthread_key_create(&cache_key, thread_exit) == 0;
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
    /* The first block cached on this thread: free the cache when it exits.
     * Once per thread: a thread whose cache runs empty between an alloc
     * and a free (one block in use at a time) would otherwise pay a
     * pthread_once and a pthread_setspecific per block. */
    if (PARK__LIKELY(cache_registered))
        return;
    pthread_once(&cache_once, cache_key_create);
    /* Without a key (or its storage), the thread's blocks are not freed at
     * its exit; the next empty cache tries again. */
    cache_registered = cache_key_ok && pthread_setspecific(cache_key, &cache) == 0;
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
#ifdef QUARANTINE_BLOCKS
    if (!quarantine.registered) {
        quarantine.registered = true;
        cache_register();
    }
    if (!(b = quarantine_swap(b)))
        return;
#endif
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
