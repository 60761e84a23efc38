/* bg-onnx: run an ONNX model (onnx/README.md) on a device and print its outputs, or compare them with expected
 * outputs as ONNX's backend test runner does (onnx/backend/test/runner: assert_similar_outputs with rtol 1e-3,
 * atol 1e-7 through numpy.testing.assert_allclose, i.e. |got - want| <= atol + rtol * |want|, NaN matching NaN; the
 * dtypes must be equal; integer and bool outputs must be equal).
 *
 *   bg-onnx MODEL.onnx [--dev DEV] [--input NAME=FILE.pb]... [--expect NAME=FILE.pb]... [--test-dir DIR]
 *   bg-onnx --suite [--dev DEV] DIR...
 *   bg-onnx --device [--dev DEV]     (prints the device that opens, as tests/onnx/run.sh names it)
 *
 * --test-dir DIR: run every DIR/test_data_set_N (input_K.pb in the model's input order, output_K.pb expected).
 * --suite: each DIR is a test (DIR/model.onnx and its data sets), all on one context; one line each:
 * "PASS DIR", "FAIL DIR (reason)" or "UNSUPPORTED DIR (reason)", then a summary. After a failure the context (and
 * device) is reopened, so a fault that stopped the device's queues does not fail the tests after it. A test running longer than
 * BG_ONNX_TEST_TIMEOUT seconds (default 300) prints "FAIL DIR (timeout ...)" and the process exits 3, so a caller
 * (tests/onnx/run.sh) restarts with the tests after it. Exit status: 0 all passed (or unsupported), 1 a failure,
 * 2 usage. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baregpu/error.h"
#include "baregpu/onnx.h"
#include "baregpu/tensor.h"

#define RTOL 1e-3
#define ATOL 1e-7
#define MAXIO 64

enum { R_PASS, R_FAIL, R_UNSUP };

typedef struct named {
  const char *name, *file;
} named;

static int usage(void) {
  fprintf(stderr, "usage: bg-onnx MODEL.onnx [--dev DEV] [--input NAME=FILE.pb]... [--expect NAME=FILE.pb]... "
                  "[--test-dir DIR]\n       bg-onnx --suite [--dev DEV] DIR...\n       bg-onnx --device [--dev DEV]\n");
  return 2;
}

static double half_to_double(uint16_t h) {
  int e = h >> 10 & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return h >> 15 ? -v : v;
}

static double bf16_to_double(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Element i of a host buffer of dtype t as double. */
static double elem(const uint8_t *p, enum bg_dtype t, size_t i) {
  switch (t) {
  case BG_BOOL: case BG_UINT8: return p[i];
  case BG_INT8: return (int8_t)p[i];
  case BG_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case BG_UINT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case BG_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  case BG_UINT32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  case BG_INT64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
  case BG_UINT64: { uint64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
  case BG_FLOAT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return half_to_double(v); }
  case BG_BFLOAT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return bf16_to_double(v); }
  case BG_FLOAT32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
  case BG_FLOAT64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
  }
  return 0;
}

static bool is_float(enum bg_dtype t) {
  return t == BG_FLOAT16 || t == BG_FLOAT32 || t == BG_FLOAT64 || t == BG_BFLOAT16;
}

static uint8_t *read_all(bg_tensor *t, char *why, size_t cap) {
  size_t n = (size_t)bg_tn_numel(t) * bg_dtype_size(bg_tn_dtype(t));
  uint8_t *b = malloc(n ? n : 1);
  if (!b) {
    snprintf(why, cap, "out of host memory");
    return NULL;
  }
  if (n && bg_tn_read(t, b, n) < 0) {
    snprintf(why, cap, "%s", bg_last_error());
    free(b);
    return NULL;
  }
  return b;
}

static void shape_str(bg_tensor *t, char *s, size_t cap) {
  size_t k = (size_t)snprintf(s, cap, "(");
  for (unsigned d = 0; d < bg_tn_ndim(t) && k < cap; d++)
    k += (size_t)snprintf(s + k, cap - k, "%s%lld", d ? ", " : "", (long long)bg_tn_shape(t)[d]);
  if (k < cap) snprintf(s + k, cap - k, ")");
}

