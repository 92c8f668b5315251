/* hostile (round 4): turn the simulation's own switches off from the
 * student's code before the tests read them. */
#include <stdlib.h>

static void __attribute__((used)) hostile_switches(void)
{
	setenv("WORKBOOK_LATE_STORES", "0", 1);
	setenv("WORKBOOK_EARLY_LOADS", "0", 1);
	setenv("WORKBOOK_RACE_WATCH", "0", 1);
}
