# scenario.sh - lab 2 on a real kernel: the student's call_rcu(), under a
# name of its own, in a module whose init runs three checks.
#
# Rule kept here: each check's verdict is the module's own "RCULABS: PASS"
# or "RCULABS: FAIL" line, one per check, in the order the lab builds them:
# the grace period first (one callback), then tasks and interrupts on both
# CPUs at once, then the order. A deadlock in call_rcu() (its lock taken
# with interrupts on, and an interrupt on the same CPU calling it) is a
# soft lockup, which panics the guest (init.sh) with its report.
rl_insmod 0 callrcu
rl_verdict "grace period:"
rl_verdict "from interrupts:"
rl_verdict "order:"
rl_rmmod 0 callrcu
