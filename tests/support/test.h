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

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case_t;

#define TEST(name) static void name(void)
#define TEST_ENTRY(name) { #name, name }
#define TEST_MAIN(argc, argv, table) \
    test_main((argc), (argv), (table), sizeof(table) / sizeof((table)[0]))

int test_main(int argc, char **argv, const test_case_t *tests, size_t count);

/* Fails the current test with a message (and never returns). */
_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* n * PARK_STRESS_SCALE, at least 1. */
uint64_t test_scaled(uint64_t n);

/* Sleeps for ns nanoseconds (test choreography only, never an oracle). */
void test_sleep_ns(uint64_t ns);

#define ASSERT_TRUE(x) \
    ((x) ? (void)0 : test_fail(__FILE__, __LINE__, "expected true: %s", #x))
#define ASSERT_FALSE(x) \
    (!(x) ? (void)0 : test_fail(__FILE__, __LINE__, "expected false: %s", #x))
#define ASSERT_CMP_(a, op, b)                                                               \
    do {                                                                                    \
        long long a_ = (long long)(a), b_ = (long long)(b);                                 \
        if (!(a_ op b_))                                                                    \
            test_fail(__FILE__, __LINE__, "expected %s %s %s, got %lld and %lld", #a, #op, \
                      #b, a_, b_);                                                          \
    } while (0)
#define ASSERT_EQ(a, b) ASSERT_CMP_(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP_(a, !=, b)
#define ASSERT_LT(a, b) ASSERT_CMP_(a, <, b)
#define ASSERT_LE(a, b) ASSERT_CMP_(a, <=, b)
#define ASSERT_GT(a, b) ASSERT_CMP_(a, >, b)
#define ASSERT_GE(a, b) ASSERT_CMP_(a, >=, b)

/* Threads for tests: start n threads running fn(arg_i), join them all. */
typedef struct test_threads test_threads_t;
test_threads_t *test_threads_start(size_t n, void *(*fn)(void *), void *args, size_t arg_size);
void test_threads_join(test_threads_t *t);

#endif /* PARK_TESTS_TEST_H */
