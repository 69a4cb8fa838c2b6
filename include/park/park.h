/* park/park.h: every park header. */
#ifndef PARK_PARK_H
#define PARK_PARK_H

#include <park/common.h>
#include <park/version.h>
#include <park/time.h>
#include <park/mutex.h>
#include <park/cond.h>
#include <park/sem.h>
#include <park/event.h>
#include <park/barrier.h>
#include <park/rwlock.h>
#include <park/lazy.h>
#include <park/pool.h>
#include <park/task.h>
#include <park/chan.h>
#include <park/profile.h>
#include <park/order.h>

#endif /* PARK_PARK_H */
