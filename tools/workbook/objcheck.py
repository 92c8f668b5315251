"""objcheck - a submission is C that uses the lab's API and nothing else.

Rule kept here: every verdict comes from what the compiler and the binary
tools produce for the build's own compile commands (compile_commands.json),
never from the source text. For each translation unit of a lab's target that
holds student code:
  - the preprocessor's output (-E -dD -dI) says which files were included
    (only the workbook's headers, the labs' folders and the system's), which
    lines came from a student file, and what those lines hold after every
    comment, quote and macro trick is undone: no asm, no #pragma, no
    attribute outside a short list of harmless ones, no line directive that
    would pass student lines off as a header's, and in a student header no
    macro but the lab's own (the tests include it: a macro there rewrites
    the tests);
  - the object file the build linked (or, for a header, the header compiled
    alone with every inline function kept) may refer only to the lab's API
    (the simulated kernel's linux/ headers, what the lab names in "api", the
    compiler's ThreadSanitizer hooks, a few harmless C library functions),
    may define globally only the functions the lab's "api" lists, holds no
    constructor or destructor but the one ThreadSanitizer adds, no system
    call instruction, and no function the instrumentation was turned off for.
check_target() returns the refusals, each one line naming file, line and
what to do instead. It runs in the grader's sandbox (main() below) and in
./workbook check.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

from .common import ROOT

INCLUDE_ROOTS = [os.path.join(ROOT, "common", "include"), "/usr/include", "/usr/lib/gcc/",
                 "/usr/local/include", "/usr/lib/llvm"]
# Headers of common/include whose declarations are the kernel's API; the
# rest (sim/test.h, sim/testlib.h, ...) belong to the tests.
API_HEADERS = ("linux/", "sim/trace.h")
# Declared in those headers but the tests' controls, not the kernel's: a
# student's code has no business loading modules or writing trace files.
NOT_API = {"insmod", "rmmod", "trace_write_json", "trace_write_svg", "trace_write_text",
           "module_counts", "kmem_live_objects"}
# The C library a student may call: output for debugging, memory and strings.
LIBC = {"printf", "fprintf", "puts", "putchar", "fputs", "fputc", "snprintf", "vsnprintf",
        "stdout", "stderr", "fflush", "memset", "memcpy", "memmove", "memcmp", "strlen",
        "strcmp", "strncmp", "strcpy", "strncpy", "strchr", "malloc", "calloc", "realloc",
        "free", "abs", "labs", "qsort", "__assert_fail", "__stack_chk_fail",
        "_GLOBAL_OFFSET_TABLE_"}
TSAN_HOOK = re.compile(r"__tsan_(init|func_entry|func_exit|(unaligned_)?(read|write)(1|2|4|8|16)"
                       r"|(read|write)_range|atomic(8|16|32|64|128)_\w+|atomic_(thread|signal)_fence"
                       r"|vptr_(read|update))$")
TSAN_CTOR = ".init_array.00099"      # GCC's -fsanitize=thread module constructor
# Attributes that change nothing the grader relies on (GNU spelling, without
# the __x__ underscores).
ATTRIBUTES = {"unused", "used", "noinline", "always_inline", "noreturn", "aligned", "packed",
              "format", "fallthrough", "cold", "hot", "pure", "const", "warn_unused_result",
              "nonnull", "deprecated", "maybe_unused", "may_alias", "noclone"}
SECTIONS = re.compile(r"\.(rela\.)?(text|data|bss|rodata|debug_\w+|eh_frame)(\.[\w.]*)?$"
                      r"|\.comment$|\.note\.GNU-stack$|\.note\.gnu\.property$|\.group$"
                      r"|\.symtab$|\.strtab$|\.shstrtab$|\.(rela\.)?init_array\.00099$")
HARNESS = ("cr_", "criterion", "CR_", "sim_", "SIM_", "BUG", "WARN", "Test", "assert",
           "ParameterizedTest")

_api_cache = {}


class Unit:
    """One entry of compile_commands.json: the compiler's arguments without
    its output and action, the source, the object, the folder it runs in."""

    def __init__(self, e):
        args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        self.dir = e["directory"]
        self.source = os.path.normpath(os.path.join(self.dir, e["file"]))
        self.object, out, skip = None, [], False
        for i, a in enumerate(args):
            if skip:
                skip = False
            elif a == "-o":
                self.object = os.path.normpath(os.path.join(self.dir, args[i + 1]))
                skip = True
            elif a == "-c" or os.path.normpath(os.path.join(self.dir, a)) == self.source:
                continue
            else:
                out.append(a)
        self.args = out

    def run(self, extra, source=None):
        r = subprocess.run(self.args + extra + [source or self.source], cwd=self.dir,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", stdin=subprocess.DEVNULL, timeout=120)
        return r.returncode, r.stdout, r.stderr


def units_of(bdir, label):
    """The compile commands of target LABEL_tests and of LABEL's modules."""
    with open(os.path.join(bdir, "compile_commands.json")) as f:
        entries = json.load(f)
    mark = re.compile(rf"CMakeFiles/{re.escape(label)}_(tests|mod_\w+)\.dir/")
    return [u for u in map(Unit, entries) if u.object and mark.search(u.object)]


