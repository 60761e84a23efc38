#!/bin/sh
# scripts/check_core_backends.sh CC DIR WORD...: fail if a C source or header in DIR names an identifier that
# contains WORD outside comments (the core names no backend: backends register through the table meson generates,
# meson.build: backend_ifaces). Comments are removed by the compiler's preprocessor without expanding anything
# (gcc -fpreprocessed), so a comment that mentions a backend's function is fine.
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 CC DIR WORD..." >&2
  exit 2
fi
cc=$1 dir=$2
shift 2
tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT
bad=0 files=0
for f in "$dir"/*.c "$dir"/*.h; do
  [ -f "$f" ] || continue
  files=$((files + 1))
  if ! "$cc" -w -x c -fpreprocessed -dD -E -P "$f" >"$tmp"; then
    echo "$f: the preprocessor ($cc) failed on it" >&2
    exit 2
  fi
  for w in "$@"; do
    if grep -n -e "$w" "$tmp" | sed "s|^|$f (comments removed): names '$w': |" | grep .; then
      bad=1
    fi
  done
done
if [ "$files" -eq 0 ]; then
  echo "$dir: no .c or .h files" >&2
  exit 2
fi
if [ "$bad" -ne 0 ]; then
  echo "the core in $dir names a backend above; register it in its folder's meson.build (backend_ifaces) instead" >&2
  exit 1
fi
echo "$files files in $dir name none of: $*"
