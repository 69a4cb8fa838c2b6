/* tests/model/pool.pml: the pool's idling protocol (lib/pool/pool.c): idle
 * workers sleeping in lib/wait on pool->idle, outside producers waking at
 * most one of them, and the searcher's baton.
 *
 * pool->idle holds SLEEPERS and SEARCHERS. A worker that found no work:
 * stop_searching, then park__wait with a validate that (bucket locked)
 * adds itself to SLEEPERS and re-checks every queue, staying up if it sees
 * work. A producer publishes its item and then, in notify, reads idle: if
 * someone sleeps and nobody searches, it makes itself the one to wake a
 * sleeper (SEARCHERS 0 -> 1) and unparks one (bucket locked: SLEEPERS - 1,
 * the sleeper becomes the searcher). A searcher that finds work stops
 * searching and, if it was the last searcher and work remains, notifies.
 * The seq_cst operations of the code are steps of this interleaving model.
 *
 * Checked: no item is stranded (once the producers are done and every
 * worker sleeps, nothing is queued), and nobody blocks elsewhere. Broken
 * variants, which must fail:
 *   NO_RECHECK  validate does not re-check the queues after counting
 *               itself a sleeper: a submission that read SLEEPERS just
 *               before is not seen by anyone
 *   NO_BATON    a searcher that stops without finding work does not give
 *               up its SEARCHERS count (a leak): later notifies think
 *               someone is looking */

#ifndef WORKERS
#define WORKERS 2
#endif
#ifndef PRODUCERS
#define PRODUCERS 2
#endif
#ifndef ITEMS
#define ITEMS 2 /* per producer */
#endif

byte items = 0;     /* queued work, all queues together */
byte sleepers = 0;  /* SLEEPERS */
byte searchers = 0; /* SEARCHERS */
bool queued[WORKERS];  /* in lib/wait's queue under pool->idle */
bool granted[WORKERS]; /* woken by an unpark */
byte asleep = 0;    /* workers queued and not granted (for the check) */
byte produced = 0;  /* producers done */
byte ran = 0;

/* park__unpark(&pool->idle, select_one): the first queued sleeper. */
inline unpark_one(found)
{
    atomic {
        found = 0;
        k = 0;
        do
        :: k < WORKERS && !queued[k] -> k++
        :: k < WORKERS && queued[k] ->
            queued[k] = 0; sleepers--; asleep--; granted[k] = 1; found = 1; break
        :: k == WORKERS -> break
        od
    }
}

inline notify()
{
    atomic {
        if
        :: sleepers > 0 && searchers == 0 -> searchers++; go = 1
        :: else -> go = 0
        fi
    };
    if
    :: go ->
        unpark_one(found);
        if
        :: !found -> searchers--
        :: else
        fi
    :: else
    fi
}

proctype Producer()
{
    byte n = 0, k;
    bool go, found;
    do
    :: n < ITEMS -> items++; n++; notify()
    :: n == ITEMS -> break
    od;
    produced++
}

proctype Worker(byte me)
{
    bool searching = 0, got, go, found, last;
    byte k;
    do
    :: /* find_work */
        atomic {
            if
            :: items > 0 -> items--; got = 1
            :: else -> got = 0
            fi
        };
        if
        :: got ->
            if
            :: searching -> /* stop_searching(found = true) */
                searching = 0;
                atomic { last = searchers == 1; searchers-- };
                if
                :: last && items > 0 -> notify()
                :: else
                fi
            :: else
            fi;
            ran++
        :: else ->
            if
            :: searching -> /* stop_searching(found = false) */
                searching = 0;
#ifndef NO_BATON
                searchers--
#endif
            :: else
            fi;
            /* park__wait: validate and enqueue under the bucket lock */
            atomic {
                sleepers++;
#ifndef NO_RECHECK
                if
                :: items > 0 -> sleepers--; got = 0
                :: else -> queued[me] = 1; asleep++; got = 1
                fi
#else
                queued[me] = 1; asleep++; got = 1
#endif
            };
            if
            :: got ->
end_sleep:      (granted[me]);
                granted[me] = 0;
                searching = 1
            :: else
            fi
        fi
    od
}

init
{
    byte i;
    atomic {
        for (i : 0 .. WORKERS - 1) {
            run Worker(i)
        }
        for (i : 1 .. PRODUCERS) {
            run Producer()
        }
    }
}

/* Nothing stranded: once every producer is done and every worker sleeps,
 * no item is left. */
active proctype Check()
{
end_check:
    atomic {
        (produced == PRODUCERS && asleep == WORKERS) -> assert(items == 0)
    }
}
