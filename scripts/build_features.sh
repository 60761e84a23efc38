#!/usr/bin/env bash
# scripts/build_features.sh BUILDDIR...: fails (status 1, naming what is missing) when a build has no LLVM or no
# emulated-GPU module, since then the AMD device suites (MOCKPCI+AMD, MOCKUSB+AMD) cannot run, or no libbaregpu-dist
# (meson's -Dmpi=auto leaves dist/ out when Open MPI is not found, and with it the MPI tests). BG_TEST_PARTIAL=1
# accepts such a build (said on stdout). Prints one line per build: its LLVM and whether it has the module and dist.
set -uo pipefail
missing=""
for b in "$@"; do
  llvm=$(sed -n 's/^#define BG_LLVM_VERSION "\(.*\)"$/\1/p' "$b/bg_config.h" 2>/dev/null)
  grep -q '^#define BG_HAVE_LLVM 1' "$b/bg_config.h" 2>/dev/null || { missing+=" $b: no LLVM (llvm-22-dev or llvm-19-dev);"; llvm=none; }
  mock=yes
  [ -f "$b/tests/mockgpu/libbaregpu-mock.so" ] || { missing+=" $b: no emulated-GPU module (-Dmock=true);"; mock=no; }
  dist=yes
  [ -f "$b/dist/libbaregpu-dist.so" ] || { missing+=" $b: no libbaregpu-dist (Open MPI: libopenmpi-dev, openmpi-bin);"; dist=no; }
  echo "build $b: LLVM ${llvm:-none}, emulated-GPU module: $mock, libbaregpu-dist: $dist"
done
[ -z "$missing" ] && exit 0
if [ "${BG_TEST_PARTIAL:-0}" = 1 ]; then
  echo "BG_TEST_PARTIAL=1: running a partial suite:$missing"
  exit 0
fi
echo "the AMD device suites (MOCKPCI+AMD, MOCKUSB+AMD) or the MPI tests cannot run:$missing"
echo "install what is missing (scripts/setup.sh installs LLVM from apt), or set BG_TEST_PARTIAL=1 to run only what this build has"
exit 1
