/* A program that uses an installed park: one thread blocks on a mutex the
 * main thread holds and, once it has it, hands the main thread a semaphore
 * permit. Exits non-zero if anything is not as documented. Written in the
 * common subset of C11 and C++17, so it is also built as C++. */
#include <park/park.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef PARK_EXPECTED_VERSION
#error "compile with -DPARK_EXPECTED_VERSION=\"<version under test>\""
#endif

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static park_mutex_t mutex = PARK_MUTEX_INIT;
static park_sem_t done;
static int counter;

static void *worker(void *arg)
{
    (void)arg;
    park_mutex_lock(&mutex);
    counter++;
    park_mutex_unlock(&mutex);
    (void)park_sem_release(&done, 1);
    return NULL;
}

int main(void)
{
    pthread_t thread;

    CHECK(strcmp(PARK_VERSION_STRING, PARK_EXPECTED_VERSION) == 0);

    /* Uncontended fast paths, and a timed wait on a held mutex. */
    park_mutex_lock(&mutex);
    CHECK(!park_mutex_try_lock(&mutex));
    CHECK(park_mutex_lock_until(&mutex, park_deadline_in(1000000)) == ETIMEDOUT);

    /* The worker blocks on the held mutex until it is unlocked here. */
    CHECK(park_sem_init(&done, 0, 1) == 0);
    CHECK(pthread_create(&thread, NULL, worker, NULL) == 0);
    park_mutex_unlock(&mutex);
    park_sem_acquire(&done);
    CHECK(pthread_join(thread, NULL) == 0);

    park_mutex_lock(&mutex);
    CHECK(counter == 1);
    park_mutex_unlock(&mutex);
    CHECK(park_mutex_destroy(&mutex) == 0);

    CHECK(park_sem_count(&done) == 0);
    CHECK(park_sem_release(&done, 1) == 0);
    CHECK(park_sem_release(&done, 1) == EOVERFLOW);
    CHECK(park_sem_try_acquire(&done));
    CHECK(park_sem_destroy(&done) == 0);

    printf("park %s: consumer ok\n", PARK_VERSION_STRING);
    return 0;
}
