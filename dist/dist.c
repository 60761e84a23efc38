/* dist/dist.c: joining MPI_COMM_WORLD, rank and size, chunk size, barrier, MPI errors as BG_E* codes. */
#include <stdlib.h>
#include <string.h>

#include "dist/dist_internal.h"

static bool dist_live; /* one bg_dist per process: MPI_Finalize cannot be undone */

int dist_mpi_error(int rc, const char *what, const char *call) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS) snprintf(s, sizeof s, "MPI error %d", rc);
  return bg_error(BG_EIO, "%s: %s: %s", what, call, s);
}

int bg_dist_init(int *argc, char ***argv, bg_dist **out) {
  if (!out) return bg_error(BG_EINVAL, "bg_dist_init: 'out' is NULL");
  *out = NULL;
  if (dist_live) return bg_error(BG_EBUSY, "bg_dist_init: this process already has a bg_dist (finalize it first)");
  int inited = 0, done = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&done);
  if (done) return bg_error(BG_EINVAL, "bg_dist_init: MPI was finalized already; it cannot be initialized again");
  bg_dist *d = calloc(1, sizeof *d);
  if (!d) return bg_error(BG_ENOMEM, "bg_dist_init: out of memory");
  int rc;
  if (!inited) {
    int provided = 0;
    if ((rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided)) != MPI_SUCCESS) {
      free(d);
      return dist_mpi_error(rc, "bg_dist_init", "MPI_Init_thread");
    }
    d->own_mpi = true;
    BG_LOG(1, "dist: MPI initialized, thread level %d (asked %d)", provided, MPI_THREAD_SERIALIZED);
  }
  /* Errors come back as codes on our own communicator (the default handler aborts the job). */
  if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &d->comm)) != MPI_SUCCESS ||
      (rc = MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
      (rc = MPI_Comm_rank(d->comm, &d->rank)) != MPI_SUCCESS || (rc = MPI_Comm_size(d->comm, &d->size)) != MPI_SUCCESS) {
    int err = dist_mpi_error(rc, "bg_dist_init", "MPI_Comm_dup/rank/size");
    if (d->own_mpi) MPI_Finalize();
    free(d);
    return err;
  }
  d->chunk = 1u << 20;
  dist_live = true;
  *out = d;
  return 0;
}

void bg_dist_finalize(bg_dist *d) {
  if (!d) return;
  MPI_Comm_free(&d->comm);
  if (d->own_mpi) {
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS) {
      dist_mpi_error(rc, "bg_dist_finalize", "MPI_Finalize");
      bg_log(0, "%s", bg_last_error());
    }
  }
  dist_live = false;
  free(d);
}

int bg_dist_rank(const bg_dist *d) { return d->rank; }
int bg_dist_size(const bg_dist *d) { return d->size; }
void bg_dist_last_stats(const bg_dist *d, bg_dist_stats *st) { *st = d->st; }

int bg_dist_set_chunk(bg_dist *d, uint64_t bytes) {
  if (!d) return bg_error(BG_EINVAL, "bg_dist_set_chunk: 'd' is NULL");
  if (bytes < 64 || bytes > (1ull << 30))
    return bg_error(BG_EINVAL, "bg_dist_set_chunk: %llu bytes, expected 64 .. 1073741824", (unsigned long long)bytes);
  d->chunk = bytes & ~63ull;
  return 0;
}

int bg_dist_barrier(bg_dist *d) {
  if (!d) return bg_error(BG_EINVAL, "bg_dist_barrier: 'd' is NULL");
  int rc = MPI_Barrier(d->comm);
  return rc == MPI_SUCCESS ? 0 : dist_mpi_error(rc, "bg_dist_barrier", "MPI_Barrier");
}
