/* A plain pthread program for the profiler under park-run --profile
 * (check_profile.sh): one pthread mutex contended at a known call site,
 * another locked at a site nobody contends. Exported, frame-pointered
 * symbols, so that the report can name them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t alone = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held;

/* Not tail calls: the return address stays inside each site. */
__attribute__((noinline, visibility("default"))) void contended_pthread_site(void)
{
    pthread_mutex_lock(&contended);
    __asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline, visibility("default"))) void uncontended_pthread_site(void)
{
    pthread_mutex_lock(&alone);
    __asm__ __volatile__("" ::: "memory");
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};
    nanosleep(&ts, NULL);
}

enum { ROUNDS = 4 };

static void *waiter(void *arg)
{
    (void)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        while (atomic_load(&held) < r)
            sleep_ms(1);
        contended_pthread_site();
        pthread_mutex_unlock(&contended);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, waiter, NULL) != 0)
        return 1;
    for (int r = 1; r <= ROUNDS; r++) {
        pthread_mutex_lock(&contended);
        atomic_store(&held, r);
        sleep_ms(40); /* the waiter queues meanwhile */
        pthread_mutex_unlock(&contended);
        for (int i = 0; i < 100; i++) {
            uncontended_pthread_site();
            pthread_mutex_unlock(&alone);
        }
        sleep_ms(2);
    }
    pthread_join(t, NULL);
    puts("done");
    return 0;
}
