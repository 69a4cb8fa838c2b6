/* tests/support/test.h: park's small test harness.
 *
 * A test binary lists its tests in a table and hands it to test_main:
 *
 *   TEST(sem_release_zero_is_einval) { ASSERT_EQ(park_sem_release(&s, 0), EINVAL); }
 *   static const test_case_t tests[] = { TEST_ENTRY(sem_release_zero_is_einval) };
 *   int main(int argc, char **argv) { return TEST_MAIN(argc, argv, tests); }
 *
 * `binary` runs every test, `binary NAME...` the named ones, `binary --list`
 * prints the names. A watchdog thread fails a test that runs longer than
 * 60 s times PARK_TEST_TIMEOUT_SCALE (default 1) with a message naming it,
 * so a hang never stalls CI. PARK_STRESS_SCALE (default 1) scales the
 * iteration counts of stress tests (test_scaled). */
#ifndef PARK_TESTS_TEST_H
#define PARK_TESTS_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* C++ tests (tests/cpp) use the harness too. */
#ifdef __cplusplus
#define TEST_NORETURN [[noreturn]]
extern "C" {
#else
#define TEST_NORETURN _Noreturn
#endif

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case_t;

#define TEST(name) static void name(void)
#define TEST_ENTRY(name)                                                                           \
    {                                                                                              \
#name, name                                                                                \
    }
#define TEST_MAIN(argc, argv, table)                                                               \
    test_main((argc), (argv), (table), sizeof(table) / sizeof((table)[0]))

int test_main(int argc, char **argv, const test_case_t *tests, size_t count);

/* Fails the current test with a message (and never returns). */
TEST_NORETURN void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Runs fn(arg) in a forked child, which must die of SIGABRT having written
 * a message that contains `needle` to stderr; fails the test otherwise
 * (the child returning from fn counts as not aborting). For misuse that
 * park reports by aborting. */
void test_expect_abort(void (*fn)(void *arg), void *arg, const char *needle);

/* As test_expect_abort, in a new process of the test binary that runs the
 * test named `child` alone: for misuse that needs threads (a forked child
 * of a threaded process may not start threads under ThreadSanitizer). A
 * test whose name starts with "child_" runs only when named. */
void test_expect_abort_in_child(const char *child, const char *needle);

/* As test_expect_abort, for a use of freed memory: in AddressSanitizer
 * builds the child must fail with an ASan report of `asan_kind` (such as
 * "use-after-poison"); in other builds it must abort with `needle`. */
void test_expect_misuse(void (*fn)(void *arg), void *arg, const char *needle,
                        const char *asan_kind);

/* n * PARK_STRESS_SCALE, at least 1. */
uint64_t test_scaled(uint64_t n);

/* Sleeps for ns nanoseconds (test choreography only, never an oracle). */
void test_sleep_ns(uint64_t ns);

#define ASSERT_TRUE(x) ((x) ? (void)0 : test_fail(__FILE__, __LINE__, "expected true: %s", #x))
#define ASSERT_FALSE(x) (!(x) ? (void)0 : test_fail(__FILE__, __LINE__, "expected false: %s", #x))
#define ASSERT_CMP_(a, op, b)                                                                      \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_))                                                                           \
            test_fail(__FILE__, __LINE__, "expected %s %s %s, got %lld and %lld", #a, #op, #b, a_, \
                      b_);                                                                         \
    } while (0)
#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)

#define US 1000u
#define MS 1000000u
#define LATE_NS (2000 * (uint64_t)MS)  /* generous bound on a timed wait's lateness */
#define HANG_NS (30000 * (uint64_t)MS) /* AWAIT gives up after this */

/* Polls cond until it holds; fails (instead of hanging) after HANG_NS. For
 * lining threads up, never as an oracle. */
#define AWAIT(cond)                                                                                \
    do {                                                                                           \
        uint64_t give_up_ = test_now_ns() + HANG_NS;                                               \
        while (!(cond)) {                                                                          \
            if (test_now_ns() > give_up_)                                                          \
                test_fail(__FILE__, __LINE__, "still waiting for %s", #cond);                      \
            test_sleep_ns(50000);                                                                  \
        }                                                                                          \
    } while (0)

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t test_now_ns(void);

/* xorshift64*: cheap per-thread randomness for choosing paths. */
static inline uint32_t test_rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 0x2545f4914f6cdd1du) >> 32);
}

/* A value below n (n > 0). */
static inline uint32_t test_rng_below(uint64_t *s, uint32_t n)
{
    return test_rng_next(s) % n;
}

/* A seed for thread `id`, never 0. */
static inline uint64_t test_rng_seed(unsigned id)
{
    return ((uint64_t)id + 1) * 0x9e3779b97f4a7c15u | 1;
}

/* Threads for tests: start n threads running fn(arg_i), join them all. */
typedef struct test_threads test_threads_t;
test_threads_t *test_threads_start(size_t n, void *(*fn)(void *), void *args, size_t arg_size);
void test_threads_join(test_threads_t *t);

#ifdef __cplusplus
}
#endif

#endif /* PARK_TESTS_TEST_H */
