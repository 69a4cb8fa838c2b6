/* park/common.h: definitions every park header shares.
 *
 * PARK_API marks the exported symbols; everything else in libpark is hidden.
 * PARK_BEGIN_DECLS / PARK_END_DECLS give C linkage when included from C++.
 * Names with a double underscore (park__*, PARK__*) are private: they appear
 * in headers only because the inline fast paths need them. */
#ifndef PARK_COMMON_H
#define PARK_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARK_API __attribute__((visibility("default")))

#ifdef __cplusplus
#define PARK_BEGIN_DECLS extern "C" {
#define PARK_END_DECLS }
#else
#define PARK_BEGIN_DECLS
#define PARK_END_DECLS
#endif

#define PARK__LIKELY(x) __builtin_expect(!!(x), 1)
#define PARK__UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif /* PARK_COMMON_H */
