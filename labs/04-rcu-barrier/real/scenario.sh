# scenario.sh - lab 4 on a real kernel: the student's per-CPU callbacks and
# rcu_barrier(), under names of their own, in a module whose init runs eight
# checks.
#
# Rule kept here: each check's verdict is the module's own "RCULABS: PASS"
# or "RCULABS: FAIL" line, one per check: a callback after a reader, a
# barrier with nothing queued, a barrier on each CPU with slow callbacks on
# either, two barriers at once. A barrier that never returns is reported
# by the check after its bound, or by the kernel's hung-task report, which
# panics the guest (init.sh).
rl_insmod 0 treercu
rl_verdict "grace period:"
rl_verdict "empty:"
for w in "1, busy CPU 0" "0, busy CPU 1" "0, busy CPU 0" "1, busy CPU 1"; do
	rl_verdict "waits on CPU $w:"
done
rl_verdict "concurrent:"
rl_rmmod 0 treercu
