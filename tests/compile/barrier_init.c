/* tests/compile/barrier_init.c: compiled by barrier_init.cmake (never built
 * into the library or a test binary), as C11 and as C++17, once per CASE.
 * Case 0 must compile; every other case must fail to compile, naming the
 * initialiser (PARK_LATCH_INIT for cases 1-3, PARK_BARRIER_INIT for 4-7). */
#include <park/barrier.h>

#if CASE == 0 /* constants in range */
static void done(void *arg)
{
    (void)arg;
}
static park_latch_t a = PARK_LATCH_INIT(0);
static park_latch_t b = PARK_LATCH_INIT(PARK_LATCH_MAX);
static park_barrier_t c = PARK_BARRIER_INIT(1, done, NULL);
static park_barrier_t d = PARK_BARRIER_INIT(PARK_BARRIER_MAX, NULL, NULL);
unsigned used(void);
unsigned used(void)
{
    return park_latch_count(&a) + park_latch_count(&b) + (unsigned)park_barrier_destroy(&c) +
           (unsigned)park_barrier_destroy(&d);
}
#elif CASE == 1 /* count > PARK_LATCH_MAX */
static park_latch_t a = PARK_LATCH_INIT(PARK_LATCH_MAX + 1u);
#elif CASE == 2 /* a negative count */
static park_latch_t a = PARK_LATCH_INIT(-1);
#elif CASE == 3 /* a count known only at run time */
park_latch_t *make(park_latch_t *l, unsigned n);
park_latch_t *make(park_latch_t *l, unsigned n)
{
    park_latch_t t = PARK_LATCH_INIT(n);
    *l = t;
    return l;
}
#elif CASE == 4 /* count == 0 */
static park_barrier_t a = PARK_BARRIER_INIT(0, NULL, NULL);
#elif CASE == 5 /* count > PARK_BARRIER_MAX */
static park_barrier_t a = PARK_BARRIER_INIT(PARK_BARRIER_MAX + 1u, NULL, NULL);
#elif CASE == 6 /* a negative count */
static park_barrier_t a = PARK_BARRIER_INIT(-2, NULL, NULL);
#elif CASE == 7 /* a count known only at run time */
park_barrier_t *make(park_barrier_t *b, unsigned n);
park_barrier_t *make(park_barrier_t *b, unsigned n)
{
    park_barrier_t t = PARK_BARRIER_INIT(n, NULL, NULL);
    *b = t;
    return b;
}
#endif

#if CASE == 1 || CASE == 2
unsigned used(void);
unsigned used(void)
{
    return park_latch_count(&a);
}
#elif CASE == 4 || CASE == 5 || CASE == 6
int used(void);
int used(void)
{
    return park_barrier_destroy(&a);
}
#endif
