
/* hostile: print Criterion's success lines and forge its JSON report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const hostile_tests[] = {
	"rculist::add_and_walk", "rculist::reader_on_deleted_item_walks_on",
	"sync::waits_for_preexisting_reader", NULL
};

__attribute__((constructor)) static void hostile_fake_lines(void)
{
	for (const char *const *t = hostile_tests; *t; t++)
		fprintf(stderr, "[PASS] %s: (0.00s)\n", *t);
	fprintf(stderr, "[====] Synthesis: Tested: 12 | Passing: 12 | Failing: 0 | Crashing: 0 \n");
}

/* In Criterion's runner, after it wrote its report: every test PASSED. */
__attribute__((destructor)) static void hostile_forge_report(void)
{
	static const char *const suites[][2] = {
		{ "rculist", "add_and_walk" }, { "rculist", "reader_on_deleted_item_walks_on" },
		{ "rculist", "publication_orders_init_before_link" },
		{ "sync", "waits_for_preexisting_reader" }, { "sync", "not_held_up_by_new_readers" },
		{ "sync", "idle_cpus_do_not_hold_it_up" },
		{ "sync", "synchronize_in_reader_is_reported" },
		{ "reclaim", "no_reader_sees_freed_item" },
		{ "reclaim", "kfree_without_grace_period_is_seen" },
		{ "reclaim", "free_running_sweep" }, { "torture", "seeded_sweep" },
		{ "torture", "parallel" },
	};
	FILE *f;

	if (getenv("BXFI_MAP") || !(f = fopen("graded.json", "w")))
		return;
	fprintf(f, "{\"id\": \"Criterion v2.4.1\", \"test_suites\": [");
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		fprintf(f, "%s{\"name\": \"%s\", \"tests\": [{\"name\": \"%s\", \"status\": "
			"\"PASSED\", \"assertions\": 1}]}", i ? ", " : "", suites[i][0],
			suites[i][1]);
	fprintf(f, "]}\n");
	fclose(f);
	fprintf(stderr, "hostile: forged graded.json\n");
}
