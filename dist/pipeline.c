/* dist/pipeline.c: device bytes through host staging to MPI and back, in chunks, two staging slots.
 *
 * Chunk k: copy out (device -> staging slot k%2), MPI on the slot (MPI_Iallreduce in place, MPI_Ibcast,
 * MPI_Iallgather), copy in (slot -> device). The copy out of chunk k+1 is submitted before waiting for chunk k's MPI
 * request, and the copy in of chunk k runs while chunk k+1 is in MPI, so device copies overlap the transfers (the
 * double buffering of nccl's host-staged proxy; tinygrad's runtime/ops_*.py copy queues do the device side). One
 * copy queue carries every copy in order, and each recording waits for the previous one's signal, so a slot is
 * refilled only after its previous contents were copied in. Host waits for a copy poll the signal and MPI_Test the
 * request in flight, which is what makes Open MPI's nonblocking collectives progress meanwhile.
 *
 * Staging is a BG_BUF_HOST buffer of the device with a CPU view (pinned memory the copy engine reaches); a device
 * without one gets plain host memory and synchronous bg_buf_read/bg_buf_write (the reason logged at BG_DEBUG=1), and
 * so does a transfer of one chunk (nothing to overlap). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist_internal.h"

typedef struct stage {
  bg_dev *dev;
  bg_buf *hb;           /* pinned staging, or NULL */
  unsigned char *host;  /* its CPU view, or malloc'd memory */
  bg_queue *q;
  bg_signal *sig;
  uint64_t v;           /* last value a submitted recording signals */
  bool pinned, recording;
} stage;

static void stage_close(stage *s) {
  bg_queue_free(s->q);
  bg_signal_free(s->sig);
  if (s->hb) bg_buf_free(s->hb);
  else free(s->host);
  memset(s, 0, sizeof *s);
}

/* pinned: whether to try pinned staging and the copy queue (a single chunk has nothing to overlap: plain memory and
 * synchronous copies cost less than making a staging buffer, a queue and a signal). */
static int stage_open(stage *s, const char *what, bg_dev *dev, uint64_t bytes, bool pinned) {
  memset(s, 0, sizeof *s);
  s->dev = dev;
  if (pinned) {
    enum bg_queue_kind k = bg_dev_has_copy_queue(dev) ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE;
    int rc = bg_buf_alloc(dev, bytes, BG_BUF_HOST | BG_BUF_CPU_ACCESS, &s->hb);
    if (rc == 0 && !(s->host = bg_buf_cpu(s->hb))) rc = bg_error(BG_ENOTSUP, "host buffer has no CPU view");
    if (rc == 0) rc = bg_queue_new(dev, k, &s->q);
    if (rc == 0) rc = bg_signal_new(dev, 0, &s->sig);
    if (rc == 0) {
      s->pinned = true;
      return 0;
    }
    BG_LOG(1, "dist: %s: %s: no pinned staging (%s); plain host memory and synchronous copies", what, bg_dev_name(dev),
           bg_last_error());
    stage_close(s);
    s->dev = dev;
  }
  if (!(s->host = malloc(bytes ? bytes : 1))) return bg_error(BG_ENOMEM, "%s: out of memory for %llu bytes of staging",
                                                              what, (unsigned long long)bytes);
  return 0;
}

/* One device <-> staging copy; pinned: recorded into the current program (stage_submit sends it). */
static int stage_copy(stage *s, bg_buf *b, uint64_t boff, uint64_t hoff, uint64_t n, bool to_host) {
  if (!n) return 0;
  if (!s->pinned) return to_host ? bg_buf_read(b, boff, s->host + hoff, n) : bg_buf_write(b, boff, s->host + hoff, n);
  if (!s->recording) {
    bg_queue_reset(s->q);
    if (s->v) bg_queue_wait(s->q, bg_sig(s->sig), bg_const(s->v)); /* in order with the previous recording */
    s->recording = true;
  }
  if (to_host) bg_queue_copy(s->q, bg_addr(s->hb, hoff), bg_addr(b, boff), n);
  else bg_queue_copy(s->q, bg_addr(b, boff), bg_addr(s->hb, hoff), n);
  return 0;
}

