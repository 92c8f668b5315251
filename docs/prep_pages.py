#!/usr/bin/env python3
"""prep_pages.py - turn the workbook's Markdown into Doxygen pages, per edition.

Rule kept here: the sources stay plain Markdown that reads well on a forge
(handouts in labs/NN-*/README.md, quizzes in quizzes/NN-*.md, the pages in
docs/*.md); everything Doxygen needs on top (page labels, heading levels,
links between pages, the quiz answers dropped from the student edition, the
tests table, the reference solution in the instructor edition) is added here,
into the build folder, never written back. See docs/README.md.

Usage:
  prep_pages.py --src ROOT --out DIR --edition student|instructor
  prep_pages.py --strip-answers FILE.md      (print FILE without its answers)
"""
import argparse
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                'tools'))
from workbook import manifest, mutants  # noqa: E402
from workbook.common import Fail  # noqa: E402

ANSWERS_RE = re.compile(r'^##\s+Answers\b', re.I)
H2_RE = re.compile(r'^##\s')
HEADING_RE = re.compile(r'^(#{1,6})\s+(.*?)\s*$')
LABEL_RE = re.compile(r'\{#([A-Za-z0-9_.:-]+)\}\s*$')
ANCHOR_DEF_RE = re.compile(r'<a\s+(?:id|name)\s*=\s*"([^"]+)"|\{#([A-Za-z0-9_.:-]+)\}')
LINK_RE = re.compile(r'(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)')
FENCE_RE = re.compile(r'^\s*(```|~~~)')
TESTNAME_RE = re.compile(r'(?<!\[)`([a-z_][a-z0-9_]*)/([a-z_][a-z0-9_]*)`')


def split_answers(text):
    """(kept, answers): the answers section runs from a level-2 heading
    "## Answers..." to the next level-2 heading or the end of the file."""
    lines = text.splitlines(keepends=True)
    kept, answers, inside, fence = [], [], False, False
    for line in lines:
        if FENCE_RE.match(line):
            fence = not fence
        if not fence and ANSWERS_RE.match(line):
            inside = True
        elif not fence and inside and H2_RE.match(line):
            inside = False
        (answers if inside else kept).append(line)
    return ''.join(kept), ''.join(answers)


def curly_quotes(text):
    """Straight double quotes in prose become typographic ones. Doxygen does
    not process Markdown (code spans, emphasis) between straight quotes, so
    a quotation holding `code` would show raw <tt> tags. Code (fenced, spans,
    \\dot and \\code blocks), HTML tags and lines with Doxygen commands that
    take a quoted title are left alone."""
    out, block, opened = [], None, False
    for line in text.splitlines(keepends=True):
        st = line.strip()
        if block:
            if st.startswith(block):
                block = None
            out.append(line)
            continue
        m = re.match(r'(```|~~~)', st)
        if m:
            block = m.group(1)
            out.append(line)
            continue
        m = re.match(r'[\\@](dot|code|verbatim|msc|startuml)\b', st)
        if m:
            block = {'dot': '\\enddot', 'code': '\\endcode', 'verbatim': '\\endverbatim',
                     'msc': '\\endmsc', 'startuml': '\\enduml'}[m.group(1)]
            if st.startswith('@'):
                block = '@' + block[1:]
            out.append(line)
            continue
        if not st:
            opened = False
        if '"' not in line or re.search(r'[\\@](ref|image|snippet|include|subpage)\b', line):
            out.append(line)
            continue
        parts = re.split(r'(`[^`]*`|<[^>]*>)', line)
        for i in range(0, len(parts), 2):
            chars = []
            for ch in parts[i]:
                if ch == '"':
                    ch = '\u201d' if opened else '\u201c'
                    opened = not opened
                chars.append(ch)
            parts[i] = ''.join(chars)
        out.append(''.join(parts))
    return ''.join(out)


def copy_image(src, dst):
    """Copy an image; give an SVG without a viewBox one, so it can scale."""
    shutil.copyfile(src, dst)
    if not dst.endswith('.svg'):
        return
    with open(dst, encoding='utf-8', errors='replace') as f:
        text = f.read()
    m = re.match(r'(\s*(?:<\?xml[^>]*>\s*)?<svg\b[^>]*?)(/?>)', text)
    if not m or 'viewBox' in m.group(1):
        return
    w = re.search(r'\bwidth="(\d+(?:\.\d+)?)(?:px)?"', m.group(1))
    h = re.search(r'\bheight="(\d+(?:\.\d+)?)(?:px)?"', m.group(1))
    if w and h:
        text = '%s viewBox="0 0 %s %s"%s' % (m.group(1), w.group(1), h.group(1),
                                             text[m.end(1):])
        with open(dst, 'w', encoding='utf-8') as f:
            f.write(text)


