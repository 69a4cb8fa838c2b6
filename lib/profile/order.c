/* lib/profile/order.c: lock-order checking (docs/design/order.md).
 *
 * Every blocking acquisition of a lock B by a thread that holds locks A1..
 * An adds the edges Ai -> B to one process-wide graph, keyed by the locks'
 * addresses. An edge that closes a cycle is a lock-order inversion: some
 * interleaving of the threads that took those orders deadlocks, whether or
 * not this run did. It is reported once, when its edge is first added,
 * with the call sites of every edge of the cycle.
 *
 * Layer: with lib/profile, below wait (it uses only os): the drop-in and
 * the primitives' hooks call it, and it takes no park lock itself (a
 * spinning flag guards the graph, so a hook never recurses into park).
 *
 * Memory: the graph lives in tables mapped once, at the first hook that
 * finds checking on (MAP_NORESERVE: only pages touched count). Full
 * tables end the checking with one line, never an allocation on the way.
 *
 * Concurrency: node and edge lookups read the hash tables without the
 * graph's lock (slots are written once, published by a release store);
 * inserts, forgets and the cycle search hold it. Each thread's held locks
 * are its own (thread-local). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/lock.h"
#include "os/os.h"
#include "profile/order.h"
#include "profile/profile.h"

#define NODE_BITS 19 /* node hash slots: 512 Ki (nodes: half of them) */
#define EDGE_BITS 21 /* edge hash slots: 2 Mi (edges: half of them) */
#define MAX_NODES (1u << (NODE_BITS - 1))
#define MAX_EDGES (1u << (EDGE_BITS - 1))
#define HELD_MAX 32 /* locks a thread is tracked holding at once */
#define TOMB ((uintptr_t)1)

typedef struct node {
    uintptr_t lock;   /* the lock, or its class's key */
    const char *name; /* a class's name, or NULL */
    uint32_t out;     /* the first edge out of this node (index + 1), 0: none */
    uint32_t seen;    /* the search that last visited it */
} node_t;

typedef struct edge {
    uint32_t from, to; /* node indices */
    uint32_t next_out; /* index + 1 of the next edge out of `from` */
    uint32_t flags;    /* PARK__ORDER_* of the acquisition of `to` */
    uintptr_t from_site, to_site;
    uintptr_t from_lock, to_lock; /* the locks that made it (of the classes) */
} edge_t;

typedef struct node_slot {
    uintptr_t lock; /* 0 free, TOMB forgotten, else the lock (release) */
    uint32_t node;
} node_slot_t;

typedef struct class_slot {
    uintptr_t lock; /* 0 free, TOMB forgotten, else the lock (release) */
    uintptr_t key;  /* its class's key */
} class_slot_t;

typedef struct graph {
    node_slot_t node_slots[1u << NODE_BITS];
    class_slot_t class_slots[1u << NODE_BITS]; /* lock -> class key */
    uint64_t edge_slots[1u << EDGE_BITS];      /* (from << 32 | to) + 1, 0 free */
    uint32_t edge_of_slot[1u << EDGE_BITS];
    node_t nodes[MAX_NODES];
    edge_t edges[MAX_EDGES];
    uint32_t stack[MAX_NODES]; /* the cycle search's */
    uint32_t via[MAX_NODES];   /* the edge (index + 1) a search reached a node by */
} graph_t;

bool park__order_on;
static bool abort_on_cycle;
static graph_t *g;
static uint32_t n_nodes, n_edges, search;
static uint32_t n_classed; /* class slots used (tombstones included) */
static park__lock_t graph_lock = PARK__LOCK_INIT;
static uint64_t cycles;

struct held {
    uintptr_t lock;
    uintptr_t site;
};
static _Thread_local struct held held[HELD_MAX];
static _Thread_local uint32_t n_held, n_lost;              /* n_lost: pushes beyond HELD_MAX */
static _Thread_local bool busy;                            /* in a hook: nested ones do nothing */
static _Thread_local uintptr_t pending_lock, pending_site; /* the last park__order_lock's */

