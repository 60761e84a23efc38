/* tests/abi/test_version.c: the version macros of baregpu/version.h and bg_version() of the linked shared library
 * both say meson's project version (argv[1]), and BG_VERSION_AT_LEAST orders versions. Built with the public
 * headers alone against libbaregpu.so. */
#include <baregpu/version.h>
#include <stdio.h>
#include <string.h>

static int failed;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "abi-version: %s\n", what);
    failed = 1;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PROJECT_VERSION (meson.project_version())\n", argv[0]);
    return 2;
  }
  const char *lib = bg_version();
  printf("abi-version: project %s, headers %s, library %s\n", argv[1], BG_VERSION_STRING, lib ? lib : "(null)");
  expect(lib != NULL, "bg_version() returned NULL");
  expect(lib && strcmp(lib, argv[1]) == 0, "bg_version() differs from meson's project version");
  expect(strcmp(BG_VERSION_STRING, argv[1]) == 0, "BG_VERSION_STRING differs from meson's project version");
  char parts[64];
  snprintf(parts, sizeof parts, "%d.%d.%d", BG_VERSION_MAJOR, BG_VERSION_MINOR, BG_VERSION_PATCH);
  expect(strcmp(parts, argv[1]) == 0, "BG_VERSION_MAJOR.MINOR.PATCH differ from meson's project version");
  expect(BG_VERSION_AT_LEAST(BG_VERSION_MAJOR, BG_VERSION_MINOR, BG_VERSION_PATCH), "AT_LEAST(own version) is false");
  expect(BG_VERSION_AT_LEAST(0, 0, 0), "AT_LEAST(0.0.0) is false");
  expect(!BG_VERSION_AT_LEAST(BG_VERSION_MAJOR + 1, 0, 0), "AT_LEAST(next major) is true");
  expect(!BG_VERSION_AT_LEAST(BG_VERSION_MAJOR, BG_VERSION_MINOR + 1, 0), "AT_LEAST(next minor) is true");
  expect(!BG_VERSION_AT_LEAST(BG_VERSION_MAJOR, BG_VERSION_MINOR, BG_VERSION_PATCH + 1), "AT_LEAST(next patch) is true");
  printf("abi-version: %d passed, %d failed\n", !failed, failed);
  return failed;
}
