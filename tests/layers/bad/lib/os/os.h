/* Fine: the bottom layer, on a base public header and the system. */
#include <park/time.h>
#include <stdatomic.h>
