/* kmalloc()/kfree(): poison, quarantine, double free, leaks. */
#include <string.h>
#include <linux/slab.h>
#include <sim/test.h>

struct obj {
	long key;
	char name[24];
};

SIM_TEST(memory, freed_object_reads_as_poison)
{
	sim_boot(NULL);
	struct obj *o = kmalloc(sizeof(*o), GFP_KERNEL);

	o->key = 42;
	strcpy(o->name, "alive");
	cr_assert(!kmem_is_poisoned(o, sizeof(*o)));
	kfree(o);
	/* A late reader (what RCU exists to prevent) reads poison, not new data: */
	cr_assert(kmem_is_poisoned(o, sizeof(*o)),
		  "a freed object must read as POISON_FREE while quarantined");
	struct obj *p = kmalloc(sizeof(*p), GFP_KERNEL);

	cr_assert_neq(p, o, "freed memory must not be handed out again at once");
	kfree(p);
}

SIM_TEST(memory, kzalloc_zeroes)
{
	char zero[64] = { 0 };

	sim_boot(NULL);
	char *b = kzalloc(64, GFP_ATOMIC);

	cr_assert(!memcmp(b, zero, 64));
	cr_assert_eq(kmem_live_objects(), 1);
	kfree(b);
	cr_assert_eq(kmem_live_objects(), 0);
}

SIM_TEST(memory, double_free_is_a_bug, .signal = BUG_SIGNAL)
{
	sim_boot(NULL);
	sim_expect_bug("double free");
	void *p = kmalloc(8, GFP_KERNEL);

	kfree(p);
	kfree(p);
}

SIM_TEST(memory, leak_is_counted_at_halt)
{
	sim_boot(NULL);
	void *p = kmalloc(16, GFP_KERNEL);

	(void)p;
	cr_assert_eq(sim_halt(), 1, "one object was never freed: sim_halt() must say so");
}
