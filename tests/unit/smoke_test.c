#include <park/park.h>
#include "test.h"
#include <errno.h>
TEST(smoke) { park_mutex_t m = PARK_MUTEX_INIT; park_mutex_lock(&m); ASSERT_FALSE(park_mutex_trylock(&m)); park_mutex_unlock(&m); ASSERT_EQ(park_mutex_destroy(&m), 0);
 park_sem_t s = PARK_SEM_INIT(1, 2); park_sem_acquire(&s); ASSERT_EQ(park_sem_acquire_until(&s, park_deadline_in(1000000)), ETIMEDOUT); ASSERT_EQ(park_sem_release(&s, 2), 0); ASSERT_EQ(park_sem_release(&s,1), EOVERFLOW); }
static const test_case_t tests[] = { TEST_ENTRY(smoke) };
int main(int argc, char **argv) { return TEST_MAIN(argc, argv, tests); }
