#!/usr/bin/env python3
"""check_links.py - every internal link of the generated HTML resolves.

Rule kept here: a link counts as resolved only if its file exists under the
HTML folder and, when it has a #fragment, that file defines the fragment as an
id or a name. External links (http:, https:, mailto:) are counted, not
followed. Exit status 1 if any internal link is broken.

Usage: check_links.py HTML_DIR [--forbid TEXT ...] [--solutions ROOT [--expect-solutions]]
  --forbid TEXT   also fail if TEXT occurs in any HTML or JS file (used to
                  prove that the student edition holds no solution code).
  --solutions ROOT
                  take every line between BEGIN SOLUTION and END SOLUTION in
                  ROOT/solutions/*/* that occurs in no source of labs/, common/
                  or docs/ (a solution-only line of 20 characters or more), and
                  fail if one occurs in the text of the pages (tags stripped,
                  whitespace collapsed); one that a handout or quiz (.md)
                  quotes on purpose is only noted.
  --expect-solutions
                  the opposite, for the instructor edition: fail unless every
                  lab's solution-only lines do occur (shows the search works).
"""
import html
import re
import argparse
import html.parser
import os
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ('id', 'name'):
            if a.get(k):
                self.ids.add(a[k])
        for k in ('href', 'src', 'data'):
            v = a.get(k)
            if v is not None and tag in ('a', 'link', 'script', 'img', 'iframe', 'object',
                                         'area', 'image', 'use'):
                self.links.append((tag, v))
        # SVG links (dot graphs) use xlink:href
        v = a.get('xlink:href')
        if v is not None and tag == 'a':
            self.links.append((tag, v))


def parse(path, cache):
    if path not in cache:
        p = Page()
        with open(path, encoding='utf-8', errors='replace') as f:
            p.feed(f.read())
        cache[path] = p
    return cache[path]


def norm(text):
    return re.sub(r'\s+', ' ', text).strip()


def solution_lines(src):
    """{lab: [solution-only lines]} from ROOT/solutions."""
    other = []
    for top in ('labs', 'common', 'docs'):
        for d, _, fs in os.walk(os.path.join(src, top)):
            for f in fs:
                if f.endswith(('.c', '.h', '.json', '.py', '.txt')):
                    with open(os.path.join(d, f), encoding='utf-8', errors='replace') as fh:
                        other.append(norm(fh.read()))
    other = '\n'.join(other)
    out = {}
    sol = os.path.join(src, 'solutions')
    for lab in sorted(os.listdir(sol)) if os.path.isdir(sol) else []:
        for d, _, fs in os.walk(os.path.join(sol, lab)):
            for f in sorted(fs):
                if not f.endswith(('.c', '.h')):
                    continue
                inside = False
                with open(os.path.join(d, f), encoding='utf-8', errors='replace') as fh:
                    for line in fh:
                        if 'BEGIN SOLUTION' in line:
                            inside = True
                        elif 'END SOLUTION' in line:
                            inside = False
                        elif inside:
                            t = norm(line)
                            if len(t) >= 20 and t not in other and not t.startswith(('/*', '*', '//')):
                                out.setdefault(lab, []).append(t)
    return out


def solution_search(src, root, expect):
    text = []
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(('.html', '.js')):
                with open(os.path.join(d, f), encoding='utf-8', errors='replace') as fh:
                    text.append(norm(html.unescape(re.sub(r'<[^>]*>', '', fh.read()))))
    text = '\n'.join(text)
    problems, total, seen = [], 0, 0
    handouts = []
    for top in ('labs', 'quizzes', 'docs'):
        for d, _, fs in os.walk(os.path.join(src, top)):
            for f in fs:
                if f.endswith('.md'):
                    with open(os.path.join(d, f), encoding='utf-8', errors='replace') as fh:
                        handouts.append(norm(fh.read()))
    handouts = '\n'.join(handouts)
    for lab, lines in solution_lines(src).items():
        hits = [l for l in lines if l in text]
        total += len(lines)
        seen += len(hits)
        if expect and len(hits) < len(lines):
            problems.append('%s: only %d of %d solution-only lines shown' % (lab, len(hits), len(lines)))
        if not expect:
            for l in hits:
                if l in handouts:
                    print('note: a solution line of %s is shown because a handout or quiz '
                          'quotes it: %r' % (lab, l))
                else:
                    problems.append('solution line of %s shown: %r' % (lab, l))
    print('solution-only lines searched: %d, found in these pages: %d' % (total, seen))
    return problems


def alnum(text):
    return re.sub(r'[^a-z0-9]', '', text.lower())