/* Submits the recorded copies; *ticket: the signal value that says they are done (0: nothing to wait for). */
static int stage_submit(stage *s, uint64_t *ticket) {
  *ticket = 0;
  if (!s->pinned || !s->recording) return 0;
  s->recording = false;
  bg_queue_signal(s->q, bg_sig(s->sig), bg_const(s->v + 1));
  int rc = bg_queue_submit(s->q, NULL, 0);
  if (rc < 0) return rc;
  *ticket = ++s->v;
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Waits for ticket, driving MPI progress on *req meanwhile; after 50 ms of polling bg_signal_wait takes over (its
 * timeout and message). */
static int stage_wait(stage *s, uint64_t ticket, MPI_Request *req) {
  if (!ticket) return 0;
  double t0 = now_ms();
  for (;;) {
    uint64_t cur;
    int rc = bg_signal_value(s->sig, &cur);
    if (rc < 0) return rc;
    if (cur >= ticket) return 0;
    if (req && *req != MPI_REQUEST_NULL) {
      int flag;
      MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    }
    if (now_ms() - t0 > 50) return bg_signal_wait(s->sig, ticket, 0);
    sched_yield(); /* the copy engine may be a thread of this process (the CPU device) on a busy core */
  }
}

static void mean_div(void *p, uint64_t bytes, enum bg_dtype dt, int size) {
  if (dt == BG_FLOAT32)
    for (float *f = p, *e = f + bytes / 4; f < e; f++) *f /= (float)size;
  else
    for (double *f = p, *e = f + bytes / 8; f < e; f++) *f /= (double)size;
}

typedef struct pipe {
  bg_dist *d;
  const dist_job *j;
  stage s;
  uint64_t chunk, slot, nchunks;
  bool out, in;         /* this rank copies out (has data to send) / copies in (receives) */
} pipe;

static uint64_t chunk_len(const pipe *p, uint64_t k) {
  uint64_t lo = k * p->chunk;
  return p->j->bytes - lo < p->chunk ? p->j->bytes - lo : p->chunk;
}

static int copy_out(pipe *p, uint64_t k, uint64_t *ticket) {
  *ticket = 0;
  if (!p->out || k >= p->nchunks) return 0;
  int rc = stage_copy(&p->s, p->j->src, p->j->soff + k * p->chunk, (k & 1) * p->slot, chunk_len(p, k), true);
  return rc < 0 ? rc : stage_submit(&p->s, ticket);
}

static int copy_in(pipe *p, uint64_t k) {
  if (!p->in) return 0;
  const dist_job *j = p->j;
  uint64_t n = chunk_len(p, k), base = (k & 1) * p->slot, t;
  int rc = 0;
  if (j->kind == DIST_ALLGATHER)
    for (int r = 0; r < p->d->size && rc == 0; r++)
      rc = stage_copy(&p->s, j->dst, j->doff + (uint64_t)r * j->bytes + k * p->chunk, base + p->chunk + (uint64_t)r * n,
                      n, false);
  else
    rc = stage_copy(&p->s, j->dst, j->doff + k * p->chunk, base, n, false);
  return rc < 0 ? rc : stage_submit(&p->s, &t);
}

static int mpi_start(pipe *p, uint64_t k, MPI_Request *req) {
  const dist_job *j = p->j;
  unsigned char *h = p->s.host + (k & 1) * p->slot;
  uint64_t n = chunk_len(p, k);
  int rc;
  const char *call;
  if (j->kind == DIST_ALLREDUCE) {
    call = "MPI_Iallreduce";
    rc = MPI_Iallreduce(MPI_IN_PLACE, h, (int)(n / bg_dtype_size(j->dt)), j->mt, MPI_SUM, p->d->comm, req);
  } else if (j->kind == DIST_BCAST) {
    call = "MPI_Ibcast";
    rc = MPI_Ibcast(h, (int)n, MPI_BYTE, j->root, p->d->comm, req);
  } else {
    call = "MPI_Iallgather";
    rc = MPI_Iallgather(h, (int)n, MPI_BYTE, h + p->chunk, (int)n, MPI_BYTE, p->d->comm, req);
  }
  p->d->st.bytes += n;
  return rc == MPI_SUCCESS ? 0 : dist_mpi_error(rc, j->what, call);
}

static int run(pipe *p) {
  uint64_t tout[2] = {0, 0};
  int rc = copy_out(p, 0, &tout[0]);
  for (uint64_t k = 0; k < p->nchunks && rc == 0; k++) {
    MPI_Request req = MPI_REQUEST_NULL;
    if ((rc = stage_wait(&p->s, tout[k & 1], NULL)) < 0 || (rc = mpi_start(p, k, &req)) < 0) break;
    if ((rc = copy_out(p, k + 1, &tout[(k + 1) & 1])) == 0) rc = stage_wait(&p->s, tout[(k + 1) & 1], &req);
    int mrc = MPI_Wait(&req, MPI_STATUS_IGNORE); /* always: a request left in flight would outlive the slot */
    if (rc == 0 && mrc != MPI_SUCCESS) rc = dist_mpi_error(mrc, p->j->what, "MPI_Wait");
    if (rc < 0) break;
    if (p->j->mean) mean_div(p->s.host + (k & 1) * p->slot, chunk_len(p, k), p->j->dt, p->d->size);
    rc = copy_in(p, k);
    p->d->st.chunks++;
  }
  int wrc = stage_wait(&p->s, p->s.v, NULL); /* the last copies in, also after an error (the slots are freed next) */
  return rc < 0 ? rc : wrc;
}

int dist_pipeline(bg_dist *d, const dist_job *j) {
  memset(&d->st, 0, sizeof d->st);
  if (!j->bytes) return 0;
  pipe p = {.d = d, .j = j};
  p.chunk = d->chunk;
  if (j->kind == DIST_ALLREDUCE) p.chunk -= p.chunk % bg_dtype_size(j->dt);
  p.nchunks = (j->bytes + p.chunk - 1) / p.chunk;
  p.slot = p.chunk * (j->kind == DIST_ALLGATHER ? 1 + (uint64_t)d->size : 1);
  p.out = j->kind != DIST_BCAST || d->rank == j->root;
  p.in = j->kind != DIST_BCAST || d->rank != j->root || j->dst != j->src || j->doff != j->soff;
  bg_dev *dev = bg_buf_dev(j->dst);
  /* work already submitted on the device (a kernel writing the source) finishes before the copies read it */
  int rc = bg_dev_synchronize(dev, 0);
  if (rc < 0) return bg_error_context(rc, "%s: ", j->what);
  if ((rc = stage_open(&p.s, j->what, dev, 2 * p.slot, p.nchunks > 1)) < 0) return rc;
  d->st.pinned = p.s.pinned;
  rc = run(&p);
  stage_close(&p.s);
  return rc < 0 ? bg_error_context(rc, "%s: ", j->what) : 0;
}