def anchors_in(text):
    return {a or b for a, b in ANCHOR_DEF_RE.findall(text)}


def lab_number(name):
    m = re.match(r'(\d+)', name)
    return int(m.group(1)) if m else 0


class Site:
    def __init__(self, src, edition, out=None):
        self.out = out
        self.src = os.path.abspath(src)
        self.edition = edition
        self.labs = []      # dicts: name, label, title, json, readme
        self.quizzes = []   # dicts: name, label, path
        self.tests = {}     # (lab label, "suite/name") -> anchor: labs may share a test's name
        self.page_lab = None  # label of the lab whose page (handout or quiz) is being written
        self.page_for = {}  # absolute .md path -> page label
        labs_dir = os.path.join(self.src, 'labs')
        for name in sorted(os.listdir(labs_dir)) if os.path.isdir(labs_dir) else []:
            d = os.path.join(labs_dir, name)
            mf = os.path.join(d, 'lab.json')
            if not re.match(r'\d\d-', name) or not os.path.isfile(mf):
                continue
            manifest = load_lab(d)      # the workbook's one loader (validated)
            js = manifest.m
            lab = {'name': name, 'json': js, 'dir': d, 'manifest': manifest,
                   'label': js.get('label') or 'lab%d' % lab_number(name),
                   'title': js.get('title', name),
                   'readme': os.path.join(d, 'README.md')}
            self.labs.append(lab)
            self.page_for[os.path.realpath(lab['readme'])] = lab['label']
            self.page_for[os.path.realpath(d)] = lab['label']
            for t in js.get('tests', []):
                tname = t.get('name', '')
                self.tests[(lab['label'], tname)] = 'test_%s_%s' % (lab['label'],
                                                                   re.sub(r'\W', '_', tname))
        qdir = os.path.join(self.src, 'quizzes')
        for fn in sorted(os.listdir(qdir)) if os.path.isdir(qdir) else []:
            if re.match(r'\d\d-.*\.md$', fn):
                q = {'name': fn[:-3], 'label': 'quiz%d' % lab_number(fn),
                     'path': os.path.join(qdir, fn)}
                self.quizzes.append(q)
                self.page_for[os.path.realpath(q['path'])] = q['label']
        for fn in ('instructors.md', 'glossary.md', 'mainpage.md', 'kernel.md',
                   'timelines.md', 'callbacks.md', 'memory_model.md'):
            if fn == 'instructors.md' and edition == 'student':
                continue      # the student edition has no instructors' page
            p = os.path.join(self.src, 'docs', fn)
            self.page_for[os.path.realpath(p)] = {'mainpage.md': 'mainpage'}.get(fn, fn[:-3])

    # ---- text transformations ------------------------------------------
    def fix_page(self, text, label, path, default_title, dropped=frozenset()):
        """Label the title, clamp heading levels, rewrite links."""
        text = curly_quotes(text)
        out, fence, seen_title, level = [], False, False, 1
        base = os.path.dirname(os.path.abspath(path))
        for line in text.splitlines():
            if FENCE_RE.match(line):
                fence = not fence
                out.append(line)
                continue
            if fence:
                out.append(line)
                continue
            m = HEADING_RE.match(line)
            if m and not seen_title:
                if len(m.group(1)) == 1:
                    title = LABEL_RE.sub('', m.group(2)).strip()
                    out.append('# %s {#%s}' % (title, label))
                    seen_title = True
                    continue
                out.append('# %s {#%s}' % (default_title, label))
                out.append('')
                seen_title = True
            elif m:
                n = len(m.group(1))
                if n == 1:          # a second title: make it a section
                    n = 2
                n = min(n, level + 1)
                level = n
                line = '#' * n + ' ' + m.group(2)
            elif not seen_title and line.strip():
                out.append('# %s {#%s}' % (default_title, label))
                out.append('')
                seen_title = True
            out.append(self.fix_links(line, base, dropped))
        if not seen_title:
            out.insert(0, '# %s {#%s}\n' % (default_title, label))
        return '\n'.join(out) + '\n'

    def fix_links(self, line, base, dropped):
        # Doxygen 1.9.4 leaves emphasis around a lone code span as raw * or _
        line = re.sub(r'(\*\*|__)(`[^`]+`)\1', r'<b>\2</b>', line)
        line = re.sub(r'(?<![*\w])([*_])(`[^`]+`)\1(?![*\w])', r'<em>\2</em>', line)
        return self.fix_links2(line, base, dropped)

    def fix_links2(self, line, base, dropped):
        def repl(m):
            bang, text, target = m.group(1), m.group(2), m.group(3)
            if re.match(r'[a-z]+:', target) or target.startswith('@ref'):
                return m.group(0)
            if target.startswith('#'):
                if target[1:] in dropped:
                    return ''          # points into the answers we dropped
                return m.group(0)
            path, _, frag = target.partition('#')
            full = os.path.realpath(os.path.join(base, path))
            if full in self.page_for:
                ref = frag or self.page_for[full]
                return '[%s](@ref %s)' % (text, ref)
            if bang or (os.path.isfile(full) and full.endswith(('.svg', '.png', '.jpg'))):
                # an image beside the page (or a link to one): copy it where
                # Doxygen looks, and show it in the page
                if os.path.isfile(full) and self.out:
                    rel = os.path.relpath(full, self.src)
                    name = re.sub(r'[^A-Za-z0-9_.-]', '_', rel)
                    os.makedirs(os.path.join(self.out, 'images'), exist_ok=True)
                    copy_image(full, os.path.join(self.out, 'images', name))
                    return '![%s](%s)' % (text.replace('`', ''), name)
                return text
            rel = os.path.relpath(full, self.src)
            if rel.startswith('..'):
                return text
            if rel.startswith('solutions') and self.edition == 'student':
                return text
            if rel in text or text.strip('`') == os.path.basename(rel):
                return '`%s`' % rel if '`' not in text else text
            return '%s (`%s`)' % (text, rel)
        # links, but none that starts inside a code span
        spans = [m.span() for m in re.finditer(r'`[^`]*`', line)]
        line = LINK_RE.sub(
            lambda m: m.group(0) if any(a < m.start() < b for a, b in spans) else repl(m),
            line)
        # link test names to the lab's tests table
        return TESTNAME_RE.sub(
            lambda m: ('<tt>@ref %s "%s/%s"</tt>' % (self.test_anchor('%s/%s' % m.groups()),
                                                       m.group(1), m.group(2)))
            if self.test_anchor('%s/%s' % m.groups()) else m.group(0),
            line)

    def test_anchor(self, name):
        """The anchor of test NAME: the current lab's own, else the one lab that has it."""
        if (self.page_lab, name) in self.tests:
            return self.tests[(self.page_lab, name)]
        found = [a for (label, n), a in self.tests.items() if n == name]
        return found[0] if len(found) == 1 else None

    # ---- pages ---------------------------------------------------------
    def lab_page(self, lab):
        js = lab['json']
        title = 'Lab %d: %s' % (lab_number(lab['name']), lab['title'])
        if os.path.isfile(lab['readme']):
            with open(lab['readme'], encoding='utf-8') as f:
                text = f.read()
        else:
            text = '# %s\n\nThe handout of this lab (`labs/%s/README.md`) is not written yet.\n' % (
                title, lab['name'])
        self.page_lab = lab['label']
        text = self.fix_page(text, lab['label'], lab['readme'], title)
        self.page_lab = None
        extra = ['', '## The tests of this lab {#%s_tests}' % lab['label'], '']
        tests = js.get('tests', [])
        extra.append('Run them with `./workbook check %s` (or `build/%s_tests --color=never`).'
                     % (lab['name'], lab['label']))
        extra.append('')
        if tests:
            extra += ['| test | points | what a failure means |', '| --- | ---: | --- |']
            for t in tests:
                hint = str(t.get('hint', '')).replace('|', '\\|').replace('\n', ' ')
                extra.append('| <a id="%s"></a>`%s` | %s | %s |' % (
                    self.tests[(lab['label'], t['name'])], t['name'], t.get('points', ''), hint))
        else:
            extra.append('The manifest `labs/%s/lab.json` lists no graded tests yet.' % lab['name'])
        extra.append('')
        uses = js.get('uses', [])
        if uses:
            refs = ['@ref %s' % l['label'] for l in self.labs if l['name'] in uses]
            extra.append('This lab links your own code from: %s.' % ', '.join(refs))
            extra.append('')
        quiz = [q for q in self.quizzes if lab_number(q['name']) == lab_number(lab['name'])]
        if quiz:
            extra.append('Its Quick Quiz: @ref %s.' % quiz[0]['label'])
            extra.append('')
        if self.edition == 'instructor':
            extra += self.solution_section(lab)
        return text + '\n'.join(extra) + '\n'

    def solution_section(self, lab):
        sol = os.path.join(self.src, 'solutions', lab['name'])
        out = ['## Reference solution (instructor edition) {#%s_solution}' % lab['label'], '']
        if not os.path.isdir(sol):
            return out + ['No reference solution in `solutions/%s` yet.' % lab['name'], '']
        for f in lab['json'].get('files', []):
            if os.path.isfile(os.path.join(sol, f)):
                out += ['`solutions/%s/%s`:' % (lab['name'], f), '',
                        '\\include %s/%s' % (lab['name'], f), '']
        muts = mutants.load(lab['manifest'])
        if muts:
            out += ['### Mutants {#%s_mutants}' % lab['label'], '',
                    'Each is a patch, `solutions/%s/mutants/NAME.patch`.' % lab['name'], '',
                    '| mutant | file | what it breaks | killed by |', '| --- | --- | --- | --- |']
            for mu in muts:
                desc = mu.description.replace('|', '\\|').replace('\n', ' ')
                kb = ', '.join('`%s`' % k for k in mu.killed_by)
                out.append('| %s | `%s` | %s | %s |' % (mu.name, ', '.join(mu.files()), desc, kb))
            out.append('')
        return out

    def quiz_page(self, q):
        with open(q['path'], encoding='utf-8') as f:
            text = f.read()
        kept, answers = split_answers(text)
        dropped = frozenset()
        if self.edition == 'student':
            dropped = anchors_in(answers)
            text = kept.rstrip() + '\n\n' + (
                'The answers are in the instructor edition of these pages.\n' if answers else '')
        title = 'Quick Quiz %d' % lab_number(q['name'])
        self.page_lab = 'lab%d' % lab_number(q['name'])
        page = self.fix_page(text, q['label'], q['path'], title, dropped)
        self.page_lab = None
        return page

    def lab_sequence_dot(self):
        planned = [('01-synchronize-rcu', 'lab1', 'synchronize_rcu()'),
                   ('02-call-rcu', 'lab2', 'call_rcu()'),
                   ('03-module-unload', 'lab3', 'module unload,\\nrcu_barrier() (one queue)'),
                   ('04-rcu-barrier', 'lab4', 'per-CPU queues,\\nrcu_barrier()')]
        have = {l['name']: l for l in self.labs}
        lines = ['\\dot', 'digraph labs {', '  rankdir=LR;',
                 '  node [shape=box, style="rounded,filled", fillcolor="#e8f0fe", '
                 'fontname=Helvetica, fontsize=11];',
                 '  edge [fontname=Helvetica, fontsize=9];']
        names = [p[0] for p in planned] + [l['name'] for l in self.labs
                                           if l['name'] not in [p[0] for p in planned]]
        for name in names:
            n = lab_number(name)
            short = [p[2] for p in planned if p[0] == name]
            short = short[0] if short else name[3:]
            if name in have:
                l = have[name]
                lines.append('  lab%d [label="Lab %d\\n%s", tooltip="%s", URL="%s.html"];' % (
                    n, n, short, l['title'].replace('"', "'"), l['label']))
            else:
                lines.append('  lab%d [label="Lab %d\\n%s\\n(not written yet)", '
                             'style="rounded,dashed"];' % (n, n, short))
        for i in range(len(names) - 1):
            lines.append('  lab%d -> lab%d [label="then"];' % (
                lab_number(names[i]), lab_number(names[i + 1])))
        lines += ['}', '\\enddot']
        return '\n'.join(lines)

    def index_pages(self):
        labs = ['# The labs {#labs}', '',
                'Do them in order: each lab builds on the code you wrote in the ones before.', '',
                self.lab_sequence_dot(), '']
        for l in self.labs:
            labs.append('- \\subpage %s' % l['label'])
        quizzes = ['# Quick quizzes {#quizzes}', '',
                   'One quiz per lab, in the style of the article\'s Quick Quizzes.', '']
        if self.edition == 'student':
            quizzes += ['The answers are in the instructor edition.', '']
        for q in self.quizzes:
            quizzes.append('- \\subpage %s' % q['label'])
        if not self.quizzes:
            quizzes.append('No quiz is written yet.')
        return '\n'.join(labs) + '\n', '\n'.join(quizzes) + '\n'

    def doc_page(self, path, label, title):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        text = text.replace('@LAB_SEQUENCE@', self.lab_sequence_dot())
        text = text.replace('@EDITION@', self.edition)
        return self.fix_page(text, label, path, title)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    old = None
    if os.path.exists(path):
        with open(path, encoding='utf-8') as f:
            old = f.read()
    if old != text:          # keep timestamps when nothing changed
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)


