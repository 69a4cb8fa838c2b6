/* tests/preload/order_target.c: a plain pthread program for park-run
 * --check-order (check_order.sh). `inversion`: one thread takes A then B,
 * a later one B then A (they never overlap, so the run never deadlocks);
 * `rwlock`: a read hold of an rwlock then a mutex, and the mutex then the
 * write hold; `ordered`: the same locks, always in one order, with
 * try-locks against it; `reused`: A then B, B destroyed and initialised
 * again, then the new B then A. Prints "done" at the end. The named
 * symbols are exported (default visibility, -rdynamic) so that the report
 * names them with dladdr where libdw is missing. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

__attribute__((visibility("default"))) pthread_mutex_t order_lock_a = PTHREAD_MUTEX_INITIALIZER;
__attribute__((visibility("default"))) pthread_mutex_t order_lock_b = PTHREAD_MUTEX_INITIALIZER;
__attribute__((visibility("default"))) pthread_rwlock_t order_table = PTHREAD_RWLOCK_INITIALIZER;

__attribute__((noinline, visibility("default"))) void *order_target_a_then_b(void *arg)
{
    pthread_mutex_lock(&order_lock_a);
    pthread_mutex_lock(&order_lock_b);
    pthread_mutex_unlock(&order_lock_b);
    pthread_mutex_unlock(&order_lock_a);
    return arg;
}

__attribute__((noinline, visibility("default"))) void *order_target_b_then_a(void *arg)
{
    pthread_mutex_lock(&order_lock_b);
    pthread_mutex_lock(&order_lock_a);
    pthread_mutex_unlock(&order_lock_a);
    pthread_mutex_unlock(&order_lock_b);
    return arg;
}

__attribute__((noinline, visibility("default"))) void *order_target_try_b_then_a(void *arg)
{
    pthread_mutex_lock(&order_lock_b);
    if (pthread_mutex_trylock(&order_lock_a) == 0) /* a try cannot deadlock */
        pthread_mutex_unlock(&order_lock_a);
    pthread_mutex_unlock(&order_lock_b);
    return arg;
}

__attribute__((noinline, visibility("default"))) void *order_target_read_then_a(void *arg)
{
    pthread_rwlock_rdlock(&order_table);
    pthread_mutex_lock(&order_lock_a);
    pthread_mutex_unlock(&order_lock_a);
    pthread_rwlock_unlock(&order_table);
    return arg;
}

__attribute__((noinline, visibility("default"))) void *order_target_a_then_write(void *arg)
{
    pthread_mutex_lock(&order_lock_a);
    pthread_rwlock_wrlock(&order_table);
    pthread_rwlock_unlock(&order_table);
    pthread_mutex_unlock(&order_lock_a);
    return arg;
}

static void in_thread(void *(*fn)(void *))
{
    pthread_t t;
    pthread_create(&t, NULL, fn, NULL);
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "inversion";
    if (strcmp(mode, "inversion") == 0) {
        in_thread(order_target_a_then_b);
        in_thread(order_target_b_then_a);
        in_thread(order_target_b_then_a); /* the same cycle: reported once */
    } else if (strcmp(mode, "rwlock") == 0) {
        in_thread(order_target_read_then_a);
        in_thread(order_target_a_then_write);
    } else if (strcmp(mode, "ordered") == 0) {
        for (int i = 0; i < 3; i++) {
            in_thread(order_target_a_then_b);
            in_thread(order_target_try_b_then_a);
        }
    } else if (strcmp(mode, "reused") == 0) {
        in_thread(order_target_a_then_b);
        pthread_mutex_destroy(&order_lock_b);
        pthread_mutex_init(&order_lock_b, NULL);
        in_thread(order_target_b_then_a);
    } else {
        fprintf(stderr, "order_target: unknown mode %s\n", mode);
        return 2;
    }
    puts("done");
    return 0;
}