/* R_PASS, or R_FAIL with the reason. */
static int compare(const char *name, bg_tensor *got, bg_tensor *want, char *why, size_t cap) {
  char sg[128], sw[128];
  shape_str(got, sg, sizeof sg);
  shape_str(want, sw, sizeof sw);
  /* expected bfloat16 outputs come as UINT16 bit patterns in ONNX 1.12's test data (see run_once) */
  bool bf16_bits = bg_tn_dtype(got) == BG_BFLOAT16 && bg_tn_dtype(want) == BG_UINT16;
  if (bg_tn_dtype(got) != bg_tn_dtype(want) && !bf16_bits) {
    snprintf(why, cap, "output '%s' is %s, expected %s", name, bg_dtype_name(bg_tn_dtype(got)),
             bg_dtype_name(bg_tn_dtype(want)));
    return R_FAIL;
  }
  if (strcmp(sg, sw)) {
    snprintf(why, cap, "output '%s' has shape %s, expected %s", name, sg, sw);
    return R_FAIL;
  }
  uint8_t *g = read_all(got, why, cap);
  if (!g) return R_FAIL;
  uint8_t *w = read_all(want, why, cap);
  if (!w) {
    free(g);
    return R_FAIL;
  }
  enum bg_dtype dt = bg_tn_dtype(got);
  size_t n = (size_t)bg_tn_numel(got), bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double a = elem(g, dt, i), b = elem(w, dt, i);
    bool ok;
    if (is_float(dt)) {
      if (isnan(a) || isnan(b)) ok = isnan(a) && isnan(b);
      else if (isinf(a) || isinf(b)) ok = a == b;
      else ok = fabs(a - b) <= ATOL + RTOL * fabs(b);
    } else {
      ok = a == b;
    }
    if (!ok) {
      if (!bad) first = i;
      bad++;
      if (fabs(a - b) > worst || isnan(a - b)) worst = fabs(a - b);
    }
  }
  if (bad)
    snprintf(why, cap, "output '%s': %zu of %zu elements differ (first at %zu: got %.9g, expected %.9g; rtol %g, "
             "atol %g)", name, bad, n, first, elem(g, dt, first), elem(w, dt, first), RTOL, ATOL);
  free(g);
  free(w);
  return bad ? R_FAIL : R_PASS;
}

static void print_output(const char *name, bg_tensor *t) {
  char s[128], why[256];
  shape_str(t, s, sizeof s);
  printf("%s: %s %s", name, bg_dtype_name(bg_tn_dtype(t)), s);
  uint8_t *b = read_all(t, why, sizeof why);
  if (!b) {
    printf(" (cannot read: %s)\n", why);
    return;
  }
  size_t n = (size_t)bg_tn_numel(t);
  printf(" [");
  for (size_t i = 0; i < n && i < 8; i++) printf("%s%.6g", i ? ", " : "", elem(b, bg_tn_dtype(t), i));
  printf("%s]\n", n > 8 ? ", ..." : "");
  free(b);
}

static int classify(int r) { return r == -BG_ENOTSUP ? R_UNSUP : R_FAIL; }

/* Run m on the given input files, compare with the expected files (NULL: print). Index-ordered when names are
 * NULL. */
