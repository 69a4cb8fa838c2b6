/* lib/profile/record.c: recording a slow-path wait (profile.h): finding the
 * call site by frame pointers and adding the wait to the calling thread's
 * own table (tables.h). Runs on the wait path only while profiling is on;
 * allocates nothing and takes no lock. */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "profile/tables.h"

park__profile_table_t *park__profile_tables;
uint32_t park__profile_claimed;
uint64_t park__profile_no_table;
uintptr_t park__profile_text_lo, park__profile_text_hi;

/* The calling thread's table; NO_TABLE once the pool had none for it. */
#define NO_TABLE ((park__profile_table_t *)1)
static _Thread_local park__profile_table_t *my_table;

static park__profile_table_t *claim_table(void)
{
    /* acquire: pairs with the release store in park__profile_setup, so
     * the pool's zeroed memory is seen. */
    park__profile_table_t *pool = __atomic_load_n(&park__profile_tables, __ATOMIC_ACQUIRE);
    if (!pool)
        return NULL;
    /* relaxed: the counter only hands out distinct indices. */
    uint32_t i = __atomic_fetch_add(&park__profile_claimed, 1, __ATOMIC_RELAXED);
    if (i >= PARK__PROFILE_TABLES) {
        my_table = NO_TABLE;
        return NULL;
    }
    park__profile_table_t *t = &pool[i];
    /* The frame walk reads only inside the thread's stack. Once per thread
     * (glibc reads /proc/self/maps for the main thread). */
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            t->stack_lo = (uintptr_t)addr;
            t->stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
    my_table = t;
    return t;
}

static bool in_park(uintptr_t pc)
{
    return pc >= park__profile_text_lo && pc < park__profile_text_hi;
}

/* No code lies below this address (Linux's default vm.mmap_min_addr). */
#define LOWEST_CODE 65536u

/* Return addresses from the calling frame outwards, skipping those inside
 * park: out[0] is the first frame outside park (the call site). Every frame
 * pointer is checked to lie in the thread's stack above the last one, so a
 * caller built without frame pointers ends the walk instead of faulting.
 * ASan: the walk reads saved frame records, which ASan does not poison but
 * may keep in its fake stacks (the bounds check ends the walk there). */
__attribute__((noinline, no_sanitize_address)) static unsigned walk(const park__profile_table_t *t,
                                                                    uintptr_t *out)
{
    const uintptr_t *fp = __builtin_frame_address(0);
    unsigned n = 0;
    for (unsigned hops = 0; hops < 64 && n < PARK_PROFILE_DEPTH; hops++) {
        uintptr_t at = (uintptr_t)fp;
        if (at < t->stack_lo || at > t->stack_hi - 2 * sizeof(uintptr_t) || at % sizeof(uintptr_t))
            break;
        uintptr_t pc = fp[1];
        const uintptr_t *next = (const uintptr_t *)fp[0];
        if (pc < LOWEST_CODE) /* not a return address: the chain is lost */
            break;
        if (n > 0 || !in_park(pc))
            out[n++] = pc;
        if ((uintptr_t)next <= at)
            break;
        fp = next;
    }
    return n;
}

static uint64_t hash_of(const uintptr_t *stack, unsigned depth, unsigned kind)
{
    uint64_t h = 0xcbf29ce484222325u ^ kind;
    for (unsigned i = 0; i < depth; i++)
        h = (h ^ stack[i]) * 0x100000001b3u;
    return h ^ (h >> 29);
}

/* The slot of (stack, kind) in t, made if new; NULL if t is full. */
static park__profile_slot_t *slot_of(park__profile_table_t *t, const uintptr_t *stack,
                                     unsigned depth, unsigned kind)
{
    uint64_t h = hash_of(stack, depth, kind);
    for (unsigned i = 0; i < PARK__PROFILE_SLOTS; i++) {
        park__profile_slot_t *s = &t->slots[(h + i) % PARK__PROFILE_SLOTS];
        if (!s->used) { /* only the owner writes `used` */
            s->hash = h;
            s->depth = depth;
            s->kind = kind;
            memcpy(s->stack, stack, depth * sizeof *stack);
            /* release: pairs with the acquire load in the report's merge,
             * which then reads the key written above. */
            __atomic_store_n(&s->used, 1, __ATOMIC_RELEASE);
            return s;
        }
        if (s->hash == h && s->depth == depth && s->kind == kind &&
            memcmp(s->stack, stack, depth * sizeof *stack) == 0)
            return s;
    }
    return NULL;
}

/* Single-writer counters: relaxed load + store (no read-modify-write on
 * the wait path); the report reads them relaxed. */
static void bump(uint64_t *c, uint64_t d)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

static void bump_hist(uint32_t *c, int d)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + (uint32_t)d, __ATOMIC_RELAXED);
}

