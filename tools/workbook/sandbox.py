"""Sandboxes for submission code: every build and every test run of a
submission goes through Sandbox.wrap().

Rule kept here: code from a submission runs as an unprivileged user, with
limits on CPU time, memory, processes and file size, and cannot read
solutions/, other submissions or the results, nor outlive its run. Two ways:

  bwrap  bubblewrap: a private mount view (system folders and the workbook
         read-only, without solutions/, .git, grading/ or other build folders;
         only the folders the step needs writable; a private /tmp), its own
         PID, network, IPC and UTS namespaces; when the run ends the PID
         namespace ends and every process in it with it.
  user   where user namespaces are unavailable (Docker-based autograders):
         the unprivileged user alone, an account per grading slot;
         solutions/ made unreadable to it, its slot's folder unreadable to
         the other slots' accounts, and after each run every process of
         that user killed and every file it left in /tmp, /var/tmp and
         /dev/shm removed.
A third, "none", is only for an instructor without root and without
bubblewrap: submission code then runs with the instructor's rights, and every
report says so.
"""
import os
import pwd
import re
import resource
import select
import shutil
import signal
import subprocess
import time

from .common import Fail, ROOT, warn

# What a step may use; per process (RLIMIT_CPU, _AS, _FSIZE) or per user
# (RLIMIT_NPROC: processes and threads of the sandbox user, all runs together).
LIMITS = {"cpu": 600, "as": 4 << 30, "fsize": 64 << 20, "nproc": 1024, "nofile": 1024}
# Never in the view: the reference, the history, the grader's own tests, the quizzes
# with their answers and the docs with the instructors' notes.
HIDDEN = {"solutions", ".git", "grading", "bench", "traces", "quizzes", "docs"}
SYSTEM = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]
DEFAULT_USER = "rculabs-sandbox"

_detected = {}

# Folders every account may write to, which the user sandbox shares with
# the host: what the sandbox user left there is removed after each run.
SHARED_TMP = ["/tmp", "/var/tmp", "/dev/shm"]


def remove_owned(uid, tops=SHARED_TMP):
    """Remove what UID owns under TOPS (each a folder every account may
    write to), at any depth: the files a submission left in the host's
    temporary folders in the user sandbox. Returns how many were removed.
    Links are removed, never followed; the workbook itself (which may lie in
    /tmp, and whose build folder the grader gives UID while it builds) is
    never entered."""
    n = 0
    own = os.path.realpath(ROOT)
    for top in tops:
        for d, dirs, files in os.walk(top, topdown=True):
            keep = []
            for x in dirs:
                p = os.path.join(d, x)
                if os.path.realpath(p) == own:
                    continue
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if st.st_uid == uid:
                    shutil.rmtree(p, ignore_errors=True)
                    n += 1
                elif not os.path.islink(p):
                    keep.append(x)
            dirs[:] = keep
            for x in files:
                p = os.path.join(d, x)
                try:
                    if os.lstat(p).st_uid == uid:
                        os.unlink(p)
                        n += 1
                except OSError:
                    pass
    return n


def _user_entry(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _sandbox_user(slot=0):
    """(name, uid, gid) of the user submission code of grading slot SLOT runs
    as: an account of its own per slot (rculabs-sandbox, rculabs-sandbox1,
    ...), created when missing, so that the clean-up of one grade (every
    process of its user killed) never touches another; never an existing
    account the grader merely guessed at. WORKBOOK_SANDBOX_USER=NAME names
    existing accounts instead: NAME for slot 0, NAME1, NAME2, ... for the
    others (never one account for two slots)."""
    want = os.environ.get("WORKBOOK_SANDBOX_USER")
    if os.geteuid() != 0:
        if want and want != pwd.getpwuid(os.geteuid()).pw_name:
            raise Fail(f"WORKBOOK_SANDBOX_USER={want} needs root (to switch to that user)")
        e = pwd.getpwuid(os.geteuid())
        return e.pw_name, e.pw_uid, e.pw_gid
    name = (want or DEFAULT_USER) + (str(slot) if slot else "")
    e = _user_entry(name)
    if not e and not want:
        r = subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                            "--shell", "/usr/sbin/nologin", name], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        e = _user_entry(name)
        if not e:
            raise Fail(f"cannot create the sandbox user {name}: {r.stdout.strip()}")
    if not e:
        raise Fail(f"WORKBOOK_SANDBOX_USER={want}: no account {name}" +
                   (f" (slot {slot} grades as {name}: one account per slot)" if slot else ""))
    if e.pw_uid == 0:
        raise Fail(f"the sandbox user {name} is root")
    return e.pw_name, e.pw_uid, e.pw_gid


