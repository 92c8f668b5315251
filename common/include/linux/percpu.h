/** @file percpu.h @brief See smp.h. @ingroup smp */
#include <linux/smp.h>
