/* Wrong: lib/stray/ is in no layer. */
#include "os/os.h"
