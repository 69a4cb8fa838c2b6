/* tests/model/chan.pml: park_chan (lib/chan.c, lib/chan_ring.h,
 * lib/chan_impl.h): the ring going full and empty against peers asleep in
 * lib/wait, for Spin. Run by check.sh.
 *
 * Modelled: SENDERS threads each sending PER items (park_chan_send) and
 * RECEIVERS threads sharing the receipt of all of them (park_chan_recv),
 * on a channel of CAP cells (1 by default, so it is full after one item).
 *   - The ring: tail and head positions, and per cell its seq (FREE(p) =
 *     2p, FULL(p) = 2p + 1) and item. A lock-free send (ring_push) reads
 *     the SWAIT hint, then, in one step, reserves the cell of tail (CAS
 *     tail -> tail + 1, seq == FREE), or finds the cell not free (the
 *     ring full, or a receive still reading the cell: a blocking send
 *     does not tell the two apart, and validates under the lock, which
 *     reserves whatever room there is); then it reads
 *     RWAIT (its kick, seq_cst) and then writes the item (put). A
 *     lock-free receive (ring_pop) is its mirror (RWAIT hint, CAS head,
 *     SWAIT read, take). A receive that finds the ring empty while SWAIT
 *     is set pulls the senders' items in (kick_senders) and tries again.
 *   - waiters: RWAIT and SWAIT, each set and cleared only under its side's
 *     bucket lock (rlock, slock: real locks, held across put and take,
 *     which may wait for a cell, so that others run meanwhile).
 *   - recv_validate: RWAIT set: queue; else set RWAIT, then claim an item
 *     that came after all (claim_owned: tail > head, CAS head, read SWAIT,
 *     clear RWAIT, take), else queue. send_validate: its mirror.
 *   - The kicks (park__unpark): under a side's lock, grant the oldest
 *     waiter of that side an item (receivers: claim and take into the
 *     waiter's slot) or room (senders: reserve and put the waiter's item)
 *     if there is one, one waiter per kick; clear the side's flag when
 *     nobody is left; read the other side's flag and whether the side has
 *     more waiters with work for them, and give both to the granted
 *     thread with its grant; wake after unlocking. The granted thread
 *     follows up (park__chan_settle with those two) in the kicker's
 *     stead, so the kicker's settle ends there. (Tasks, which make the
 *     kicker follow up itself, are not modelled.)
 *   - With -DCLOSE a thread closes the channel meanwhile (park_chan_close:
 *     CLOSED in tail, then the senders' closing kick, EPIPE to every queued
 *     sender, then the receivers', an item or EPIPE to each, then settle).
 *     A send fails with EPIPE once it sees CLOSED (in its reservation, or
 *     in validate before or after setting SWAIT); a receive once it finds
 *     the ring empty and closed (in ring_pop, or in validate after setting
 *     RWAIT and finding nothing to claim). Senders and receivers stop at
 *     their first EPIPE.
 *   - Spinning is abstracted: one attempt before queueing.
 * Every access is sequentially consistent: the orders that matter (a
 * reservation's CAS before its read of the other side's flag; the flag's
 * fetch_or before the validate's read of the position) are seq_cst in
 * lib/chan.c and lib/chan_ring.h; the rest are guarded by the bucket locks
 * or by the cells' acquire/release seq.
 *
 * Checked:
 *   - a kick wakes one waiter at most (a close excepted);
 *   - every item is received exactly once (none lost, none doubled); with
 *     CLOSE, every item whose send returned 0 is received once or left in
 *     the ring, and no other item is received or left;
 *   - no lost wake-up: every thread finishes (a sender asleep beside
 *     room, or a receiver beside an item, is an invalid end state);
 *   - at the end neither flag is set, nobody is queued, and (without
 *     CLOSE) every send returned 0 and the ring is empty.
 *
 * Broken variants (must fail):
 *   RECV_NO_RECHECK  recv_validate queues after setting RWAIT without
 *                    looking for an item that came meanwhile (lost wake-up)
 *   SEND_NO_RECHECK  send_validate queues after setting SWAIT without
 *                    looking for room that came meanwhile (lost wake-up)
 *   KICK_EARLY       a lock-free send reads RWAIT before its reservation,
 *                    not after: a receiver that queued in between is
 *                    never kicked (lost wake-up)
 *   NO_FOLLOW_UP     a thread granted by a kick does not kick the other
 *                    side when the kicker found waiters there (lost
 *                    wake-up)
 *   RECV_NO_CLOSED   (with CLOSE) recv_validate does not look for CLOSED
 *                    after finding nothing to claim: a receiver that
 *                    queues after the close's kick sleeps forever (lost
 *                    wake-up) */