def _count_procs(uid):
    n = 0
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if os.stat(f"/proc/{p}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


class Sandbox:
    """How submission code runs here; .kind is bwrap, user or none."""

    def __init__(self, kind=None, hide=(), slot=0):
        self.name, self.uid, self.gid = _sandbox_user(slot)
        self.switch = self.uid != os.geteuid()
        self.hide = [os.path.abspath(h) for h in hide]
        self.kind = kind or os.environ.get("WORKBOOK_SANDBOX") or self._detect()
        if self.kind not in ("bwrap", "user", "none"):
            raise Fail(f"WORKBOOK_SANDBOX={self.kind}: bwrap, user or none")
        if self.kind == "bwrap" and not self._bwrap_works():
            raise Fail("bubblewrap cannot create its namespaces here (WORKBOOK_SANDBOX=user "
                       "falls back to an unprivileged user)")
        if self.kind == "user":
            if not self.switch:
                raise Fail("the 'user' sandbox needs root (to run as another user)")
            self._lock_secrets()
        self._pending = []
        self._sealed = None
        self._hidden = []

    # ------------------------------------------------------------ set-up
    def _detect(self):
        if self._bwrap_works():
            return "bwrap"
        return "user" if self.switch else "none"

    def _bwrap_works(self):
        key = (self.uid, self.gid)
        if key not in _detected:
            ok = False
            if shutil.which("bwrap"):
                try:
                    r = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--proc", "/proc",
                                        "--unshare-pid", "--unshare-net", "--die-with-parent",
                                        "true"], preexec_fn=self._become, timeout=30,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       stdin=subprocess.DEVNULL)
                    ok = r.returncode == 0
                except (OSError, subprocess.TimeoutExpired):
                    ok = False
            _detected[key] = ok
        return _detected[key]

    def _lock_secrets(self):
        """user mode: solutions/, .git, grading/ (HIDDEN) unreadable to the
        user, and no grading slot's folder readable by every account."""
        for h in sorted(HIDDEN & set(os.listdir(ROOT))):
            p = os.path.join(ROOT, h)
            if os.path.isdir(p) and not os.path.islink(p):
                st = os.stat(p)
                if st.st_mode & 0o077 or st.st_uid == self.uid:
                    os.chown(p, os.geteuid(), os.getegid())
                    os.chmod(p, 0o700)
        # Grading slots' folders: each is opened to its own account's group
        # when claimed (seal()); none is open to every account.
        for e in sorted(os.listdir(ROOT)):
            p = os.path.join(ROOT, e)
            if e.startswith("build-wb-grade-") and os.path.isdir(p) and not os.path.islink(p):
                mode = os.stat(p).st_mode
                if mode & 0o007:
                    os.chmod(p, mode & 0o770)
        probe = subprocess.run(["cat", os.path.join(ROOT, "labs", "..", "solutions", ".")],
                               preexec_fn=self._become, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        if "denied" not in probe.stderr and "Is a directory" in probe.stderr:
            raise Fail(f"the sandbox user {self.name} can still read solutions/")

    def describe(self):
        if self.kind == "bwrap":
            return (f"bwrap (bubblewrap: user {self.name}, own PID/network namespaces, "
                    "read-only workbook without solutions/)")
        if self.kind == "user":
            return (f"user (unprivileged user {self.name}, no namespaces: solutions/ "
                    "unreadable to it, its processes killed and its temporary files removed "
                    "after each run)")
        return "none (no bubblewrap and not root: submission code ran with your rights)"

    # ------------------------------------------------------------ files
    def give(self, path, keep=()):
        """Let the sandbox user write PATH (a folder of ours), but for the
        folders KEEP inside it, which stay ours (it may read them)."""
        self._chown_tree(path, self.uid, self.gid, [os.path.abspath(k) for k in keep])

    def take(self, path):
        """Take PATH back: the sandbox user may read it, not change it."""
        self._chown_tree(path, os.geteuid(), os.getegid())
        if path == self._sealed:
            self.seal(path)

    def seal(self, path):
        """PATH (a grading slot's folder) readable by this sandbox's account
        and by no other (root's, the account's group, 0750): in the user
        sandbox, a submission in another slot, under another account, cannot
        read this one's files (under bwrap a run sees its own slot's folders
        alone anyway)."""
        if not self.switch:
            return
        self._sealed = path
        os.chown(path, os.geteuid(), self.gid)
        os.chmod(path, 0o750)

    def _chown_tree(self, path, uid, gid, keep=()):
        if not self.switch or not os.path.exists(path):
            return
        os.lchown(path, uid, gid)
        for d, dirs, files in os.walk(path):
            dirs[:] = [x for x in dirs if os.path.join(d, x) not in keep]
            for x in dirs + files:
                try:
                    os.lchown(os.path.join(d, x), uid, gid)
                except OSError:
                    pass

    # ------------------------------------------------------------ running
    def _become(self, limits=None):
        os.setsid()
        lim = dict(LIMITS, **(limits or {}))
        for res, key in ((resource.RLIMIT_CPU, "cpu"), (resource.RLIMIT_AS, "as"),
                         (resource.RLIMIT_FSIZE, "fsize"), (resource.RLIMIT_NOFILE, "nofile")):
            resource.setrlimit(res, (lim[key], lim[key]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.switch:
            resource.setrlimit(resource.RLIMIT_NPROC, (lim["nproc"], lim["nproc"]))
            os.setgroups([])
            os.setgid(self.gid)
            os.setuid(self.uid)

    def _view(self, rw, ro, hide=()):
        """bwrap arguments for the mount view: HIDE, files inside it, read
        as empty (/dev/null bound over each)."""
        a = []
        for p in SYSTEM:
            if os.path.islink(p):
                a += ["--symlink", os.readlink(p), p]
            elif os.path.isdir(p):
                a += ["--ro-bind", p, p]
        a += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/var/tmp"]
        for e in sorted(os.listdir(ROOT)):
            if e in HIDDEN or e.startswith(("build", ".")) or self._leads_away(e):
                continue
            a += ["--ro-bind", os.path.join(ROOT, e), os.path.join(ROOT, e)]
        for h in self.hide:
            if os.path.isdir(h) and h.startswith(ROOT + "/"):
                a += ["--tmpfs", h]
        for p in ro:
            a += ["--ro-bind", p, p]
        for p in rw:
            a += ["--bind", p, p]
        for p in hide:
            a += ["--ro-bind", "/dev/null", p]
        return a + ["--remount-ro", "/"]      # the view's own folders too: only RW and /tmp write

    @staticmethod
    def _leads_away(entry):
        """Whether ROOT/ENTRY is a link into what the view leaves out (a
        build folder, solutions/, ...) or out of the workbook: binding it
        would bring that into the view (the root's compile_commands.json
        leads into the instructor's build folder)."""
        p = os.path.join(ROOT, entry)
        if not os.path.islink(p):
            return False
        rel = os.path.relpath(os.path.realpath(p), os.path.realpath(ROOT))
        first = rel.split(os.sep)[0]
        return first == ".." or first in HIDDEN or first.startswith(("build", "."))

    def wrap(self, argv, cwd, env, rw=(), ro=(), limits=None, hide=()):
        """subprocess.Popen arguments (args, preexec_fn, env, pass_fds) that
        run ARGV in the sandbox, in CWD, with RW writable and RO readable
        besides the view, and the files HIDE (ours, inside those) unreadable
        (bwrap: read as empty; user: mode 0600 until reap()). Call reap()
        after the process ended (or was killed)."""
        env = {k: v for k, v in env.items() if not k.startswith(("SSH_", "GITHUB_", "GH_", "ACTIONS_"))
               and not any(s in k for s in ("TOKEN", "SECRET", "PASSWORD", "KEY"))}
        env.update(HOME="/tmp", TMPDIR="/tmp", PATH="/usr/local/bin:/usr/bin:/bin")

        def pre():
            self._become(limits)
        if self.kind != "bwrap":
            if self.switch:
                for p in hide:
                    os.chown(p, os.geteuid(), os.getegid())
                    os.chmod(p, 0o600)
                    self._hidden.append(p)
            return {"args": list(argv), "preexec_fn": pre, "env": env, "pass_fds": ()}
        r, w = os.pipe()
        self._pending.append((r, w))
        a = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--die-with-parent", "--new-session",
             "--info-fd", str(w)] + self._view(list(rw), list(ro), list(hide)) + \
            ["--chdir", cwd, "--"]

        return {"args": a + list(argv), "preexec_fn": pre, "env": env, "pass_fds": (w,)}

    def reap(self, grace=10.0):
        """After a wrapped process ended: make sure every process it started
        is gone (bwrap: its PID namespace has ended; user: no process of the
        sandbox user is left)."""
        if self.kind == "bwrap":
            while self._pending:
                r, w = self._pending.pop()
                os.close(w)
                pid = self._child_pid(r)
                os.close(r)
                if pid:
                    self._wait_gone(pid, grace)
        elif self.kind == "user":
            deadline = time.time() + grace
            while _count_procs(self.uid) and time.time() < deadline:
                k = os.fork()
                if k == 0:
                    try:
                        os.setgroups([])
                        os.setgid(self.gid)
                        os.setuid(self.uid)
                        os.kill(-1, signal.SIGKILL)
                    finally:
                        os._exit(0)
                os.waitpid(k, 0)
                time.sleep(0.05)
            left = _count_procs(self.uid)
            if left:
                warn(f"{left} process(es) of the sandbox user {self.name} survived the kill")
            # Its own account per slot: nothing it owns there belongs to another grade.
            remove_owned(self.uid)
            while self._hidden:
                os.chmod(self._hidden.pop(), 0o644)

    @staticmethod
    def _child_pid(r):
        os.set_blocking(r, False)
        try:
            m = re.search(rb'"child-pid"\s*:\s*(\d+)', os.read(r, 4096))
        except OSError:
            return None
        return int(m.group(1)) if m else None

    @staticmethod
    def _wait_gone(pid, grace):
        """The namespace's init (PID 1 inside) is gone only after every
        process of its namespace is: kill it and wait for that."""
        try:
            fd = os.pidfd_open(pid)
        except (OSError, AttributeError):
            fd = None
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if fd is not None:
            p = select.poll()
            p.register(fd, select.POLLIN)
            p.poll(grace * 1000)
            os.close(fd)
        deadline = time.time() + grace
        while os.path.exists(f"/proc/{pid}") and time.time() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().split(") ")[-1].startswith("Z"):
                        break
            except OSError:
                break
            time.sleep(0.02)