def answer_search(src, root, expect):
    """Probes from every paragraph of every quiz's answers section (the
    convention of docs/README.md): none may appear in the student edition's
    text, all must appear in the instructor edition's."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from prep_pages import split_answers
    text = []
    for path in sorted(os.listdir(root)):
        if path.endswith('.html'):
            with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
                text.append(alnum(html.unescape(re.sub(r'<[^>]*>', '', f.read()))))
    text = '\n'.join(text)
    qdir = os.path.join(src, 'quizzes')
    problems, probes, seen = [], 0, 0
    for fn in sorted(os.listdir(qdir)) if os.path.isdir(qdir) else []:
        if not fn.endswith('.md'):
            continue
        with open(os.path.join(qdir, fn), encoding='utf-8', errors='replace') as f:
            answers = split_answers(f.read())[1]
        for para in re.split(r'\n\s*\n', answers):
            para = re.sub(r'<[^>]*>|\]\([^)]*\)', '', para)
            para = re.sub(r'\*\*|__|`', '', para)
            t = alnum(para)
            if len(t) < 60:
                continue
            probe = t[len(t) // 2 - 30:len(t) // 2 + 30]
            probes += 1
            hit = probe in text
            seen += hit
            if hit and not expect:
                problems.append('%s: an answer is in these pages: %r' % (fn, para[:70]))
            if not hit and expect:
                problems.append('%s: an answer is missing from these pages: %r' % (fn, para[:70]))
    print('quiz answer paragraphs searched: %d, found in these pages: %d' % (probes, seen))
    return problems


def leftovers(root):
    """Print Markdown or Doxygen syntax that reached a page's text raw (not
    in code): a sign of a construct Doxygen did not understand. Notes only."""
    pats = ['**', '](', '```', '{#', '<tt>', '<a id', '\\ref', '@ref', '\\snippet']
    n = 0
    for path in sorted(os.listdir(root)):
        if not path.endswith('.html'):
            continue
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            raw = f.read()
        body = raw[raw.find('<div class="contents">'):]
        body = re.sub(r'<div class="fragment">.*?</div><!-- fragment -->', '', body, flags=re.S)
        body = re.sub(r'<code>.*?</code>|<pre.*?</pre>', '', body, flags=re.S)
        text = html.unescape(re.sub(r'<[^>]*>', '', body))
        for p in pats:
            for m in re.finditer(re.escape(p), text):
                n += 1
                print('note: raw %r in %s: ...%s...' % (
                    p, path, text[max(0, m.start() - 40):m.end() + 30].replace('\n', ' ')))
    print('raw Markdown/Doxygen leftovers in page text: %d' % n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('html_dir')
    ap.add_argument('--forbid', action='append', default=[])
    ap.add_argument('--solutions')
    ap.add_argument('--expect-solutions', action='store_true')
    ap.add_argument('--answers', metavar='ROOT',
                    help="search the pages for the quizzes' answers (ROOT/quizzes/*.md)")
    ap.add_argument('--expect-answers', action='store_true')
    a = ap.parse_args()
    root = os.path.realpath(a.html_dir)
    cache, internal, external, broken = {}, 0, 0, []
    files = []
    for d, _, fs in os.walk(root):
        for f in fs:
            files.append(os.path.join(d, f))
    for path in sorted(files):
        if not path.endswith(('.html', '.svg')):
            continue
        page = parse(path, cache)
        for tag, link in page.links:
            if not link or link.startswith(('javascript:', 'data:')):
                continue
            u = urllib.parse.urlsplit(link)
            if u.scheme or u.netloc:
                external += 1
                continue
            internal += 1
            target = path if not u.path else os.path.realpath(
                os.path.join(os.path.dirname(path), urllib.parse.unquote(u.path)))
            rel = os.path.relpath(path, root)
            if not target.startswith(root) or not os.path.isfile(target):
                broken.append('%s: <%s> %s (no such file)' % (rel, tag, link))
                continue
            if u.fragment and target.endswith(('.html', '.svg')):
                if u.fragment not in parse(target, cache).ids:
                    broken.append('%s: <%s> %s (no such anchor)' % (rel, tag, link))
    found = []
    for needle in a.forbid:
        for path in files:
            if path.endswith(('.html', '.js', '.svg', '.md', '.txt')):
                with open(path, encoding='utf-8', errors='replace') as f:
                    if needle in f.read():
                        found.append('%s: contains forbidden text %r' % (
                            os.path.relpath(path, root), needle))
    if a.solutions:
        found += solution_search(a.solutions, root, a.expect_solutions)
    if a.answers:
        found += answer_search(a.answers, root, a.expect_answers)
    leftovers(root)
    for b in broken + found:
        print(b)
    print('checked %d internal links in %d files (%d external links not followed): '
          '%d broken%s' % (internal, len([f for f in files if f.endswith(('.html', '.svg'))]),
                           external, len(broken),
                           ('; forbidden text found %d times' % len(found)) if a.forbid else ''))
    return 1 if broken or found else 0


if __name__ == '__main__':
    sys.exit(main())
