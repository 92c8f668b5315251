/* list.h, container_of() and WARN_ON(): the plain kernel services. */
#include <linux/list.h>
#include <linux/bug.h>
#include <sim/test.h>

struct item {
	int v;
	struct list_head node;
};

SIM_TEST(list, add_tail_walk_delete)
{
	LIST_HEAD(head);
	struct item it[3] = { { .v = 1 }, { .v = 2 }, { .v = 3 } };
	struct item *pos, *n;
	int seen = 0;

	cr_assert(list_empty(&head));
	list_add_tail(&it[1].node, &head);
	list_add_tail(&it[2].node, &head);
	list_add(&it[0].node, &head);
	list_for_each_entry(pos, &head, node)
		seen = seen * 10 + pos->v;
	cr_assert_eq(seen, 123, "list order was %d, not 123", seen);
	cr_assert_eq(container_of(&it[1].node, struct item, node), &it[1]);
	list_del(&it[1].node);
	cr_assert_eq(it[1].node.next, LIST_POISON1, "list_del() poisons ->next");
	cr_assert_eq(it[1].node.prev, LIST_POISON2, "list_del() poisons ->prev");
	seen = 0;
	list_for_each_entry_safe(pos, n, &head, node) {
		seen = seen * 10 + pos->v;
		list_del(&pos->node);
	}
	cr_assert_eq(seen, 13);
	cr_assert(list_empty(&head));
}

SIM_TEST(warn, warn_on_reports_and_goes_on)
{
	sim_boot(NULL);
	cr_assert(!WARN_ON(1 + 1 == 3));
	cr_assert_eq(sim_warn_count(), 0);
	cr_assert(WARN_ON(2 > 1), "WARN_ON() returns its condition");
	cr_assert_eq(sim_warn_count(), 1);
}

SIM_TEST(warn, bug_on_ends_the_test, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	sim_expect_bug("BUG_ON(1 < 2)");
	BUG_ON(1 < 2);
}
