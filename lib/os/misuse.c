/* lib/os/misuse.c: the end of a program that misused park in a way no
 * return value can report. */
#include <stdio.h>
#include <stdlib.h>

#include "os/os.h"

void park__misuse(const char *call, const void *obj, const char *what)
{
    fprintf(stderr, "park: %s(%p): %s\n", call, obj, what);
    abort();
}
