# scenario.sh - lab 7 on a real kernel: the student's torture, as a module,
# on the kernel's own RCU and then on broken flavours of it.
#
# Rule kept here: a flavour's verdict is the module's own "RCULABS: PASS" or
# "RCULABS: FAIL" line; the kernel's RCU comes first, so that a torture that
# cries wolf is seen before any broken flavour is tried. The kernel runs with
# full preemption (lab.json's cmdline), so that a reader that never sleeps
# does not keep a fake writer off its CPU, and with freed slab memory
# poisoned, so that a reader that finds a freed element sees it.
for f in rcu sync_at_once barrier_at_once read_unprotected call_at_once; do
	rl_insmod 0 rculabs_torture flavour=$f
	rl_verdict "torture on $f:"
	rl_rmmod 0 rculabs_torture
done
