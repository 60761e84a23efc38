/* dist/header.c: before a collective moves data, every rank learns every rank's (operation, dtype, shape, root), so a
 * mismatch fails on every rank with the same message instead of a hang or a silent truncation inside MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"

enum { HDR_N = 5 + BG_MAX_DIMS };  /* kind, op, dtype, root, ndim, shape... */

static const char *kind_name(int64_t k) {
  return k == DIST_ALLREDUCE ? "all-reduce" : k == DIST_BCAST ? "broadcast" : k == DIST_ALLGATHER ? "all-gather" : "?";
}

static void hdr_str(const int64_t *h, char *s, size_t n) {
  char sh[160] = "";
  size_t at = 0;
  for (int64_t i = 0; i < h[4] && i < BG_MAX_DIMS && at < sizeof sh; i++)
    at += (size_t)snprintf(sh + at, sizeof sh - at, "%s%lld", i ? "," : "", (long long)h[5 + i]);
  const char *extra = h[0] == DIST_ALLREDUCE ? (h[1] == BG_DIST_MEAN ? " mean" : " sum") : "";
  if (h[0] == DIST_BCAST)
    snprintf(s, n, "%s %s (%s) root %lld", kind_name(h[0]), bg_dtype_name((enum bg_dtype)h[2]), sh, (long long)h[3]);
  else
    snprintf(s, n, "%s%s %s (%s)", kind_name(h[0]), extra, bg_dtype_name((enum bg_dtype)h[2]), sh);
}

int dist_check_header(bg_dist *d, const char *what, enum dist_kind kind, int op, enum bg_dtype dt, unsigned ndim,
                      const int64_t *shape, int root) {
  int64_t mine[HDR_N] = {kind, op, dt, root, ndim};
  for (unsigned i = 0; i < ndim && i < BG_MAX_DIMS; i++) mine[5 + i] = shape[i];
  int64_t *all = malloc(sizeof mine * (size_t)d->size);
  if (!all) return bg_error(BG_ENOMEM, "%s: out of memory for %d headers", what, d->size);
  int rc = MPI_Allgather(mine, HDR_N, MPI_INT64_T, all, HDR_N, MPI_INT64_T, d->comm);
  if (rc != MPI_SUCCESS) {
    free(all);
    return dist_mpi_error(rc, what, "MPI_Allgather (header)");
  }
  int err = 0;
  for (int r = 0; r < d->size && !err; r++)
    if (memcmp(all + (size_t)r * HDR_N, mine, sizeof mine)) {
      char a[256], b[256];
      hdr_str(mine, a, sizeof a);
      hdr_str(all + (size_t)r * HDR_N, b, sizeof b);
      err = bg_error(BG_EINVAL, "%s: rank %d gives %s, rank %d gives %s: every rank must make the same call", what,
                     d->rank, a, r, b);
    }
  free(all);
  return err;
}

int dist_mpi_type(const char *what, enum bg_dtype dt, MPI_Datatype *out) {
  switch (dt) {
  case BG_INT8: *out = MPI_INT8_T; return 0;
  case BG_UINT8: *out = MPI_UINT8_T; return 0;
  case BG_INT16: *out = MPI_INT16_T; return 0;
  case BG_UINT16: *out = MPI_UINT16_T; return 0;
  case BG_INT32: *out = MPI_INT32_T; return 0;
  case BG_UINT32: *out = MPI_UINT32_T; return 0;
  case BG_INT64: *out = MPI_INT64_T; return 0;
  case BG_UINT64: *out = MPI_UINT64_T; return 0;
  case BG_FLOAT32: *out = MPI_FLOAT; return 0;
  case BG_FLOAT64: *out = MPI_DOUBLE; return 0;
  default:
    return bg_error(BG_ENOTSUP, "%s: dtype %s has no MPI sum (all-reduce takes int8..uint64, float32, float64)", what,
                    bg_dtype_name(dt));
  }
}
