/* tests/conformance/conformance.c: hcq-conformance, the C port of tinygrad's test/device/test_hcq.py
 * (tinygrad test/device/test_hcq.py) run against every device that is present.
 *
 * Without DEV it runs on every device bg_dev_list(include_mock = true) reports; with DEV set, only
 * on that one. Each test prints "PASS <dev> <test>", "FAIL <dev> <test>: <why>" or
 * "SKIP <dev> <test>: <why>"; the last line is "conformance: N passed, N failed, N skipped" and the
 * exit status is non-zero when anything failed. Per-queue-type tests are named test[compute] and
 * test[copy]. The runner resets the fixture (a = [0, 1], b = [0, 0]) and synchronizes before each
 * test; a device that does not synchronize after a test is closed and opened again.
 * Usage: hcq-conformance [FILTER] (only the tests whose name contains FILTER). */
#include "conformance.h"
#include "util/clock.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------- outcomes ---------------- */

int cf_fail(cf_ctx *c, int line, const char *fmt, ...) {
  int n = snprintf(c->msg, sizeof(c->msg), "line %d: ", line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg + n, sizeof(c->msg) - (size_t)n, fmt, ap);
  va_end(ap);
  return CF_FAIL;
}

int cf_skip(cf_ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
  va_end(ap);
  return CF_SKIP;
}

/* ---------------- resources ---------------- */

int cf_queue(cf_ctx *c, enum bg_queue_kind kind, bg_queue **out) {
  *out = NULL;
  if (c->nqueues == CF_MAX_RES) return bg_error(BG_ENOMEM, "conformance: too many queues in one test");
  int r = bg_queue_new(c->d, kind, out);
  if (r == 0) c->queues[c->nqueues++] = *out;
  return r;
}

int cf_signal(cf_ctx *c, uint64_t init, bg_signal **out) {
  *out = NULL;
  if (c->nsigs == CF_MAX_RES) return bg_error(BG_ENOMEM, "conformance: too many signals in one test");
  int r = bg_signal_new(c->d, init, out);
  if (r == 0) c->sigs[c->nsigs++] = *out;
  return r;
}

int cf_buf(cf_ctx *c, uint64_t size, unsigned flags, bg_buf **out) {
  *out = NULL;
  if (c->nbufs == CF_MAX_RES) return bg_error(BG_ENOMEM, "conformance: too many buffers in one test");
  int r = bg_buf_alloc(c->d, size, flags, out);
  if (r == 0) c->bufs[c->nbufs++] = *out;
  return r;
}

void *cf_malloc(cf_ctx *c, size_t n) {
  if (c->nmem == CF_MAX_RES) return NULL;
  void *p = malloc(n ? n : 1);
  if (p) c->mem[c->nmem++] = p;
  return p;
}

static void release_resources(cf_ctx *c) {
  while (c->nqueues) bg_queue_free(c->queues[--c->nqueues]);
  while (c->nsigs) bg_signal_free(c->sigs[--c->nsigs]);
  while (c->nbufs) bg_buf_free(c->bufs[--c->nbufs]);
  while (c->nmem) free(c->mem[--c->nmem]);
}

/* ---------------- helpers ---------------- */

const char *cf_kind_name(enum bg_queue_kind k) { return k == BG_QUEUE_COPY ? "copy" : "compute"; }

uint64_t cf_now_us(void) { return bg_now_ns() / 1000u; }

void cf_tl_wait(bg_queue *q) { bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1)); }
void cf_tl_signal(bg_queue *q) { bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0)); }

int cf_submit_wait(cf_ctx *c, bg_queue *q, const uint64_t *vars, size_t nvars) {
  uint64_t tv = bg_dev_timeline_value(c->d);
  int r = bg_queue_submit(q, vars, nvars);
  if (r < 0) return r;
  if (bg_dev_timeline_value(c->d) != tv + 1)
    return bg_error(BG_EINVAL, "conformance: submit of a queue signalling the timeline value moved the device timeline "
                    "from %" PRIu64 " to %" PRIu64 " (expected %" PRIu64 ")", tv, bg_dev_timeline_value(c->d), tv + 1);
  return bg_signal_wait(bg_dev_timeline(c->d), tv, CF_TIMEOUT_MS);
}

