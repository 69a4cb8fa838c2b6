/* Wrong: no layer holds lib/nowhere/. */
#include "nowhere/n.h"