_words_cache = set()


def api_words(compiler_unit):
    """Every identifier the API headers hold, macros' bodies included (their
    declarations, types, fields and macro names): what a student header's
    macro may name."""
    if _words_cache:
        return _words_cache
    inc = os.path.join(ROOT, "common", "include")
    src = "".join(f"#include <linux/{h}>\n" for h in sorted(os.listdir(os.path.join(inc, "linux")))
                  if h.endswith(".h")) + "#include <sim/trace.h>\n"
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "api.c")
        with open(p, "w") as f:
            f.write(src)
        rc, out, err = compiler_unit.run(["-E", "-dD"], p)
    words, cur = set(), ""
    for ln in out.splitlines():
        m = re.match(r'# \d+ "([^"]*)"', ln)
        if m:
            cur = m.group(1)
        elif cur.startswith(inc) and cur[len(inc) + 1:].startswith(API_HEADERS):
            words.update(re.findall(r"\b[A-Za-z_]\w*\b", strip_literals(ln)))
    _words_cache.update(words)
    return _words_cache


def kernel_api(compiler_unit, simkernel):
    """The symbols student code may use from the simulated kernel: those
    libsimkernel.a defines and the API headers declare or expand to."""
    if simkernel not in _api_cache:
        nm = subprocess.run(["nm", "-g", "--defined-only", simkernel], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout
        defs = {p[2] for p in (ln.split() for ln in nm.splitlines()) if len(p) == 3}
        _api_cache[simkernel] = (defs & api_words(compiler_unit)) - NOT_API
    return _api_cache[simkernel]


# What a macro body may "call" that is no function: C's own operators.
C_CALLABLE = {"sizeof", "typeof", "__typeof__", "__typeof", "_Alignof", "__alignof__", "_Generic",
              "if", "for", "while", "switch", "return", "do", "__extension__", "offsetof",
              "volatile", "__volatile__", "const", "_Static_assert",
              "asm", "__asm__", "__asm", "__attribute__", "__attribute"}   # refused below
LITERAL = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')


def strip_literals(line):
    return LITERAL.sub('""', line)


def attribute_names(text, at):
    """The attribute names of the __attribute__((...)) starting at TEXT[at:]."""
    i = text.find("(", at)
    if i < 0:
        return []
    depth, j, names = 0, i, []
    while j < len(text):
        c = text[j]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                break
        elif depth == 2:
            m = re.match(r"[A-Za-z_]\w*", text[j:])
            if m and (j == 0 or not (text[j - 1].isalnum() or text[j - 1] == "_")):
                names.append(m.group(0).strip("_"))
                j += len(m.group(0))
                # skip the attribute's own arguments
                k = j
                while k < len(text) and text[k] == " ":
                    k += 1
                if k < len(text) and text[k] == "(":
                    d2 = 0
                    while k < len(text):
                        d2 += {"(": 1, ")": -1}.get(text[k], 0)
                        k += 1
                        if d2 == 0:
                            break
                    j = k
                continue
        j += 1
    return names


class Checker:
    """The refusals for one lab target's student code."""

    def __init__(self, bdir, student, allowed_roots, api):
        self.bdir = bdir
        self.student = student              # {abs path: (lab name, shown path)}
        self.roots = [os.path.normpath(r) for r in allowed_roots] + INCLUDE_ROOTS
        self.api = api                      # {lab name: manifest "api" dict}
        self.out = []

    def refuse(self, path, line, why):
        shown = self.student.get(path, (None, os.path.relpath(path, ROOT)))[1]
        msg = f"{shown}:{line}: {why}" if line else f"{shown}: {why}"
        if msg not in self.out:
            self.out.append(msg)

    def allowed_file(self, path):
        p = os.path.normpath(path)
        return p in self.student or p.startswith(("<",)) or \
            any(p == r or p.startswith(r.rstrip("/") + "/") for r in self.roots)

    # ------------------------------------------------ what the preprocessor says
    def preprocessed(self, unit, source=None):
        """{student path: [(line, text)]} of UNIT's -E output, refusing as it reads."""
        rc, out, err = unit.run(["-E", "-dD", "-dI"], source)
        if rc:
            return None
        main = os.path.normpath(source or unit.source)
        stack, started, pending_include = [], False, False
        lines = {}
        ln_no = 0
        for ln in out.splitlines():
            m = re.match(r'# (\d+) "((?:\\.|[^"\\])*)"((?: \d)*)$', ln)
            if m:
                n, flags = int(m.group(1)), m.group(3).split()
                name = m.group(2) if m.group(2).startswith("<") else \
                    os.path.normpath(os.path.join(unit.dir, m.group(2)))
                if not started:
                    if name == main and not flags and stack == ["<command-line>"]:
                        started, stack = True, [main]
                    elif "1" in flags:
                        stack.append(name)
                    elif "2" in flags and stack:
                        stack.pop()
                    elif not flags and name in ("<built-in>", "<command-line>") or name == main:
                        stack = [name] if name != main else stack
                    ln_no = n
                    continue
                top = stack[-1] if stack else None
                if "1" in flags:
                    if top in self.student and not pending_include:
                        self.refuse(top, ln_no, "has a line marker that is no #include: "
                                    "no #line or # N \"file\" lines in your files")
                    stack.append(name)
                    if top in self.student and not self.allowed_file(name):
                        self.refuse(top, ln_no - 1, f"includes {name}, outside the lab and the "
                                    "workbook's headers: include only <linux/...> headers, the "
                                    "lab's own and the C library's")
                elif "2" in flags:
                    if len(stack) < 2 or stack[-2] != name:
                        self.refuse(top, ln_no, "has a line marker that is no #include: "
                                    "no #line or # N \"file\" lines in your files")
                        stack.append(name)
                    else:
                        stack.pop()
                elif name != top:
                    self.refuse(top, ln_no, "has a #line directive: no #line or # N \"file\" "
                                "lines in your files")
                    if stack:
                        stack[-1] = name
                if flags:
                    pending_include = False
                ln_no = n
                continue
            if not started:
                continue
            top = stack[-1] if stack else None
            if ln.strip():
                pending_include = bool(re.match(r"\s*#\s*include", ln))
            if top in self.student:
                if not pending_include:
                    lines.setdefault(top, []).append((ln_no, ln))
                    self.check_line(top, ln_no, ln)
            ln_no += 1
        return lines

    def check_line(self, path, n, text):
        lab = self.student[path][0]
        s = strip_literals(text)
        d = re.match(r"\s*#\s*(define|undef)\s+(\w+)", s)
        if d and not path.endswith(".h"):
            # A .c file's macros expand on its own lines, which are checked.
            if d.group(2).startswith(HARNESS) and d.group(1) == "undef":
                self.refuse(path, n, f"#undef {d.group(2)}: a name of the test harness")
            return
        if d:
            ok = self.api.get(lab, {}).get("header_macros", [])
            if d.group(2) not in ok:
                self.refuse(path, n, f"#{d.group(1)} {d.group(2)} in a header the tests "
                            f"include rewrites the tests' code: this header may define only "
                            f"{', '.join(ok) or 'no macro'} (use a static inline function)")
            # Its body expands in the tests' code, where no object check sees
            # it: the line checks below, and no C library call but the few.
            body = s[d.end():]
            params = set()
            pm = re.match(r"\(([^)]*)\)", body)
            if pm:
                params = {x.strip() for x in pm.group(1).split(",")}
                body = body[pm.end():]
            api = self.api.get(lab, {})
            known = self.words | LIBC | C_CALLABLE | params | set(ok) | \
                set(api.get("calls", [])) | set(api.get("defines", [])) | self.uses_api(lab)
            called = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", body)) | \
                ({"environ", "__environ"} & set(re.findall(r"\w+", body)))
            if re.search(r"\bextern\b", body):
                self.refuse(path, n, f"macro {d.group(2)} declares an extern name: its body "
                            "runs inside the tests, where it would reach what they link")
            for name in sorted(called - known):
                if not name.startswith("__builtin_"):
                    self.refuse(path, n, f"macro {d.group(2)} calls {name}, which is not "
                                "part of the lab's API: its body runs inside the tests")
            if re.search(r"\b_Pragma\b", s):
                self.refuse(path, n, f"macro {d.group(2)} has a _Pragma: no pragma in your files")
        if re.match(r"\s*#\s*pragma\b", s):
            self.refuse(path, n, "has a #pragma (or _Pragma): no pragma in your files; the "
                        "build's warnings and instrumentation stay as they are")
            return
        if re.search(r"\b(asm|__asm__|__asm)\b", s):
            self.refuse(path, n, "has inline assembly (asm): write C; the kernel's barriers and "
                        "atomics are in <linux/...> headers")
        if "[[" in s.replace(" ", ""):
            self.refuse(path, n, "has a [[...]] attribute: not in this C (use the kernel's "
                        "macros)")
        for m in re.finditer(r"\b(__attribute__|__attribute)\b", s):
            for a in attribute_names(s, m.end()):
                if a not in ATTRIBUTES:
                    self.refuse(path, n, f"has __attribute__(({a})): lab code may use only "
                                "harmless attributes (unused, noinline, aligned, format, ...)")

    # ------------------------------------------------ what the object file says
    def check_object(self, path, obj, lab, header=False):
        """Refusals for OBJ, the object of student file PATH (of lab LAB)."""
        api = self.api.get(lab, {})
        defines = set() if header else set(api.get("defines", []))
        calls = set(api.get("calls", [])) | set(api.get("defines", [])) | self.kernel | \
            self.uses_api(lab)
        # -l: the line of each symbol's first use (a relocation) or definition
        nm = subprocess.run(["nm", "-l", obj], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace")
        if nm.returncode:
            self.refuse(path, 0, f"its object cannot be read ({nm.stderr.strip()[:80]})")
            return
        for ln in nm.stdout.splitlines():
            sym, _, where = ln.partition("\t")
            p = sym.split()
            kind, name = (p[0], p[1]) if len(p) == 2 else (p[1], p[2]) if len(p) == 3 else (None, None)
            m = re.search(r":(\d+)", where)
            line = int(m.group(1)) if m and os.path.normpath(where.rsplit(":", 1)[0]) == path else 0
            if kind in ("U", "w", "v"):
                if name not in calls and name not in LIBC and not TSAN_HOOK.match(name):
                    self.refuse(path, line, f"uses {name}, which is not part of the lab's API "
                                "(the <linux/...> kernel functions, the lab's own functions "
                                "and a few C library ones such as printf, memset and "
                                "malloc)")
            elif kind in ("i", "I"):
                self.refuse(path, line, f"defines {name} as an indirect function (ifunc)")
            elif kind and kind.isupper() and name not in defines:
                what = "a header may define no global symbol" if header else \
                    f"only {', '.join(sorted(defines))} may be global"
                self.refuse(path, line, f"defines {name} globally: make it static ({what})")
        self.check_sections(path, obj)
        self.check_code(path, obj)

    def check_sections(self, path, obj):
        r = subprocess.run(["readelf", "-SW", obj], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, errors="replace")
        for m in re.finditer(r"^\s*\[\s*\d+\]\s+(\S+)", r.stdout, re.M):
            name = m.group(1)
            if name in ("NULL",) or SECTIONS.match(name):
                continue
            why = "a constructor or destructor (code run before or after the tests)" \
                if re.search(r"init|fini|ctors|dtors", name) else "a section of its own"
            self.refuse(path, 0, f"has section {name}: {why}; lab code runs only when "
                        "the kernel or a test calls it")

    def check_code(self, path, obj):
        r = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", obj], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, errors="replace")
        funcs, cur = {}, None
        for ln in r.stdout.splitlines():
            m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", ln)
            if m:
                cur = m.group(1)
                funcs[cur] = []
            elif cur is not None and ln.strip():
                funcs[cur].append(ln.strip())
        for f, body in funcs.items():
            insns = [b.split(":", 1)[1].strip() for b in body if re.match(r"[0-9a-f]+:\s", b)]
            relocs = [b for b in body if "R_X86_64" in b]
            ops = [i.split()[0] for i in insns if i]
            if any(o in ("syscall", "sysenter", "int", "int1", "int3", "into") for o in ops):
                self.refuse(path, 0, f"{f}() makes a system call or trap instruction "
                            "directly: no inline assembly in lab code")
            if f.startswith("_sub_I_00099_"):
                if any("__tsan_init" not in x for x in relocs):
                    self.refuse(path, 0, f"{f}() is not the instrumentation's constructor")
                continue
            if any("__tsan_func_entry" in x for x in relocs):
                continue
            # Left uninstrumented by the compiler only if it touches no memory
            # but its own stack frame and calls nothing.
            touches = [i for i in insns if i.startswith(("call", "jmp")) and "<" in i and
                       f"<{f}" not in i or not i.startswith(("lea", "nop")) and
                       re.search(r"\((?!%rbp\)|%rsp\))[^)]*\)", i)]
            if touches:
                self.refuse(path, 0, f"{f}() is not instrumented (no_sanitize, or compiled "
                            "without the build's flags): every function of lab code must be "
                            "seen by the simulated kernel")

    def uses_api(self, lab):
        """What lab LAB may call of the labs it builds on: their "defines"."""
        out = set()
        for u in self.uses.get(lab, []):
            out |= set(self.api.get(u, {}).get("defines", []))
        return out


def first_error_line(text):
    for ln in text.splitlines():
        if " error: " in ln:
            return ln.split(" error: ", 1)[1][:120]
    return ""


def check_target(bdir, label, student, roots, api, uses, simkernel, objects=True):
    """Refusals (one line each) for the student code of target LABEL in the
    build BDIR; without OBJECTS, only what the preprocessor says (before the
    build, so that nothing a file must not include is ever compiled). STUDENT: {abs path of a student file: (its lab, path shown)};
    ROOTS: folders its includes may come from besides the workbook's and the
    system's; API: {lab: its manifest's "api"}; USES: {lab: labs it uses};
    SIMKERNEL: the libsimkernel.a the target links."""
    units = units_of(bdir, label)
    if not units:
        return [f"{label}: no compile commands in {bdir} (build it first)"]
    c = Checker(bdir, {os.path.normpath(k): v for k, v in student.items()}, roots, api)
    c.uses = uses
    c.words = api_words(units[0])
    c.kernel = kernel_api(units[0], simkernel) if objects else set()
    header_views = {}
    for u in units:
        own = u.source in c.student
        lines = c.preprocessed(u)
        if lines is None:
            continue
        for p, ls in lines.items():
            if p != u.source:
                header_views.setdefault(p, []).append((u, ls))
        if objects and own and u.object and os.path.isfile(u.object):
            c.check_object(u.source, u.object, c.student[u.source][0])
    with tempfile.TemporaryDirectory() as d:
        for h, views in sorted(header_views.items()):
            u = views[0][0]
            alone = c.preprocessed(u, h)
            if alone is None:
                c.refuse(h, 0, "does not preprocess on its own: a lab header includes what it "
                         "uses")
            else:
                def solid(ls):
                    return [(n, t.strip()) for n, t in ls if t.strip()]
                mine = solid(alone.get(h, []))
                for other, ls in views:
                    if solid(ls) != mine:
                        c.refuse(h, 0, "compiles differently where the tests include it than "
                                 "alone (it tests a macro the tests define): a lab header must "
                                 "not depend on what includes it")
                        break
            if not objects:
                continue
            obj = os.path.join(d, "header.o")
            rc, _, err = u.run(["-x", "c", "-fkeep-inline-functions", "-fkeep-static-functions",
                                "-c", "-o", obj], h)
            if rc == 0:
                c.check_object(h, obj, c.student[h][0], header=True)
            else:   # else its inline functions would go unchecked
                c.refuse(h, 0, "does not compile on its own: a lab header includes what it "
                         "uses (" + (first_error_line(err) or "see ./workbook check") + ")")
    return c.out


def main(argv=None):
    """python3 -m workbook.objcheck SPEC.json: the refusals as a JSON list
    (how the grader runs the check inside its sandbox)."""
    with open((argv or sys.argv[1:])[0]) as f:
        spec = json.load(f)
    out = check_target(spec["bdir"], spec["label"], {k: tuple(v) for k, v in spec["student"].items()},
                       spec["roots"], spec["api"], spec["uses"], spec["simkernel"],
                       spec.get("objects", True))
    print(json.dumps(out))


if __name__ == "__main__":
    main()


def spec_for(bdir, lab, impl, extra_roots=()):
    """What check_target() needs for LAB built in BDIR from the student
    files under IMPL (a folder with the labs' layout)."""
    from .manifest import all_labs
    labs = all_labs()
    student = {os.path.join(impl, l.name, f): (l.name, f"labs/{l.name}/{f}")
               for l in labs for f in l.files}
    roots = [os.path.join(impl, l.name) for l in labs] + \
        [os.path.join(ROOT, "labs", l.name, "tests") for l in labs] + list(extra_roots)
    return {"bdir": bdir, "label": lab.label, "student": student, "roots": roots,
            "api": {l.name: l.api for l in labs}, "uses": {l.name: l.uses for l in labs},
            "simkernel": os.path.join(bdir, "common", "libsimkernel.a")}


def check_lab(bdir, lab, impl, extra_roots=(), objects=True):
    """check_target() for LAB, in this process (the student's own check)."""
    s = spec_for(bdir, lab, impl, extra_roots)
    return check_target(s["bdir"], s["label"], s["student"], s["roots"], s["api"], s["uses"],
                        s["simkernel"], objects)


def summary(refusals):
    """One line for a report: the first refusal, and how many more."""
    more = len(refusals) - 1
    return refusals[0] + (f" (and {more} more: ./workbook check shows them)" if more else "")
