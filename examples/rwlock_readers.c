/* rwlock_readers: one writer and three readers on the async rwlock.
 *
 * Reader 1 takes a read hold and keeps it until the main thread lets it go
 * (a "gate" task that main completes). The writer asks for the write hold
 * meanwhile and is queued behind reader 1. Readers 2 and 3
 * ask after the writer: the lock prefers writers, so a waiting writer
 * blocks new readers even though the lock is only read-held, and they
 * queue behind it. When reader 1 leaves, the writer goes first and updates
 * the value; then readers 2 and 3 enter together and see the new value.
 *
 * No thread ever blocks on the lock: every hold is a task
 * (park_rwlock_read_lock_async / park_rwlock_write_lock_async) whose
 * continuation runs on the pool when the hold is granted, and is released
 * from there. The order is decided by the lock alone, not by timing.
 *
 * Exits 0 if reader 1 saw the old value, the writer and readers 2 and 3
 * were kept waiting while reader 1 held the lock, and readers 2 and 3 saw
 * the new value; 1 otherwise. */
#include <park/park.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define OLD_VALUE 1
#define NEW_VALUE 2
#define READERS 3

struct reader {
    int id;
    int seen;              /* the value this reader read */
    park_task_t *finished; /* completed once the reader has left */
};

static park_pool_t *pool;
static park_rwlock_t rwlock = PARK_RWLOCK_INIT;
static int value = OLD_VALUE; /* guarded by rwlock */
static park_task_t *gate;     /* reader 1 leaves once main completes it */
static atomic_int failures;

static void fail(const char *what)
{
    printf("FAILED: %s\n", what);
    atomic_fetch_add(&failures, 1);
}

/* Runs cont(arg) on the pool once t completes; t's reference is the
 * continuation's afterwards. False if that could not be arranged. */
static bool then(park_task_t *t, void (*cont)(park_task_t *, void *), void *arg)
{
    bool ok = t && park_task_then(t, pool, cont, arg) == 0;
    if (t)
        park_task_release(t);
    return ok;
}

static void reader_leaves(park_task_t *opened, void *arg)
{
    struct reader *r = arg;
    (void)opened;
    printf("reader %d leaves\n", r->id);
    park_rwlock_read_unlock(&rwlock);
    park_task_complete(r->finished, 0, NULL);
}

static void reader_enters(park_task_t *held, void *arg)
{
    struct reader *r = arg;
    if (park_task_result(held, NULL) != 0) {
        fail("a read hold was not granted");
        park_task_complete(r->finished, ECANCELED, NULL);
        return;
    }
    r->seen = value;
    printf("reader %d reads %d\n", r->id, r->seen);
    /* Reader 1 lingers until the others have queued; they leave at once. */
    if (r->id == 1) {
        if (!then(park_task_retain(gate), reader_leaves, r)) {
            fail("could not wait for the gate");
            park_rwlock_read_unlock(&rwlock);
            park_task_complete(r->finished, ENOMEM, NULL);
        }
        return;
    }
    reader_leaves(NULL, r);
}

static void writer_enters(park_task_t *held, void *arg)
{
    park_task_t *finished = arg;
    if (park_task_result(held, NULL) != 0) {
        fail("the write hold was not granted");
        park_task_complete(finished, ECANCELED, NULL);
        return;
    }
    printf("writer writes %d (was %d)\n", NEW_VALUE, value);
    value = NEW_VALUE;
    park_rwlock_write_unlock(&rwlock);
    park_task_complete(finished, 0, NULL);
}

/* Asks for a read hold for r: true if it was granted at once. */
static bool start_reader(struct reader *r, int id)
{
    *r = (struct reader){.id = id, .finished = park_task_new()};
    park_task_t *held = park_rwlock_read_lock_async(&rwlock, pool);
    bool at_once = held && park_task_done(held);
    printf("reader %d asks to read: %s\n", id, at_once ? "granted at once" : "queued");
    if (!r->finished || !then(held, reader_enters, r)) {
        printf("FAILED: could not start reader %d\n", id);
        exit(1);
    }
    return at_once;
}

int main(void)
{
    park_pool_config_t cfg = {.threads = 2};
    if (park_pool_create(&pool, &cfg) != 0) {
        printf("FAILED: park_pool_create\n");
        return 1;
    }

    static struct reader readers[READERS];
    park_task_t *finished[READERS + 1];
    gate = park_task_new();
    if (!gate) {
        printf("FAILED: park_task_new\n");
        return 1;
    }

    /* Reader 1: the lock is free, so the hold is granted at once. It is
     * released only by reader 1's last continuation, after the gate. */
    if (!start_reader(&readers[0], 1))
        fail("reader 1 was not granted the free lock at once");

    /* The writer: queued behind reader 1's hold. */
    park_task_t *writer_done = park_task_new();
    park_task_t *write = park_rwlock_write_lock_async(&rwlock, pool);
    bool writer_queued = write && !park_task_done(write);
    printf("writer asks to write: %s\n", writer_queued ? "queued" : "granted at once");
    if (!writer_queued)
        fail("the writer was not queued behind reader 1");
    if (!writer_done || !then(write, writer_enters, writer_done)) {
        printf("FAILED: could not start the writer\n");
        return 1;
    }

    /* Readers 2 and 3 come after the writer: queued behind it, although
     * the lock is only read-held (writer preference). */
    for (int i = 1; i < READERS; i++)
        if (start_reader(&readers[i], i + 1))
            fail("a reader got past the queued writer");

    /* Everyone is queued: let reader 1 go. Its unlock hands the lock to
     * the writer, whose unlock admits readers 2 and 3 together. */
    printf("main: everyone has asked; reader 1 may leave\n");
    park_task_complete(gate, 0, NULL);

    for (int i = 0; i < READERS; i++)
        finished[i] = readers[i].finished;
    finished[READERS] = writer_done;
    park_task_t *all = park_task_when_all(pool, finished, READERS + 1);
    int err = all ? park_task_wait(all, NULL) : ENOMEM;
    if (all)
        park_task_release(all);
    for (int i = 0; i < READERS + 1; i++)
        park_task_release(finished[i]);
    park_task_release(gate);
    park_pool_destroy(pool);

    if (readers[0].seen != OLD_VALUE)
        fail("reader 1 did not see the old value");
    for (int i = 1; i < READERS; i++)
        if (readers[i].seen != NEW_VALUE)
            fail("a reader queued after the writer did not see its update");
    int ok = err == 0 && atomic_load(&failures) == 0 && park_rwlock_destroy(&rwlock) == 0;
    printf("reader 1 saw %d; readers 2 and 3 saw %d and %d; final value %d\n", readers[0].seen,
           readers[1].seen, readers[2].seen, value);
    printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
