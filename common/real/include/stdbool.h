/*
 * stdbool.h - a kernel build has no C library.
 *
 * Rule kept here: the headers a lab's tests share with the student's file
 * (the .h files in tests/) are the same files in both builds; in the simulation
 * <stdbool.h> is C's, in a real module bool, true and false are the kernel's.
 */
#include <linux/types.h>
