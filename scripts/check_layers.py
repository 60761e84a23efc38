#!/usr/bin/env python3
"""scripts/check_layers.py: the library's folders include only downward (docs/design.md, "Layers").

Each library folder may include its own headers, the public headers (baregpu/), the generated bg_config.h and the
folders listed for it below; anything else (an upward or sideways include) is reported as file:line and fails.
tools/, tests/ and examples/ sit above the library and may include any of it.

    python3 scripts/check_layers.py SOURCE_ROOT
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from c_source import split_comments  # noqa: E402

# Top to bottom. A backend (am/, cpu/, nv/) implements the interface of hcq/backend.h and uses the platform below it;
# the core (hcq/) reaches backends only through the table meson generates (bg_backends.c), never by include.
ALLOWED = {
    'dist': set(),  # collectives over MPI (libbaregpu-dist): the public API (baregpu/) only
    'tensor': {'compile', 'ir', 'util'},
    'onnx': {'util'},  # the ONNX front end: the public tensor API (baregpu/) and util/
    'compile': {'formats', 'ir', 'util'},
    'am': {'hcq', 'platform', 'formats', 'ir', 'util'},
    'cpu': {'hcq', 'platform', 'formats', 'ir', 'util'},
    'nv': {'hcq', 'platform', 'compile', 'formats', 'ir', 'util'},  # nv_prog.c: PTX -> cubin (compile/ptx_compile.h)
    'hcq': {'platform', 'formats', 'ir', 'util'},
    'usb': {'platform', 'util'},
    'platform': {'util'},
    'ir': {'util'},
    'formats': {'util'},  # binary formats every layer may parse (code objects): below all but util
    'util': set(),
}
ALWAYS = {'baregpu', 'bg_config.h'}
# Known exceptions still being removed (file -> the folders it may reach besides its own rules), kept visible here.
EXCEPTIONS = {
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check(root):
    bad = []
    for layer, allowed in sorted(ALLOWED.items()):
        top = os.path.join(root, layer)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith(('.c', '.h', '.in')):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding='utf-8', errors='replace') as f:
                    code, _ = split_comments(f.read())
                ok = allowed | {layer} | EXCEPTIONS.get(rel, set())
                for m in INCLUDE.finditer(code):
                    target = m.group(1)
                    first = target.split('/', 1)[0] if '/' in target else target
                    if first in ALWAYS or first in ok:
                        continue
                    if '/' not in target:  # a sibling header by bare name: resolve against the folder
                        continue
                    line = code.count('\n', 0, m.start()) + 1
                    bad.append('%s:%d: %s/ includes "%s" (allowed: %s)' %
                               (rel, line, layer, target, ', '.join(sorted(ok | ALWAYS))))
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = sys.argv[1]
    missing = [d for d in ALLOWED if d not in ('nv',) and not os.path.isdir(os.path.join(root, d))]
    if missing:
        print('check_layers: no folder %s under %s' % (', '.join(missing), root), file=sys.stderr)
        return 2
    bad = check(root)
    for b in bad:
        print(b)
    if bad:
        print('check_layers: %d include(s) point up or sideways' % len(bad))
        return 1
    print('check_layers: the includes of %d layers point down' % len(ALLOWED))
    return 0


if __name__ == '__main__':
    sys.exit(main())
