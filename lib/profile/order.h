/* lib/profile/order.h: lock-order checking (park/order.h), for the
 * primitives and the drop-in. Layer: with lib/profile (os only). */
#ifndef PARK_LIB_PROFILE_ORDER_H
#define PARK_LIB_PROFILE_ORDER_H

#include <park/order.h>

/* Read on the slow paths that forget a lock: one predictable branch. */
static inline bool park__order_checking(void)
{
    return PARK__ORDER_ON();
}

/* Inversions reported so far. */
uint64_t park__order_cycles(void);

/* Names n code addresses (return addresses) as the profile report does,
 * then n_data data addresses (a variable's "name+0xoff", or "" if none),
 * into strings of `each` bytes at names (lib/profile/report.c). */
void park__profile_name_pcs(const uintptr_t *pcs, size_t n, size_t n_data, char *names,
                            size_t each);

#endif /* PARK_LIB_PROFILE_ORDER_H */
