/* compile/beam.h: BEAM search over a kernel's optimizations (tinygrad's BEAM=N). Internal to the
 * library (tensor/ calls it when BEAM is set).
 *
 * Candidates are bg_kopts: an upcast factor per output axis and an unroll factor of the innermost
 * reduce axis; on AMD GPUs also a work-group reduce size and local tiles (bg_beam_actions_amdgpu). Each
 * candidate is compiled, run on scratch buffers filled with small deterministic values and timed
 * with queue timestamps (bg_program_run with wait: timestamps before/after the exec), min of a
 * few runs; a candidate whose output differs from the unoptimized kernel's is dropped. The beam
 * keeps the `width` fastest and extends them by one action per round until no round improves.
 * The winner is cached on disk (compile/kcache.h's directory, entry <sha256>.beam keyed by the
 * printed AST, the device arch and the width); IGNORE_BEAM_CACHE=1 skips the lookup, not the store. */
#ifndef BG_COMPILE_BEAM_H
#define BG_COMPILE_BEAM_H

#include <stdbool.h>
#include <stddef.h>

#include "baregpu/compile.h"
#include "compile/kernel.h"

/* BEAM from the environment: the beam width, 0 when unset or 0; negative BG_E* when not a number. */
int bg_beam_width(void);
/* The optimizations for a kernel: the cached choice, else a search (stored for next time). */
int bg_beam_opts(bg_dev *d, ir_ctx *ctx, const ir_node *sink, unsigned width, bg_kopts *out);
/* Every single-action extension of `from` the search may try (valid factors only); returns the
 * count written (at most max). from == NULL starts from no optimizations. */
int bg_beam_actions(ir_ctx *ctx, const ir_node *sink, const bg_kopts *from, bg_kopts *out, size_t max);
/* The same for the AMD processor mcpu: also work-group reduce sizes (bg_kopts.group 8..256), local tiles (tile 4, 8,
 * 16) and on gfx11 WMMA (tc); a tile or tc is an action from no options only, and takes no other. */
int bg_beam_actions_amdgpu(ir_ctx *ctx, const ir_node *sink, const char *mcpu, const bg_kopts *from, bg_kopts *out,
                           size_t max);

/* A cache entry's payload (size bytes, not NUL-terminated) as options: true and *out (canonical) when it holds
 * them, false when it does not (the search runs again). Used by bg_beam_opts; tests/fuzz/fuzz_beam_cache.c. */
bool bg_beam_cache_decode(const void *data, size_t size, bg_kopts *out);

/* bg_beam_stats / bg_beam_get_stats: baregpu/compile.h. */

#endif
