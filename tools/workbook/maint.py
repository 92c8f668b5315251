"""setup, bench, docs and selftest."""
import os
import shutil
import subprocess
import sys

from . import mutants, real
from .build import build, check_deps, configure, first_error
from .common import Fail, JOBS, ROOT, SOLUTIONS, say
from .manifest import find_lab, select_labs, starter_todos
from .run import exe_path, is_stress_name, run_tests


PACKAGES = ["cmake", "ninja-build", "gcc", "pkg-config", "libcriterion-dev", "valgrind",
            "python3", "doxygen", "graphviz", "liburcu-dev", "git", "patch", "inotify-tools",
            "libdw-dev", "bubblewrap", "clang-format"]


def missing_packages(names):
    out = []
    for p in names:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        if "install ok installed" not in r.stdout:
            out.append(p)
    return out


def apt_install(missing):
    """apt-get install MISSING (sudo when not root); the failing command, or None."""
    pre = [] if os.geteuid() == 0 else ["sudo"]
    if pre and not shutil.which("sudo"):
        raise Fail(f"need root to install {' '.join(missing)} (no sudo)", 1)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing):
        if subprocess.run(pre + cmd, env=env, stdin=subprocess.DEVNULL).returncode:
            return " ".join(cmd)
    return None


def cmd_setup(a):
    if shutil.which("dpkg-query"):
        missing = missing_packages(PACKAGES)
        if missing:
            say(f"installing: {' '.join(missing)}")
            failed = apt_install(missing)
            if failed:
                raise Fail(f"'{failed}' failed", 1)
        else:
            say("all packages present: " + " ".join(PACKAGES))
        # --real's kernel, headers and QEMU: Debian's names; elsewhere (Ubuntu,
        # Gradescope's image) the workbook works without them.
        missing = missing_packages(real.PACKAGES)
        if missing:
            say(f"installing for --real (a real kernel in QEMU): {' '.join(missing)}")
            if apt_install(missing):
                say(f"--real will not work here: could not install {' '.join(missing)}; "
                    f"everything else does")
    else:
        say("not a Debian/Ubuntu system: install " + ", ".join(PACKAGES) + " yourself")
    check_deps()
    bdir = os.path.join(ROOT, "build-wb-default")
    ok, out = configure(bdir, "labs", "own")
    if not ok:
        raise Fail(f"cmake failed: {first_error(out)}", 1)
    link_compile_commands(bdir)
    r = subprocess.run(["ninja", "-C", bdir, "-k", "0"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        say(f"built, with errors in your lab files (./workbook status shows them): {first_error(r.stdout)}")
    else:
        say(f"built in {os.path.relpath(bdir, ROOT)}/. Next: ./workbook status")
    return 0


def link_compile_commands(bdir):
    """compile_commands.json at the top, a link to BDIR's: clangd and other
    editors find the build's flags there (the kernel headers of common/include,
    the lab's own folder). A file of that name that is not such a link is the
    user's: left alone, and said so."""
    top = os.path.join(ROOT, "compile_commands.json")
    rel = os.path.relpath(os.path.join(bdir, "compile_commands.json"), ROOT)
    if os.path.islink(top) and os.readlink(top) == rel:
        return
    if os.path.lexists(top):
        say(f"compile_commands.json exists and is not a link to {rel}: left as it is")
        return
    os.symlink(rel, top)
    say(f"compile_commands.json -> {rel} (for clangd and other editors)")


def cmd_mistakes(a):
    """mistakes [LAB...]: each lab's plausible mistakes (its mutants), by
    TODO, with the tests that catch each; a mistake only the parallel tier
    catches is marked, since that catch is luck, not a promise. With --real
    N, the real kernel's verdict beside the simulation's (real.py)."""
    if a.write and not a.real:
        raise Fail("--write writes the real-kernel table: use it with --real N")
    if a.real:
        from .real import mistakes_table
        labs = [lab for lab in select_labs(a.labs) if lab.real_modules]
        if not labs:
            raise Fail("--real: none of these labs runs on a real kernel (no 'real' in lab.json)")
        for lab in labs:
            mistakes_table(lab, a.real, a.write)
        return 0
    for lab in select_labs(a.labs):
        rows = mutants.mistake_rows(lab)
        det = sum(1 for r in rows if r[3])
        say(f"== {lab.name}: {len(rows)} mistakes, {det} caught by a deterministic test ==")
        bare = sorted((starter_todos(lab.name, lab.files) or set()) -
                      {t for r in rows for t in r[0]})
        if bare:
            say(f"  no mistake listed yet for TODO {', '.join(map(str, bare))}")
        for t, name, desc, dtests, ptests in rows:
            where = "TODO " + ", ".join(map(str, t)) if t else "given code"
            say(f"  {where:<10} {name}: {desc}")
            say(f"  {'':<10}   caught by {', '.join(dtests) or 'the parallel tier only: ' + ', '.join(ptests)}")


def cmd_new_mutant(a):
    """new-mutant LAB NAME --from FILE --description TEXT: the mutant that an
    edited copy of a solution file is, with the tests that catch it (run
    here, on a copy of solutions/ in build-wb-new-mutant/)."""
    lab = find_lab(a.lab)
    edited = os.path.abspath(a.from_file)
    if not os.path.isfile(edited):
        raise Fail(f"--from {a.from_file}: no such file (an edited copy of a file of "
                   f"solutions/{lab.name}/)")
    bdir = os.path.join(ROOT, "build-wb-new-mutant")
    src = os.path.join(bdir, "impl")

    def killers(rel):
        if os.path.isdir(src):
            shutil.rmtree(src)
        shutil.copytree(SOLUTIONS, src, ignore=shutil.ignore_patterns("mutants"))
        shutil.copyfile(edited, os.path.join(src, lab.name, rel))
        ok, out = configure(bdir, src, "solutions", extra=["-DWORKBOOK_DISCOVER_TESTS=OFF"])
        if not ok:
            raise Fail(f"cmake failed: {first_error(out)}", 1)
        ok, err, _ = build(bdir, [lab.target], src)
        if not ok:
            raise Fail(f"the mutant does not compile: {err}", 1)
        say(f"running {lab.name}'s {len(lab.names())} tests on it...")
        res, _ = run_tests(exe_path(bdir, lab), lab.names(),
                           os.path.join(bdir, "runs", lab.label), lab.timeouts(), JOBS)
        failed = [n for n in lab.names() if not res[n][0]]
        # The parallel tier's failures are luck, not a promise: never a killer.
        det = [n for n in failed if not is_stress_name(n)]
        if failed and not det:
            raise Fail(f"mutant {a.name} fails only the parallel tier ({', '.join(failed)}), "
                       f"on real threads, where nothing is caught every run: write the "
                       f"deterministic test that does first", 1)
        return det

    killed = mutants.add(lab, a.name, a.description, edited, killers, a.force)
    lost = sum(t["points"] for t in lab.tests if t["name"] in killed)
    say(f"solutions/{lab.name}/mutants/{a.name}.patch: caught by {', '.join(killed)} "
        f"(loses {lost} points); listed in its index.json. The selftest proves it from now on")
    return 0


def cmd_bench(a):
    script = os.path.join(ROOT, "bench", "bench.py")
    if not os.path.exists(script):
        raise Fail("bench/ is not part of this copy of the workbook")
    cmd = [sys.executable, script]
    if a.quick:
        cmd.append("--quick")
    if a.check:
        cmd.append("--check")
    if a.out:
        cmd += ["--out", os.path.abspath(a.out)]
    return subprocess.call(cmd, cwd=ROOT, stdin=subprocess.DEVNULL)


def cmd_docs(a):
    edition = "instructor" if a.instructor else "student"
    bdir = os.path.join(ROOT, "build-wb-docs")
    conf = ["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja"]
    if a.out:
        out = os.path.abspath(a.out)
        if os.path.exists(out) and os.listdir(out):
            raise Fail(f"{a.out} is not empty: choose an empty or new folder")
        conf.append(f"-DWORKBOOK_DOCS_DIR={out}")
    for cmd in (conf, ["cmake", "--build", bdir, "--target",
                       "docs-instructor" if a.instructor else "docs"]):
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            hint = "" if shutil.which("doxygen") else " (doxygen is not installed: ./workbook setup)"
            raise Fail(f"docs build failed: {first_error(r.stdout)}{hint}", 1)
    where = os.path.join(a.out, edition) if a.out else os.path.join(bdir, "docs", edition)
    say(f"{edition} edition: {os.path.join(where, 'html', 'index.html')}")
    return 0


def cmd_selftest(a):
    import selftest
    return selftest.run(quick=a.quick, only=a.labs)
