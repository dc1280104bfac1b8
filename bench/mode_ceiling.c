#include "bench/modes.h"
int
mode_ceiling(struct options *o)
{
    (void)o;
    return 2;
}
