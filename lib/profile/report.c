/* lib/profile/report.c: switching contention profiling on and off, merging
 * the per-thread tables (tables.h) and writing the report: the table of
 * call sites and the folded stacks. Nothing here runs on a wait path.
 *
 * Names: libdw (elfutils) gives symbol+offset from the symbol tables,
 * static functions included, and file:line from the debug information.
 * Built with its header (pkg-config libdw: PARK_HAVE_LIBDW), the report
 * opens libdw.so.1 with dlopen when it runs, so neither libpark nor a
 * program using it loads or links libdw otherwise. Without it, or where it
 * finds nothing, dladdr gives the exported symbol, and module+offset is the
 * last resort. */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PARK_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#endif

#include "os/os.h"
#include "profile/order.h"
#include "profile/tables.h"

bool park__profile_on;

/* ---- on and off ---------------------------------------------------------- */

/* park_profile_start's setup, once: 0 not begun, 1 running, 2 done. Other
 * callers sleep on the word until it is done, on a futex of lib/os: not on
 * a mutex (under the drop-in a pthread mutex is park's own), nor in lib/wait
 * (lib/profile sits below it: lib/wait records every wait here), nor
 * yielding for as long as a setup's allocations take. */
static uint32_t setup_state;
static int setup_error;

int park_profile_start(void)
{
    uint32_t s = 0;
    if (__atomic_compare_exchange_n(&setup_state, &s, 1, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_ACQUIRE)) {
        setup_error = park__profile_setup();
        /* release: pairs with the acquire loads below. */
        __atomic_store_n(&setup_state, 2, __ATOMIC_RELEASE);
        park__futex_wake(&setup_state, INT32_MAX);
    }
    /* Any return may be spurious: only the word is trusted. */
    while (__atomic_load_n(&setup_state, __ATOMIC_ACQUIRE) != 2)
        park__futex_wait(&setup_state, 1, PARK_FOREVER);
    if (setup_error)
        return setup_error;
    __atomic_store_n(&park__profile_on, true, __ATOMIC_RELAXED); /* see profile.h */
    return 0;
}

void park_profile_stop(void)
{
    __atomic_store_n(&park__profile_on, false, __ATOMIC_RELAXED);
}

bool park_profile_enabled(void)
{
    return __atomic_load_n(&park__profile_on, __ATOMIC_RELAXED);
}

static uint32_t tables_in_use(void)
{
    uint32_t n = __atomic_load_n(&park__profile_claimed, __ATOMIC_RELAXED);
    return n < PARK__PROFILE_TABLES ? n : PARK__PROFILE_TABLES;
}

void park_profile_reset(void)
{
    park__profile_table_t *pool = __atomic_load_n(&park__profile_tables, __ATOMIC_ACQUIRE);
    if (!pool)
        return;
    for (uint32_t i = 0, n = tables_in_use(); i < n; i++) {
        park__profile_table_t *t = &pool[i];
        __atomic_store_n(&t->dropped, 0, __ATOMIC_RELAXED);
        for (unsigned j = 0; j < PARK__PROFILE_SLOTS; j++) {
            park__profile_slot_t *s = &t->slots[j];
            if (__atomic_load_n(&s->used, __ATOMIC_RELAXED))
                for (unsigned b = 0; b < PARK__PROFILE_BUCKETS; b++)
                    __atomic_store_n(&s->hist[b], 0, __ATOMIC_RELAXED);
            __atomic_store_n(&s->used, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&s->waits, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&s->handoffs, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&s->total_ns, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&s->max_ns, 0, __ATOMIC_RELAXED);
        }
    }
    __atomic_store_n(&park__profile_no_table, 0, __ATOMIC_RELAXED);
}

uint64_t park_profile_dropped(void)
{
    uint64_t n = __atomic_load_n(&park__profile_no_table, __ATOMIC_RELAXED);
    park__profile_table_t *pool = __atomic_load_n(&park__profile_tables, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0, k = pool ? tables_in_use() : 0; i < k; i++)
        n += __atomic_load_n(&pool[i].dropped, __ATOMIC_RELAXED);
    return n;
}

