/* hcq/version.c: bg_version(), the version this library was built as (baregpu/version.h). */
#include "baregpu/version.h"

const char *bg_version(void) { return BG_VERSION_STRING; }