/* Taken when an order is new, and rarely contended: no spin. */
static void lock_graph(void)
{
    if (!park__lock_try(&graph_lock))
        park__lock_sleep(&graph_lock);
}

static void unlock_graph(void)
{
    park__unlock(&graph_lock);
}

static uint64_t mix(uint64_t x)
{
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

/* The raw system call: write() is a cancellation point, and a report is
 * made inside a lock call, which is none. */
static void say(const char *text)
{
    size_t n = strlen(text);
    while (n) {
        long w = syscall(SYS_write, 2, text, n);
        if (w <= 0)
            return;
        text += w;
        n -= (size_t)w;
    }
}

/* Ends checking for good (tables full, or none could be mapped). */
static void give_up(const char *why)
{
    if (__atomic_exchange_n(&park__order_on, false, __ATOMIC_RELAXED)) {
        char line[160];
        snprintf(line, sizeof line, "park: lock-order checking stopped: %s\n", why);
        say(line);
    }
}

/* PARK_CHECK_ORDER: unset (on, aborting, in PARK_DEBUG builds; else off),
 * 0, 1 (on: PARK_DEBUG builds abort on an inversion, others warn), warn
 * or abort. */
__attribute__((constructor)) static void order_read_env(void)
{
    const char *v = getenv("PARK_CHECK_ORDER");
#ifdef PARK_DEBUG
    bool on = true, stop = true;
#else
    bool on = false, stop = false;
#endif
    if (v && *v) {
        on = strcmp(v, "0") != 0;
        if (strcmp(v, "warn") == 0)
            stop = false;
        else if (strcmp(v, "abort") == 0)
            stop = true;
    }
    abort_on_cycle = stop;
    __atomic_store_n(&park__order_on, on, __ATOMIC_RELAXED);
}

static bool mapped(void)
{
    graph_t *p = __atomic_load_n(&g, __ATOMIC_ACQUIRE);
    if (p)
        return true;
    lock_graph();
    if (!g) {
        void *m = mmap(NULL, sizeof(graph_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED)
            __atomic_store_n(&g, (graph_t *)m, __ATOMIC_RELEASE);
    }
    unlock_graph();
    if (!g)
        give_up("no memory for the graph");
    return g != NULL;
}

/* The node of lock, if it has one: its index + 1, else 0. */
static uint32_t find_node(uintptr_t lock)
{
    uint32_t mask = (1u << NODE_BITS) - 1;
    for (uint32_t i = (uint32_t)mix(lock) & mask;; i = (i + 1) & mask) {
        /* acquire: pairs with the release in add_node (node filled in). */
        uintptr_t k = __atomic_load_n(&g->node_slots[i].lock, __ATOMIC_ACQUIRE);
        if (k == lock)
            return g->node_slots[i].node + 1;
        if (k == 0)
            return 0;
    }
}

/* Graph locked: the node (index + 1) of lock (a lock or a class's key,
 * named name), added if new; 0 if full. */
static uint32_t add_node(uintptr_t lock, const char *name)
{
    uint32_t found = find_node(lock);
    if (found)
        return found;
    if (n_nodes == MAX_NODES)
        return 0;
    uint32_t mask = (1u << NODE_BITS) - 1;
    uint32_t i = (uint32_t)mix(lock) & mask;
    while (g->node_slots[i].lock != 0 && g->node_slots[i].lock != TOMB)
        i = (i + 1) & mask;
    uint32_t n = n_nodes++;
    g->nodes[n] = (node_t){.lock = lock, .name = name};
    g->node_slots[i].node = n;
    __atomic_store_n(&g->node_slots[i].lock, lock, __ATOMIC_RELEASE);
    return n + 1;
}

/* The slot of lock in the class table, or NULL. */
static class_slot_t *class_slot(uintptr_t lock)
{
    uint32_t mask = (1u << NODE_BITS) - 1;
    for (uint32_t i = (uint32_t)mix(lock) & mask;; i = (i + 1) & mask) {
        /* acquire: pairs with the release in park_order_class (key set). */
        uintptr_t k = __atomic_load_n(&g->class_slots[i].lock, __ATOMIC_ACQUIRE);
        if (k == lock)
            return &g->class_slots[i];
        if (k == 0)
            return NULL;
    }
}

/* What lock is a node of: its class's key, or itself. */
static uintptr_t key_of(uintptr_t lock)
{
    if (!__atomic_load_n(&n_classed, __ATOMIC_RELAXED))
        return lock;
    class_slot_t *c = class_slot(lock);
    return c ? __atomic_load_n(&c->key, __ATOMIC_RELAXED) : lock;
}

static uint64_t edge_key(uint32_t from, uint32_t to)
{
    return ((uint64_t)from << 32 | to) + 1;
}

static bool has_edge(uint32_t from, uint32_t to)
{
    uint64_t key = edge_key(from, to);
    uint32_t mask = (1u << EDGE_BITS) - 1;
    for (uint32_t i = (uint32_t)mix(key) & mask;; i = (i + 1) & mask) {
        uint64_t k = __atomic_load_n(&g->edge_slots[i], __ATOMIC_ACQUIRE);
        if (k == key)
            return true;
        if (k == 0)
            return false;
    }
}

/* Graph locked: adds from -> to (index + 1 of the edge; 0 if full). */
static uint32_t add_edge(uint32_t from, uint32_t to, unsigned flags, const struct held *a,
                         uintptr_t b, uintptr_t to_site)
{
    if (n_edges == MAX_EDGES)
        return 0;
    uint32_t e = n_edges++;
    g->edges[e] = (edge_t){.from = from,
                           .to = to,
                           .next_out = g->nodes[from].out,
                           .flags = flags,
                           .from_site = a->site,
                           .to_site = to_site,
                           .from_lock = a->lock,
                           .to_lock = b};
    g->nodes[from].out = e + 1;
    uint64_t key = edge_key(from, to);
    uint32_t mask = (1u << EDGE_BITS) - 1;
    uint32_t i = (uint32_t)mix(key) & mask;
    while (g->edge_slots[i] != 0)
        i = (i + 1) & mask;
    g->edge_of_slot[i] = e;
    __atomic_store_n(&g->edge_slots[i], key, __ATOMIC_RELEASE);
    return e + 1;
}

/* Graph locked: a path from -> ... -> to (depth first). Leaves, in
 * g->via, the edge each node on it was reached by; true if found. */
static bool path(uint32_t from, uint32_t to)
{
    uint32_t mark = ++search;
    uint32_t top = 0;
    g->stack[top++] = from;
    g->nodes[from].seen = mark;
    g->via[from] = 0;
    while (top) {
        uint32_t n = g->stack[--top];
        if (n == to)
            return true;
        for (uint32_t e = g->nodes[n].out; e; e = g->edges[e - 1].next_out) {
            uint32_t m = g->edges[e - 1].to;
            if (g->nodes[m].seen != mark) {
                g->nodes[m].seen = mark;
                g->via[m] = e;
                g->stack[top++] = m;
            }
        }
    }
    return false;
}

#define CYCLE_MAX 8 /* edges a report prints */

/* A lock as the report shows it: its address, the variable's name if it
 * has one, and its class's if it has one ("0x... (name) of class C"). */
static void lock_name(uintptr_t lock, const char *name, const char *class_name, char *buf,
                      size_t size)
{
    const char *of = class_name ? " of class " : "";
    if (!class_name)
        class_name = "";
    if (*name)
        snprintf(buf, size, "%p (%s)%s%s", (void *)lock, name, of, class_name);
    else
        snprintf(buf, size, "%p%s%s", (void *)lock, of, class_name);
}

/* Reports the cycle closed by edge `closing` (from -> to, with the path
 * to -> ... -> from in g->via). Copies what it prints while the graph is
 * locked, and names the call sites after unlocking it. */
static void report(uint32_t closing)
{
    edge_t cyc[CYCLE_MAX];
    uintptr_t locks[CYCLE_MAX][2];
    const char *classes[CYCLE_MAX][2];
    unsigned n = 0;
    edge_t *c = &g->edges[closing - 1];
    cyc[n++] = *c;
    for (uint32_t at = c->from; at != c->to && n < CYCLE_MAX;) {
        edge_t *e = &g->edges[g->via[at] - 1];
        cyc[n++] = *e;
        at = e->from;
    }
    for (unsigned i = 0; i < n; i++) {
        locks[i][0] = cyc[i].from_lock;
        locks[i][1] = cyc[i].to_lock;
        classes[i][0] = g->nodes[cyc[i].from].name;
        classes[i][1] = g->nodes[cyc[i].to].name;
    }
    cycles++;
    unlock_graph();

    enum { EACH = 256 };
    static char names[CYCLE_MAX * 4][EACH]; /* under `reporting` */
    static park__lock_t reporting = PARK__LOCK_INIT;
    if (!park__lock_try(&reporting))
        park__lock_sleep(&reporting);
    uintptr_t pcs[CYCLE_MAX * 4];
    for (unsigned i = 0; i < n; i++) {
        pcs[2 * i] = cyc[i].from_site;
        pcs[2 * i + 1] = cyc[i].to_site;
        pcs[2 * n + 2 * i] = locks[i][0];
        pcs[2 * n + 2 * i + 1] = locks[i][1];
    }
    park__profile_name_pcs(pcs, 2 * n, 2 * n, &names[0][0], EACH);
    char line[24 * EACH];
    snprintf(line, sizeof line,
             "park: lock-order inversion: a cycle of %u lock%s; threads taking them in these "
             "orders can deadlock:\n",
             n, n == 1 ? "" : "s");
    say(line);
    /* Print in the order the locks are taken around the cycle. */
    for (unsigned k = n; k-- > 0;) {
        edge_t e = cyc[k];
        char first[2 * EACH], second[2 * EACH];
        lock_name(locks[k][0], names[2 * n + 2 * k], classes[k][0], first, sizeof first);
        lock_name(locks[k][1], names[2 * n + 2 * k + 1], classes[k][1], second, sizeof second);
        snprintf(line, sizeof line, "  %s then %s%s\n    %s taken at %s\n    %s taken at %s\n",
                 first, second,
                 e.flags & PARK__ORDER_TIMED  ? " (the second by a timed acquisition)"
                 : e.flags & PARK__ORDER_READ ? " (the second for reading)"
                                              : "",
                 first, names[2 * k], second, names[2 * k + 1]);
        say(line);
    }
    park__unlock(&reporting);
    if (abort_on_cycle) {
        say("park: aborting (PARK_CHECK_ORDER=warn reports and carries on)\n");
        abort();
    }
}

void park__order_lock(const void *lock, unsigned flags, const void *site)
{
    if (busy)
        return;
    uintptr_t at = site ? (uintptr_t)site : (uintptr_t)__builtin_return_address(0);
    pending_lock = (uintptr_t)lock; /* for park__order_held's site */
    pending_site = at;
    if ((flags & PARK__ORDER_TRY) || n_held == 0 || !mapped())
        return; /* a try cannot wait: it adds no order (but is held: park__order_held) */
    busy = true;
    uintptr_t b = (uintptr_t)lock, bk = key_of(b);
    uint32_t bn = find_node(bk);
    for (uint32_t i = 0; i < n_held && park__order_on; i++) {
        uintptr_t ak = key_of(held[i].lock);
        if (ak == bk)
            continue; /* a relock (a self-deadlock, or a recursive lock), or one class */
        uint32_t an = find_node(ak);
        if (an && bn && has_edge(an - 1, bn - 1))
            continue;
        lock_graph();
        an = add_node(ak, NULL);
        bn = an ? add_node(bk, NULL) : 0;
        if (!an || !bn) {
            unlock_graph();
            give_up("too many locks");
            break;
        }
        if (has_edge(an - 1, bn - 1)) {
            unlock_graph();
            continue;
        }
        uint32_t e = add_edge(an - 1, bn - 1, flags, &held[i], b, at);
        if (!e) {
            unlock_graph();
            give_up("too many lock orders");
            break;
        }
        if (path(bn - 1, an - 1))
            report(e); /* unlocks the graph */
        else
            unlock_graph();
    }
    busy = false;
}

void park__order_held(const void *lock, const void *site)
{
    if (busy)
        return;
    if (n_held == HELD_MAX) {
        n_lost++;
        return;
    }
    uintptr_t at = (uintptr_t)site;
    if (!at)
        at =
            pending_lock == (uintptr_t)lock ? pending_site : (uintptr_t)__builtin_return_address(0);
    pending_lock = 0;
    held[n_held++] = (struct held){(uintptr_t)lock, at};
}

void park__order_released(const void *lock)
{
    if (busy)
        return;
    for (uint32_t i = n_held; i-- > 0;) {
        if (held[i].lock == (uintptr_t)lock) {
            memmove(&held[i], &held[i + 1], (n_held - i - 1) * sizeof held[0]);
            n_held--;
            return;
        }
    }
    if (n_lost)
        n_lost--;
}

void park__order_forget(const void *lock)
{
    if (!__atomic_load_n(&g, __ATOMIC_ACQUIRE))
        return;
    uintptr_t k = (uintptr_t)lock;
    uint32_t mask = (1u << NODE_BITS) - 1;
    lock_graph();
    for (uint32_t i = (uint32_t)mix(k) & mask; g->node_slots[i].lock != 0; i = (i + 1) & mask) {
        if (g->node_slots[i].lock == k) {
            /* The node stays, with its edges, unreachable: a lock at this
             * address from now on is a new node. */
            __atomic_store_n(&g->node_slots[i].lock, TOMB, __ATOMIC_RELEASE);
            break;
        }
    }
    class_slot_t *c = n_classed ? class_slot(k) : NULL;
    if (c)
        __atomic_store_n(&c->lock, TOMB, __ATOMIC_RELEASE); /* out of its class */
    unlock_graph();
}

void park_order_class(const void *lock, const void *key, const char *name)
{
    if (!__atomic_load_n(&park__order_on, __ATOMIC_RELAXED) || !mapped())
        return;
    uintptr_t k = (uintptr_t)lock;
    lock_graph();
    class_slot_t *c = n_classed ? class_slot(k) : NULL;
    if (!key) {
        if (c)
            __atomic_store_n(&c->lock, TOMB, __ATOMIC_RELEASE);
        unlock_graph();
        return;
    }
    /* The class's node carries the name; a lock's own node, if it had
     * one, stays with its orders (as a forgotten lock's does). */
    uint32_t n = add_node((uintptr_t)key, name);
    if (n && name && !g->nodes[n - 1].name)
        g->nodes[n - 1].name = name;
    if (c) {
        __atomic_store_n(&c->key, (uintptr_t)key, __ATOMIC_RELAXED);
    } else if (n && n_classed < MAX_NODES) {
        uint32_t mask = (1u << NODE_BITS) - 1;
        uint32_t i = (uint32_t)mix(k) & mask;
        while (g->class_slots[i].lock != 0 && g->class_slots[i].lock != TOMB)
            i = (i + 1) & mask;
        if (g->class_slots[i].lock == 0)
            __atomic_store_n(&n_classed, n_classed + 1, __ATOMIC_RELAXED);
        g->class_slots[i].key = (uintptr_t)key;
        __atomic_store_n(&g->class_slots[i].lock, k, __ATOMIC_RELEASE);
    } else {
        n = 0;
    }
    unlock_graph();
    if (!n)
        give_up("too many locks");
}

uint64_t park__order_cycles(void)
{
    return __atomic_load_n(&cycles, __ATOMIC_RELAXED);
}
