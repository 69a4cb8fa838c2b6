/* benchmarks/baselines/futex_rwlock.h: the futex reader/writer lock of
 * Rust's std (on Linux), in C: the rwlock sweep's writer-fair design run
 * in park's own process, alternating with park, and where the Rust peers
 * (their own process, after the C++ rows) are not built
 * (benchmarks/README.md, Contention sweeps).
 *
 * A state word and a writer notification counter:
 *   bits 0-29  0 free, 1 .. MAX_READERS read holds, MASK write-held
 *   bit 30     readers sleep on the state word
 *   bit 31     writers sleep on the notification counter
 * A reader enters while no writer holds the lock and nobody sleeps (so a
 * sleeping writer keeps new readers out); a writer enters whenever bits
 * 0-29 are 0, whatever the waiting bits. A waiter first loads the word
 * after each of up to 100 pauses, until it could go on (or anybody
 * sleeps), then sets its bit and sleeps. The unlock that frees the word
 * wakes one sleeping writer if there is one, else every sleeping reader.
 *
 * A baseline shares no code with park, so it makes its futex calls itself
 * rather than through lib/os. C++ only (g++ declares syscall() by default;
 * C needs _GNU_SOURCE). */
#ifndef PARK_BENCH_FUTEX_RWLOCK_H
#define PARK_BENCH_FUTEX_RWLOCK_H

#include <limits.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pause.h"

typedef struct bl_futex_rw {
    uint32_t state;
    uint32_t writer_notify; /* incremented at every writer wake-up */
} bl_futex_rw_t;

#define BL_FRW_READER 1u
#define BL_FRW_MASK ((1u << 30) - 1)
#define BL_FRW_WRITER BL_FRW_MASK
#define BL_FRW_MAX_READERS (BL_FRW_MASK - 1)
#define BL_FRW_READERS_WAITING (1u << 30)
#define BL_FRW_WRITERS_WAITING (1u << 31)
#define BL_FRW_WAITING (BL_FRW_READERS_WAITING | BL_FRW_WRITERS_WAITING)
#define BL_FRW_SPIN 100