static int run_once(bg_tctx *c, bg_onnx_model *m, const named *in, unsigned nin, const named *exp, unsigned nexp,
                    char *why, size_t cap) {
  unsigned mi = bg_onnx_num_inputs(m), mo = bg_onnx_num_outputs(m);
  if (mi > MAXIO || mo > MAXIO) {
    snprintf(why, cap, "unsupported: more than %d inputs or outputs", MAXIO);
    return R_UNSUP;
  }
  for (unsigned i = 0; i < mi; i++) {
    int r = bg_onnx_input_info(m, i, NULL, NULL, NULL);
    if (r < 0) {
      snprintf(why, cap, "%s", bg_last_error());
      return classify(r);
    }
  }
  for (unsigned i = 0; i < mo; i++) {
    int r = bg_onnx_output_info(m, i, NULL, NULL, NULL);
    if (r < 0) {
      snprintf(why, cap, "%s", bg_last_error());
      return classify(r);
    }
  }
  bg_tensor *ins[MAXIO] = {0}, *outs[MAXIO] = {0};
  for (unsigned k = 0; k < nin; k++) {
    unsigned slot = k;
    if (in[k].name) {
      for (slot = 0; slot < mi && strcmp(bg_onnx_input_name(m, slot), in[k].name); slot++) {}
    }
    if (slot >= mi) {
      snprintf(why, cap, "input %s: the model has no such input (it has %u)", in[k].name ? in[k].name : "?", mi);
      return R_FAIL;
    }
    int r = bg_onnx_load_tensor(c, in[k].file, &ins[slot], NULL, 0);
    if (r < 0) {
      snprintf(why, cap, "%s", bg_last_error());
      return classify(r);
    }
    enum bg_dtype want;
    if (bg_onnx_input_info(m, slot, &want, NULL, NULL) == 0 && want == BG_BFLOAT16 &&
        bg_tn_dtype(ins[slot]) == BG_UINT16) {
      /* ONNX 1.12's test data stores bfloat16 tensors as UINT16 bit patterns (numpy has no bfloat16) */
      uint8_t *b = read_all(ins[slot], why, cap);
      if (!b) return R_FAIL;
      ins[slot] = bg_tn_from(c, BG_BFLOAT16, bg_tn_ndim(ins[slot]), bg_tn_shape(ins[slot]), b);
      free(b);
    }
  }
  for (unsigned i = 0; i < mi; i++)
    if (!ins[i]) {
      snprintf(why, cap, "no data for input '%s'", bg_onnx_input_name(m, i));
      return R_FAIL;
    }
  int r = bg_onnx_run(m, ins, mi, outs);
  if (r < 0) {
    snprintf(why, cap, "%s", bg_last_error());
    return classify(r);
  }
  if (!exp) {
    if (bg_tn_realize(outs, mo) < 0) {
      snprintf(why, cap, "%s", bg_tctx_error(c) ? bg_tctx_error(c) : bg_last_error());
      return R_FAIL;
    }
    for (unsigned i = 0; i < mo; i++) print_output(bg_onnx_output_name(m, i), outs[i]);
    return R_PASS;
  }
  if (nexp != mo && !exp[0].name) {
    snprintf(why, cap, "%u expected outputs for %u model outputs", nexp, mo);
    return R_FAIL;
  }
  for (unsigned k = 0; k < nexp; k++) {
    unsigned slot = k;
    if (exp[k].name)
      for (slot = 0; slot < mo && strcmp(bg_onnx_output_name(m, slot), exp[k].name); slot++) {}
    if (slot >= mo) {
      snprintf(why, cap, "expected output %s: the model has no such output", exp[k].name ? exp[k].name : "?");
      return R_FAIL;
    }
    bg_tensor *want;
    r = bg_onnx_load_tensor(c, exp[k].file, &want, NULL, 0);
    if (r < 0) {
      snprintf(why, cap, "%s", bg_last_error());
      return classify(r);
    }
    int res = compare(bg_onnx_output_name(m, slot), outs[slot], want, why, cap);
    if (res != R_PASS) {
      if (bg_tctx_error(c)) snprintf(why, cap, "%s", bg_tctx_error(c));
      return res;
    }
  }
  return R_PASS;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted names in dir starting with prefix (caller frees each and the array). */
static char **list_dir(const char *dir, const char *prefix, unsigned *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **v = NULL;
  unsigned cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      char **nv = realloc(v, cap * sizeof *v);
      if (!nv) break;
      v = nv;
    }
    v[(*n)++] = strdup(e->d_name);
  }
  closedir(d);
  if (v) qsort(v, *n, sizeof *v, cmp_str);
  return v;
}

