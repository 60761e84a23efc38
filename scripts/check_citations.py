#!/usr/bin/env python3
"""scripts/check_citations.py ROOT [--skip PATH]...: fail if a source comment cites a document outside the repository.

Comments cite public sources (a Linux file and function, a tinygrad file) or state the fact; section numbers of
notes that are not in the repository ("am.md §7.2", "reference 1.9") mean nothing to a reader. Scanned: the
comments of .c/.h/.s files (string literals are code, not citations) and every line of .py/.sh/meson.build
files, under ROOT except build*/, hidden folders and this script (it names the patterns). Prints file:line for each hit.
"""
import pathlib
import re
import sys

from c_source import split_comments

PATTERN = re.compile(r'\.md §|reference [0-9]|§[0-9]|hcq_usb_sys|am\.md|nv\.md|seeds\.md|compile_tensor\.md|docs/reference/')
C_EXT = ('.c', '.h', '.s')
TEXT_EXT = ('.py', '.sh', '.build')


def main(argv):
    args = argv[1:]
    if not args:
        print(f'usage: {argv[0]} ROOT [--skip PATH]...', file=sys.stderr)
        return 2
    root, skip, rest = pathlib.Path(args[0]), set(), args[1:]
    while rest:
        if rest[0] != '--skip' or len(rest) < 2:
            print(f'{argv[0]}: expected --skip PATH, got {rest[0]!r}', file=sys.stderr)
            return 2
        skip.add(rest[1])
        rest = rest[2:]
    if not root.is_dir():
        print(f'{root}: ROOT is not a directory', file=sys.stderr)
        return 2
    bad = checked = 0
    me = pathlib.Path(__file__).resolve()
    for path in sorted(root.rglob('*')):
        rel = path.relative_to(root)
        if any(p.startswith(('build', '.')) for p in rel.parts[:-1]) or rel.as_posix() in skip or not path.is_file() \
                or path.resolve() == me:
            continue
        if path.suffix in C_EXT:
            text = split_comments(path.read_text(encoding='utf-8', errors='replace'))[1]
        elif path.suffix in TEXT_EXT:
            text = path.read_text(encoding='utf-8', errors='replace')
        else:
            continue
        checked += 1
        for lineno, line in enumerate(text.split('\n'), 1):
            m = PATTERN.search(line)
            if m:
                print(f'{rel}:{lineno}: cites {m.group(0)!r}, a document outside the repository: {line.strip()}')
                bad += 1
    if bad:
        print(f'{bad} citation(s) of documents outside the repository above: cite the public source (Linux file and '
              'function, tinygrad file) or state the fact', file=sys.stderr)
        return 1
    print(f'{checked} files under {root}: no citation of a document outside the repository')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
