# scenario.sh - lab 5's module story on Linux's own SRCU.
#
# Rule kept here: srcumod's two exits run in one boot, the right one first,
# each the same way, so that the wrong one fails every time, not by luck:
#  - srcumod queues call_srcu() callbacks on both CPUs, on the domain
#    rculabs_flood.ko owns (as the simulation's test owns it), and has a
#    callback list per CPU there: the kernel's command line (lab.json) sets
#    srcutree.convert_to_big=1, as a big machine's domains have, and the
#    simulation's. (On two CPUs Linux keeps one list by default, invoked in
#    order, where synchronize_srcu()'s own wake-up waits behind srcumod's.)
#  - CPU 1's workqueue, where Linux invokes CPU 1's SRCU callbacks, is busy
#    for a second; a reader on CPU 0 holds a grace period begun on CPU 0, so
#    that SRCU drives it and the next one, which srcumod's callbacks need,
#    from CPU 0's workqueue: that one ends while CPU 1's callbacks wait.
#  - srcumod is unloaded from CPU 0, and this shell stays on CPU 0; the
#    kernel preempts kernel code (preempt=full), so that nothing but CPU 1's
#    workqueue waits for the busy worker (the kernel's RCU grace-period
#    kthread, woken on CPU 1, would otherwise wait, and the unload with it).
# The exit with srcu_barrier() waits for CPU 1's callbacks: clean. The exit
# with synchronize_srcu() only returns once the grace period has ended,
# srcumod is freed, and CPU 1 then calls into it: the scenario expects that.
taskset -p 1 $$ > /dev/null
rl_insmod 0 rculabs_flood nr=0

rl_hog 1 1000
rl_srcu_hold 0 300
rl_insmod 0 srcumod per_cpu=100 exit_barrier=1
rl_rmmod 0 srcumod
rl_run 2
echo "RCULABS: PASS srcumod's exit with srcu_barrier(): no callback ran after the unload"

rl_hog 1 1000
rl_srcu_hold 0 300
rl_expect "callback into unloaded module srcumod"
rl_insmod 0 srcumod per_cpu=100 exit_barrier=0
rl_rmmod 0 srcumod
rl_run 2
