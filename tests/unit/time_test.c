/* tests/unit/time_test.c: park_now and park_deadline_in. */
#include <time.h>

#include <park/time.h>

#include "test.h"

#define SEC 1000000000u

static park_time_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (park_time_t)ts.tv_sec * SEC + (park_time_t)ts.tv_nsec;
}

TEST(time_now_never_goes_backwards)
{
    park_time_t prev = park_now();
    for (int i = 0; i < 100000; i++) {
        park_time_t t = park_now();
        ASSERT_GE(t, prev);
        prev = t;
    }
}

/* Bracketing park_now between two CLOCK_MONOTONIC readings catches another
 * clock, other units and an offset alike, without any tolerance. */
TEST(time_now_is_clock_monotonic_in_nanoseconds)
{
    for (int i = 0; i < 1000; i++) {
        park_time_t before = monotonic_ns();
        park_time_t t = park_now();
        park_time_t after = monotonic_ns();
        ASSERT_GE(t, before);
        ASSERT_LE(t, after);
    }
}

TEST(time_deadline_in_zero_is_now)
{
    park_time_t before = park_now();
    park_time_t d = park_deadline_in(0);
    park_time_t after = park_now();
    ASSERT_GE(d, before);
    ASSERT_LE(d, after);
}

TEST(time_deadline_in_adds_to_now)
{
    park_time_t before = park_now();
    park_time_t d = park_deadline_in(3 * (uint64_t)SEC);
    park_time_t after = park_now();
    ASSERT_GE(d, before + 3 * (uint64_t)SEC);
    ASSERT_LE(d, after + 3 * (uint64_t)SEC);
}

/* Large but not overflowing: must not saturate early. */
TEST(time_deadline_in_half_the_range_does_not_saturate)
{
    uint64_t ns = UINT64_MAX / 2;
    park_time_t before = park_now();
    park_time_t d = park_deadline_in(ns);
    park_time_t after = park_now();
    ASSERT_NE(d, PARK_FOREVER);
    ASSERT_TRUE(d >= before + ns);
    ASSERT_TRUE(d <= after + ns);
}

TEST(time_deadline_in_max_saturates_to_forever)
{
    ASSERT_TRUE(park_deadline_in(UINT64_MAX) == PARK_FOREVER);
}

TEST(time_deadline_in_max_minus_one_saturates_to_forever)
{
    ASSERT_TRUE(park_deadline_in(UINT64_MAX - 1) == PARK_FOREVER);
}

/* now + ns reaches exactly UINT64_MAX or wraps by a little: still forever. */
TEST(time_deadline_in_just_past_the_range_saturates_to_forever)
{
    park_time_t now = park_now();
    ASSERT_TRUE(park_deadline_in(UINT64_MAX - now) == PARK_FOREVER);
    ASSERT_TRUE(park_deadline_in(UINT64_MAX - now + 1) == PARK_FOREVER);
    ASSERT_TRUE(park_deadline_in(UINT64_MAX - now / 2) == PARK_FOREVER);
}

static const test_case_t tests[] = {
    TEST_ENTRY(time_now_never_goes_backwards),
    TEST_ENTRY(time_now_is_clock_monotonic_in_nanoseconds),
    TEST_ENTRY(time_deadline_in_zero_is_now),
    TEST_ENTRY(time_deadline_in_adds_to_now),
    TEST_ENTRY(time_deadline_in_half_the_range_does_not_saturate),
    TEST_ENTRY(time_deadline_in_max_saturates_to_forever),
    TEST_ENTRY(time_deadline_in_max_minus_one_saturates_to_forever),
    TEST_ENTRY(time_deadline_in_just_past_the_range_saturates_to_forever),
};

int main(int argc, char **argv)
{
    return TEST_MAIN(argc, argv, tests);
}
