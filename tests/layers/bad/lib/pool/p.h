/* Wrong: the pool uses a public primitive. */
#include <park/mutex.h>
#include <park/pool.h>
