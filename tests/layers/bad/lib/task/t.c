/* Fine: next to the including file, then from lib/. */
#include "t.h"
#include "pool/p.h"
#include "wait/wait.h"
#include <park/task.h>
