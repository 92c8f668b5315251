/** @file irqflags.h @brief See interrupt.h. @ingroup irq */
#include <linux/interrupt.h>
