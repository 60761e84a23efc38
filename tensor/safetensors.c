/* tensor/safetensors.c: bg_tn_load_safetensors: reads the header of a safetensors file (st_header.c parses and
 * checks it), makes a buffer per tensor and reads the whole data section into them in one pipelined pass (tload.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tensor/tensor_internal.h"
#include "tensor/tload.h"
#include "util/fd_io.h"

/* tensor.rs MAX_HEADER_SIZE: a larger header is refused before it is read */
#define MAX_HEADER ((uint64_t)100000000)

/* ---- bg_tn_load_safetensors ---- */

/* The arrays a load returns, kept until the context closes (t_load_free). */
typedef struct tload_mem {
  struct tload_mem *next;
  char **names;
  bg_tensor **ts;
  size_t n;
} tload_mem;

void t_load_free(bg_tctx *c) {
  for (tload_mem *m = c->load_mem, *next; m; m = next) {
    next = m->next;
    for (size_t i = 0; i < m->n; i++) free(m->names[i]);
    free(m->names);
    free(m->ts);
    free(m);
  }
  c->load_mem = NULL;
}

static int read_at(int fd, void *dst, size_t n, uint64_t off) {
  for (size_t done = 0; done < n;) {
    ssize_t r = pread(fd, (char *)dst + done, n - done, (off_t)(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? -errno : -EIO;
    done += (size_t)r;
  }
  return 0;
}

/* Reads and parses the header of path: *data_at the file offset of the data section. */
static int read_header(const char *path, uint64_t *size, uint64_t *data_at, tst_header *h) {
  memset(h, 0, sizeof *h);
  int fd, e = bg_open_regular(path, O_RDONLY, &fd);
  if (e < 0) return e;
  struct stat sb;
  if (fstat(fd, &sb) < 0) {
    e = bg_error(BG_EIO, "%s: fstat: %s", path, strerror(errno));
    close(fd);
    return e;
  }
  *size = (uint64_t)sb.st_size;
  uint8_t le[8];
  if (*size < 8) {
    close(fd);
    return bg_error(BG_EINVAL, "%s: %" PRIu64 " bytes, too short for a safetensors file (an 8-byte header length first)",
                    path, *size);
  }
  if ((e = read_at(fd, le, 8, 0)) < 0) {
    close(fd);
    return bg_error(BG_EIO, "%s: reading the header length: %s", path, strerror(-e));
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | le[i];
  if (n > *size - 8 || n > MAX_HEADER) {
    close(fd);
    return bg_error(BG_EINVAL, "%s: safetensors header length %" PRIu64 " beyond the file (%" PRIu64 " bytes: at most %" PRIu64
                    "%s)", path, n, *size, *size - 8 < MAX_HEADER ? *size - 8 : MAX_HEADER,
                    n > MAX_HEADER && n <= *size - 8 ? ", the format's limit" : "");
  }
  char *json = malloc(n ? n : 1);
  if (!json) {
    close(fd);
    return bg_error(BG_ENOMEM, "%s: out of host memory for a %" PRIu64 "-byte header", path, n);
  }
  e = read_at(fd, json, n, 8);
  close(fd);
  if (e < 0) e = bg_error(BG_EIO, "%s: reading the header: %s", path, strerror(-e));
  else e = t_st_parse_header(json, n, *size - 8 - n, path, h);
  free(json);
  *data_at = 8 + n;
  return e;
}

static void drop_bufs(bg_tctx *c, const int64_t *uids, size_t n) {
  for (size_t i = 0; i < n; i++) {
    bg_buf_free(c->bufs[uids[i]].b);
    c->bufs[uids[i]].b = NULL;
  }
}

int bg_tn_load_safetensors(bg_tctx *c, const char *path, const char *const **names, bg_tensor *const **ts,
                           size_t *n) {
  if (!c) return bg_error(BG_EINVAL, "load_safetensors: context is NULL");
  if (!path || !names || !ts || !n) {
    t_fail(c, "load_safetensors: %s is NULL", !path ? "path" : !names ? "names" : !ts ? "ts" : "n");
    return -BG_EINVAL;
  }
  *names = NULL;
  *ts = NULL;
  *n = 0;
  uint64_t size = 0, data_at = 0;
  tst_header h;
  int e = read_header(path, &size, &data_at, &h);
  for (size_t i = 0; e >= 0 && i < h.n; i++)
    if (!t_dtype_ok(h.e[i].dt))
      e = bg_error(BG_EINVAL, "%s: tensor '%s': dtype %s is not supported by this build", path, h.e[i].name,
                   t_st_dtype_name(h.e[i].dt));
  tload_mem *m = NULL;
  int64_t *uids = NULL;
  tload_target *tg = NULL;
  size_t nb = 0, ntg = 0;
  if (e >= 0) {
    m = calloc(1, sizeof *m);
    uids = calloc(h.n + 1, sizeof *uids);
    tg = calloc(h.n + 1, sizeof *tg);
    if (m) {
      m->names = calloc(h.n + 1, sizeof *m->names);
      m->ts = calloc(h.n + 1, sizeof *m->ts);
    }
    if (!m || !uids || !tg || !m->names || !m->ts) e = bg_error(BG_ENOMEM, "%s: out of host memory", path);
  }
  for (; e >= 0 && nb < h.n; nb++) {
    const tst_entry *t = &h.e[nb];
    int64_t numel = 1;
    for (unsigned d = 0; d < t->ndim; d++) numel *= t->shape[d];
    if ((e = t_new_buffer(c, t_scalar(t->dt), numel, &uids[nb])) < 0) {
      e = bg_error_context(e, "%s: tensor '%s': ", path, t->name);
      break;
    }
    if (t->end > t->begin) tg[ntg++] = (tload_target){data_at + t->begin, data_at + t->end, c->bufs[uids[nb]].b};
  }
  if (e >= 0 && ntg) e = t_load_targets(c->dev, path, size, tg, ntg, &c->load_st);
  for (size_t i = 0; e >= 0 && i < h.n; i++) {
    const tst_entry *t = &h.e[i];
    tshape sh = t_mkshape(t->ndim, t->shape);
    int64_t numel = t_numel(&sh);
    node u = n_buffer(c, uids[i], numel, t_scalar(t->dt));
    if (u) u = n_reshape(c, u, &sh);
    if (!u) e = bg_error(BG_ENOMEM, "%s: out of host memory for tensor '%s'", path, t->name);
    else m->ts[i] = t_wrap(c, u);
  }
  free(tg);
  if (e < 0) {
    if (uids) drop_bufs(c, uids, nb);
    free(uids);
    if (m) {
      free(m->names);
      free(m->ts);
      free(m);
    }
    t_st_header_free(&h);
    t_fail(c, "load_safetensors: %s", bg_last_error());
    return e;
  }
  free(uids);
  for (size_t i = 0; i < h.n; i++) {
    m->names[i] = h.e[i].name;   /* moved into the context's arrays */
    h.e[i].name = NULL;
  }
  m->n = h.n;
  m->next = c->load_mem;
  c->load_mem = m;
  t_st_header_free(&h);
  *names = (const char *const *)m->names;
  *ts = (bg_tensor *const *)m->ts;
  *n = m->n;
  return 0;
}
