# scenario.sh - lab 3 on a real kernel: load mymod, let it work, unload it.
#
# Rule kept here: the article's bug must show every time it is there, not by
# luck. So every source of mymod's callbacks is on CPU 1 (the writer kthread,
# the timer, the re-posting callbacks queued by module_init running there),
# its exit runs on CPU 0, and just before the unload 100 ms of slow callbacks
# are queued on CPU 1, and kept at that size for 3 s (rl_keep), ahead of
# mymod's last ones: an exit that does not wait for them, or lets one more be
# queued after its rcu_barrier() (a timer or writer still running, a re-post
# before fullstop), returns, and the kernel frees mymod's code long before
# they run.
# (With everything on one CPU, Linux would often invoke them, in order,
# before the grace period the module loader waits for on unload ends.)
rl_insmod 1 mymod writer=1 writer_cpu=1 timer=1 reposters=1000
rl_run 1
rl_flood 1 5000 20
rl_keep 1 3000
rl_rmmod 0 mymod
rl_run 2
