#!/usr/bin/env bash
# Install the built library into a temporary prefix, build examples/hello_queue.c with only the
# installed headers and `pkg-config --cflags --libs baregpu`, and run it on the CPU device.
set -euo pipefail
build=$1
src=$(realpath "$2")
sanitize=${3:-none}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --no-rebuild --destdir "$tmp/root" >/dev/null
pc=$(find "$tmp/root" -name baregpu.pc | head -n 1)
[ -n "$pc" ] || { echo "install: baregpu.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
# The .pc names the final prefix; point it at where it was staged now.
prefix=$(pkg-config --variable=prefix baregpu)
reloc="--define-variable=prefix=$tmp/root$prefix"
flags=$(pkg-config "$reloc" --cflags --libs baregpu)
libdir=$(pkg-config "$reloc" --variable=libdir baregpu)
san=""
[ "$sanitize" = none ] || san="-fsanitize=$sanitize"
cc -std=c11 -Wall -Wextra -Werror $san "$src/examples/hello_queue.c" $flags -o "$tmp/hello_queue"
# Make sure nothing came from the source tree.
if echo "$flags" | grep -qF -- "-I$src"; then echo "install: flags point into the source tree"; exit 1; fi
DEV=CPU LD_LIBRARY_PATH="$libdir" "$tmp/hello_queue"
