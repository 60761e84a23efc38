/* tensor/tcompile.c: the program cache and compiling a schedule's kernels ahead of running them.
 *
 * Every kernel of a schedule that has no program yet is compiled before the first one runs, on
 * BG_COMPILE_THREADS threads (0 or unset: the online CPUs; 1: one at a time on the calling
 * thread). Kernels of one schedule are independent to the compiler: each has its own ir_ctx
 * (sched.c, lower.c), so renders never share a graph. What a compile touches besides its kernel:
 *  - the compilers: the host C compiler runs in its own mkdtemp folder through pipes opened
 *    O_CLOEXEC (compile/hostcc.c), LLVM gets a context per compile and initializes its targets
 *    once (pthread_once, compile/llvm_emit.c, llvm_amdgpu.c);
 *  - the on-disk cache: entries are written to a mkstemp file and renamed (compile/kcache.c),
 *    hit/miss counters are atomics (hostcc.c);
 *  - bg_error's message is thread-local: a worker copies its own before it returns, and the
 *    calling thread restores the message of the first failing kernel in schedule order;
 *  - bg_program_load on the one bg_dev: the public contract gives a bg_dev to one thread at a
 *    time, but the loaders keep that safe here: the AM and NV backends take the device lock
 *    around a load (am/am_hcq.c, nv/nv_iface.c locked_program_load), the CPU loader keeps no
 *    device state (memfd + dlopen, cpu/cpu_program.c) and hcq/program.c only reads the device;
 *    nothing else runs on the device while the pool works (the calling thread waits for it).
 * BEAM searches time kernels on the device, so they stay serial: they run first, in schedule
 * order, on the calling thread, and the pool compiles what they chose. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/beam.h"
#include "tensor/tensor_internal.h"
#include "util/env.h"

int (*t_compile_hook)(unsigned job);

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
  return h;
}

/* Kernel name when the compiler leaves it empty: E_/r_ and the output extents. */
static void own_name(const bg_tctx *c, const tkernel *k, char *name, size_t n) {
  const tshape *sh = t_shape(c, k->out);
  size_t len = (size_t)snprintf(name, n, "%c", 'E');
  for (unsigned i = 0; i < sh->n && len < n; i++)
    if (sh->d[i] > 1) len += (size_t)snprintf(name + len, n - len, "_%lld", (long long)sh->d[i]);
}

/* One kernel to compile: its cache key, the options BEAM chose, and what the compile gave. */
typedef struct tjob {
  tkernel *k;
  char *key;
  uint64_t hash;
  bg_kopts opts;
  bool has_opts;
  unsigned index;            /* among the jobs, in schedule order */
  bg_kernel kern;
  bg_program *prg;
  int rc;
  char msg[2048];            /* the worker's bg_last_error() when rc < 0 */
} tjob;

typedef struct tpool {
  bg_dev *dev;
  tjob *jobs;
  unsigned njobs;
  atomic_uint next;
  atomic_uint first_fail;    /* lowest failed job: later ones are not compiled (their result is not used) */
} tpool;

static void compile_one(tpool *p, tjob *j) {
  if (j->index > atomic_load(&p->first_fail)) return;
  int rc = t_compile_hook ? t_compile_hook(j->index) : 0;
  if (rc >= 0) rc = bg_kernel_build(p->dev, j->k->k, j->k->sink, j->has_opts ? &j->opts : NULL, &j->kern, &j->prg);
  j->rc = rc < 0 ? rc : 0;
  if (rc < 0) {
    snprintf(j->msg, sizeof j->msg, "%s", bg_last_error());
    unsigned f = atomic_load(&p->first_fail);
    while (j->index < f && !atomic_compare_exchange_weak(&p->first_fail, &f, j->index)) {}
  }
}

static void *worker(void *arg) {
  tpool *p = arg;
  for (unsigned i; (i = atomic_fetch_add(&p->next, 1)) < p->njobs;) compile_one(p, &p->jobs[i]);
  return NULL;
}

