/* lib/lazy_impl.h: what white-box tests may see of lib/lazy.c. */
#ifndef PARK_LIB_LAZY_IMPL_H
#define PARK_LIB_LAZY_IMPL_H

#include <stdatomic.h>
#include <stdint.h>

/* The adaptive yield budget of every lazy and once waiter in the process
 * (lib/wait's w->adapt; see wait_for_run in lib/lazy.c). */
extern _Atomic uint8_t park__lazy_yields;

#endif /* PARK_LIB_LAZY_IMPL_H */
