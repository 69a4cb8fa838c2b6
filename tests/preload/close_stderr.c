/* tests/preload/close_stderr.c: a pthread program that closes its standard
 * error before it exits, as xz and GNU sort do (check_run.sh: the drop-in's
 * exit report must still come out). */
#include <pthread.h>
#include <unistd.h>

int main(void)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    close(2);
    return 0;
}
