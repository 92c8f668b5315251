"""--real: a lab's module on a real Linux kernel, booted in QEMU.

Rule kept here: the student's file is built as it is (common/real/ bridges
what only the simulation has), the guest reaches nothing of the host (no
network, no shared folder: its console is the only way out), every boot is
bounded (the guest panics on an oops, a warning, a hung task or a lockup and
powers off; the host stops it at BOOT_LIMIT), and what the kernel printed is
reported in the workbook's own form: a cause, the student's function and
line, the kernel's own lines, the console file and how to run it again.
A submission's real run (grade --real) builds and boots inside the grader's
sandbox (Confined), and is reported, never graded: its verdict lines come
from a kernel in which the submission's own code runs.
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from .common import Fail, LABS, ROOT, SOLUTIONS, say

PACKAGES = ["qemu-system-x86", "linux-image-cloud-amd64", "linux-headers-cloud-amd64",
            "busybox-static", "cpio"]
REAL = os.path.join(ROOT, "common", "real")
BOOT_LIMIT = 60            # seconds a boot may take without KVM (a third of it with)
BUILD_LIMIT = 300          # seconds a submission's module build may take (grade --real)
EXCERPT = 8                # lines of the kernel's report shown
TTY = sys.stdout.isatty()  # a progress line is rewritten in place on a terminal
APPEND = "console=ttyS0 quiet panic=-1 oops=panic"
FRAME = re.compile(r"^\s*(?:\? )?([\w.]+)\+0x([0-9a-f]+)/0x[0-9a-f]+(?: \[(\w+)\])?")
REPORT = [   # (pattern, what it is): the first of these in the console decides
    (re.compile(r"BUG: unable to handle page fault for address: ([0-9a-f]+)"), "oops"),
    (re.compile(r"general protection fault"), "oops"),
    (re.compile(r"kernel BUG at (\S+)"), "BUG"),
    (re.compile(r"watchdog: BUG: soft lockup"), "soft lockup"),
    # any other BUG: a NULL dereference, scheduling while atomic, sleeping
    # in atomic context, an interrupt stack overflowed, ...: named as printed
    (re.compile(r"(?<!watchdog: )BUG: .*"), "BUG"),
    (re.compile(r"INFO: task (\S+):\d+ blocked for more than (\d+) seconds"), "hung task"),
    (re.compile(r"rcu: INFO: \w+ (?:self-)?detected stall"), "RCU CPU stall"),
    (re.compile(r"WARNING: CPU: \d+ PID: \d+ at "), "WARNING"),
    (re.compile(r"Kernel panic - not syncing"), "panic"),
]


def version_key(v):
    """6.1.0-57-cloud-amd64 after 6.1.0-9-cloud-amd64: numbers compare as numbers."""
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", v)]


def kernel():
    """The newest kernel with both its image and its headers here, or a Fail
    naming what to install."""
    mods = "/usr/lib/modules"
    have = sorted((v for v in (os.listdir(mods) if os.path.isdir(mods) else [])
                   if os.path.isdir(os.path.join(mods, v, "build"))
                   and os.path.isfile(f"/boot/vmlinuz-{v}")), key=version_key, reverse=True)
    missing = [t for t in ("qemu-system-x86_64", "busybox", "cpio", "make", "addr2line")
               if not shutil.which(t)]
    if not have or missing:
        what = f"{', '.join(missing)} missing" if missing else "no kernel with its headers"
        raise Fail(f"--real needs a Linux kernel image and its headers, QEMU and a static "
                   f"busybox ({what}): run ./workbook setup, which installs "
                   f"{' '.join(PACKAGES)}", 1)
    if not static(shutil.which("busybox")):
        raise Fail(f"--real needs a static busybox (the guest has no C library): "
                   f"{shutil.which('busybox')} is dynamic; install busybox-static", 1)
    v = have[0]
    if not os.access(f"/boot/vmlinuz-{v}", os.R_OK):
        raise Fail(f"/boot/vmlinuz-{v} is readable by root only: run this as root, or "
                   f"'sudo chmod a+r /boot/vmlinuz-{v}' once", 1)
    return v


def static(path):
    """Whether the ELF executable PATH has no program interpreter (PT_INTERP)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:5] != b"\x7fELF\x02":
            return False
        phoff = int.from_bytes(head[32:40], "little")
        size, count = (int.from_bytes(head[i:i + 2], "little") for i in (54, 56))
        f.seek(phoff)
        table = f.read(size * count)
    return all(int.from_bytes(table[i:i + 4], "little") != 3 for i in range(0, len(table), size))




