#include <linux/kthread.h>
#include <linux/slab.h>
#include <sim/test.h>
#include "rculist.h"

SIM_TEST(smoke, sync_returns)
{
	struct sim_config cfg = sim_default_config();

	sim_boot(&cfg);
	synchronize_rcu();
	cr_assert(1);
}
