/* libbaregpu_api.h: force-included (-include) ahead of every source of the library, which is compiled with
 * -fvisibility=hidden. Declarations made under this pragma get default visibility, so exactly what the public
 * headers declare can be exported; every internal function and table stays hidden (GCC manual, "Visibility
 * Pragmas"; the same effect as marking each public declaration __attribute__((visibility("default")))).
 * libbaregpu.map then names the exported symbols and gives them a version node, as liburing's liburing.map. */
#pragma GCC visibility push(default)
#include "baregpu/compile.h"
#include "baregpu/error.h"
#include "baregpu/hcq.h"
#include "baregpu/onnx.h"
#include "baregpu/tensor.h"
#include "baregpu/version.h"
#pragma GCC visibility pop
