#!/usr/bin/env python3
"""am/regs/check_literals.py DIR: fail if a C source in DIR addresses a register by a name string.

The AM driver names registers and fields by the compile-time identifiers of am/regs/am_reg_ids.h (regGCVM_L2_CNTL,
GCVM_L2_CNTL__ENABLE_L2_CACHE), so a misspelt name fails the build instead of the one path that runs it. A string
literal starting "reg[A-Z]" or "mm[A-Z]" outside comments (scripts/c_source.py blanks them) is therefore an error,
except the few listed in ALLOWED: names printed for a register that is in no table.
"""
import os
import pathlib
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
from c_source import split_comments  # noqa: E402

LITERAL = re.compile(r'"(?:reg|mm)[A-Z][A-Za-z0-9_]*')
# (file name, literal): why it may stay
ALLOWED = {
    ('am_dev.c', '"mmRCC_CONFIG_MEMSIZE'): 'BG_DEBUG trace name of the fixed MEMSIZE dword read before any table is '
                                           'selected (am/discovery.h BG_AM_DISC_MEMSIZE_REG); no look-up',
}


def main(argv):
    if len(argv) != 2:
        print(f'usage: {argv[0]} DIR', file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    files = sorted(p for p in root.iterdir() if p.suffix == '.c' and p.is_file()) if root.is_dir() else []
    if not files:
        print(f'{root}: not a directory with .c files', file=sys.stderr)
        return 2
    bad = 0
    for path in files:
        code = split_comments(path.read_text(encoding='utf-8', errors='replace'))[0]
        for lineno, line in enumerate(code.split('\n'), 1):
            for m in LITERAL.finditer(line):
                if (path.name, m.group(0)) in ALLOWED:
                    continue
                print(f'{path}:{lineno}: register name string {m.group(0)}" outside comments: {line.strip()}')
                bad += 1
    if bad:
        print('address registers and fields by their ids (am/regs/am_reg_ids.h: regX, X__FIELD; am/am_regs.h), '
              'not by name strings', file=sys.stderr)
        return 1
    print(f'{len(files)} files in {root}: no register name strings')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
