/* hostile (round 4): include a file outside the lab: the simulated
 * kernel's internal header, which declares the harness's proof writer. */
#include "@ROOT@/common/src/internal.h"
