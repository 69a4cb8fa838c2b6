/* Fine: a primitive uses every layer below it. */
#include <park/mutex.h>
#include "async.h"
#include "os/os.h"
#include "task/t.h"