const char *park_profile_kind_name(park_profile_kind_t kind)
{
    static const char *const names[PARK_PROFILE_KINDS] = {
        [PARK_PROFILE_OTHER] = "other",
        [PARK_PROFILE_MUTEX] = "mutex",
        [PARK_PROFILE_SEM] = "sem",
        [PARK_PROFILE_RWLOCK_READ] = "rwlock.read",
        [PARK_PROFILE_RWLOCK_WRITE] = "rwlock.write",
        [PARK_PROFILE_LAZY] = "lazy",
    };
    return (unsigned)kind < PARK_PROFILE_KINDS ? names[kind] : "?";
}

/* ---- names of code addresses --------------------------------------------- */

#ifdef PARK_HAVE_LIBDW
/* The libdw functions the report uses, from dlopen. */
#define DW_FUNCTIONS(X)                                                                            \
    X(dwfl_begin)                                                                                  \
    X(dwfl_end)                                                                                    \
    X(dwfl_linux_proc_report)                                                                      \
    X(dwfl_report_end)                                                                             \
    X(dwfl_addrmodule)                                                                             \
    X(dwfl_module_addrinfo)                                                                        \
    X(dwfl_module_getsrc)                                                                          \
    X(dwfl_lineinfo)                                                                               \
    X(dwfl_linux_proc_find_elf)                                                                    \
    X(dwfl_standard_find_debuginfo)                                                                \
    X(dwfl_module_addrdie)                                                                         \
    X(dwarf_getscopes)                                                                             \
    X(dwarf_tag) X(dwarf_attr) X(dwarf_formudata) X(dwarf_getsrcfiles) X(dwarf_filesrc)
#define DW_POINTER(name) __typeof__(name) *name;
typedef struct dw {
    DW_FUNCTIONS(DW_POINTER)
} dw_t;
#endif

typedef struct namer {
#ifdef PARK_HAVE_LIBDW
    void *lib;
    dw_t dw;
    Dwfl_Callbacks callbacks;
    Dwfl *dwfl;
#endif
    int unused;
} namer_t;

#ifdef PARK_HAVE_LIBDW
static bool dw_open(namer_t *nm)
{
    nm->lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nm->lib)
        return false;