bool cf_mentions(const char *msg, uint64_t v) {
  char dec[32], hex[32], HEX[32];
  snprintf(dec, sizeof dec, "%" PRIu64, v);
  snprintf(hex, sizeof hex, "0x%" PRIx64, v);
  snprintf(HEX, sizeof HEX, "0x%" PRIX64, v);
  /* A decimal match must not be part of a longer number. */
  for (const char *p = strstr(msg, dec); p; p = strstr(p + 1, dec)) {
    bool before = p > msg && p[-1] >= '0' && p[-1] <= '9';
    char after = p[strlen(dec)];
    if (!before && !(after >= '0' && after <= '9')) return true;
  }
  return strstr(msg, hex) || strstr(msg, HEX);
}

int cf_read_f32(const bg_buf *b, float *out, size_t n) { return bg_buf_read(b, 0, out, n * sizeof(float)); }
int cf_write_f32(bg_buf *b, const float *v, size_t n) { return bg_buf_write(b, 0, v, n * sizeof(float)); }

/* ---------------- device fixture ---------------- */

static void fixture_close(cf_ctx *c) {
  release_resources(c);
  bg_program_free(c->add1);
  bg_program_free(c->count);
  bg_buf_free(c->a);
  bg_buf_free(c->b);
  bg_dev_close(c->d);
  c->add1 = c->count = NULL;
  c->a = c->b = NULL;
  c->d = NULL;
  c->kernels = false;
}

static int fixture_open(cf_ctx *c, const char *name) {
  int r = bg_dev_open(name, &c->d);
  if (r < 0) return r;
  c->has_copy = bg_dev_has_copy_queue(c->d);
  c->no_kernels[0] = '\0';
  c->kernels_failed = false;
  if ((r = cf_load_kernels(c)) < 0) {
    /* The other tests still run; the kernel tests fail with this message. */
    snprintf(c->no_kernels, sizeof c->no_kernels, "kernels: %s: %s", bg_strerror(r), bg_last_error());
    c->kernels_failed = true;
    bg_program_free(c->add1);
    bg_program_free(c->count);
    c->add1 = c->count = NULL;
  }
  if ((r = bg_buf_alloc(c->d, 2 * sizeof(float), BG_BUF_CPU_ACCESS, &c->a)) < 0 ||
      (r = bg_buf_alloc(c->d, 2 * sizeof(float), BG_BUF_CPU_ACCESS, &c->b)) < 0) {
    char m[1024];
    snprintf(m, sizeof m, "%s", bg_last_error());
    fixture_close(c);
    return bg_error(-r, "%s", m);
  }
  return 0;
}

static int fixture_reset(cf_ctx *c) {
  static const float a0[2] = {0.0f, 1.0f}, b0[2] = {0.0f, 0.0f};
  int r = bg_dev_synchronize(c->d, CF_TIMEOUT_MS);
  if (r == 0) r = cf_write_f32(c->a, a0, 2);
  if (r == 0) r = cf_write_f32(c->b, b0, 2);
  if (r == 0) r = bg_dev_synchronize(c->d, CF_TIMEOUT_MS);
  return r;
}

/* ---------------- running ---------------- */

static unsigned npassed, nfailed, nskipped;
static const char *filter;  /* argv[1]: run only tests whose name contains it */

/* One line per result: compiler diagnostics and the like are folded onto it. */
static void one_line(const char *in, char *out, size_t n) {
  size_t o = 0;
  for (const char *p = in; *p && o + 4 < n; p++) {
    if (*p == '\n') {
      if (p[1] && o) { memcpy(out + o, " | ", 3); o += 3; }
    } else {
      out[o++] = *p == '\r' || *p == '\t' ? ' ' : *p;
    }
  }
  while (o && out[o - 1] == ' ') o--;
  out[o] = '\0';
}

static void report(const char *dev, const char *name, int res, const char *raw) {
  char msg[2048];
  one_line(raw, msg, sizeof msg);
  if (res == CF_PASS) {
    npassed++;
    printf("PASS %s %s\n", dev, name);
  } else if (res == CF_SKIP) {
    nskipped++;
    printf("SKIP %s %s: %s\n", dev, name, msg);
  } else {
    nfailed++;
    printf("FAIL %s %s: %s\n", dev, name, msg);
  }
  fflush(stdout);
}