#ifndef CAP
#define CAP 1
#endif
#ifndef SENDERS
#define SENDERS 2
#endif
#ifndef RECEIVERS
#define RECEIVERS 1
#endif
#ifndef PER
#define PER 1
#endif
#define ITEMS (SENDERS * PER)
#define RECV_EACH (ITEMS / RECEIVERS)
#define NTHREADS (SENDERS + RECEIVERS)

#define FREE(p) (2 * (p))
#define FULL(p) (2 * (p) + 1)

#define NONE 255
#define OK 0
#define EPIPE 1

byte tail = 0;
byte head = 0;
byte seq[CAP];
byte cell[CAP];
bool rw = 0; /* RWAIT */
bool sw = 0; /* SWAIT */
bool rlock = 0;
bool slock = 0;
byte rq[NTHREADS]; /* queued receivers, oldest first: thread ids */
byte rqlen = 0;
byte sq[NTHREADS]; /* queued senders, oldest first */
byte sqlen = 0;
byte sitem[NTHREADS]; /* a queued sender's item */
byte slot[NTHREADS];  /* a queued receiver's slot: the item granted */
byte grant[NTHREADS]; /* NONE until granted */
bool fo[NTHREADS];    /* with a grant: follow up by kicking the other side */
bool fm[NTHREADS];    /* with a grant: follow up by kicking its own side */
byte recvd[ITEMS + 1]; /* receipts per item */
bool sent[ITEMS + 1];  /* items whose send returned 0 */
bool closed = 0;       /* CLOSED in tail */
byte finished = 0;

inline dequeue_rq()
{
    k = 0;
    do
    :: k + 1 < rqlen -> rq[k] = rq[k + 1]; k++
    :: else -> break
    od;
    rqlen--
}

inline dequeue_sq()
{
    k = 0;
    do
    :: k + 1 < sqlen -> sq[k] = sq[k + 1]; k++
    :: else -> break
    od;
    sqlen--
}

/* put: write the item of reserved position pos once its cell is free. */
inline put(pos, it)
{
    atomic {
        seq[pos % CAP] == FREE(pos) ->
        cell[pos % CAP] = it;
        seq[pos % CAP] = FULL(pos)
    }
}

/* take: read the item of reserved position pos once it is written. */
inline take(pos, it)
{
    atomic {
        seq[pos % CAP] == FULL(pos) ->
        it = cell[pos % CAP];
        seq[pos % CAP] = FREE(pos + CAP)
    }
}

/* Delivers the grants of a kick after its unlock: OK (pendr) or EPIPE
 * (pende); with them fo and fm, written under the lock. */
inline deliver()
{
    woken = 0;
    for (k : 0 .. NTHREADS - 1) {
        if
        :: pendr & (1 << k) -> grant[k] = OK; woken++
        :: pende & (1 << k) -> grant[k] = EPIPE; woken++
        :: else
        fi
    }
    assert(closing || woken <= 1); /* one waiter per kick, but for a close */
    pendr = 0;
    pende = 0
}

/* kick_receivers: hands an item to the oldest queued receiver, which
 * becomes the baton: other (SWAIT was set) and whether receivers are left
 * with items for them are its follow-up (fo, fm). Closing: an item or
 * EPIPE to every receiver, the kicker following up (moved, other). */
inline kick_receivers()
{
    atomic { !rlock -> rlock = 1 };
    moved = 0; seen = 0; other = 0; baton = NONE;
    do
    :: rqlen > 0 ->
        seen = 1;
        atomic {
            if
            :: tail > head -> pos = head; head++; got = 1 /* claim_owned */
            :: else -> got = 0
            fi
        };
        w = rq[0];
        if
        :: got ->
            take(pos, kit);
            dequeue_rq();
            slot[w] = kit; pendr = pendr | (1 << w);
            if
            :: closing -> moved++; fo[w] = 0; fm[w] = 0
            :: else -> baton = w; break /* one waiter per kick */
            fi
        :: !got && closing -> dequeue_rq(); pende = pende | (1 << w)
        :: else -> break
        fi
    :: else -> break
    od;
    atomic {
        if
        :: seen && rqlen == 0 -> rw = 0
        :: else
        fi;
        if
        :: moved > 0 || baton != NONE -> other = sw
        :: else
        fi;
        if
        :: baton != NONE ->
            fo[baton] = other;
            fm[baton] = (rqlen > 0 && tail > head)
        :: else
        fi;
        rlock = 0;
        deliver() /* woken after the unlock */
    }
}

