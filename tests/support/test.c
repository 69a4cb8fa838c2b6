/* tests/support/test.c: the harness behind test.h. */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *current_name;
static atomic_uint_fast64_t current_start_ms; /* 0: no test running */
static atomic_bool done;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static double env_scale(const char *name)
{
    const char *s = getenv(name);
    double v = s ? strtod(s, NULL) : 1.0;
    return v > 0 ? v : 1.0;
}

uint64_t test_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

/* Runs fn(arg) in a forked child: SIGABRT (or, if `any_failure`, any
 * signal or a non-zero exit) with `needle` on stderr passes. */
static void expect_death(void (*fn)(void *arg), void *arg, const char *exec_test,
                         const char *needle, bool any_failure)
{
    int fds[2];
    if (pipe(fds) != 0)
        test_fail(__FILE__, __LINE__, "pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        test_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (exec_test) {
            /* A new process of this binary running that test alone. */
            execl("/proc/self/exe", "test-child", exec_test, (char *)NULL);
            _exit(127);
        }
        fn(arg);
        _exit(0);
    }
    close(fds[1]);
    char msg[8192];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fds[0], msg + len, sizeof msg - 1 - len);
        if (r > 0)
            len += (size_t)r;
        else if (r == 0 || errno != EINTR || len == sizeof msg - 1)
            break;
    }
    msg[len] = '\0';
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            test_fail(__FILE__, __LINE__, "waitpid: %s", strerror(errno));
    bool died = any_failure ? WIFSIGNALED(status) || WEXITSTATUS(status) != 0
                            : WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    if (!died)
        test_fail(__FILE__, __LINE__, "the child did not die as expected (status %#x), stderr: %s",
                  status, msg);
    if (!strstr(msg, needle))
        test_fail(__FILE__, __LINE__, "the message does not contain \"%s\": \"%s\"", needle, msg);
}

void test_expect_abort(void (*fn)(void *arg), void *arg, const char *needle)
{
    expect_death(fn, arg, NULL, needle, false);
}

void test_expect_abort_in_child(const char *child, const char *needle)
{
    expect_death(NULL, NULL, child, needle, false);
}

void test_expect_misuse(void (*fn)(void *arg), void *arg, const char *needle, const char *asan_kind)
{
#ifdef TEST_ASAN
    (void)needle;
    expect_death(fn, arg, NULL, asan_kind, true);
#else
    (void)asan_kind;
    expect_death(fn, arg, NULL, needle, false);
#endif
}

uint64_t test_scaled(uint64_t n)
{
    double v = (double)n * env_scale("PARK_STRESS_SCALE");
    return v < 1 ? 1 : (uint64_t)v;
}

void test_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s\n  %s:%d: ", current_name ? current_name : "?", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    abort();
}

static void *watchdog(void *arg)
{
    uint64_t limit_ms = (uint64_t)(60000.0 * env_scale("PARK_TEST_TIMEOUT_SCALE"));
    (void)arg;
    while (!atomic_load(&done)) {
        uint64_t start = atomic_load(&current_start_ms);
        if (start && now_ms() - start > limit_ms) {
            fprintf(stderr, "FAIL %s\n  watchdog: still running after %llu ms: hung\n",
                    current_name, (unsigned long long)limit_ms);
            fflush(stderr);
            abort();
        }
        test_sleep_ns(100000000u);
    }
    return NULL;
}

static int run_one(const test_case_t *t)
{
    current_name = t->name;
    uint64_t start = now_ms();
    atomic_store(&current_start_ms, start);
    t->fn();
    atomic_store(&current_start_ms, 0);
    printf("ok   %-60s %6llu ms\n", t->name, (unsigned long long)(now_ms() - start));
    fflush(stdout);
    return 0;
}

int test_main(int argc, char **argv, const test_case_t *tests, size_t count)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < count; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, NULL);
    size_t passed = 0;
    for (size_t i = 0; i < count; i++) {
        /* A child_ test runs only when named (test_expect_abort_in_child). */
        bool selected = argc <= 1 && strncmp(tests[i].name, "child_", 6) != 0;
        for (int a = 1; a < argc && !selected; a++)
            selected = strcmp(argv[a], tests[i].name) == 0;
        if (!selected)
            continue;
        run_one(&tests[i]);
        passed++;
    }
    atomic_store(&done, true);
    pthread_join(dog, NULL);
    if (passed == 0) {
        fprintf(stderr, "no test matched\n");
        return 1;
    }
    printf("%zu passed, 0 failed\n", passed);
    return 0;
}

struct test_threads {
    size_t n;
    pthread_t ids[];
};

test_threads_t *test_threads_start(size_t n, void *(*fn)(void *), void *args, size_t arg_size)
{
    test_threads_t *t = malloc(sizeof *t + n * sizeof(pthread_t));
    if (!t)
        abort();
    t->n = n;
    for (size_t i = 0; i < n; i++) {
        void *arg = args ? (char *)args + i * arg_size : NULL;
        if (pthread_create(&t->ids[i], NULL, fn, arg) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            abort();
        }
    }
    return t;
}

void test_threads_join(test_threads_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        pthread_join(t->ids[i], NULL);
    free(t);
}