/* Run one test (one queue kind). Returns false when the device could not be brought back. */
static bool run_one(cf_ctx *c, const char *devname, const cf_test *t, enum bg_queue_kind qk) {
  char name[96];
  if (t->flags & CF_PER_QUEUE) snprintf(name, sizeof name, "%s[%s]", t->name, cf_kind_name(qk));
  else snprintf(name, sizeof name, "%s", t->name);
  c->msg[0] = '\0';
  c->qk = qk;
  if ((t->flags & CF_NEEDS_KERNELS) && !c->kernels) {
    report(c->dev, name, c->kernels_failed ? CF_FAIL : CF_SKIP, c->no_kernels);
    return true;
  }
  if (((t->flags & CF_NEEDS_COPY) || qk == BG_QUEUE_COPY) && !c->has_copy) {
    report(c->dev, name, CF_SKIP, "the device has no copy queue");
    return true;
  }
  int res;
  int r = fixture_reset(c);
  if (r < 0) {
    res = cf_fail(c, __LINE__, "fixture reset before the test failed: %s: %s", bg_strerror(r), bg_last_error());
  } else {
    bg_clear_error();
    res = t->fn(c);
  }
  /* The device must be idle and usable after every test. */
  bool reopen = (t->flags & CF_REOPENS) != 0;
  r = reopen ? 0 : bg_dev_synchronize(c->d, CF_TIMEOUT_MS);
  if (r < 0) reopen = true;
  if (r < 0 && res != CF_FAIL)
    res = cf_fail(c, __LINE__, "the device did not synchronize after the test: %s: %s", bg_strerror(r), bg_last_error());
  report(c->dev, name, res, c->msg);
  release_resources(c);
  if (!reopen) return true;
  if (!(t->flags & CF_REOPENS)) printf("# %s: reopening the device after a failed synchronize\n", c->dev);
  fixture_close(c);
  if (fixture_open(c, devname) < 0) {
    printf("# %s: reopening failed: %s\n", c->dev, bg_last_error());
    return false;
  }
  return true;
}

static void run_table(cf_ctx *c, const char *devname, const cf_test *tests, size_t n, bool *alive) {
  for (size_t i = 0; i < n; i++) {
    const cf_test *t = &tests[i];
    if (filter && !strstr(t->name, filter)) continue;
    int nk = (t->flags & CF_PER_QUEUE) ? 2 : 1;
    for (int k = 0; k < nk; k++) {
      enum bg_queue_kind qk = k ? BG_QUEUE_COPY : BG_QUEUE_COMPUTE;
      if (!*alive) {
        char name[96];
        if (t->flags & CF_PER_QUEUE) snprintf(name, sizeof name, "%s[%s]", t->name, cf_kind_name(qk));
        else snprintf(name, sizeof name, "%s", t->name);
        report(c->dev, name, CF_FAIL, "not run: the device could not be reopened after an earlier failure");
        continue;
      }
      *alive = run_one(c, devname, t, qk);
    }
  }
}

static void run_device(const char *devname) {
  cf_ctx *c = calloc(1, sizeof *c);
  if (!c) {
    report(devname, "open", CF_FAIL, "out of host memory");
    return;
  }
  snprintf(c->dev, sizeof c->dev, "%s", devname);
  int r = fixture_open(c, devname);
  if (r < 0) {
    char m[1200];
    snprintf(m, sizeof m, "%s: %s", bg_strerror(r), bg_last_error());
    report(devname, "open", CF_FAIL, m);
    free(c);
    return;
  }
  snprintf(c->dev, sizeof c->dev, "%s", bg_dev_name(c->d));
  char why[1100];
  one_line(c->no_kernels, why, sizeof why);
  printf("# device %s (DEV=%s): arch %s, copy queue %s, %.1f timestamp ticks/us, kernels: %s\n", c->dev, devname,
         bg_dev_arch(c->d), c->has_copy ? "yes" : "no", bg_dev_ticks_per_us(c->d),
         c->kernels ? "yes" : why);
  fflush(stdout);
  bool alive = true;
  run_table(c, devname, cf_sync_tests, cf_nsync_tests, &alive);
  run_table(c, devname, cf_work_tests, cf_nwork_tests, &alive);
  if (c->d) fixture_close(c);
  printf("# device %s done\n", c->dev);
  free(c);
}

/* ---------------- device-independent tests ---------------- */