class Confined:
    """The grader's sandbox (sandbox.py) around a submission's real run: the
    build of its module (which reads what the submission's source names:
    without it an #include under #ifdef MODULE could read solutions/) and
    QEMU. RO: folders outside the sandbox's view that every step reads."""

    def __init__(self, sandbox, ro=()):
        self.sandbox, self.ro = sandbox, list(ro)

    def run(self, argv, cwd, rw=(), ro=(), timeout=None, limits=None, **kw):
        """subprocess.run(ARGV) in the sandbox, RW writable (given to the
        sandbox's user for the run and taken back after), with the sandbox's
        own limits unless LIMITS (QEMU's) says otherwise."""
        from .run import clean_env
        for p in rw:
            self.sandbox.give(p)
        how = self.sandbox.wrap(argv, cwd, clean_env(), rw=list(rw), ro=self.ro + list(ro),
                                limits=limits)
        try:
            return subprocess.run(stdin=subprocess.DEVNULL, cwd=cwd, timeout=timeout, **kw,
                                  **how)
        finally:
            self.sandbox.reap()
            for p in rw:
                self.sandbox.take(p)


def build_module(lab, mod, src, out, version, symbols=(), confined=None):
    """MOD as a real NAME.ko in OUT from SRC, linked with the lab's real/*.c,
    with the lab's tests/*.h (shared with the simulation) on the include
    path, the lab's real/real.h (if any) read before SRC, and SYMBOLS (Module.symvers files) naming what other modules
    export; return the .ko's path, or raise Fail with the compiler's first
    error."""
    name = mod["name"]
    kb = os.path.join(out, name)
    shutil.rmtree(kb, ignore_errors=True)
    os.makedirs(kb)
    # A link, not a copy: the debug info names NAME_student.c with the
    # student's own line numbers, and map_file() names the student's file.
    os.symlink(os.path.abspath(src), os.path.join(kb, f"{name}_student.c"))
    objs = [f"{name}_student.o"]
    given = os.path.join(LABS, lab.name, "real")
    for f in sorted(os.listdir(given)):
        if f.endswith(".c"):
            os.symlink(os.path.join(given, f), os.path.join(kb, f))
            objs.append(f[:-2] + ".o")
    # the lab's own bridge (real/real.h), read after the common one
    own = os.path.join(given, "real.h")
    with open(os.path.join(kb, "Kbuild"), "w") as f:
        f.write(f"obj-m := {name}.o\n{name}-y := {' '.join(objs)}\n"
                f"ccflags-y := -I{REAL}/include -I{LABS}/{lab.name}/tests "
                f"-include {REAL}/rculabs_real.h" +
                (f" -include {own}" if os.path.isfile(own) else "") + "\n")
    r = make(kb, version, symbols, confined)
    ko = os.path.join(kb, f"{name}.ko")
    if r.returncode or not os.path.isfile(ko):
        err = next((l for l in r.stdout.splitlines() if "error" in l), r.stdout.strip()[-300:])
        raise Fail(f"{name}.ko does not build against Linux {version}: "
                   f"{err.replace(kb + '/' + name + '_student.c', os.path.relpath(src, ROOT))}", 1)
    return ko


def make(kb, version, symbols=(), confined=None):
    extra = [f"KBUILD_EXTRA_SYMBOLS={' '.join(symbols)}"] if symbols else []
    argv = ["make", "-C", f"/usr/lib/modules/{version}/build", f"M={kb}", "modules"] + extra
    how = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if not confined:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, **how)
    # The submission's source decides what the compiler reads (an #include of
    # a device under #ifdef MODULE): the sandbox's memory limit and a clock.
    try:
        return confined.run(argv, kb, rw=[kb], timeout=BUILD_LIMIT, **how)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 1, f"error: the build took more than "
                                                    f"{BUILD_LIMIT} s")