/* kick_senders: moves the oldest queued sender's item in, which becomes
 * the baton as in kick_receivers (closing: EPIPE to every queued
 * sender). */
inline kick_senders()
{
    atomic { !slock -> slock = 1 };
    moved = 0; other = 0; baton = NONE;
    do
    :: sqlen > 0 ->
        w = sq[0];
        if
        :: closing -> dequeue_sq(); pende = pende | (1 << w)
        :: else ->
            atomic {
                if
                :: tail - head < CAP && !closed ->
                    pos = tail; tail++; got = 1 /* reserve_owned */
                :: else -> got = 0
                fi
            };
            if
            :: got ->
                put(pos, sitem[w]);
                dequeue_sq();
                pendr = pendr | (1 << w);
                baton = w;
                break /* one waiter per kick */
            :: else -> break
            fi
        fi
    :: else -> break
    od;
    atomic {
        if
        :: sqlen == 0 -> sw = 0
        :: else
        fi;
        if
        :: baton != NONE ->
            other = rw;
            fo[baton] = other;
            fm[baton] = (sqlen > 0 && tail - head < CAP)
        :: else
        fi;
        slock = 0;
        deliver()
    }
}

/* park__chan_settle(kr, ks): a kick that granted a thread (the baton)
 * ends it, since that thread follows up (fo, fm); only a kick whose moves
 * the kicker made itself (a close's) is followed by the kicker. */
inline settle()
{
    do
    :: kr || ks ->
        if
        :: kr ->
            kr = 0;
            kick_receivers();
            if
            :: baton != NONE -> ks = 0; break
            :: else
            fi;
            ks = ks || other
        :: else
        fi;
        if
        :: ks ->
            ks = 0;
            kick_senders();
            if
            :: baton != NONE -> kr = 0; break
            :: else
            fi;
            kr = kr || other
        :: else
        fi
    :: else -> break
    od
}

/* A thread granted by a kick follows up in the kicker's stead. */
inline follow_up(kother, kmine)
{
#ifdef NO_FOLLOW_UP
    kother = 0;
#endif
    settle()
}

proctype Sender(byte me)
{
    byte n = 0, it, kit, pos, k, w, moved, pendr = 0, pende = 0, res, baton, woken;
    bool got, seen, other, kr, ks, hint, cl, queued, closing = 0;
    do
    :: n < PER ->
        it = me * PER + n + 1;
        do
        :: /* send_try: park__chan_ring_push */
            atomic { cl = closed; hint = sw };
            if
            :: cl -> res = EPIPE; break
            :: !cl && !hint ->
#ifdef KICK_EARLY
                atomic { kr = rw };
#endif
                atomic {
                    if
                    :: closed -> got = 0; cl = 1
                    :: !closed && seq[tail % CAP] == FREE(tail) -> pos = tail; tail++; got = 1
                    :: !closed && seq[tail % CAP] != FREE(tail) -> got = 0
                    fi
                };
                if
                :: cl -> res = EPIPE; break
                :: got ->
#ifndef KICK_EARLY
                    atomic { kr = rw };
#endif
                    put(pos, it);
                    res = OK;
                    ks = 0;
                    settle();
                    break
                :: else
                fi
            :: else
            fi;
            /* park__wait(skey, send_validate) */
            atomic { !slock -> slock = 1 };
            queued = 0; got = 0; cl = 0;
            if
            :: closed -> cl = 1
            :: !closed && sw -> queued = 1
            :: else ->
                atomic {
                    sw = 1;
#ifndef SEND_NO_RECHECK
                    if
                    :: tail - head < CAP && !closed -> pos = tail; tail++; got = 1
                    :: else
                    fi
#endif
                };
                if
                :: got ->
                    atomic { kr = rw; sw = 0 };
                    put(pos, it)
                :: !got && closed -> sw = 0; cl = 1
                :: else -> queued = 1
                fi
            fi;
            atomic {
                if
                :: queued -> sq[sqlen] = me; sqlen++; sitem[me] = it; grant[me] = NONE; fo[me] = 0; fm[me] = 0
                :: else
                fi;
                slock = 0
            };
            if
            :: queued ->
                grant[me] != NONE; res = grant[me]; /* asleep until kicked */
                kr = fo[me]; ks = fm[me];
                follow_up(kr, ks);
                break
            :: cl -> res = EPIPE; break
            :: else -> res = OK; ks = 0; settle(); break
            fi
        od;
        if
        :: res == OK -> sent[it] = 1; n++
        :: else -> break /* closed */
        fi
    :: else -> break
    od;
    finished++
}

