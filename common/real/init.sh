#!/bin/busybox sh
# init.sh - the guest's /init for a real run (./workbook check N --real).
#
# Rule kept here: the guest says what it did in lines that start "RCULABS:"
# on the console, the only channel out (no network, no shared folder), and
# every way it can end is bounded: an oops, a hung task or a lockup panics,
# and the panic powers the machine off (panic=-1 with QEMU's -no-reboot); a
# guest that says nothing is stopped by the host at its time limit.
# Between the mounts and the poweroff it runs the lab's real/scenario.sh,
# which uses the rl_* helpers below.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo 7 > /proc/sys/kernel/printk     # a module's pr_info() reaches the console
echo 1 > /proc/sys/kernel/panic_on_oops
echo 1 > /proc/sys/kernel/panic_on_warn
echo 20 > /proc/sys/kernel/hung_task_timeout_secs
echo 1 > /proc/sys/kernel/hung_task_panic
echo 1 > /proc/sys/kernel/softlockup_panic

# rl_insmod CPU MODULE [PARAM=VALUE...]: load /MODULE.ko from CPU, then
# print where its sections are, so that the host can map a faulting address
# back to a function and line after the module is gone.
rl_insmod() {
	cpu=$1; mod=$2; shift 2
	echo "RCULABS: insmod $mod on CPU $cpu $*"
	taskset $((1 << cpu)) insmod /$mod.ko "$@" || { echo "RCULABS: insmod $mod failed"; return 1; }
	for s in /sys/module/$mod/sections/.*; do
		[ -f "$s" ] && echo "RCULABS: section $mod ${s##*/} $(cat "$s")"
	done
}

# rl_rmmod CPU MODULE: unload MODULE from CPU (its exit function runs there).
rl_rmmod() {
	echo "RCULABS: rmmod $2 on CPU $1"
	taskset $((1 << $1)) rmmod "$2"
	echo "RCULABS: rmmod $2 returned $?"
}

# rl_flood CPU [NR [US]]: NR callbacks of US microseconds each, queued on CPU
# (rculabs_flood.ko): whatever is queued there next waits behind them.
rl_flood() {
	echo "RCULABS: flood CPU $1 with ${2:-5000} callbacks of ${3:-20} us"
	taskset $((1 << $1)) insmod /rculabs_flood.ko nr=${2:-5000} us=${3:-20}
}

# rl_keep CPU MS: the flood (rl_flood on CPU) kept at its size for MS ms:
# what CPU queues meanwhile, after an rcu_barrier() too, waits behind it.
rl_keep() {
	echo "RCULABS: keep CPU $1's flood for $2 ms"
	taskset $((1 << $1)) sh -c "echo $2 > /sys/module/rculabs_flood/parameters/keep"
}

# rl_hog CPU MS: CPU's workqueue busy for MS milliseconds (rculabs_flood.ko
# loaded): the work items queued there wait (SRCU's callback invocation is
# one), grace periods do not. Run it from another CPU: a shell on CPU waits
# too, in a kernel that does not preempt kernel code.
rl_hog() {
	echo "RCULABS: hog CPU $1's workqueue for $2 ms"
	echo "$1" > /sys/module/rculabs_flood/parameters/hog_cpu
	echo "$2" > /sys/module/rculabs_flood/parameters/wq_hog
}

# rl_srcu_hold CPU MS: a reader of rculabs_flood.ko's SRCU domain on CPU for
# MS milliseconds, and a grace period begun on CPU: its grace periods are
# driven from CPU until the reader leaves and the ones needed meanwhile end.
rl_srcu_hold() {
	echo "RCULABS: SRCU reader on CPU $1 for $2 ms"
	taskset $((1 << $1)) sh -c "echo $2 > /sys/module/rculabs_flood/parameters/srcu_hold"
}

# rl_expect CAUSE: what follows must end in a report whose cause names
# CAUSE (the lesson, shown on a real kernel): the boot passes with it, and
# fails if the scenario runs on to its end without it.
rl_expect() {
	echo "RCULABS: expect $1" > /dev/kmsg    # a kernel line: never split by another
}

# rl_verdict TEXT: a module was to print "RCULABS: PASS TEXT..." or
# "RCULABS: FAIL TEXT..."; if it printed neither, that is a failure too.
rl_verdict() {
	dmesg | grep -q "RCULABS: \(PASS\|FAIL\) $1" || echo "RCULABS: FAIL $1: no verdict printed"
}

# rl_run SECONDS: let the guest run (the scenario's own time, in the guest).
rl_run() {
	sleep "$1"
}

echo "RCULABS: boot $(uname -r) $(grep -c ^processor /proc/cpuinfo) CPUs"
. /scenario.sh
echo "RCULABS: done"
poweroff -f
