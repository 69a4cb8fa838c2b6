/* tests/compile/sem_init.c: compiled by sem_init.cmake (never built into
 * the library or a test binary), as C11 and as C++17, once per CASE. Case
 * 0 must compile; every other case must fail to compile. */
#include <park/sem.h>

#if CASE == 0 /* constants in range */
static park_sem_t a = PARK_SEM_INIT(0, 1);
static park_sem_t b = PARK_SEM_INIT(3, 3);
static park_sem_t c = PARK_SEM_INIT_FIFO(PARK_SEM_VALUE_MAX, PARK_SEM_VALUE_MAX);
#elif CASE == 1 /* initial > max */
static park_sem_t a = PARK_SEM_INIT(5, 3);
#elif CASE == 2 /* initial > max, FIFO */
static park_sem_t a = PARK_SEM_INIT_FIFO(5, 3);
#elif CASE == 3 /* max == 0 */
static park_sem_t a = PARK_SEM_INIT(0, 0);
#elif CASE == 4 /* max > PARK_SEM_VALUE_MAX */
static park_sem_t a = PARK_SEM_INIT(0, PARK_SEM_VALUE_MAX + 1u);
#elif CASE == 5 /* a negative initial count */
static park_sem_t a = PARK_SEM_INIT(-1, 3);
#elif CASE == 6 /* values known only at run time */
park_sem_t *make(park_sem_t *s, unsigned n);
park_sem_t *make(park_sem_t *s, unsigned n)
{
    park_sem_t t = PARK_SEM_INIT(n, n);
    *s = t;
    return s;
}
#endif

#if CASE != 6
unsigned used(void);
unsigned used(void)
{
    return park_sem_count(&a)
#if CASE == 0
           + park_sem_count(&b) + park_sem_count(&c)
#endif
        ;
}
#endif