#define DW_LOOKUP(name)                                                                            \
    if (!(*(void **)&nm->dw.name = dlsym(nm->lib, #name)))                                         \
        return false;
    DW_FUNCTIONS(DW_LOOKUP)
    /* dwfl_begin keeps the pointer: the callbacks outlive it. */
    nm->callbacks.find_elf = nm->dw.dwfl_linux_proc_find_elf;
    nm->callbacks.find_debuginfo = nm->dw.dwfl_standard_find_debuginfo;
    nm->dwfl = nm->dw.dwfl_begin(&nm->callbacks);
    if (!nm->dwfl)
        return false;
    if (nm->dw.dwfl_linux_proc_report(nm->dwfl, getpid()) != 0 ||
        nm->dw.dwfl_report_end(nm->dwfl, NULL, NULL) != 0) {
        nm->dw.dwfl_end(nm->dwfl);
        nm->dwfl = NULL;
        return false;
    }
    return true;
}
#endif

static void namer_open(namer_t *nm)
{
    memset(nm, 0, sizeof *nm);
#ifdef PARK_HAVE_LIBDW
    if (!dw_open(nm) && nm->lib) {
        dlclose(nm->lib);
        nm->lib = NULL;
    }
#endif
}

static void namer_close(namer_t *nm)
{
#ifdef PARK_HAVE_LIBDW
    if (nm->dwfl)
        nm->dw.dwfl_end(nm->dwfl);
    if (nm->lib)
        dlclose(nm->lib);
#endif
    (void)nm;
}

/* C++ names demangled by the program's own libstdc++, if it has one. */
static char *demangled(const char *sym)
{
    typedef char *demangle_fn(const char *name, char *buf, size_t *len, int *status);
    if (strncmp(sym, "_Z", 2) != 0)
        return NULL;
    demangle_fn *demangle = (demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *name = demangle ? demangle(sym, NULL, NULL, &status) : NULL;
    if (status != 0) {
        free(name);
        return NULL;
    }
    return name;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

#ifdef PARK_HAVE_LIBDW
/* A line of one of park's headers: an inline fast path. */
static bool in_park_header(const char *file)
{
    size_t n = strlen(file);
    return strstr(file, "/park/") && ((n > 2 && strcmp(file + n - 2, ".h") == 0) ||
                                      (n > 4 && strcmp(file + n - 4, ".hpp") == 0));
}

/* *file:*lineno is in one of park's headers, inlined into the program at
 * `in`: replaces it with the program's line that the outermost of park's
 * inline functions was called from (the call site a user looks for). */
static void outside_park(namer_t *nm, Dwfl_Module *m, uintptr_t in, const char **file, int *lineno)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = nm->dw.dwfl_module_addrdie(m, in, &bias);
    Dwarf_Die *scopes = NULL;
    Dwarf_Files *files = NULL;
    size_t n_files = 0;
    int n = cu ? nm->dw.dwarf_getscopes(cu, in - bias, &scopes) : 0;
    if (n > 0 && nm->dw.dwarf_getsrcfiles(cu, &files, &n_files) == 0) {
        /* Innermost scope first: each inlined call's site is in the scope
         * around it. */
        for (int i = 0; i < n && in_park_header(*file); i++) {
            if (nm->dw.dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
                continue;
            Dwarf_Attribute at;
            Dwarf_Word f, l;
            if (!nm->dw.dwarf_attr(&scopes[i], DW_AT_call_file, &at) ||
                nm->dw.dwarf_formudata(&at, &f) != 0 ||
                !nm->dw.dwarf_attr(&scopes[i], DW_AT_call_line, &at) ||
                nm->dw.dwarf_formudata(&at, &l) != 0 || f >= n_files)
                break;
            const char *name = nm->dw.dwarf_filesrc(files, f, NULL, NULL);
            if (!name)
                break;
            *file = name;
            *lineno = (int)l;
        }
    }
    free(scopes);
}
#endif

/* Writes the name of the return address pc to buf: "symbol+0xoff" (only
 * "symbol" if !offset), then " (file:line)" if where and known; or
 * "module+0xoff". */
static void name_of(namer_t *nm, uintptr_t pc, bool offset, bool where, char *buf, size_t size)
{
    /* The call instruction ends at pc: look up pc - 1, inside it. */
    uintptr_t in = pc - 1;
    const char *sym = NULL;
    uintptr_t sym_at = 0;
    char line[160] = "";
#ifdef PARK_HAVE_LIBDW
    if (nm->dwfl) {
        Dwfl_Module *m = nm->dw.dwfl_addrmodule(nm->dwfl, in);
        if (m) {
            GElf_Off off;
            GElf_Sym s;
            sym = nm->dw.dwfl_module_addrinfo(m, in, &off, &s, NULL, NULL, NULL);
            if (sym)
                sym_at = in - off;
            int lineno = 0;
            Dwfl_Line *l = where ? nm->dw.dwfl_module_getsrc(m, in) : NULL;
            const char *file = l ? nm->dw.dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;
            if (file && in_park_header(file))
                outside_park(nm, m, in, &file, &lineno);
            if (file)
                snprintf(line, sizeof line, " (%s:%d)", base_name(file), lineno);
        }
    }
#else
    (void)nm; /* without libdw, only dladdr names, and no file:line */
    (void)where;
#endif
    Dl_info info;
    bool have_info = dladdr((void *)in, &info) != 0;
    if (!sym && have_info && info.dli_sname) {
        sym = info.dli_sname;
        sym_at = (uintptr_t)info.dli_saddr;
    }
    char *plain = sym ? demangled(sym) : NULL;
    if (plain)
        sym = plain;
    if (sym && offset)
        snprintf(buf, size, "%s+0x%lx%s", sym, (unsigned long)(pc - sym_at), line);
    else if (sym)
        snprintf(buf, size, "%s%s", sym, line);
    else if (have_info && info.dli_fname)
        snprintf(buf, size, "%s+0x%lx%s", base_name(info.dli_fname),
                 (unsigned long)(pc - (uintptr_t)info.dli_fbase), line);
    else
        snprintf(buf, size, "0x%lx%s", (unsigned long)pc, line);
    free(plain);
}

void park__profile_name_pcs(const uintptr_t *pcs, size_t n, size_t n_data, char *names, size_t each)
{
    namer_t nm;
    namer_open(&nm);
    for (size_t i = 0; i < n; i++)
        name_of(&nm, pcs[i], false, true, names + i * each, each);
    for (size_t i = n; i < n + n_data; i++) {
        char *out = names + i * each;
        /* name_of looks up the byte before a return address: the
         * variable that holds pcs[i], by name only. */
        name_of(&nm, pcs[i] + 1, false, false, out, each);
        if (strncmp(out, "0x", 2) == 0 || strchr(out, '+'))
            *out = '\0'; /* no symbol: on the heap, a stack, or unnamed */
    }
    namer_close(&nm);
}

/* ---- merging ------------------------------------------------------------- */

static bool same_site(const park_profile_site_t *a, const park__profile_slot_t *s)
{
    return a->kind == (park_profile_kind_t)s->kind && a->depth == s->depth &&
           memcmp(a->stack, s->stack, s->depth * sizeof s->stack[0]) == 0;
}

static int by_total_desc(const void *x, const void *y)
{
    const park_profile_site_t *a = x, *b = y;
    if (a->total_ns != b->total_ns)
        return a->total_ns < b->total_ns ? 1 : -1;
    return a->waits < b->waits ? 1 : a->waits > b->waits ? -1 : 0;
}

/* The inline fast paths of park's headers are always inlined
 * (PARK__INLINE), but a compiler that ignores that, without optimisation,
 * leaves out-of-line copies in the program's own code, which the frame
 * walk cannot tell from their callers: a leading frame named park_* is
 * such a copy, and its caller is the call site. (Without libdw a copy,
 * a local symbol, has no name, and such sites would merge.) */
static void trim_inline_copies(park_profile_site_t *sites, size_t n)
{
    namer_t nm;
    bool opened = false;
    for (size_t i = 0; i < n; i++) {
        park_profile_site_t *s = &sites[i];
        while (s->depth > 1) {
            if (!opened) {
                namer_open(&nm);
                opened = true;
            }
            char name[256];
            name_of(&nm, (uintptr_t)s->stack[0], false, false, name, sizeof name);
            if (strncmp(name, "park_", 5) != 0)
                break;
            memmove(&s->stack[0], &s->stack[1], (s->depth - 1) * sizeof s->stack[0]);
            s->stack[--s->depth] = NULL;
        }
    }
    if (opened)
        namer_close(&nm);
}

/* Merges the stacks of each (call site, kind) into one site, which keeps
 * the callers of its stack with the largest total: callers found in code
 * without frame pointers may be noise, and must not split a site. */
static void fold_by_site(park_profile_site_t *sites, uint64_t *hist, size_t *n)
{
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        const park_profile_site_t *s = &sites[i];
        size_t at = 0;
        while (at < kept && (sites[at].stack[0] != s->stack[0] || sites[at].kind != s->kind))
            at++;
        if (at == kept) {
            sites[kept] = *s;
            memmove(&hist[kept * PARK__PROFILE_BUCKETS], &hist[i * PARK__PROFILE_BUCKETS],
                    PARK__PROFILE_BUCKETS * sizeof *hist);
            kept++;
            continue;
        }
        for (unsigned b = 0; b < PARK__PROFILE_BUCKETS; b++)
            hist[at * PARK__PROFILE_BUCKETS + b] += hist[i * PARK__PROFILE_BUCKETS + b];
        park_profile_site_t *a = &sites[at];
        if (s->total_ns > a->total_ns) { /* its callers stand for the site */
            a->depth = s->depth;
            memcpy(a->stack, s->stack, sizeof a->stack);
        }
        a->waits += s->waits;
        a->handoffs += s->handoffs;
        a->total_ns += s->total_ns;
        if (s->max_ns >= a->max_ns) {
            a->max_ns = s->max_ns;
            a->lock = s->lock;
        }
    }
    *n = kept;
}

/* The value at quantile q of a histogram of n waits: the middle of the
 * bucket that holds the ceil(q * n)-th shortest. */
static uint64_t quantile(const uint64_t *hist, uint64_t n, double q)
{
    uint64_t rank = (uint64_t)(q * (double)n);
    if ((double)rank < q * (double)n)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < PARK__PROFILE_BUCKETS; b++) {
        seen += hist[b];
        if (seen >= rank)
            return park__profile_bucket_mid(b);
    }
    return 0;
}

/* Fills each site's percentiles from its histogram; none beyond its max. */
static void percentiles(park_profile_site_t *sites, const uint64_t *hist, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t *h = &hist[i * PARK__PROFILE_BUCKETS];
        uint64_t count = 0;
        for (unsigned b = 0; b < PARK__PROFILE_BUCKETS; b++)
            count += h[b];
        uint64_t *out[] = {&sites[i].p50_ns, &sites[i].p99_ns, &sites[i].p999_ns};
        const double q[] = {0.5, 0.99, 0.999};
        for (unsigned k = 0; k < 3; k++) {
            uint64_t v = count ? quantile(h, count, q[k]) : 0;
            *out[k] = v < sites[i].max_ns ? v : sites[i].max_ns;
        }
    }
}

/* Every thread's slots merged by (stack, kind), or by (call site, kind)
 * if by_site, largest total first, in a new array (free it); *n: its length. NULL with *n = 0 if
 * empty or out of memory. */
static park_profile_site_t *merge(size_t *n, bool by_site)
{
    *n = 0;
    park__profile_table_t *pool = __atomic_load_n(&park__profile_tables, __ATOMIC_ACQUIRE);
    if (!pool)
        return NULL;
    size_t cap = 0;
    park_profile_site_t *out = NULL;
    uint64_t *hist = NULL; /* each site's histogram, PARK__PROFILE_BUCKETS apiece */
    for (uint32_t i = 0, k = tables_in_use(); i < k; i++) {
        for (unsigned j = 0; j < PARK__PROFILE_SLOTS; j++) {
            const park__profile_slot_t *s = &pool[i].slots[j];
            /* acquire: pairs with the release store in slot_of (record.c). */
            if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE))
                continue;
            uint64_t waits = __atomic_load_n(&s->waits, __ATOMIC_RELAXED);
            if (waits == 0)
                continue;
            size_t at = 0;
            while (at < *n && !same_site(&out[at], s))
                at++;
            if (at == *n) {
                if (*n == cap) {
                    cap = cap ? 2 * cap : 64;
                    park_profile_site_t *bigger = realloc(out, cap * sizeof *out);
                    if (bigger)
                        out = bigger;
                    uint64_t *more =
                        bigger ? realloc(hist, cap * PARK__PROFILE_BUCKETS * sizeof *hist) : NULL;
                    if (!more) {
                        free(out);
                        free(hist);
                        *n = 0;
                        return NULL;
                    }
                    hist = more;
                }
                memset(&hist[*n * PARK__PROFILE_BUCKETS], 0, PARK__PROFILE_BUCKETS * sizeof *hist);
                park_profile_site_t *a = &out[(*n)++];
                memset(a, 0, sizeof *a);
                a->depth = s->depth;
                a->kind = (park_profile_kind_t)s->kind;
                for (unsigned f = 0; f < s->depth; f++)
                    a->stack[f] = (const void *)s->stack[f];
            }
            park_profile_site_t *a = &out[at];
            uint64_t max = __atomic_load_n(&s->max_ns, __ATOMIC_RELAXED);
            a->waits += waits;
            a->handoffs += __atomic_load_n(&s->handoffs, __ATOMIC_RELAXED);
            a->total_ns += __atomic_load_n(&s->total_ns, __ATOMIC_RELAXED);
            if (max >= a->max_ns) {
                a->max_ns = max;
                a->lock = (const void *)__atomic_load_n(&s->lock, __ATOMIC_RELAXED);
            }
            for (unsigned b = 0; b < PARK__PROFILE_BUCKETS; b++)
                hist[at * PARK__PROFILE_BUCKETS + b] +=
                    __atomic_load_n(&s->hist[b], __ATOMIC_RELAXED);
        }
    }
    trim_inline_copies(out, *n);
    if (by_site)
        fold_by_site(out, hist, n);
    percentiles(out, hist, *n);
    free(hist);
    if (*n)
        qsort(out, *n, sizeof *out, by_total_desc);
    return out;
}

