/* lib/sem_impl.h: what lib/sem.c (the state machine) shares with its
 * asynchronous acquisition (lib/sem_async.c). */
#ifndef PARK_LIB_SEM_IMPL_H
#define PARK_LIB_SEM_IMPL_H

#include <park/sem.h>

#include "wait/wait.h"

/* What a waiter carries, thread or task (the ctx of the callbacks). */
struct park__sem_acquire_ctx {
    park_sem_t *s;
    park__waiter_t *w; /* the thread's waiter; NULL in a task (park__acq_ctx_waiter) */
    uint32_t n;        /* the permits it asks for */
    bool woken;        /* this thread is the woken waiter (WOKEN is its to clear) */
};

/* The callbacks of an acquirer's wait. */
extern const park__wait_ops_t park__sem_acquire_ops;

/* Takes n permits if n are free: c -> c-n. Inline: the asynchronous
 * acquisition tries it first. */
static inline bool park__sem_try_take(park_sem_t *s, uint32_t n)
{
    uint64_t v = __atomic_load_n(&s->state_, __ATOMIC_RELAXED);
    while ((v & PARK__SEM_COUNT_MASK) >= n) {
        /* acquire: pairs with the release that freed the permits. */
        if (__atomic_compare_exchange_n(&s->state_, &v, v - n, true, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
    }
    return false;
}

/* n permits can be asked for of s: 1 <= n <= max. */
bool park__sem_n_valid(const park_sem_t *s, uint32_t n);

/* A waiter w that left the queue ungranted gives back the permits
 * gathered for it (a release). */
void park__sem_give_back_gathered(park_sem_t *s, const park__waiter_t *w);

#endif /* PARK_LIB_SEM_IMPL_H */
