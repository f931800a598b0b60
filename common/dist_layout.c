/**
 * @file
 * @brief The 2D block distribution of step 23 (see dist_layout.h).
 */
#include "dist_layout.h"

struct dist_range dist_block(int n, int parts, int p)
{
    const int base = n / parts, extra = n % parts; /* the first `extra` blocks are one longer */
    const int lo = p * base + (p < extra ? p : extra);
    return (struct dist_range){lo, base + (p < extra ? 1 : 0)};
}

int dist_owner(int n, int parts, int g)
{
    const int base = n / parts, extra = n % parts;
    /* The first `extra` blocks have base + 1 indices each and end at extra * (base + 1); the rest have
     * base each (base > 0 there, since an index past them would be past n). */
    if (g < extra * (base + 1))
        return g / (base + 1);
    return extra + (g - extra * (base + 1)) / base;
}

void dist_squarest_grid(int ranks, int *P, int *Q)
{
    int p = 1;
    for (int d = 1; (long long)d * d <= ranks; ++d)
        if (ranks % d == 0)
            p = d;
    *P = p;
    *Q = ranks / p;
}
