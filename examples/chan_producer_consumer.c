/* chan_producer_consumer: producer and consumer threads on one channel.
 *
 * Three producer threads send 20000 numbered items each into a channel of
 * 16 slots; two consumer threads receive until the channel is closed and
 * empty. A producer first tries park_chan_try_send, and when the channel
 * is full (EAGAIN) blocks in park_chan_send until there is room: that is
 * back-pressure, and the count of blocked sends shows how often the
 * consumers held the producers back. Blocked threads park in the channel's
 * queue and use no CPU.
 *
 * When every producer is done, main closes the channel: the consumers
 * receive what is still buffered, then park_chan_recv fails with EPIPE and
 * they stop. Nothing is lost, and since the channel is FIFO each consumer
 * sees every producer's items in the order that producer sent them.
 *
 * Exits 0 if every item arrived exactly once and in order per producer; 1
 * otherwise. */
#include <park/park.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define PRODUCERS 3
#define CONSUMERS 2
#define ITEMS 20000 /* per producer */
#define CAPACITY 16

static park_chan_t *chan;
static atomic_long blocked_sends;

/* An item is producer * ITEMS + i + 1: never NULL, and it says who sent
 * it and in which place. */
static void *producer(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    for (uintptr_t i = 0; i < ITEMS; i++) {
        void *item = (void *)(id * ITEMS + i + 1);
        int err = park_chan_try_send(chan, item);
        if (err == EAGAIN) { /* full: wait for room */
            atomic_fetch_add(&blocked_sends, 1);
            err = park_chan_send(chan, item);
        }
        if (err != 0) {
            printf("FAILED: producer %u: send: %d\n", (unsigned)id, err);
            return (void *)1;
        }
    }
    return NULL;
}

struct consumer {
    pthread_t thread;
    long received;
    long out_of_order;
    uintptr_t last[PRODUCERS]; /* the last place seen from each producer */
    uint64_t sum;
};

static void *consumer(void *arg)
{
    struct consumer *c = arg;
    void *item;
    int err;
    while ((err = park_chan_recv(chan, &item)) == 0) {
        uintptr_t v = (uintptr_t)item - 1, id = v / ITEMS, place = v % ITEMS + 1;
        if (id >= PRODUCERS || place <= c->last[id])
            c->out_of_order++;
        else
            c->last[id] = place;
        c->received++;
        c->sum += (uintptr_t)item;
    }
    if (err != EPIPE)
        printf("FAILED: consumer: receive: %d\n", err);
    return NULL;
}

int main(void)
{
    if (park_chan_create(&chan, CAPACITY) != 0) {
        printf("FAILED: park_chan_create\n");
        return 1;
    }
    pthread_t producers[PRODUCERS];
    static struct consumer consumers[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++)
        pthread_create(&consumers[i].thread, NULL, consumer, &consumers[i]);
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&producers[i], NULL, producer, (void *)i);

    bool ok = true;
    for (int i = 0; i < PRODUCERS; i++) {
        void *failed;
        pthread_join(producers[i], &failed);
        ok = ok && !failed;
    }
    park_chan_close(chan); /* the consumers drain what is left, then stop */
    long received = 0, out_of_order = 0;
    uint64_t sum = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        pthread_join(consumers[i].thread, NULL);
        printf("consumer %d received %ld items\n", i, consumers[i].received);
        received += consumers[i].received;
        out_of_order += consumers[i].out_of_order;
        sum += consumers[i].sum;
    }
    uint64_t n = (uint64_t)PRODUCERS * ITEMS;
    uint64_t expected = n * (n + 1) / 2;
    printf("%ld items from %d producers; %ld sends found the channel full and waited\n", received,
           PRODUCERS, atomic_load(&blocked_sends));

    if (received != (long)n || sum != expected) {
        printf("FAILED: expected %llu items summing to %llu, got %ld summing to %llu\n",
               (unsigned long long)n, (unsigned long long)expected, received,
               (unsigned long long)sum);
        ok = false;
    }
    if (out_of_order) {
        printf("FAILED: %ld items arrived out of their producer's order\n", out_of_order);
        ok = false;
    }
    ok = ok && park_chan_destroy(chan) == 0;
    printf("%s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
