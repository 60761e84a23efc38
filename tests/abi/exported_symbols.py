#!/usr/bin/env python3
"""tests/abi/exported_symbols.py: the shared library exports exactly the public API.

The public API is every function and object declared in include/baregpu/*.h (static inline functions, macros
and typedefs are not symbols). They are found by running the C preprocessor over the headers, keeping the text
that its line markers attribute to include/baregpu/, and reading the top-level declarations. The test fails
naming each symbol the library exports that no public header declares, each public declaration the library
does not export, and each libbaregpu.map entry that no header declares.

A header with a library of its own (OWN_LIBRARY: dist.h, libbaregpu-dist) is checked only against that library, by
naming it as HEADER; without HEADER every other header is checked.

Usage: exported_symbols.py CC NM INCLUDE_DIR LIBRARY MAP [HEADER]
       exported_symbols.py --list CC INCLUDE_DIR   (print the declared symbols, one a line, for the map)
"""
import glob
import os
import re
import subprocess
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
OWN_LIBRARY = {"dist.h"}   # include/baregpu/dist.h: libbaregpu-dist.so (dist/libbaregpu-dist.map)


def header_text(cc, incdir):
    """Preprocessed text of the public headers alone, as (header name, text) pairs."""
    pubdir = os.path.realpath(os.path.join(incdir, "baregpu"))
    headers = sorted(glob.glob(os.path.join(pubdir, "*.h")))
    if not headers:
        sys.exit(f"abi-exports: no headers in {pubdir} (expected include/baregpu/*.h)")
    src = "".join(f"#include <baregpu/{os.path.basename(h)}>\n" for h in headers)
    run = subprocess.run(cc + ["-E", "-std=c11", "-I", incdir, "-x", "c", "-"], input=src,
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"abi-exports: preprocessing the public headers with {' '.join(cc)} failed:\n{run.stderr}")
    parts, cur, keep = [], [], None
    for line in run.stdout.splitlines():
        m = re.match(r'#\s*(?:line\s+)?\d+\s+"([^"]*)"', line)
        if m:
            path = os.path.realpath(m.group(1)) if not m.group(1).startswith("<") else ""
            name = os.path.basename(path) if os.path.dirname(path) == pubdir else None
            if name != keep:
                if keep and cur:
                    parts.append((keep, "\n".join(cur)))
                cur, keep = [], name
            continue
        if keep:
            cur.append(line)
    if keep and cur:
        parts.append((keep, "\n".join(cur)))
    return headers, parts


def drop_group(text, keyword):
    """Remove `keyword ( ... )` with balanced parentheses (__attribute__((...)), __asm__("..."))."""
    out, i = [], 0
    for m in re.finditer(r"\b" + keyword + r"\b\s*\(", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 0, m.end() - 1
        while j < len(text):
            depth += text[j] == "("
            depth -= text[j] == ")"
            j += 1
            if depth == 0:
                break
        i = j
    out.append(text[i:])
    return "".join(out)


def statements(text):
    """Top-level declarations: brace bodies collapsed to {}, split at ';' or after a function body."""
    out, cur, depth, i = [], [], 0, 0
    while i < len(text):
        c = text[i]
        if c == "{":
            if depth == 0:
                cur.append("{}")
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and "".join(cur).rstrip()[:-2].rstrip().endswith(")"):
                out.append("".join(cur))   # a function definition (static inline) ends at its body
                cur = []
        elif depth == 0:
            if c == ";":
                out.append("".join(cur))
                cur = []
            else:
                cur.append(c)
        i += 1
    return [" ".join(s.split()) for s in out if s.strip()]


def declared(cc, incdir):
    """{symbol: header} for every function and object the public headers declare."""
    headers, parts = header_text(cc, incdir)
    syms = {}
    for header, text in parts:
        text = drop_group(drop_group(drop_group(text, "__attribute__"), "__asm__"), "__asm")
        for st in statements(text):
            words = IDENT.findall(st)
            if not words or words[0] == "typedef" or "static" in words:
                continue
            if "(" in st:
                m = re.match(r"[^(]*?\(\s*\*\s*(\w+)\s*\)", st)   # `T (*name)(...)`: a pointer object
                name = m.group(1) if m else re.match(r"[^(]*?(\w+)\s*\(", st).group(1)
            elif re.fullmatch(r"(struct|union|enum) \w+( \{\})?", st):
                continue                                          # a tag declared or defined, no object
            else:
                name = IDENT.findall(re.split(r"[\[=]", st)[0])[-1]  # `extern const T name[...] = ...`
            syms[name] = header
    return headers, syms


def exported(nm, lib):
    run = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"abi-exports: {nm} -D --defined-only {lib} failed:\n{run.stderr}")
    syms = set()
    for line in run.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] != "A":             # 'A': the version node itself (BAREGPU_0.1)
            syms.add(f[2].split("@")[0])
    return syms


def map_globals(path):
    text = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
    names = []
    for block in re.findall(r"global\s*:(.*?)(?:local\s*:|\})", text, flags=re.S):
        names += [n.strip() for n in block.split(";") if n.strip()]
    return names


def main(argv):
    if len(argv) == 4 and argv[1] == "--list":
        _, syms = declared(argv[2].split(), argv[3])
        print("\n".join(sorted(syms)))
        return 0
    if len(argv) not in (6, 7):
        sys.exit(__doc__)
    cc, nm, incdir, lib, mapfile = argv[1].split(), argv[2], argv[3], argv[4], argv[5]
    headers, public = declared(cc, incdir)
    only = argv[6] if len(argv) == 7 else None
    public = {s: h for s, h in public.items() if (h == only if only else h not in OWN_LIBRARY)}
    headers = [h for h in headers if (os.path.basename(h) == only if only else os.path.basename(h) not in OWN_LIBRARY)]
    exports = exported(nm, lib)
    mapped = map_globals(mapfile)
    errors = []
    for s in sorted(exports - set(public)):
        errors.append(f"{os.path.basename(lib)} exports '{s}', which no include/baregpu/*.h declares: "
                      f"hide it (internal) or declare it in a public header and list it in {os.path.basename(mapfile)}")
    for s in sorted(set(public) - exports):
        errors.append(f"'{s}' is declared in include/baregpu/{public[s]} but {os.path.basename(lib)} does not "
                      f"export it: implement it, list it in {os.path.basename(mapfile)} and include its header in "
                      "libbaregpu_api.h (which gives the public declarations default visibility)")
    for s in mapped:
        if s not in public:
            errors.append(f"{os.path.basename(mapfile)} lists '{s}', which no include/baregpu/*.h declares "
                          "(an exact name is expected, no wildcard)")
    print(f"abi-exports: {len(headers)} public headers declare {len(public)} symbols; "
          f"{os.path.basename(lib)} exports {len(exports)}; {os.path.basename(mapfile)} lists {len(mapped)}")
    for e in errors:
        print("abi-exports: " + e)
    print(f"abi-exports: {1 if not errors else 0} passed, {1 if errors else 0} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