def build_flood(out, version):
    kb = os.path.join(out, "rculabs_flood")
    ko = os.path.join(kb, "rculabs_flood.ko")
    src = os.path.join(REAL, "flood", "rculabs_flood.c")
    if os.path.isfile(ko) and os.path.getmtime(ko) > os.path.getmtime(src):
        return ko
    shutil.rmtree(kb, ignore_errors=True)
    os.makedirs(kb)
    os.symlink(src, os.path.join(kb, "rculabs_flood.c"))
    with open(os.path.join(kb, "Kbuild"), "w") as f:
        f.write("obj-m := rculabs_flood.o\n")
    if make(kb, version).returncode:
        raise Fail("common/real/flood/rculabs_flood.c does not build: a workbook bug", 1)
    return ko


def initramfs(out, lab, kos):
    """The guest's whole file system: busybox, /init, the scenario, the .ko files."""
    root = tempfile.mkdtemp(dir=out, prefix="initramfs.")
    try:
        os.makedirs(os.path.join(root, "bin"))
        for d in ("proc", "sys", "dev"):
            os.makedirs(os.path.join(root, d))
        shutil.copy(shutil.which("busybox"), os.path.join(root, "bin", "busybox"))
        shutil.copy(os.path.join(REAL, "init.sh"), os.path.join(root, "init"))
        os.chmod(os.path.join(root, "init"), 0o755)
        shutil.copy(os.path.join(LABS, lab.name, "real", "scenario.sh"),
                    os.path.join(root, "scenario.sh"))
        for ko in kos:
            shutil.copy(ko, root)
        files = subprocess.run(["find", "."], cwd=root, stdout=subprocess.PIPE, text=True,
                               check=True).stdout
        cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files.encode(),
                              stdout=subprocess.PIPE, check=True).stdout
    finally:
        shutil.rmtree(root, ignore_errors=True)
    path = os.path.join(out, "initramfs.gz")
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(cpio)
    return path