static int compile_threads(unsigned *out) {
  long n;
  int rc = bg_env_int("BG_COMPILE_THREADS", &n);
  if (rc < 0) return rc;
  if (n == 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  *out = n < 1 ? 1u : (unsigned)n;
  return 0;
}

/* Compiles jobs[0..n) on up to `threads` threads (the calling one among them). A thread that
 * cannot be created leaves its share to the others. */
static void compile_all(bg_dev *dev, tjob *jobs, unsigned n, unsigned threads) {
  if (!n) return;
  tpool p = {dev, jobs, n, 0, UINT32_MAX};
  pthread_t tid[63];
  unsigned extra = threads < n ? threads - 1 : n - 1, started = 0;
  if (extra > 63) extra = 63;
  BG_LOG(2, "tensor: compiling %u kernels on %u threads", n, extra + 1);
  while (started < extra && pthread_create(&tid[started], NULL, worker, &p) == 0) started++;
  worker(&p);
  for (unsigned i = 0; i < started; i++) pthread_join(tid[i], NULL);
}

/* The printed AST (ids renumbered by ir_print): structurally equal kernels compile once per context. */
static int kernel_key(tkernel *k, char **key, uint64_t *hash) {
  size_t klen = 0;
  *key = NULL;
  FILE *f = open_memstream(key, &klen);
  if (!f) return bg_error(BG_ENOMEM, "tensor: out of host memory printing a kernel");
  int pr = ir_print(k->k, k->sink, f);
  fclose(f);
  if (pr < 0) {
    free(*key);
    *key = NULL;
    return bg_error(BG_ENOMEM, "tensor: printing a kernel: %s", ir_error(k->k));
  }
  *hash = fnv1a(*key, klen);
  return 0;
}

static long find_prog(const bg_tctx *c, uint64_t hash, const char *key) {
  for (size_t i = 0; i < c->nprogs; i++)
    if (c->progs[i].hash == hash && strcmp(c->progs[i].key, key) == 0) return (long)i;
  return -1;
}

/* Adds a compiled job to c->progs (checks its arguments against the kernel) and takes its key,
 * program and kernel; when the arguments do not match, frees what it took. */
static int add_prog(bg_tctx *c, tjob *j, size_t *index) {
  tkernel *k = j->k;
  if (c->nprogs == c->progs_cap) {
    size_t ncap = c->progs_cap ? c->progs_cap * 2 : 16;
    tprog *np = realloc(c->progs, ncap * sizeof *np);
    if (!np) return bg_error(BG_ENOMEM, "tensor: out of host memory for a program"); /* the caller frees the job */
    c->progs = np;
    c->progs_cap = ncap;
  }
  tprog *p = &c->progs[c->nprogs];
  memset(p, 0, sizeof *p);
  p->k = j->kern;
  p->prg = j->prg;
  memset(&j->kern, 0, sizeof j->kern);
  j->prg = NULL;
  unsigned nmatched = 0;  /* each kernel variable is a context variable this kernel binds */
  for (unsigned v = 0; v < p->k.nvars && v < 16; v++) {
    const ir_var_info *vi = ir_var_get(p->k.vars[v]);
    p->vid[v] = -1;
    for (unsigned i = 0; vi && i < k->nvar; i++)
      if (!strcmp(c->vars[k->vid[i]].name, vi->name)) p->vid[v] = k->vid[i];
    nmatched += p->vid[v] >= 0;
  }
  if (p->k.nvars != nmatched || p->k.nbufs != k->nin + 1) {
    unsigned nb = p->k.nbufs, nv = p->k.nvars;
    bg_program_free(p->prg);
    bg_kernel_free(&p->k);
    return bg_error(BG_EINVAL, "tensor: kernel compiled to %u buffers and %u variables, expected %u and %u", nb, nv, k->nin + 1,
                    k->nvar);
  }
  if (!p->k.name[0]) own_name(c, k, p->k.name, sizeof p->k.name);
  for (int d = 0; d < 3; d++) {
    if (!p->k.gsz[d]) p->k.gsz[d] = 1;
    if (!p->k.lsz[d]) p->k.lsz[d] = 1;
  }
  p->hash = j->hash;
  p->key = j->key;
  j->key = NULL;
  *index = c->nprogs++;
  c->st.kernels_compiled++;
  return 0;
}

int t_compile_schedule(bg_tctx *c, tkernel *ks, unsigned nk, size_t *prog) {
  unsigned threads;
  int rc = compile_threads(&threads);
  if (rc < 0) return bg_error_context(rc, "tensor: compiling a schedule: ");
  tjob *jobs = calloc(nk ? nk : 1, sizeof *jobs);
  long *from = malloc((nk ? nk : 1) * sizeof *from);  /* kernel i: its job, or -1 (program cached, or no kernel) */
  if (!jobs || !from) {
    free(jobs);
    free(from);
    return bg_error(BG_ENOMEM, "tensor: out of host memory compiling a schedule");
  }
  for (unsigned i = 0; i < nk; i++) {
    from[i] = -1;
    prog[i] = SIZE_MAX;
  }
  unsigned nj = 0;
  int stop = 0;      /* a failure before the compiles (printing, BEAM): reported after those of earlier kernels */
  char stop_msg[2048] = "";
  for (unsigned i = 0; i < nk; i++) {
    tkernel *k = &ks[i];
    if (!k->k) continue; /* empty tensor */
    char *key = NULL;
    uint64_t h = 0;
    if ((stop = kernel_key(k, &key, &h)) < 0) break;
    long found = find_prog(c, h, key);
    if (found >= 0) {
      prog[i] = (size_t)found;
      free(key);
      continue;
    }
    for (unsigned j = 0; j < nj && found < 0; j++)
      if (jobs[j].hash == h && !strcmp(jobs[j].key, key)) found = j;
    if (found >= 0) {
      from[i] = found;
      free(key);
      continue;
    }
    if (bg_debug_level() >= 4) fprintf(stderr, "tensor: kernel AST\n%s", key);
    tjob *j = &jobs[nj];
    j->k = k;
    j->key = key;
    j->hash = h;
    j->index = nj;
    int r = bg_beam_width();  /* BEAM=N: searched (or cached) optimizations, compile/beam.c */
    if (r > 0 && (r = bg_beam_opts(c->dev, k->k, k->sink, (unsigned)r, &j->opts)) == 0) j->has_opts = true;
    if (r < 0) {
      free(key);
      j->key = NULL;
      stop = bg_error_context(r, "tensor: BEAM search for the kernel of a %s: ", ir_op_name((enum ir_op)k->out->op));
      break;
    }
    from[i] = nj++;
  }
  if (stop < 0) snprintf(stop_msg, sizeof stop_msg, "%s", bg_last_error());
  compile_all(c->dev, jobs, nj, threads);
  rc = 0;
  size_t *at = malloc((nj ? nj : 1) * sizeof *at);   /* job -> index in c->progs */
  if (!at) rc = bg_error(BG_ENOMEM, "tensor: out of host memory compiling a schedule");
  for (unsigned j = 0; j < nj; j++) {
    tjob *jb = &jobs[j];
    if (!rc && jb->rc < 0) {
      rc = bg_error(-jb->rc, "%s", jb->msg);
      bg_error_context(rc, "tensor: compiling the kernel of a %s: ", ir_op_name((enum ir_op)jb->k->out->op));
    } else if (!rc) {
      rc = add_prog(c, jb, &at[j]);
    }
    bg_program_free(jb->prg);  /* a job not added: the one that failed and those after it */
    bg_kernel_free(&jb->kern);
    free(jb->key);
  }
  if (!rc && stop < 0) rc = bg_error(-stop, "%s", stop_msg);
  for (unsigned i = 0; i < nk && !rc; i++)
    if (from[i] >= 0) prog[i] = at[from[i]];
  free(at);
  free(from);
  free(jobs);
  return rc;
}
