/*
 * rculist.h - a real module's "rculist.h" is the kernel's own.
 *
 * Rule kept here: in the simulation "rculist.h" is the student's lab 1; built
 * for a real kernel the same include must find the kernel's primitives, which
 * a real run trusts (it checks the module that uses them, not lab 1).
 */
#include <linux/rculist.h>
