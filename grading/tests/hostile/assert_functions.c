/* hostile (round 4): define the test framework's own assertion entry
 * points; the tests' calls bind to these, no #define needed. */
struct criterion_assert_stats;

void criterion_send_assert(struct criterion_assert_stats *stats)
{
	(void)stats;
}

void cri_assert_node_send(const char *file, unsigned long line, void *tree)
{
	(void)file; (void)line; (void)tree;
}
