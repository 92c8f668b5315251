/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stdio.h on a real kernel: empty (real runs only). A lab's file that
 * includes it for the simulation builds unchanged; a call into the C
 * library fails to build, by name: the kernel has none.
 */