static int test_bad_dev_strings(cf_ctx *c) {
  static const struct { const char *s; int code; const char *names; bool forms; } cases[] = {
    {"BOGUS", BG_EINVAL, "BOGUS", true},   /* unknown kind */
    {"PCI+", BG_EINVAL, "PCI+", true},     /* nothing after the interface */
    {"AMD:x", BG_EINVAL, "AMD:x", true},   /* index not a number */
    {"CPU:7", BG_ENODEV, "CPU:7", false},  /* index out of range */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    bg_dev *d = NULL;
    bg_clear_error();
    int r = bg_dev_open(cases[i].s, &d);
    if (r == 0) bg_dev_close(d);
    const char *msg = bg_last_error();
    CF_EXPECT(r < 0, "DEV=%s opened a device; it should be rejected", cases[i].s);
    CF_EXPECT(d == NULL, "DEV=%s: failed open left a non-NULL device", cases[i].s);
    CF_EXPECT(r == -cases[i].code, "DEV=%s returned %s, expected %s (%s)", cases[i].s, bg_strerror(r),
              bg_strerror(cases[i].code), msg);
    CF_EXPECT(strstr(msg, cases[i].names), "DEV=%s: the message does not name the string: '%s'", cases[i].s, msg);
    CF_EXPECT(!cases[i].forms || strstr(msg, bg_target_forms()), "DEV=%s: the message does not list the valid forms: '%s'",
              cases[i].s, msg);
    bg_target t;
    r = bg_target_parse(cases[i].s, &t);
    CF_EXPECT(cases[i].forms ? r == -BG_EINVAL : r == 0, "bg_target_parse(%s) returned %d", cases[i].s, r);
  }
  /* Lower case and explicit index 0 are accepted. */
  bg_dev *d = NULL;
  CF_OK(bg_dev_open("cpu:0", &d));
  CF_EXPECT(strcmp(bg_dev_name(d), "CPU") == 0, "DEV=cpu:0 opened '%s', expected CPU", bg_dev_name(d));
  bg_dev_close(d);
  return CF_PASS;
}

static const cf_test global_tests[] = {
  {"bad_dev_strings", test_bad_dev_strings, 0},
};

/* ---------------- main ---------------- */

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  bool only_default = argc >= 2 && strcmp(argv[1], "--default") == 0;
  if (only_default) {
    argv++;
    argc--;
  }
  if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
    printf("usage: hcq-conformance [--default] [FILTER]\n  Runs the HCQ conformance tests whose name contains FILTER on every present device\n"
           "  (bg_dev_list with mocks), or only on DEV when it is set. --default: only on the device\n"
           "  bg_dev_open picks without a name (DEV, else the first GPU, else CPU).\n");
    return argc == 2 ? 0 : 2;
  }
  filter = argc == 2 ? argv[1] : NULL;
  cf_ctx *g = calloc(1, sizeof *g);
  if (!g) return 2;
  snprintf(g->dev, sizeof g->dev, "global");
  for (size_t i = 0; i < sizeof global_tests / sizeof global_tests[0]; i++) {
    if (filter && !strstr(global_tests[i].name, filter)) continue;
    g->msg[0] = '\0';
    int res = global_tests[i].fn(g);
    report(g->dev, global_tests[i].name, res, g->msg);
  }
  free(g);

  const char *env = getenv("DEV");
  if (only_default && !(env && *env)) {
    bg_dev *d;
    if (bg_dev_open(NULL, &d) < 0) {
      report("global", "default_device", CF_FAIL, bg_last_error());
    } else {
      char name[48];
      snprintf(name, sizeof name, "%s", bg_dev_name(d));
      bg_dev_close(d);
      printf("# default device: %s\n", name);
      run_device(name);
    }
  } else if (env && *env) {
    printf("# DEV=%s: running on that device only\n", env);
    run_device(env);
  } else {
    char names[64][48];
    int n = bg_dev_list(true, names, 64);
    if (n < 0) {
      char m[1200];
      snprintf(m, sizeof m, "%s: %s", bg_strerror(n), bg_last_error());
      report("global", "dev_list", CF_FAIL, m);
    } else if (n == 0) {
      report("global", "dev_list", CF_FAIL, "bg_dev_list found no device (the CPU device is always present)");
    }
    for (int i = 0; i < n && i < 64; i++) run_device(names[i]);
  }
  cf_kernels_free();
  printf("conformance: %u passed, %u failed, %u skipped\n", npassed, nfailed, nskipped);
  return nfailed ? 1 : 0;
}
