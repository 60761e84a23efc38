#!/usr/bin/env bash
# Install the built library into a temporary prefix (a moved prefix: staged with --destdir), build
# examples/hello_queue.c (and fashion_mnist.c) with only the installed headers and `pkg-config --define-prefix --cflags --libs
# baregpu`, and run it on the CPU device. Also: the .pc works from the moved prefix without --define-prefix
# (its prefix is relative to the file), and the installed library loads the emulated-GPU module from its
# installed place, never from the build tree.
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
flags=$(pkg-config --define-prefix --cflags --libs baregpu)
libdir=$(pkg-config --define-prefix --variable=libdir baregpu)
for f in $flags; do
  case $f in
    -I*|-L*) [ -d "${f:2}" ] || { echo "install: $f (pkg-config --define-prefix) is not a directory"; exit 1; }
             case $(realpath "${f:2}") in "$tmp"/root/*) ;; *) echo "install: $f is outside the moved prefix"; exit 1;; esac;;
  esac
done
plain=$(pkg-config --cflags --libs baregpu)
[ "$(realpath "$(pkg-config --variable=libdir baregpu)")" = "$(realpath "$libdir")" ] ||
  { echo "install: libdir differs without --define-prefix: $plain"; exit 1; }
san=""
[ "$sanitize" = none ] || san="-fsanitize=$sanitize"
cc -std=c11 -Wall -Wextra -Werror $san "$src/examples/hello_queue.c" $flags -o "$tmp/hello_queue"
# The Fashion-MNIST example (examples/fashion_mnist.c) builds the same way, with zlib; training is the
# fashion-mnist-* tests' business.
cc -std=c11 -Wall -Wextra -Werror $san "$src/examples/fashion_mnist.c" "$src/examples/fmnist_io.c" $flags -lz -lm -o "$tmp/fashion_mnist"
DEV=CPU LD_LIBRARY_PATH="$libdir" "$tmp/fashion_mnist" --help 2>/dev/null
# Make sure nothing came from the source tree.
if [[ " $flags " == *" -I$src"* ]]; then echo "install: flags point into the source tree"; exit 1; fi
DEV=CPU LD_LIBRARY_PATH="$libdir" "$tmp/hello_queue"
# The emulated GPU's module: with the build tree still present, the installed library must load the installed one.
if [ -f "$libdir/baregpu/libbaregpu-mock.so" ]; then
  cat >"$tmp/mock_open.c" <<'C'
#include <baregpu/hcq.h>
#include <stdio.h>
int main(void) {
  bg_dev *d;
  if (bg_dev_open("MOCKPCI+AMD", &d) < 0) { fprintf(stderr, "mock_open: %s\n", bg_last_error()); return 1; }
  bg_dev_close(d);
  return 0;
}
C
  cc -std=c11 -Wall -Wextra -Werror $san "$tmp/mock_open.c" $flags -o "$tmp/mock_open"
  log=$(env -u BG_MOCK_PLUGIN BG_DEBUG=1 LD_LIBRARY_PATH="$libdir" "$tmp/mock_open" 2>&1) ||
    { echo "install: MOCKPCI+AMD did not open with the installed library:"; echo "$log"; exit 1; }
  loaded=$(echo "$log" | sed -n 's/^bg\[1\] mock plugin: loaded //p')
  [ "$(realpath "$loaded")" = "$(realpath "$libdir/baregpu/libbaregpu-mock.so")" ] ||
    { echo "install: the installed library loaded the emulated-GPU module '$loaded', expected $libdir/baregpu/libbaregpu-mock.so"; exit 1; }
  echo "install: installed library loaded its own emulated-GPU module ($loaded)"
fi
echo "install: 1 passed, 0 failed"
