#!/usr/bin/env python3
"""tests/unit/am/check_ip_versions.py: am/ decides by IP version only in its IP table (am/am_ip.h).

Outside the files below, no am/*.c or am/*.h compares an IP version part (`.maj`, `.min`, `.rev`), switches on one,
packs one into a number (`.maj << 16`), or calls the old generation tests gfx9() / bg_am_nbio79(): a generation
difference is a field or function of the block's descriptor in d->ip. Comments are ignored (scripts/c_source.py),
and so are string literals. Each finding is printed as file:line and the script exits 1.

    python3 tests/unit/am/check_ip_versions.py SOURCE_ROOT
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
from c_source import split_comments  # noqa: E402

# Files that legitimately read versions.
ALLOWED = {
    'am_ip.c',       # the version table and the selection
    'discovery.c',   # the discovery parser: table and gc_info layout versions
    'am_regs.c',     # IP version -> generated register table
    'fw_load.c',     # firmware file names from the IP versions, header version checks
    'fw_parse.c',    # firmware header versions
}

PART = r'(?:\.|->)(?:maj|min|rev)\b'
CMP = r'(?:==|!=|<=|>=|<(?!<)|(?<!-)>(?!>))'
RULES = [
    (re.compile(PART + r'\s*' + CMP), 'compares an IP version part'),
    (re.compile(CMP + r'\s*[\w\[\]().>-]*?' + PART), 'compares an IP version part'),
    (re.compile(r'\bswitch\s*\([^)]*' + PART), 'switches on an IP version part'),
    (re.compile(PART + r'\s*<<'), 'packs an IP version part into a number'),
    (re.compile(r'\b(?:gfx9|bg_am_nbio79)\s*\('), 'calls a generation test'),
    # the HCQ device's PM4 generation (am_hcq.h: h->gfx) is an encoder argument, never a branch
    (re.compile(r'->gfx\s*' + CMP), 'compares the PM4 generation'),
]
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def check(path, rel):
    with open(path, encoding='utf-8') as f:
        code, _ = split_comments(f.read())
    code = STRING.sub('""', code)
    found = []
    for n, line in enumerate(code.split('\n'), 1):
        for rx, what in RULES:
            if rx.search(line):
                found.append('%s:%d: %s: %s' % (rel, n, what, line.strip()))
                break
    return found


def main():
    am = os.path.join(ROOT, 'am')
    names = sorted(n for n in os.listdir(am) if n.endswith(('.c', '.h')))
    if not names:
        print('check_ip_versions: no sources in %s' % am)
        return 1
    found = []
    for n in names:
        if n in ALLOWED:
            continue
        found += check(os.path.join(am, n), 'am/' + n)
    for f in found:
        print(f)
    if found:
        print('check_ip_versions: %d version branch(es) outside the IP table (am/am_ip.c); make them fields or '
              'functions of the block descriptors (am/am_ip.h)' % len(found))
        return 1
    print('check_ip_versions: %d files of am/ checked, no version branch outside %s' %
          (len(names) - len(ALLOWED & set(names)), ', '.join(sorted(ALLOWED))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
