#include "bench/modes.h"
int
mode_compare(struct options *o)
{
    (void)o;
    return 2;
}
