/* dist/dist_api.h: force-included ahead of dist/'s sources, compiled with -fvisibility=hidden, as libbaregpu_api.h
 * does for libbaregpu: what baregpu/dist.h declares gets default visibility, everything else stays hidden. */
#pragma GCC visibility push(default)
#include "baregpu/dist.h"
#pragma GCC visibility pop
