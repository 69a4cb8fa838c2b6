/* park/order.h: lock-order checking (docs/design/order.md).
 *
 * With checking on, every blocking acquisition of a park mutex or rwlock
 * (and, under park-run, of a pthread mutex or rwlock) records the order
 * "held A, then took B" in one graph for the process. The first
 * acquisition that closes a cycle (A then B here, B then A there, or a
 * longer ring) is a lock-order inversion: some interleaving of those
 * threads deadlocks, whether or not this run did. It is reported once, on
 * standard error, with the locks and the call sites of each order; then
 * the program carries on or aborts. Try-locks record no order (they cannot
 * wait); timed acquisitions record theirs, reported as timed. A destroyed
 * lock leaves the graph, so memory reused for another lock is a new lock.
 * Locks are nodes by address, or by class where park_order_class says so.
 *
 * Switched by the environment variable PARK_CHECK_ORDER, read at start:
 * unset: on (aborting) in PARK_DEBUG builds of the library, off otherwise;
 * 0: off; 1: on (PARK_DEBUG builds abort on an inversion, others carry
 * on); warn: on, carrying on; abort: on, aborting. `park-run
 * --check-order` sets it for an unmodified program.
 *
 * The C API's locks are seen by code compiled with PARK_CHECK_ORDER
 * defined (-DPARK_CHECK_ORDER): their inline functions then call the
 * checker, which costs nothing while checking is off but a call. Without
 * it, the inline paths are unchanged and only the drop-in is checked. */
#ifndef PARK_ORDER_H
#define PARK_ORDER_H

#include <park/common.h>

PARK_BEGIN_DECLS

/* Makes lock one of the locks of a class: key is the address of anything
 * of the caller's that stands for the kind (a static variable, say), name
 * its name in reports (kept, not copied; may be NULL). The checker keeps
 * one node for all the locks of a class, so that ten thousand locks of one
 * kind cost one node and an order seen on one of them counts for all:
 * taking the table lock then a connection's lock here, and another
 * connection's lock then the table lock there, is an inversion. Orders
 * between two locks of one class are not recorded (one thread holding two
 * needs an order among them that the checker cannot see). A NULL key
 * takes lock out of its class. Call it after the lock's init: init and
 * destroy take a lock out of its class, as out of the graph. Does nothing
 * while checking is off. */
PARK_API void park_order_class(const void *lock, const void *key, const char *name);

/* Private: the hooks (lib/profile/order.c). flags: PARK__ORDER_*; site:
 * the call site (NULL: the hook's own return address). */
#define PARK__ORDER_TRY 1u   /* a try-lock: held if it succeeds, no order */
#define PARK__ORDER_TIMED 2u /* a timed acquisition */
#define PARK__ORDER_READ 4u  /* a read hold */

PARK_API extern bool park__order_on;
/* Before a blocking (or timed) acquisition of lock: records the orders
 * from the locks this thread holds, reporting a cycle. */
PARK_API void park__order_lock(const void *lock, unsigned flags, const void *site);
/* lock is now held by this thread (after any successful acquisition). */
PARK_API void park__order_held(const void *lock, const void *site);
/* lock was released by this thread. */
PARK_API void park__order_released(const void *lock);
/* lock was destroyed (or initialised again): it leaves the graph. */
PARK_API void park__order_forget(const void *lock);

/* Private: the inline hooks of the C API: calls under PARK_CHECK_ORDER,
 * nothing otherwise. */
#define PARK__ORDER_ON() PARK__UNLIKELY(__atomic_load_n(&park__order_on, __ATOMIC_RELAXED))
#ifdef PARK_CHECK_ORDER
#define PARK__ORDER_LOCK(lock, flags)                                                              \
    (PARK__ORDER_ON() ? park__order_lock((lock), (flags), NULL) : (void)0)
#define PARK__ORDER_HELD(lock) (PARK__ORDER_ON() ? park__order_held((lock), NULL) : (void)0)
#define PARK__ORDER_RELEASED(lock) (PARK__ORDER_ON() ? park__order_released(lock) : (void)0)
#else
#define PARK__ORDER_LOCK(lock, flags) ((void)0)
#define PARK__ORDER_HELD(lock) ((void)0)
#define PARK__ORDER_RELEASED(lock) ((void)0)
#endif

PARK_END_DECLS

#endif /* PARK_ORDER_H */