def load_lab(d):
    """The lab at D through the workbook's own loader (tools/workbook/manifest.py)."""
    try:
        return manifest.Lab(d)
    except Fail as e:
        sys.exit('prep_pages: %s' % e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--src')
    ap.add_argument('--out')
    ap.add_argument('--edition', choices=('student', 'instructor'), default='student')
    ap.add_argument('--strip-answers', metavar='FILE')
    a = ap.parse_args()
    if a.strip_answers:
        with open(a.strip_answers, encoding='utf-8') as f:
            sys.stdout.write(split_answers(f.read())[0])
        return 0
    if not a.src or not a.out:
        ap.error('--src and --out are required')
    site = Site(a.src, a.edition, a.out)
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(os.path.join(a.out, 'images'))
    for l in site.labs:
        write(os.path.join(a.out, 'lab_%s.md' % l['label']), site.lab_page(l))
    for q in site.quizzes:
        write(os.path.join(a.out, 'quiz_%s.md' % q['label']), site.quiz_page(q))
    labs, quizzes = site.index_pages()
    write(os.path.join(a.out, 'labs.md'), labs)
    write(os.path.join(a.out, 'quizzes.md'), quizzes)
    # Every test of the simulated kernel is an example: Doxygen lists it on
    # the Examples page and links each function it uses to it.
    tests = os.path.join(site.src, 'common', 'tests')
    ex = ['/**']
    for fn in sorted(os.listdir(tests)) if os.path.isdir(tests) else []:
        if fn.startswith('test_') and fn.endswith('.c'):
            ex += ['@example %s' % fn,
                   'A test of the simulated kernel (`common/tests/%s`), compiled and run '
                   'with `common_tests`.' % fn, '']
    mods = os.path.join(tests, 'modules')
    for fn in sorted(os.listdir(mods)) if os.path.isdir(mods) else []:
        if fn.endswith('.c'):
            ex += ['@example %s' % fn,
                   'A module the kernel\'s tests load with insmod() '
                   '(`common/tests/modules/%s`).' % fn, '']
    if site.edition == 'instructor':
        ex += ['@example timelines.c',
               'The program that draws the @ref timelines with the reference solutions '
               '(`docs/timelines.c`); it holds the article\'s rcu_barrier() beside the '
               'fixed one.', '']
    ex.append('*/')
    write(os.path.join(a.out, 'examples.dox'), '\n'.join(ex) + '\n')
    docs = os.path.join(site.src, 'docs')
    for fn, label, title in (('mainpage.md', 'mainpage', 'RCU Labs'),
                             ('glossary.md', 'glossary', 'Glossary'),
                             ('kernel.md', 'kernel', 'The simulated kernel'),
                             ('timelines.md', 'timelines', 'Timelines'),
                             ('callbacks.md', 'callbacks', 'The callback queue'),
                             ('memory_model.md', 'memory_model', 'The memory model'),
                             ('instructors.md', 'instructors', 'For instructors')):
        p = os.path.join(docs, fn)
        if fn == 'instructors.md' and site.edition == 'student':
            continue
        if os.path.isfile(p):
            write(os.path.join(a.out, fn), site.doc_page(p, label, title))
        elif fn == 'instructors.md':
            write(os.path.join(a.out, fn),
                  '# For instructors {#instructors}\n\n'
                  'The instructors\' guide (`docs/instructors.md`) is not written yet.\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
