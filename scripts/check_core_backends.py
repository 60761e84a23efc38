#!/usr/bin/env python3
"""scripts/check_core_backends.py DIR WORD...: fail if a C source or header in DIR contains WORD outside comments.

The core names no backend: backends register through the table meson generates (meson.build: backend_ifaces), so
hcq/ neither declares a backend's symbols nor includes its headers. Comments may mention a backend's functions;
they are blanked (keeping line numbers) before the search, string literals are kept (an #include names a header).
"""
import pathlib
import sys


def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(''.join(ch if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


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
        code = strip_comments(path.read_text(encoding='utf-8', errors='replace'))
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