def cpu_virtualises():
    """Does this CPU offer hardware virtualisation (vmx or svm)? A virtual
    machine without nested virtualisation can still have a /dev/kvm whose
    guests hang in their firmware (seen: QEMU 7.2 stuck after SeaBIOS's
    "Booting from ROM..." until the boot's time limit)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(ln.startswith("flags") and {"vmx", "svm"} & set(ln.split())
                       for ln in f)
    except OSError:
        return False


def accel():
    """KVM where this user may use it and the CPU virtualises, else TCG
    (software emulation)."""
    if os.access("/dev/kvm", os.R_OK | os.W_OK) and cpu_virtualises():
        return "kvm", BOOT_LIMIT // 3
    return "tcg", BOOT_LIMIT


def kernel_image(version, top):
    """A copy of the kernel image in TOP, readable by the sandbox's user
    (Debian's /boot/vmlinuz-* is root's alone, and /boot is not in the
    sandbox's view)."""
    src, dst = f"/boot/vmlinuz-{version}", os.path.join(top, f"vmlinuz-{version}")
    if not os.path.isfile(dst) or os.path.getmtime(dst) < os.path.getmtime(src):
        shutil.copyfile(src, dst + ".new")
        os.chmod(dst + ".new", 0o644)
        os.replace(dst + ".new", dst)
    return dst


def where(acc, confined):
    """How the guest runs, for the run's first line."""
    if confined:
        return f"TCG, in the grader's sandbox: {confined.sandbox.kind}"
    return "KVM" if acc == "kvm" else "TCG: no usable KVM"


def boot(version, initrd, log, cmdline="", confined=None):
    """One boot; return (console text, seconds, stopped at the limit?).
    CONFINED: QEMU in the sandbox, TCG always (the sandbox's /dev has no
    kvm), the kernel image from a copy beside INITRD."""
    acc, limit = ("tcg", BOOT_LIMIT) if confined else accel()
    image = (kernel_image(version, os.path.dirname(os.path.dirname(initrd))) if confined
             else f"/boot/vmlinuz-{version}")
    cmd = ["qemu-system-x86_64", "-accel", acc, "-m", "512", "-smp", "2", "-nographic",
           "-no-reboot", "-nic", "none", "-monitor", "none", "-kernel", image,
           "-initrd", initrd, "-append", f"{APPEND} {cmdline}".strip()]
    t0 = time.monotonic()
    with open(log, "wb") as f:
        how = dict(stdout=f, stderr=subprocess.STDOUT, timeout=limit)
        try:
            if confined:
                # QEMU itself (the guest's memory is -m's), not the submission's
                confined.run(cmd, os.path.dirname(initrd),
                             ro=[os.path.dirname(initrd), os.path.dirname(image)],
                             limits={"as": 16 << 30, "cpu": 2 * BOOT_LIMIT}, **how)
            else:
                subprocess.run(cmd, stdin=subprocess.DEVNULL, **how)
            stopped = False
        except subprocess.TimeoutExpired:
            stopped = True
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    # Terminal controls and the kernel's time stamps off: lines to match and show.
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1bc|\r", "", text)
    text = re.sub(r"(?m)^\[ *\d+\.\d+\] ", "", text)
    return text, time.monotonic() - t0, stopped


class Ko:
    """A built module: its sections' sizes and symbols, and where it was loaded.
    CONFINED (a submission's module): binutils read it in the sandbox too."""

    def __init__(self, name, path, student, confined=None):
        self.name, self.path, self.student = name, path, student
        self.confined = confined
        self.sizes, self.symbols = {}, {}
        out = self.tool(["objdump", "-h", "-t", path])
        for l in out.splitlines():
            h = re.match(r"\s*\d+\s+(\S+)\s+([0-9a-f]+)\s", l)
            if h:
                self.sizes[h.group(1)] = int(h.group(2), 16)
            s = re.match(r"([0-9a-f]{16})\s.{7}\s(\S+)\s+[0-9a-f]+\s+(\S+)$", l)
            if s:
                self.symbols[s.group(3)] = (s.group(2), int(s.group(1), 16))

    def tool(self, argv):
        """ARGV's standard output (a binutils tool reading the .ko)."""
        how = dict(stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                   errors="replace")
        if self.confined:
            return self.confined.run(argv, os.path.dirname(self.path),
                                     ro=[os.path.dirname(self.path)], **how).stdout
        return subprocess.run(argv, **how).stdout

    def line(self, section, offset):
        """'function() at file:line' for OFFSET into SECTION, the student's file by its path."""
        out = self.tool(["addr2line", "-f", "-e", self.path, "-j", section,
                         hex(offset)]).split("\n")
        if len(out) < 2 or out[0] == "??":
            return f"{self.name}.ko {section}+{hex(offset)}"
        where = out[1].split(" ")[0]
        if os.path.basename(where.rsplit(":", 1)[0]) == f"{self.name}_student.c":
            where = f"{os.path.relpath(self.student, ROOT)}:{where.rsplit(':', 1)[1]}"
        else:
            where = os.path.basename(where)
        return f"{out[0]}() at {where}"


def locate(addr, kos, loaded):
    """(module, 'function() at file:line') for a code address, from the
    sections the guest printed at insmod; (None, None) outside every module."""
    for ko in kos:
        for sec, base in loaded.get(ko.name, {}).items():
            if base <= addr < base + ko.sizes.get(sec, 0):
                return ko.name, ko.line(sec, addr - base)
    return None, None


def locate_data(addr, kos, loaded):
    """(module, 'SYMBOL (section+offset)') for a data address in a module."""
    for ko in kos:
        for sec, base in loaded.get(ko.name, {}).items():
            if base <= addr < base + ko.sizes.get(sec, 0):
                off = addr - base
                near = [(v, n) for n, (sc, v) in ko.symbols.items() if sc == sec and v <= off]
                name = max(near)[1] if near else "?"
                return ko.name, f"{name} ({sec}+{hex(off)})"
    return None, None


def frame_line(fn, off, ko):
    sec, value = ko.symbols.get(fn, (None, None))
    return ko.line(sec, value + off) if sec else f"{fn}()"


def running_check(text):
    """The check a module announced last ("RCULABS: running NAME") and gave
    no verdict for yet, or None: where a guest that went silent was."""
    running = None
    for m in re.finditer(r"RCULABS: (running|PASS|FAIL) (.*)", text):
        running = m.group(2).strip() if m.group(1) == "running" else None
    return running


def diagnose(text, kos, expectations=False):
    """(None, or what went wrong, the scenario's verdicts that passed). What
    went wrong is (what, cause, the kernel's lines): WHAT in a word or two,
    CAUSE the sentence that names it. A scenario states a verdict of its own
    in a line "RCULABS: PASS ..." or "RCULABS: FAIL ..." (lab 7's module).
    With EXPECTATIONS (only where no student code runs in the guest: code
    there could print the line), "RCULABS: expect CAUSE" turns the report it
    names into a pass."""
    lines = text.splitlines()
    loaded, unloaded, done, passes, expect = {}, {}, False, [], None
    for l in lines:
        e = re.search(r"RCULABS: expect (.*)", l)
        if e and expectations:
            expect = e.group(1).strip()
        v = re.search(r"RCULABS: (PASS|FAIL) (.*)", l)
        if v and v.group(1) == "PASS":
            passes.append(v.group(2))
        elif v:
            return ("FAIL", v.group(2), [l.strip()]), passes
        m = re.search(r"RCULABS: insmod (\w+) on CPU", l)
        if m:       # loaded again: its old sections are gone, its new ones follow
            unloaded.pop(m.group(1), None)
            loaded.pop(m.group(1), None)
        m = re.search(r"RCULABS: section (\w+) (\S+) 0x([0-9a-f]+)", l)
        if m:
            loaded.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3), 16)
        m = re.search(r"RCULABS: rmmod (\w+) on CPU", l)
        if m:       # its exit runs, then its memory is freed: a fault from now on is that
            unloaded[m.group(1)] = "began"
        m = re.search(r"RCULABS: rmmod (\w+) returned (\d+)", l)
        if m and m.group(2) == "0":
            unloaded[m.group(1)] = "returned"
        elif m:
            return ("rmmod failed", f"rmmod {m.group(1)} failed (exit status {m.group(2)})",
                    [l]), passes
        m = re.search(r"RCULABS: insmod (\w+) failed", l)
        if m:
            return ("insmod failed", f"insmod {m.group(1)} failed: its init returned an error",
                    lines[max(0, lines.index(l) - EXCERPT):lines.index(l) + 1]), passes
        done = done or "RCULABS: done" in l
        for pat, kind in REPORT:
            if pat.search(l):
                i = lines.index(l)
                why = cause(kind, pat.search(l), lines, i, kos, loaded, unloaded)
                if expect and expect in why:
                    return None, passes + [f"shown, as the lab teaches: {why}"]
                return (kind, why, excerpt(lines, i)), passes
    if expect and done:
        return ("not shown", f"the scenario expected '{expect}', and the kernel ran on to "
                f"its end without it", [l for l in lines if "RCULABS:" in l][-EXCERPT:]), passes
    if not done:
        during = running_check(text)
        return ("no end", "the guest stopped before the scenario's end" +
                (f", during the check '{during}'" if during else "") + ", with no report",
                lines[-EXCERPT:]), passes
    return None, passes