static inline void bl_frw_wait(uint32_t *word, uint32_t expected)
{
    (void)syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

/* How many threads it woke. */
static inline long bl_frw_wake(uint32_t *word, int n)
{
    return syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static inline bool bl_frw_read_lockable(uint32_t s)
{
    return (s & BL_FRW_MASK) < BL_FRW_MAX_READERS && !(s & BL_FRW_WAITING);
}

static inline void bl_futex_rw_init(bl_futex_rw_t *l)
{
    l->state = 0;
    l->writer_notify = 0;
}

/* A reader's spin: the word once no writer holds it or anybody sleeps, or
 * after BL_FRW_SPIN pauses. */
static inline uint32_t bl_frw_spin_read(bl_futex_rw_t *l)
{
    for (int spin = BL_FRW_SPIN;; spin--) {
        /* relaxed: a hint; the compare-and-swap that follows decides. */
        uint32_t s = __atomic_load_n(&l->state, __ATOMIC_RELAXED);
        if ((s & BL_FRW_MASK) != BL_FRW_WRITER || (s & BL_FRW_WAITING) || spin == 0)
            return s;
        bl_pause();
    }
}

/* A writer's spin: the word once it is free or writers sleep, or after
 * BL_FRW_SPIN pauses. */
static inline uint32_t bl_frw_spin_write(bl_futex_rw_t *l)
{
    for (int spin = BL_FRW_SPIN;; spin--) {
        /* relaxed: a hint; the compare-and-swap that follows decides. */
        uint32_t s = __atomic_load_n(&l->state, __ATOMIC_RELAXED);
        if ((s & BL_FRW_MASK) == 0 || (s & BL_FRW_WRITERS_WAITING) || spin == 0)
            return s;
        bl_pause();
    }
}

static inline void bl_futex_rw_read_contended(bl_futex_rw_t *l)
{
    uint32_t s = bl_frw_spin_read(l);
    for (;;) {
        if (bl_frw_read_lockable(s)) {
            /* acquire: pairs with the release subtraction of
             * bl_futex_rw_write_unlock. */
            if (__atomic_compare_exchange_n(&l->state, &s, s + BL_FRW_READER, true,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return;
            continue;
        }
        if ((s & BL_FRW_MASK) == BL_FRW_MAX_READERS)
            abort(); /* too many read holds (Rust's std panics) */
        /* relaxed: the bit orders nothing; the futex wait below checks
         * the word again in the kernel. */
        if (!(s & BL_FRW_READERS_WAITING) &&
            !__atomic_compare_exchange_n(&l->state, &s, s | BL_FRW_READERS_WAITING, false,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            continue;
        bl_frw_wait(&l->state, s | BL_FRW_READERS_WAITING);
        s = bl_frw_spin_read(l);
    }
}

static inline void bl_futex_rw_read_lock(bl_futex_rw_t *l)
{
    /* relaxed: the compare-and-swap decides. */
    uint32_t s = __atomic_load_n(&l->state, __ATOMIC_RELAXED);
    /* acquire: pairs with the release subtraction of bl_futex_rw_write_unlock. */
    if (!bl_frw_read_lockable(s) ||
        !__atomic_compare_exchange_n(&l->state, &s, s + BL_FRW_READER, true, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        bl_futex_rw_read_contended(l);
}

/* Wakes one sleeping writer: true if one was woken. */
static inline bool bl_frw_wake_writer(bl_futex_rw_t *l)
{
    /* release: pairs with the acquire load of the counter in
     * bl_futex_rw_write_contended, so a writer that read the new count
     * sees a word at least as new as this waker's. */
    __atomic_fetch_add(&l->writer_notify, 1, __ATOMIC_RELEASE);
    return bl_frw_wake(&l->writer_notify, 1) > 0;
}

/* The lock is free (s: its word) and somebody sleeps: a writer first. The
 * compare-and-swaps are relaxed: they move only the waiting bits, and as
 * read-modify-writes they continue the unlock's release sequence. */
static inline void bl_frw_wake_writer_or_readers(bl_futex_rw_t *l, uint32_t s)
{
    if (s == BL_FRW_WRITERS_WAITING) {
        if (__atomic_compare_exchange_n(&l->state, &s, 0, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            bl_frw_wake_writer(l);
            return;
        }
    }
    if (s == BL_FRW_WAITING) {
        /* Readers keep their bit while the writer goes first; another
         * thread that changed the word meanwhile does the waking. */
        if (!__atomic_compare_exchange_n(&l->state, &s, BL_FRW_READERS_WAITING, false,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return;
        if (bl_frw_wake_writer(l))
            return;
        s = BL_FRW_READERS_WAITING; /* no writer slept after all */
    }
    if (s == BL_FRW_READERS_WAITING &&
        __atomic_compare_exchange_n(&l->state, &s, 0, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        bl_frw_wake(&l->state, INT_MAX);
}

static inline void bl_futex_rw_read_unlock(bl_futex_rw_t *l)
{
    /* release: pairs with the acquire compare-and-swap of the next
     * write lock. */
    uint32_t s = __atomic_sub_fetch(&l->state, BL_FRW_READER, __ATOMIC_RELEASE);
    /* A reader sleeps on a read-held lock only behind a sleeping writer. */
    if ((s & BL_FRW_MASK) == 0 && (s & BL_FRW_WRITERS_WAITING))
        bl_frw_wake_writer_or_readers(l, s);
}

static inline void bl_futex_rw_write_contended(bl_futex_rw_t *l)
{
    uint32_t s = bl_frw_spin_write(l);
    uint32_t others = 0; /* WRITERS_WAITING once this writer has seen or set it */
    for (;;) {
        if ((s & BL_FRW_MASK) == 0) {
            /* acquire: pairs with the unlocks' release subtractions. Keeps
             * the waiting bits, and keeps the writers' bit for the others
             * that may sleep. */
            if (__atomic_compare_exchange_n(&l->state, &s, s | BL_FRW_WRITER | others, true,
                                            __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
                return;
            continue;
        }
        /* relaxed: the bit orders nothing; the wake-up comes through the
         * counter. */
        if (!(s & BL_FRW_WRITERS_WAITING) &&
            !__atomic_compare_exchange_n(&l->state, &s, s | BL_FRW_WRITERS_WAITING, false,
                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            continue;
        others = BL_FRW_WRITERS_WAITING;
        /* acquire: pairs with the increment of bl_frw_wake_writer. */
        uint32_t seq = __atomic_load_n(&l->writer_notify, __ATOMIC_ACQUIRE);
        /* relaxed: a wake-up after the load of seq makes the futex wait
         * return at once. */
        s = __atomic_load_n(&l->state, __ATOMIC_RELAXED);
        if ((s & BL_FRW_MASK) == 0 || !(s & BL_FRW_WRITERS_WAITING))
            continue; /* freed, or its unlock took the bit: no wake-up will come */
        bl_frw_wait(&l->writer_notify, seq);
        s = bl_frw_spin_write(l);
    }
}

static inline void bl_futex_rw_write_lock(bl_futex_rw_t *l)
{
    uint32_t s = 0;
    /* acquire: pairs with the unlocks' release subtractions. */
    if (!__atomic_compare_exchange_n(&l->state, &s, BL_FRW_WRITER, true, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        bl_futex_rw_write_contended(l);
}

static inline void bl_futex_rw_write_unlock(bl_futex_rw_t *l)
{
    /* release: pairs with the acquire compare-and-swap of the next lock. */
    uint32_t s = __atomic_sub_fetch(&l->state, BL_FRW_WRITER, __ATOMIC_RELEASE);
    if (s & BL_FRW_WAITING)
        bl_frw_wake_writer_or_readers(l, s);
}

#endif /* PARK_BENCH_FUTEX_RWLOCK_H */
