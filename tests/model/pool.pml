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
 *               someone is looking
 *
 * With -DJOINER, one more worker is a joiner (park__pool_wait_latch): it
 * waits for a latch nobody sets here, runs whatever work it finds, and
 * with none counts itself in pool->joiners, re-checks the queues and
 * sleeps on its latch unless kicked; notify, finding nobody asleep or
 * searching but a joiner, kicks it (kicked 0 -> 1, then an unpark under
 * the latch's bucket lock, where the joiner's validate reads kicked).
 * Broken variants:
 *   NO_KICK     notify never kicks a joiner: with every worker a joiner,
 *               a submission is stranded
 *   NO_KICK_RECHECK  the joiner's validate ignores kicked: a kick that
 *               comes before the joiner is queued is lost */

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
bool queued[WORKERS + 1];  /* in lib/wait's queue under pool->idle */
bool granted[WORKERS + 1]; /* woken by an unpark */
byte asleep = 0;    /* workers queued and not granted (for the check) */
byte produced = 0;  /* producers done */
byte ran = 0;
byte joiners = 0; /* pool->joiners */
bool kicked = 0;  /* the joiner's w->kicked */
bool jqueued = 0; /* the joiner is queued under its latch */

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
        :: sleepers > 0 && searchers == 0 -> searchers++; go = 1; idle0 = 0
        :: else -> go = 0; idle0 = sleepers == 0 && searchers == 0
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
    fi;
#if defined(JOINER) && !defined(NO_KICK)
    if
    :: idle0 && joiners > 0 -> /* kick_joiner */
        atomic {
            if
            :: !kicked -> kicked = 1; go = 1
            :: else -> go = 0
            fi
        };
        if
        :: go -> /* park__latch_kick: bucket locked */
            atomic {
                if
                :: jqueued -> jqueued = 0; asleep--
                :: else
                fi
            }
        :: else
        fi
    :: else
    fi
#endif
}

proctype Producer()
{
    byte n = 0, k;
    bool go, found, idle0;
    do
    :: n < ITEMS -> items++; n++; notify()
    :: n == ITEMS -> break
    od;
    produced++
}

proctype Worker(byte me)
{
    bool searching = 0, got, go, found, last, idle0;
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

/* A worker in park__pool_wait_latch for a latch that is never set. */
proctype Joiner()
{
    bool got;
    do
    :: atomic { /* help */
            if
            :: items > 0 -> items--; got = 1
            :: else -> got = 0
            fi
        };
        if
        :: got -> ran++
        :: else ->
            kicked = 0;
            joiners++;
            if
            :: items > 0 -> joiners-- /* work_visible */
            :: else ->
                atomic { /* latch_validate, bucket locked */
#ifndef NO_KICK_RECHECK
                    if
                    :: !kicked -> jqueued = 1; asleep++
                    :: else
                    fi
#else
                    jqueued = 1; asleep++
#endif
                };
end_join:       (!jqueued);
                joiners--
            fi
        fi
    od
}

#ifdef JOINER
#define ALL (WORKERS + 1)
#else
#define ALL WORKERS
#endif

init
{
    byte i;
    atomic {
#if WORKERS > 0
        for (i : 0 .. WORKERS - 1) {
            run Worker(i)
        }
#endif
#ifdef JOINER
        run Joiner();
#endif
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
        (produced == PRODUCERS && asleep == ALL) -> assert(items == 0)
    }
}
