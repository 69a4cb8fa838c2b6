/* pool_fork_join: divide and conquer on a work-stealing pool.
 *
 * A merge sort of a million integers splits its range in halves with
 * park_join until the pieces are small, then sorts them serially and merges
 * on the way back up. park_join(pool, a, ..., b, ...) runs `a` on the
 * calling worker and leaves `b` on the worker's deque, where an idle worker
 * may steal it: the halves run in parallel when there are workers to spare
 * and in order when there are not, and nothing is allocated to fork. Called
 * from main, which is no worker, the first park_join hands the whole sort
 * to the pool and waits.
 *
 * Then park_parallel_for sums the squares of the sorted array over ranges
 * of at most GRAIN elements, each range adding its partial sum with one
 * atomic addition.
 *
 * Prints how many forks other workers stole (how the work spread), and
 * exits 0 if the array is sorted and is a permutation of the input (the
 * sums of the elements and of their squares match a serial pass), 1
 * otherwise. */
#include <park/park.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT (1u << 20) /* elements to sort */
#define CUTOFF 4096      /* below this, sort serially */
#define GRAIN 65536      /* park_parallel_for's largest range */

static park_pool_t *pool;
static uint32_t *tmp; /* merge buffer, as long as the array */

struct range {
    uint32_t *a; /* the whole array (tmp is used at the same offsets) */
    size_t lo, hi;
};

static int compare(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Merges the sorted a[lo, mid) and a[mid, hi) through tmp. */
static void merge(uint32_t *a, size_t lo, size_t mid, size_t hi)
{
    size_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < hi)
        tmp[k++] = a[j++];
    memcpy(a + lo, tmp + lo, (hi - lo) * sizeof *a);
}

/* Sorts r's range: forks the two halves, then merges them. */
static void sort(void *arg)
{
    struct range *r = arg;
    if (r->hi - r->lo <= CUTOFF) {
        qsort(r->a + r->lo, r->hi - r->lo, sizeof *r->a, compare);
        return;
    }
    size_t mid = r->lo + (r->hi - r->lo) / 2;
    struct range left = {r->a, r->lo, mid}, right = {r->a, mid, r->hi};
    park_join(pool, sort, &left, sort, &right); /* right may be stolen */
    merge(r->a, r->lo, mid, r->hi);
}

static _Atomic uint64_t sum_of_squares;

static void add_squares(size_t lo, size_t hi, void *arg)
{
    const uint32_t *a = arg;
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++)
        s += (uint64_t)(a[i] % 65536) * (a[i] % 65536);
    atomic_fetch_add(&sum_of_squares, s);
}

int main(void)
{
    uint32_t *a = malloc(COUNT * sizeof *a);
    tmp = malloc(COUNT * sizeof *tmp);
    if (!a || !tmp || park_pool_create(&pool, NULL) != 0) {
        printf("FAILED: out of memory, or no pool\n");
        return 1;
    }

    /* The input, and what a serial pass says about it. */
    uint64_t sum = 0, squares = 0, x = 88172645463325252ull;
    for (size_t i = 0; i < COUNT; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        a[i] = (uint32_t)x;
        sum += a[i];
        squares += (uint64_t)(a[i] % 65536) * (a[i] % 65536);
    }

    park_time_t start = park_now();
    struct range all = {a, 0, COUNT};
    park_join(pool, sort, &all, NULL, NULL); /* from main: run on the pool, wait */
    park_time_t sorted_at = park_now();
    park_parallel_for(pool, 0, COUNT, GRAIN, add_squares, a);
    park_time_t summed_at = park_now();

    park_pool_stats_t stats;
    park_pool_stats(pool, &stats);
    unsigned workers = park_pool_threads(pool);
    park_pool_destroy(pool);

    bool in_order = true;
    uint64_t sum_after = 0;
    for (size_t i = 0; i < COUNT; i++) {
        sum_after += a[i];
        if (i > 0 && a[i - 1] > a[i])
            in_order = false;
    }
    printf("sorted %u integers in %.1f ms on %u workers; %llu forks stolen by idle workers\n",
           COUNT, (sorted_at - start) / 1e6, workers, (unsigned long long)stats.steals);
    printf("parallel_for: sum of squares in %.1f ms\n", (summed_at - sorted_at) / 1e6);

    bool ok = true;
    if (!in_order) {
        printf("FAILED: the array is not sorted\n");
        ok = false;
    }
    if (sum_after != sum || atomic_load(&sum_of_squares) != squares) {
        printf("FAILED: the sums differ from the serial pass\n");
        ok = false;
    }
    free(a);
    free(tmp);
    printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