size_t park_profile_sites(park_profile_site_t *sites, size_t max)
{
    size_t n;
    park_profile_site_t *all = merge(&n, true);
    if (all && max)
        memcpy(sites, all, (n < max ? n : max) * sizeof *all);
    free(all);
    return n;
}

/* ---- the reports --------------------------------------------------------- */

#define TOP_SITES 20

int park_profile_dump(FILE *out)
{
    size_t n;
    park_profile_site_t *all = merge(&n, true);
    uint64_t waits = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        waits += all[i].waits;
        total += all[i].total_ns;
    }
    fprintf(out,
            "park contention profile (pid %ld): %llu contended waits, %.3f ms waited in all, "
            "%zu call sites",
            (long)getpid(), (unsigned long long)waits, (double)total / 1e6, n);
    uint64_t dropped = park_profile_dropped();
    if (dropped)
        fprintf(out, ", %llu waits not recorded (tables full)", (unsigned long long)dropped);
    fprintf(out, "\n");
    if (n) {
        namer_t nm;
        namer_open(&nm);
        fprintf(out, "%4s %6s %9s %9s %11s %9s %9s %10s  %-12s %-14s %s\n", "rank", "share",
                "waits", "handoffs", "total_ms", "p50_us", "p99_us", "max_us", "kind", "lock",
                "call site (callers below)");
        for (size_t i = 0; i < n && i < TOP_SITES; i++) {
            const park_profile_site_t *s = &all[i];
            char name[512];
            name_of(&nm, (uintptr_t)s->stack[0], true, true, name, sizeof name);
            fprintf(out, "%4zu %5.1f%% %9llu %9llu %11.3f %9.1f %9.1f %10.1f  %-12s %-14p %s\n",
                    i + 1, total ? 100.0 * (double)s->total_ns / (double)total : 0.0,
                    (unsigned long long)s->waits, (unsigned long long)s->handoffs,
                    (double)s->total_ns / 1e6, (double)s->p50_ns / 1e3, (double)s->p99_ns / 1e3,
                    (double)s->max_ns / 1e3, park_profile_kind_name(s->kind), s->lock, name);
            for (unsigned f = 1; f < s->depth; f++) {
                name_of(&nm, (uintptr_t)s->stack[f], true, true, name, sizeof name);
                fprintf(out, "%*s<- %s\n", 101, "", name);
            }
        }
        if (n > TOP_SITES)
            fprintf(out, "(%zu more call sites)\n", n - TOP_SITES);
        namer_close(&nm);
    }
    free(all);
    return fflush(out) == 0 && !ferror(out) ? 0 : EIO;
}