def excerpt(lines, i):
    """The report's lines that say what, where and how it got there: its
    first line, the task, the RIP and the first frames of the call trace."""
    rest = lines[i:i + 80]
    keep = [rest[0]] + [l for l in rest[1:] if re.match(r"(Oops|CPU: \d+ PID|RIP: 0010)", l)][:3]
    if "Call Trace:" in rest:
        t = rest.index("Call Trace:")
        keep += [l for l in rest[t:t + 8] if FRAME.match(l)][:EXCERPT - len(keep)]
    return [l.strip() for l in keep]


def cause(kind, m, lines, i, kos, loaded, unloaded):
    """The sentence that names what went wrong, from a report at LINES[I]."""
    rest = lines[i:i + 60]
    rip = next((re.search(r"RIP: 0010:(\S+)", l) for l in rest if "RIP: 0010:" in l), None)
    task = next((re.search(r"CPU: (\d+) PID: \d+ Comm: (\S+)", l) for l in rest
                 if " Comm: " in l), None)
    frames = [FRAME.match(l) for l in rest if FRAME.match(l)]
    who = f", in {task.group(2)} on CPU {task.group(1)}" if task else ""
    via = next((f.group(1) for f in frames if f.group(1) in
                ("rcu_do_batch", "srcu_invoke_callbacks", "call_timer_fn", "run_timer_softirq",
                 "kthread", "process_one_work")), None)
    mod, where = None, None
    if rip and rip.group(1).startswith("0x"):
        mod, where = locate(int(rip.group(1), 16), kos, loaded)
    if not where:     # the first frame in a module the workbook built
        for f in frames:
            ko = next((k for k in kos if k.name == f.group(3)), None)
            if ko:
                mod, where = ko.name, frame_line(f.group(1), int(f.group(2), 16), ko)
                break
    if not where and kind == "oops" and m.groups():     # the faulting data address
        mod, data = locate_data(int(m.group(1), 16), kos, loaded)
        if data and mod in unloaded:
            return f"memory of unloaded module {mod} used: {data}, after rmmod {mod} " \
                f"{unloaded[mod]}{who}" + (f" (from {via})" if via else "")
    if rip and rip.group(1).startswith("kthread_stop+"):
        return f"{kind} in kthread_stop(), called from {where or 'a module'}{who}: the " \
            f"kthread had returned before it was asked to stop, and Linux had freed it " \
            f"(a kthread that is stopped waits for kthread_should_stop() first)"
    if kind == "oops" and mod in unloaded:
        what = {"rcu_do_batch": "callback into unloaded module",
                "srcu_invoke_callbacks": "callback into unloaded module",
                "call_timer_fn": "timer function of unloaded module"}.get(
                    via, "code of unloaded module run")
        return f"{what} {mod}: {where}, run after rmmod {mod} {unloaded[mod]}{who}" + \
            (f" (from {via})" if via else "")
    if kind == "hung task":      # the task line names khungtaskd, not the task
        return f"hung task: {m.group(1)} blocked for more than {m.group(2)} s" + \
            (f" in {where}" if where else "")
    if kind in ("soft lockup", "RCU CPU stall") and where:
        return f"{kind} in {mod}: {where}{who}: a CPU spun there for 20 s without " \
            f"scheduling; in a lock, one never released, or one that an interrupt on the " \
            f"holder's own CPU takes again (was it taken with interrupts on?)"
    if kind == "BUG" and m.group(0).startswith("BUG: "):
        kind = m.group(0).split(" at ", 1)[0].strip()   # what the BUG says, not where
    return f"{kind}" + (f" in {mod}: {where}" if where else "") + who


