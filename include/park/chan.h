/* park/chan.h: a bounded multi-producer multi-consumer channel of pointers.
 *
 * A channel buffers up to `capacity` items (void pointers; NULL is an item
 * like any other) and applies back-pressure: a send into a full channel
 * waits for room, a receive from an empty one waits for an item. Items come
 * out in the order their sends took their place in the channel.
 *
 * Strictly FIFO for waiters too: blocked senders put their items in, and
 * blocked receivers are served, in the order they arrived; while anyone is
 * queued on a side, a newcomer on that side (try-operations included)
 * cannot get past them.
 *
 * Uncontended try_send and try_recv take no lock: one compare-and-swap on
 * a lock-free ring (lib/chan.c). Blocked threads park in park's shared wait
 * queue (no CPU, no allocation); asynchronous sends and receives are tasks
 * that wait in the same queues, in the same order.
 *
 * Close: after park_chan_close, sends fail with EPIPE, every waiter (thread
 * or task) is woken, and the items still buffered stay receivable; a
 * receive on a closed and empty channel fails with EPIPE.
 *
 * Memory ordering: a send happens before the receive that returns its item
 * (everything written before park_chan_send is visible to the thread or
 * task that receives the item). */
#ifndef PARK_CHAN_H
#define PARK_CHAN_H

#include <park/common.h>
#include <park/time.h>

PARK_BEGIN_DECLS

typedef struct park_chan park_chan_t;

/* Makes a channel holding up to `capacity` items: 0 (*ch set), EINVAL
 * (capacity == 0) or ENOMEM (*ch unchanged on error). The whole ring (16
 * bytes an item) is allocated and written here. Never blocks. */
PARK_API int park_chan_create(park_chan_t **ch, size_t capacity);

/* Frees ch: 0, or EBUSY while a thread or task waits on it (then nothing
 * is freed and ch stays usable). NULL: 0, nothing done. Items still
 * buffered are dropped (the caller owns what they point to). Nobody may
 * use ch afterwards, nor drop an unobserved receive task of it (see
 * park_chan_recv_async); PARK_DEBUG builds abort with a message on a
 * second destroy. Never blocks. */
PARK_API int park_chan_destroy(park_chan_t *ch);

/* Appends item, blocking while the channel is full (in arrival order
 * behind other blocked senders): 0, or EPIPE if the channel is or gets
 * closed before the item went in (the caller still has it). Release
 * ordering (see the top of this file). */
PARK_API int park_chan_send(park_chan_t *ch, void *item);

/* Appends item if there is room and no sender is blocked: 0, EAGAIN (full,
 * or senders are queued ahead) or EPIPE (closed). Never blocks. */
PARK_API int park_chan_try_send(park_chan_t *ch, void *item);

/* As park_chan_send, giving up at the absolute deadline (CLOCK_MONOTONIC
 * ns; PARK_FOREVER never expires): 0, ETIMEDOUT (the item did not go in;
 * the caller still has it) or EPIPE. Room free right now is taken even
 * when the deadline has passed. */
PARK_API int park_chan_send_until(park_chan_t *ch, void *item, park_time_t deadline);

/* Takes the oldest item into *item, blocking while the channel is empty
 * (in arrival order behind other blocked receivers): 0, or EPIPE once the
 * channel is closed and empty (*item unchanged). Acquire ordering: pairs
 * with the send of the item. */
PARK_API int park_chan_recv(park_chan_t *ch, void **item);

/* Takes the oldest item if there is one and no receiver is blocked: 0,
 * EAGAIN (empty, or receivers are queued ahead) or EPIPE (closed and
 * empty). Never blocks. Acquire ordering as park_chan_recv. */
PARK_API int park_chan_try_recv(park_chan_t *ch, void **item);

/* As park_chan_recv, giving up at the absolute deadline: 0, ETIMEDOUT (no
 * item taken: it stays in the channel) or EPIPE. An item there right now
 * is taken even when the deadline has passed. */
PARK_API int park_chan_recv_until(park_chan_t *ch, void **item, park_time_t deadline);

/* Sends item asynchronously: a task that completes on `pool` with error 0
 * once the item is in the channel, or with EPIPE if the channel is or gets
 * closed first. With room free and no sender queued, the item goes in at
 * once and the result is a shared, already completed task (no
 * allocation). A pending send waits in the same FIFO queue as blocked
 * senders; park_task_cancel (or park_task_cancel_at, or releasing the last
 * reference) takes it out: 0, the item did not go in; EALREADY, it did
 * (grant beats cancel). Continuations run on `pool`, never on the thread
 * that made room. NULL only on ENOMEM. Never blocks. Release ordering as
 * park_chan_send. */
PARK_API park_task_t *park_chan_send_async(park_chan_t *ch, park_pool_t *pool, void *item);

/* Receives asynchronously: a task that completes on `pool` with error 0
 * and the item as its result, or with EPIPE once the channel is closed and
 * empty. Always a new task (its result is the item), completed at once if
 * an item is there and no receiver is queued. A pending receive waits in
 * the same FIFO queue as blocked receivers. Cancelling it (park_task_cancel
 * or park_task_cancel_at) takes no item (0) unless the item was handed over
 * first (EALREADY; the task has the item). A task whose item nobody looked
 * at (park_task_done, _result, _wait, or a continuation) gives the item
 * back when its last reference is released: the item goes back in at the
 * end of the channel, behind the items buffered then and ahead of blocked
 * senders, beyond the capacity if need be; so such a task must not outlive
 * the channel. Continuations run on `pool`, never on the sending thread.
 * NULL only on ENOMEM. Never blocks. Acquire ordering as park_chan_recv
 * for whoever observes the task complete. */
PARK_API park_task_t *park_chan_recv_async(park_chan_t *ch, park_pool_t *pool);

/* Closes ch: later sends fail with EPIPE; every blocked sender (thread or
 * task) is woken with EPIPE, every blocked receiver with an item still
 * buffered or EPIPE. Buffered items stay receivable; once they are gone,
 * receives fail with EPIPE. Idempotent. Never blocks. */
PARK_API void park_chan_close(park_chan_t *ch);

PARK_END_DECLS

#endif /* PARK_CHAN_H */