static void free_list(char **v, unsigned n) {
  for (unsigned i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* input_K.pb sorted by K (input_10 after input_9). */
static int num_suffix(const char *s) {
  const char *u = strrchr(s, '_');
  return u ? atoi(u + 1) : 0;
}
static int cmp_num(const void *a, const void *b) {
  return num_suffix(*(char *const *)a) - num_suffix(*(char *const *)b);
}

static int run_test_dir(bg_tctx *c, bg_onnx_model *m, const char *dir, char *why, size_t cap) {
  unsigned nsets;
  char **sets = list_dir(dir, "test_data_set_", &nsets);
  if (!nsets) {
    free_list(sets, nsets);
    snprintf(why, cap, "unsupported: model not shipped with test data (no %s/test_data_set_*)", dir);
    return R_UNSUP;
  }
  int res = R_PASS;
  for (unsigned s = 0; s < nsets && res == R_PASS; s++) {
    char sd[3072];
    snprintf(sd, sizeof sd, "%s/%s", dir, sets[s]);
    unsigned ni, no;
    char **fi = list_dir(sd, "input_", &ni), **fo = list_dir(sd, "output_", &no);
    if (ni > MAXIO || no > MAXIO) {
      snprintf(why, cap, "unsupported: more than %d inputs or outputs", MAXIO);
      res = R_UNSUP;
    } else {
      if (ni) qsort(fi, ni, sizeof *fi, cmp_num);
      if (no) qsort(fo, no, sizeof *fo, cmp_num);
      static char paths[2 * MAXIO][4096];
      named in[MAXIO], ex[MAXIO];
      for (unsigned i = 0; i < ni; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", sd, fi[i]);
        in[i] = (named){NULL, paths[i]};
      }
      for (unsigned i = 0; i < no; i++) {
        snprintf(paths[MAXIO + i], sizeof paths[0], "%s/%s", sd, fo[i]);
        ex[i] = (named){NULL, paths[MAXIO + i]};
      }
      res = run_once(c, m, in, ni, ex, no, why, cap);
      if (res != R_PASS && nsets > 1) {
        size_t l = strlen(why);
        snprintf(why + l, cap - l, " [%s]", sets[s]);
      }
    }
    free_list(fi, ni);
    free_list(fo, no);
  }
  free_list(sets, nsets);
  return res;
}

static const char *current_test;
static unsigned timeout_s = 300;
static void on_alarm(int sig) {
  (void)sig;
  char line[4600];
  int n = snprintf(line, sizeof line, "FAIL %s (timeout after %u s)\n", current_test ? current_test : "?", timeout_s);
  if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0) _exit(4);
  _exit(3);
}

/* One line per test directory; the message of a failed/unsupported test has newlines flattened. */
static int suite(const char *dev, char **dirs, int n) {
  bg_tctx *c;
  if (bg_tctx_open(dev, &c) < 0) {
    fprintf(stderr, "bg-onnx: %s\n", bg_last_error());
    return 2;
  }
  const char *to = getenv("BG_ONNX_TEST_TIMEOUT");
  if (to && atoi(to) > 0) timeout_s = (unsigned)atoi(to);
  signal(SIGALRM, on_alarm);
  unsigned cnt[3] = {0};
  for (int i = 0; i < n; i++) {
    char why[1024] = "", path[4096];
    current_test = dirs[i];
    alarm(timeout_s);
    snprintf(path, sizeof path, "%s/model.onnx", dirs[i]);
    bg_onnx_model *m;
    int res;
    char data_json[4200];
    snprintf(data_json, sizeof data_json, "%s/data.json", dirs[i]);
    int r;
    if (access(path, F_OK) && !access(data_json, F_OK)) {
      /* ONNX's "real" model tests: data.json names a download, the model is not shipped */
      snprintf(why, sizeof why, "unsupported: model not shipped (only its data.json)");
      res = R_UNSUP;
    } else if ((r = bg_onnx_load(c, path, &m)) < 0) {
      snprintf(why, sizeof why, "%s", bg_last_error());
      res = classify(r);
    } else {
      res = run_test_dir(c, m, dirs[i], why, sizeof why);
      bg_onnx_free(m);
    }
    alarm(0);
    bg_tctx_clear_error(c);
    if (res == R_FAIL) {
      /* a failed test may have left the device in an error state (a fault stops its queues): the next test gets a
       * fresh context and device */
      bg_tctx_close(c);
      if (bg_tctx_open(dev, &c) < 0) {
        printf("FAIL %s (%s)\n", dirs[i], why);
        fprintf(stderr, "bg-onnx: reopening %s after a failed test: %s\n", dev ? dev : "the device", bg_last_error());
        return 1;
      }
    }
    for (char *p = why; *p; p++)
      if (*p == '\n') *p = ' ';
    cnt[res]++;
    if (res == R_PASS) printf("PASS %s\n", dirs[i]);
    else printf("%s %s (%s)\n", res == R_FAIL ? "FAIL" : "UNSUPPORTED", dirs[i], why);
    fflush(stdout);
  }
  printf("%u passed, %u failed, %u unsupported\n", cnt[R_PASS], cnt[R_FAIL], cnt[R_UNSUP]);
  bg_tctx_close(c);
  return cnt[R_FAIL] ? 1 : 0;
}

static int split_named(char *arg, named *o) {
  char *eq = strchr(arg, '=');
  if (!eq) return -1;
  *eq = 0;
  o->name = arg;
  o->file = eq + 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *dev = NULL, *model = NULL, *test_dir = NULL;
  named in[MAXIO], ex[MAXIO];
  unsigned nin = 0, nex = 0;
  bool is_suite = false, print_device = false;
  char **rest = calloc((size_t)argc + 1, sizeof *rest);
  int nrest = 0;
  if (!rest) return 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--dev") && i + 1 < argc) dev = argv[++i];
    else if (!strcmp(a, "--suite")) is_suite = true;
    else if (!strcmp(a, "--device")) print_device = true;
    else if (!strcmp(a, "--test-dir") && i + 1 < argc) test_dir = argv[++i];
    else if (!strcmp(a, "--input") && i + 1 < argc && nin < MAXIO) {
      if (split_named(argv[++i], &in[nin++]) < 0) return usage();
    } else if (!strcmp(a, "--expect") && i + 1 < argc && nex < MAXIO) {
      if (split_named(argv[++i], &ex[nex++]) < 0) return usage();
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      free(rest);
      usage();
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "bg-onnx: unknown option %s\n", a);
      free(rest);
      return usage();
    } else {
      rest[nrest++] = argv[i];
    }
  }
  if (print_device) { /* the device --dev / DEV / the default opens, as run.sh names it (no ":0" index) */
    free(rest);
    bg_tctx *c;
    if (bg_tctx_open(dev, &c) < 0) {
      fprintf(stderr, "bg-onnx: %s\n", bg_last_error());
      return 2;
    }
    const char *name = bg_tctx_device(c);
    const char *colon = strrchr(name, ':');
    printf("%.*s\n", colon && colon[1] >= '0' && colon[1] <= '9' ? (int)(colon - name) : (int)strlen(name), name);
    bg_tctx_close(c);
    return 0;
  }
  if (is_suite) {
    int r = nrest ? suite(dev, rest, nrest) : usage();
    free(rest);
    return r;
  }
  if (nrest != 1) {
    free(rest);
    return usage();
  }
  model = rest[0];
  free(rest);
  bg_tctx *c;
  if (bg_tctx_open(dev, &c) < 0) {
    fprintf(stderr, "bg-onnx: %s\n", bg_last_error());
    return 2;
  }
  bg_onnx_model *m;
  char why[1024] = "";
  int res;
  if (bg_onnx_load(c, model, &m) < 0) {
    fprintf(stderr, "bg-onnx: %s\n", bg_last_error());
    bg_tctx_close(c);
    return 1;
  }
  if (test_dir) res = run_test_dir(c, m, test_dir, why, sizeof why);
  else res = run_once(c, m, in, nin, nex ? ex : NULL, nex, why, sizeof why);
  if (res == R_PASS && (test_dir || nex)) printf("PASS\n");
  else if (res != R_PASS) fprintf(stderr, "bg-onnx: %s%s\n", res == R_UNSUP && strncmp(why, "unsupported", 11) ?
                                  "unsupported: " : "", why);
  bg_onnx_free(m);
  bg_tctx_close(c);
  return res == R_PASS ? 0 : 1;
}
