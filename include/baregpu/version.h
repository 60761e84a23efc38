/* baregpu/version.h: the version of the headers a program compiles against, and of the library it runs with.
 *
 * The macros are the headers' version; bg_version() is the running library's, so a program can check that
 * the two agree. meson.build refuses to configure when these macros differ from project(version: ...), and
 * the `abi-version` test checks bg_version() against it. */
#ifndef BAREGPU_VERSION_H
#define BAREGPU_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define BG_VERSION_MAJOR 0
#define BG_VERSION_MINOR 2
#define BG_VERSION_PATCH 0

#define BG_VERSION_STR_(x) #x
#define BG_VERSION_STR(x) BG_VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH", the same string as meson's project version. */
#define BG_VERSION_STRING \
  BG_VERSION_STR(BG_VERSION_MAJOR) "." BG_VERSION_STR(BG_VERSION_MINOR) "." BG_VERSION_STR(BG_VERSION_PATCH)
/* True when the headers are at least MAJOR.MINOR.PATCH. */
#define BG_VERSION_AT_LEAST(major, minor, patch)                                                     \
  (BG_VERSION_MAJOR > (major) ||                                                                     \
   (BG_VERSION_MAJOR == (major) &&                                                                   \
    (BG_VERSION_MINOR > (minor) || (BG_VERSION_MINOR == (minor) && BG_VERSION_PATCH >= (patch)))))

/* The running library's version, "MAJOR.MINOR.PATCH" (static storage; never NULL; cannot fail; any thread). */
const char *bg_version(void);

#ifdef __cplusplus
}
#endif

#endif