proctype Receiver(byte me)
{
    byte n = 0, it, kit, pos, k, w, moved, pendr = 0, pende = 0, res, baton, woken;
    bool got, seen, other, kr, ks, hint, queued, cl, closing = 0;
    do
    :: n < RECV_EACH ->
        do
        :: /* recv_try: ring_pop */
            atomic { hint = rw };
            cl = 0;
            if
            :: !hint ->
                atomic {
                    if
                    :: seq[head % CAP] == FULL(head) -> pos = head; head++; got = 1
                    :: seq[head % CAP] != FULL(head) && tail <= head -> got = 0; cl = closed
                    fi
                };
                if
                :: got ->
                    atomic { ks = sw };
                    take(pos, it);
                    res = OK;
                    kr = 0;
                    settle();
                    break
                :: else ->
                    /* empty: pull queued senders' items in */
                    if
                    :: sw ->
                        kick_senders();
                        if
                        :: baton != NONE -> goto again /* its sender follows up */
                        :: else
                        fi
                    :: else
                    fi;
                    if
                    :: cl -> res = EPIPE; break
                    :: else
                    fi
                fi
            :: else
            fi;
            /* park__wait(rkey, recv_validate) */
            atomic { !rlock -> rlock = 1 };
            queued = 0; got = 0; cl = 0;
            if
            :: rw -> queued = 1
            :: else ->
                atomic {
                    rw = 1;
#ifndef RECV_NO_RECHECK
                    if
                    :: tail > head -> pos = head; head++; got = 1
                    :: else
                    fi
#endif
                };
                if
                :: got ->
                    atomic { ks = sw; rw = 0 };
                    take(pos, it)
#ifndef RECV_NO_CLOSED
                :: !got && closed -> rw = 0; cl = 1
#endif
                :: else -> queued = 1
                fi
            fi;
            atomic {
                if
                :: queued -> rq[rqlen] = me; rqlen++; grant[me] = NONE; fo[me] = 0; fm[me] = 0
                :: else
                fi;
                rlock = 0
            };
            if
            :: queued ->
                grant[me] != NONE; res = grant[me]; it = slot[me]; /* asleep until kicked */
                ks = fo[me]; kr = fm[me];
                follow_up(ks, kr);
                break
            :: cl -> res = EPIPE; break
            :: else -> res = OK; kr = 0; settle(); break
            fi;
again:      skip
        od;
        if
        :: res == OK ->
            atomic { recvd[it]++; assert(it >= 1 && it <= ITEMS && recvd[it] == 1) };
            n++
        :: else -> break /* closed and empty */
        fi
    :: else -> break
    od;
    finished++
}

#ifdef CLOSE
/* park_chan_close: CLOSED, then the senders' and the receivers' closing
 * kicks, then settle. */
active proctype Closer()
{
    byte it, kit, pos, k, w, moved, pendr = 0, pende = 0, baton, woken;
    bool got, seen, other, kr, ks, closing;
    closed = 1;
    closing = 1;
    kick_senders();
    kr = other;
    kick_receivers();
    ks = other;
    closing = 0;
    settle();
    finished++
}
#define CLOSERS 1
#else
#define CLOSERS 0
#endif

init
{
    byte i, in_ring = 0, nsent = 0, nrecvd = 0;
    atomic {
        for (i : 0 .. CAP - 1) {
            seq[i] = FREE(i)
        }
        for (i : 0 .. SENDERS - 1) {
            run Sender(i)
        }
        for (i : SENDERS .. NTHREADS - 1) {
            run Receiver(i)
        }
    }
    (finished == NTHREADS + CLOSERS);
    /* every item sent is received once or still in the ring; none other */
    for (i : 1 .. ITEMS) {
        assert(recvd[i] <= sent[i]);
        nsent = nsent + sent[i];
        nrecvd = nrecvd + recvd[i]
    }
    assert(nsent == nrecvd + tail - head);
#ifndef CLOSE
    assert(nsent == ITEMS && head == tail);
#endif
    assert(!rw && !sw && rqlen == 0 && sqlen == 0)
}
