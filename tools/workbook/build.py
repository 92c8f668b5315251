"""Configuring and building with CMake and Ninja; the first error."""
import os
import re
import shutil
import subprocess

from .common import Fail, ROOT


def check_deps(need_valgrind=False):
    missing = [t for t in ("cmake", "ninja", "cc", "pkg-config") if not shutil.which(t)]
    if not missing and subprocess.run(["pkg-config", "--exists", "criterion"]).returncode:
        missing.append("libcriterion-dev")
    if need_valgrind and not shutil.which("valgrind"):
        missing.append("valgrind")
    if missing:
        raise Fail(f"missing {', '.join(missing)}: run ./workbook setup", 1)


def configure(bdir, impl="labs", prior="own", werror=False, checker="", only=None, quiet=True,
              extra=()):
    """Configure BDIR (once; again only when the settings change); EXTRA: more -D options."""
    check_deps(checker == "valgrind")
    impl = os.path.abspath(os.path.join(ROOT, impl))
    opts = [f"-DWORKBOOK_IMPL={impl}", f"-DWORKBOOK_PRIOR={prior}",
            f"-DWORKBOOK_WERROR={'ON' if werror else 'OFF'}", f"-DWORKBOOK_CHECKER={checker}",
            f"-DWORKBOOK_ONLY_LABS={';'.join(only or [])}", "-DCMAKE_BUILD_TYPE=Debug"] + list(extra)
    stamp = os.path.join(bdir, ".workbook-config")
    key = "\n".join(opts)
    if os.path.isfile(os.path.join(bdir, "build.ninja")) and os.path.isfile(stamp):
        with open(stamp) as f:
            if f.read() == key:
                return True, ""
    r = subprocess.run(["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja"] + opts,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode:
        return False, r.stdout
    with open(stamp, "w") as f:
        f.write(key)
    return True, r.stdout


def macro_header(name):
    """The kernel header (common/include) that defines NAME as a macro:
    called without that header included, NAME compiles as an implicit
    declaration and links against no such function (msleep(), whose macro
    passes the caller's line). None when no header does."""
    inc = os.path.join(ROOT, "common", "include")
    define = re.compile(rf"^#\s*define\s+{re.escape(name)}\(", re.M)
    for dp, _, fs in sorted(os.walk(inc)):
        for f in sorted(fs):
            if f.endswith(".h"):
                with open(os.path.join(dp, f), errors="replace") as fh:
                    if define.search(fh.read()):
                        return os.path.relpath(os.path.join(dp, f), inc)
    return None


def first_error(text, stage=None):
    """The compiler's (or linker's) first error, paths made relative."""
    lines = text.splitlines()
    pick = None
    # The linker's own line names the symbol; collect2's summary after it does not.
    for pat in (r"\berror\b", r"undefined reference|multiple definition", r"FAILED|No such file"):
        for ln in lines:
            if re.search(pat, ln) and not ln.startswith(("ninja:", "/usr/bin/cc", "FAILED: CMake",
                                                         "collect2:")):
                pick = ln
                break
        if pick:
            break
    m = re.search(r"undefined reference to `(\w+)'", pick or "")
    if m:
        header = macro_header(m.group(1))
        pick += f" ({m.group(1)}() is a macro of <{header}>: include it)" if header else \
            " (no such function here: a misspelled name, or one your lab does not have)"
    pick = pick or (lines[-1] if lines else "build failed")
    if stage:
        pick = pick.replace(stage.rstrip("/") + "/", "labs/")
    return pick.replace(ROOT + "/", "").strip()


def build(bdir, targets, stage=None):
    r = subprocess.run(["ninja", "-C", bdir] + list(targets), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    if r.returncode:
        return False, first_error(r.stdout, stage), r.stdout
    return True, "", r.stdout


def ninja_targets(bdir):
    r = subprocess.run(["ninja", "-C", bdir, "-t", "targets", "all"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return {ln.split(":")[0] for ln in r.stdout.splitlines()}
