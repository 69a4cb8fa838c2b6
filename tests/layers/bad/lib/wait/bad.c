/* Wrong: wait reaches up into the pool. */
#include "os/os.h"
#include "pool/pool.h"