void park__profile_record(park__profile_wait_t *p, const void *key, park_time_t t0, bool handed)
{
    park_time_t now = park_now();
    park__profile_slot_t *s = p->slot;
    uint64_t d;
    unsigned was = PARK__PROFILE_BUCKETS; /* the acquisition's bucket so far: none */
    if (!s) {
        park__profile_table_t *t = my_table;
        if (t == NO_TABLE || (!t && !(t = claim_table()))) {
            /* relaxed: a statistic. */
            __atomic_fetch_add(&park__profile_no_table, 1, __ATOMIC_RELAXED);
            return;
        }
        uintptr_t stack[PARK_PROFILE_DEPTH];
        /* Without the stack's bounds (glibc could not tell them), no walk:
         * the bounds check is what keeps it from faulting. */
        unsigned depth = t->stack_hi ? walk(t, stack) : 0;
        if (depth == 0) /* no frame outside park found: name the caller */
            stack[depth++] = (uintptr_t)__builtin_return_address(0);
        s = slot_of(t, stack, depth, p->kind);
        if (!s) {
            bump(&t->dropped, 1);
            return;
        }
        p->slot = s;
        p->total = 0;
        d = now - (p->mark ? p->mark : t0);
        bump(&s->waits, 1);
    } else {
        d = now - p->mark; /* woken, lost the race, waited again */
        was = park__profile_bucket(p->total);
    }
    p->mark = now;
    p->total += d;
    unsigned is = park__profile_bucket(p->total);
    if (is != was) { /* one sample per acquisition: it moves to its new length */
        if (was < PARK__PROFILE_BUCKETS)
            bump_hist(&s->hist[was], -1);
        bump_hist(&s->hist[is], 1);
    }
    bump(&s->total_ns, d);
    if (p->total > __atomic_load_n(&s->max_ns, __ATOMIC_RELAXED)) {
        __atomic_store_n(&s->max_ns, p->total, __ATOMIC_RELAXED);
        __atomic_store_n(&s->lock, (uintptr_t)key, __ATOMIC_RELAXED);
    }
    if (handed)
        bump(&s->handoffs, 1);
}

/* ---- setup: the pool and the range of park's code ---------------------- */

/* Functions of park, for the range of its code when park is linked into
 * the executable (static library): weak, so that naming them links in
 * nothing that the program does not use. */
/* clang-format off */
#define PARK__ANCHORS(X)                                                                           \
    X(park__wait) X(park__wait_enqueue) X(park__unpark) X(park__latch_wait)                        \
    X(park__mutex_lock_slow) X(park_mutex_lock_until)                                              \
    X(park__sem_acquire_slow) X(park_sem_acquire_until)                                            \
    X(park__rwlock_read_lock_slow) X(park_rwlock_read_lock_until)                                  \
    X(park__rwlock_write_lock_slow) X(park_rwlock_write_lock_until)                                \
    X(park__lazy_get_slow) X(park_lazy_get_until) X(park__once_slow)                               \
    X(park_chan_send) X(park_chan_recv) X(park_chan_send_until) X(park_chan_recv_until)            \
    X(park_task_wait) X(park_task_wait_until) X(park_join)
/* clang-format on */

#define PARK__DECLARE_ANCHOR(name) extern char name[] __attribute__((weak));
PARK__ANCHORS(PARK__DECLARE_ANCHOR)
#define PARK__ANCHOR_ADDRESS(name) (uintptr_t) name,

/* Past the last anchor, the rest of its function (guessed). */
#define ANCHOR_TAIL 2048u

struct find_text {
    uintptr_t pc;
    bool found, main_program;
    uintptr_t lo, hi;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find_text *f = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (f->pc < lo || f->pc >= hi)
        return 0;
    f->found = true;
    f->main_program = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
    f->lo = lo;
    f->hi = hi;
    return 1;
}

static void find_park_text(void)
{
    struct find_text f = {.pc = (uintptr_t)park__profile_record};
    dl_iterate_phdr(find_text, &f);
    if (f.found && !f.main_program) {
        /* libpark.so or libpark-preload.so: all of it is park. */
        park__profile_text_lo = f.lo;
        park__profile_text_hi = f.hi;
        return;
    }
    /* Linked into the program: its archive members lie together, so the
     * anchors bound them (approximately, at the ends). */
    const uintptr_t anchors[] = {PARK__ANCHORS(PARK__ANCHOR_ADDRESS)(uintptr_t)
                                     park__profile_record};
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++) {
        if (!anchors[i])
            continue;
        if (anchors[i] < lo)
            lo = anchors[i];
        if (anchors[i] > hi)
            hi = anchors[i];
    }
    park__profile_text_lo = lo;
    park__profile_text_hi = hi + ANCHOR_TAIL;
}

int park__profile_setup(void)
{
    if (__atomic_load_n(&park__profile_tables, __ATOMIC_ACQUIRE))
        return 0;
    find_park_text();
    /* Address space for every table (the histograms make it tens of MiB);
     * memory only for the pages that recording threads touch. */
    void *m = mmap(NULL, PARK__PROFILE_TABLES * sizeof(park__profile_table_t),
                   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return ENOMEM;
    park__profile_table_t *pool = m;
    /* release: pairs with the acquire load in claim_table. */
    __atomic_store_n(&park__profile_tables, pool, __ATOMIC_RELEASE);
    return 0;
}