def cmd_real(lab, impl=LABS, boots=3, every=False, quiet=False, top=None, confined=None,
             tell=say):
    """Build LAB's real modules from IMPL, boot up to BOOTS times (all of them
    with EVERY; else stop at the first failure) in build folder TOP (default
    build-wb-real), each build and boot of the student's module CONFINED when
    given (a submission's); progress through TELL; return (failed boots, boots
    run, the first failure's cause)."""
    say = tell
    if not lab.real_modules:
        raise Fail(f"{lab.name} has no real-kernel run (its lab.json has no 'real')", 2)
    version = kernel()
    top = top or os.path.join(ROOT, "build-wb-real")
    out = os.path.join(top, lab.name)
    os.makedirs(out, exist_ok=True)
    acc, limit = ("tcg", BOOT_LIMIT) if confined else accel()
    say(f"== {lab.name} on a real kernel: Linux {version} in QEMU "
        f"({where(acc, confined)}), 2 CPUs ==")
    if lab.real_about and not quiet:
        say(lab.real_about)
    t0 = time.monotonic()
    kos = []
    flood = build_flood(top, version)
    symvers = [os.path.join(os.path.dirname(flood), "Module.symvers")]
    for mod in lab.real_modules:
        # a given module (the lab's tests/) is the workbook's, never the submission's
        given = mod["source"] not in lab.files
        src = os.path.join(LABS if given else impl, lab.name, mod["source"])
        say(f"building {mod['name']}.ko from {os.path.relpath(src, ROOT)} ...")
        mine = None if given else confined
        kos.append(Ko(mod["name"], build_module(lab, mod, src, out, version, symvers, mine),
                      src, mine))
    initrd = initramfs(out, lab, [k.path for k in kos] + [flood])
    say(f"built in {time.monotonic() - t0:.0f} s; a boot that has not ended after {limit} s is stopped")
    failed, first = 0, None
    for n in range(1, boots + 1):
        log = os.path.join(out, f"boot-{n}.log")
        say(f"boot {n}/{boots}: booting, loading, running ...", end="\r" if TTY else "\n")
        text, secs, stopped = boot(version, initrd, log, lab.real_cmdline, confined)
        bad, passes = diagnose(text, kos, expectations=lab.real_given)
        if stopped and (bad is None or bad[0] == "no end"):
            during = running_check(text)
            bad = ("time limit", f"the guest was stopped at its time limit ({limit} s)" +
                   (f": it went silent during the check '{during}', with no report (every "
                    f"CPU stuck with interrupts off, e.g. spinning on a lock that its own "
                    f"CPU holds, leaves no watchdog able to print one)" if during else ""),
                   [l.strip() for l in text.splitlines()[-EXCERPT:]])
        ok = "as expected" if lab.real_given else "clean"
        say(f"boot {n}/{boots}: {bad[0] if bad else ok} ({secs:.0f} s)" +
            " " * 20 * TTY)
        if n == 1 and not quiet:
            for p in passes:
                say(f"  PASS  {p}")
        if bad:
            failed += 1
            first = first or bad[1]
            if not quiet:
                report(lab, n, boots, bad, log)
            if not every:
                return failed, n, first
    return failed, boots, first


