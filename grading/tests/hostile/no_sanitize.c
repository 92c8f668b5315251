/* hostile (round 4): a function the instrumentation is told to skip, so
 * the simulated kernel never sees its accesses. */
static int hostile_shared;

static void __attribute__((no_sanitize_thread, used)) hostile_hidden(void)
{
	hostile_shared++;
}
