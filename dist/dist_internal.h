/* dist/dist_internal.h: private to dist/: the bg_dist state, the staging pipeline and the header exchange. */
#ifndef BG_DIST_INTERNAL_H
#define BG_DIST_INTERNAL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "baregpu/dist.h"

struct bg_dist {
  MPI_Comm comm;        /* a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN: the caller's world keeps its handler */
  int rank, size;
  bool own_mpi;         /* bg_dist_init called MPI_Init_thread */
  uint64_t chunk;
  bg_dist_stats st;
};

/* A failed MPI call as -BG_EIO: "what: CALL: MPI_Error_string's text". */
int dist_mpi_error(int rc, const char *what, const char *call);

enum dist_kind { DIST_ALLREDUCE, DIST_BCAST, DIST_ALLGATHER };

/* One collective on device bytes: all-reduce and broadcast in place at dst (src == dst), all-gather from src into
 * dst (size * bytes). */
typedef struct dist_job {
  enum dist_kind kind;
  const char *what;     /* the public function, for messages */
  bg_buf *dst, *src;
  uint64_t doff, soff, bytes;
  MPI_Datatype mt;      /* all-reduce element type */
  enum bg_dtype dt;
  bool mean;
  int root;
} dist_job;

/* Runs j through host staging in chunks of d->chunk (dist/pipeline.c). */
int dist_pipeline(bg_dist *d, const dist_job *j);

/* Every rank's header (operation, dtype, shape, root) to every rank; a rank whose header differs from this one's is
 * -BG_EINVAL naming both (dist/header.c). */
int dist_check_header(bg_dist *d, const char *what, enum dist_kind kind, int op, enum bg_dtype dt, unsigned ndim,
                      const int64_t *shape, int root);
/* The MPI type of an all-reduce of dt, or -BG_ENOTSUP naming it. */
int dist_mpi_type(const char *what, enum bg_dtype dt, MPI_Datatype *out);

#endif