def report(lab, n, boots, bad, log):
    say(f"FAIL  boot {n} of {boots}: {bad[1]}")
    lines = [l for l in bad[2] if bad[1] not in l]  # a check's own verdict is said above
    if lines:
        say("      the kernel said:")
    for l in lines:
        say(f"        {l}")
    say(f"      console: {os.path.relpath(log, ROOT)}")
    say(f"      again:   ./workbook check {lab.name[:2].lstrip('0')} --real (a real boot is "
        f"not replayed: its timing is the machine's; --boots N runs N)")


TABLE = "<!-- REAL TABLE {}: ./workbook mistakes {} --real N --write writes it -->"
TABLE_END = "<!-- END REAL TABLE {} -->"


def mistakes_table(lab, boots, write=False):
    """The simulation's verdict beside the real kernel's for the reference
    and each of LAB's mutants that changes a module file: N boots each (all
    of them). With WRITE, the table goes into docs/instructors.md."""
    from . import mutants
    real_files = {mod["source"] for mod in lab.real_modules}
    copy = os.path.join(ROOT, "build-wb-real", "impl")
    rows = []

    def run(label, mu=None):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(os.path.join(SOLUTIONS, lab.name), os.path.join(copy, lab.name),
                        ignore=shutil.ignore_patterns("mutants"))
        if mu:
            err = mutants.apply(mu, copy)
            if err:
                raise Fail(f"mutant {mu.name} does not apply: {err}", 1)
        say(f"-- {label}")
        return cmd_real(lab, impl=copy, boots=boots, every=True, quiet=True)

    failed, ran, first = run("the reference")
    rows.append(("the reference", "passes every test", failed, ran, first))
    for mu in mutants.load(lab):
        sim = "caught by " + ", ".join(mu.killed_by)
        if not set(mu.files()) & real_files:
            rows.append((mu.name, sim, None, 0, "not run: it changes " + ", ".join(mu.files()) +
                         ", which the real run does not build (the kernel's own stands in)"))
            continue
        failed, ran, first = run(f"mutant {mu.name}: {mu.description}", mu)
        rows.append((mu.name, sim, failed, ran, first))
    shutil.rmtree(copy, ignore_errors=True)
    table = [f"| {lab.name} | simulation | real kernel: boots that failed | first failure |",
             "| --- | --- | --- | --- |"]
    for name, sim, failed, ran, first in rows:
        verdict = "-" if failed is None else f"{failed} of {ran}"
        first = (first or "none: clean").replace(os.path.relpath(copy, ROOT) +
                                                 f"/{lab.name}/", "")
        table.append(f"| `{name}` | {sim} | {verdict} | {md(first)} |")
    for l in table:
        say(l)
    if write:
        put_table(os.path.join(ROOT, "docs", "instructors.md"), lab, table, boots)
    return 0


def md(text):
    return text.replace("|", "\\|")


def put_table(path, lab, table, boots):
    """TABLE into PATH between LAB's two markers."""
    begin = TABLE.format(lab.name, int(lab.name[:2]))
    end = TABLE_END.format(lab.name)
    with open(path) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        raise Fail(f"{os.path.relpath(path, ROOT)} has no {begin} ... {end}", 1)
    head, rest = doc.split(begin, 1)
    body = f"{begin}\n" + "\n".join(table) + f"\n\n{boots} boots each, " \
        f"{time.strftime('%Y-%m-%d')}, Linux {kernel()} in QEMU ({accel()[0].upper()}).\n"
    with open(path, "w") as f:
        f.write(head + body + end + rest.split(end, 1)[1])
    say(f"written into {os.path.relpath(path, ROOT)}")