int park_profile_dump_folded(FILE *out)
{
    size_t n;
    park_profile_site_t *all = merge(&n, false);
    namer_t nm;
    namer_open(&nm);
    for (size_t i = 0; i < n; i++) {
        const park_profile_site_t *s = &all[i];
        for (unsigned f = s->depth; f-- > 0;) {
            char name[512];
            name_of(&nm, (uintptr_t)s->stack[f], false, false, name, sizeof name);
            for (char *c = name; *c; c++) /* the format's separators */
                if (*c == ';' || *c == ' ')
                    *c = '_';
            fprintf(out, "%s;", name);
        }
        uint64_t us = s->total_ns / 1000;
        fprintf(out, "park:%s %llu\n", park_profile_kind_name(s->kind),
                (unsigned long long)(us ? us : 1));
    }
    namer_close(&nm);
    free(all);
    return fflush(out) == 0 && !ferror(out) ? 0 : EIO;
}

/* ---- PARK_PROFILE=1: from load to exit ----------------------------------- */

static void dump_at_exit(void)
{
    park_profile_stop();
    const char *path = getenv("PARK_PROFILE_OUT");
    if (!path || !*path) {
        park_profile_dump(stderr);
        return;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "park: PARK_PROFILE_OUT=%s: %s\n", path, strerror(errno));
        return;
    }
    park_profile_dump(f);
    fclose(f);
    size_t len = strlen(path);
    char *folded = malloc(len + sizeof ".folded");
    if (!folded)
        return;
    memcpy(folded, path, len);
    memcpy(folded + len, ".folded", sizeof ".folded");
    if ((f = fopen(folded, "w"))) {
        park_profile_dump_folded(f);
        fclose(f);
    } else {
        fprintf(stderr, "park: %s: %s\n", folded, strerror(errno));
    }
    free(folded);
}

__attribute__((constructor)) static void profile_from_environment(void)
{
    const char *on = getenv("PARK_PROFILE");
    if (!on || strcmp(on, "1") != 0)
        return;
    if (park_profile_start() != 0) {
        fprintf(stderr, "park: PARK_PROFILE=1: out of memory; not profiling\n");
        return;
    }
    atexit(dump_at_exit);
}
