/* baregpu/compile.h: kernel compilation entry points usable without the tensor layer.
 *
 * CPU kernels are C functions with the entry signature
 *   void name(const void *kernargs, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]);
 * called once per work-group (gid in [0,gsz)); kernargs holds the arguments in C-like layout
 * (buffer addresses as u64 first, then scalars, each aligned to its size).
 *
 * Errors follow baregpu/error.h. Thread safety: every function here may be called from any thread at once (the
 * statistics are process-wide counters updated atomically). */
#ifndef BAREGPU_COMPILE_H
#define BAREGPU_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compile C source into a shared object with the system C compiler. Results are cached on disk
 * (BG_CACHE_DIR, else $XDG_CACHE_HOME/baregpu, else ~/.cache/baregpu) under a SHA-256 of compiler,
 * flags and source. On success *so (malloc'd, the caller frees it with free()) holds the shared object's bytes and
 * *so_size their count; src and extra_flags (may be NULL) stay the caller's.
 * A compile error returns -BG_ECOMPILE with the compiler's diagnostics in bg_last_error(). */
int bg_compile_c(const char *src, const char *extra_flags, void **so, size_t *so_size);

/* Statistics of this process's compile calls (cache hits and misses), for benches and tests. */
typedef struct bg_compile_stats { unsigned long hits, misses; } bg_compile_stats;
void bg_compile_get_stats(bg_compile_stats *st);   /* fills the caller's *st; cannot fail */

/* BEAM search (BEAM=N, compile/beam.h): process-wide counters of searches, on-disk cache hits,
 * candidate compiles and timed runs, candidates dropped (invalid or a result different from the
 * unoptimized kernel), and the last search's winning and unoptimized times. */
typedef struct bg_beam_stats {
  unsigned long searches, cache_hits, compiles, timed_runs, rejected;
  double best_us, base_us;
} bg_beam_stats;
void bg_beam_get_stats(bg_beam_stats *st);   /* fills the caller's *st; cannot fail */

#ifdef __cplusplus
}
#endif
#endif
