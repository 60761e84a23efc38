#!/usr/bin/env python3
"""scripts/check_core_backends.py DIR WORD...: fail if a C source or header in DIR contains WORD outside comments.

The core names no backend: backends register through the table meson generates (meson.build: backend_ifaces), so
hcq/ neither declares a backend's symbols nor includes its headers. Comments may mention a backend's functions;
they are blanked (keeping line numbers) before the search, string literals are kept (an #include names a header).
"""
import pathlib
import sys

from c_source import split_comments


def main(argv):
    if len(argv) < 3:
        print(f'usage: {argv[0]} DIR WORD...', file=sys.stderr)
        return 2
    root, words = pathlib.Path(argv[1]), argv[2:]
    files = sorted(p for p in root.iterdir() if p.suffix in ('.c', '.h') and p.is_file()) if root.is_dir() else []
    if not files:
        print(f'{root}: not a directory with .c or .h files', file=sys.stderr)
        return 2
    bad = 0
    for path in files:
        code = split_comments(path.read_text(encoding='utf-8', errors='replace'))[0]
        for lineno, line in enumerate(code.split('\n'), 1):
            for w in words:
                if w in line:
                    print(f'{path}:{lineno}: names {w!r} outside comments: {line.strip()}')
                    bad += 1
    if bad:
        print(f'the core in {root} names a backend above; register it in its folder\'s meson.build (backend_ifaces) '
              'instead', file=sys.stderr)
        return 1
    print(f'{len(files)} files in {root} name none of: {" ".join(words)}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
