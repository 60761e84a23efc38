/* tests/unit/tensor/test_load.c: loading tensors from files (bg_tn_from_file, bg_tn_load_safetensors,
 * bg_tctx_load_stats; tensor/tload*.c, tensor/safetensors.c) on the default device (DEV: CPU, MOCKPCI+AMD, MOCKUSB+AMD).
 * Every dtype at aligned and unaligned offsets and sizes across the (test-sized) chunk boundaries gives the bytes of the
 * file, as bg_tn_from of the same bytes does; io_uring and the forced pread path agree; a hand-written safetensors file
 * round-trips; truncated files, offsets past the end, bad headers and special files are errors naming the file. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bg_config.h"
#include "tensor/tload.h"   /* before the fixture: hcq.h's bg_const has a parameter c */
#include "tctx_fixture.h"
#if BG_HAVE_URING
#include <liburing.h>
#endif

enum { CHUNK = 8192 };
static char dir[256];

static void load_setup(void) {
  setup();
  snprintf(dir, sizeof dir, "%s/bg-load-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s: %s", dir, strerror(errno));
  t_load_chunk = CHUNK;
  t_load_force_pread = false;
  t_load_no_direct = false;
}

static void load_teardown(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
  t_load_chunk = 0;
  t_load_force_pread = false;
  t_load_no_direct = false;
  teardown();
}

static void path_of(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
  ck_assert_uint_eq(fwrite(data, 1, n, f), n);
  ck_assert_int_eq(fclose(f), 0);
}

static uint8_t *random_bytes(size_t n, unsigned seed) {
  uint8_t *p = malloc(n ? n : 1);
  ck_assert_ptr_nonnull(p);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (uint8_t)x;
  }
  return p;
}

static bool uring_works(void) {
#if BG_HAVE_URING
  struct io_uring r;
  if (io_uring_queue_init(4, &r, 0) < 0) return false;
  io_uring_queue_exit(&r);
  return true;
#else
  return false;
#endif
}

static bg_load_stats lstats(void) {
  bg_load_stats st;
  bg_tctx_load_stats(c, &st);
  return st;
}

/* Whether the file system of path takes O_DIRECT. */
static bool fs_direct(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECT);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

/* t's bytes (the caller frees). */
static uint8_t *read_back(bg_tensor *t, size_t n) {
  uint8_t *got = malloc(n ? n : 1);
  ck_assert_ptr_nonnull(got);
  ck_assert_msg(bg_tn_read(t, got, n) == 0, "read: %s (%s)", bg_last_error(), bg_tctx_error(c) ? bg_tctx_error(c) : "");
  return got;
}

/* bg_tn_from_file of n elements of t at offset of `file` (whose bytes are `data`): the file's bytes, and what bg_tn_from
 * of the same bytes reads back. */
static void check_load(const char *file, const uint8_t *data, uint64_t offset, enum bg_dtype t, int64_t n) {
  unsigned sz = bg_dtype_size(t);
  size_t bytes = (size_t)n * sz;
  int64_t shape[2] = {n % 3 == 0 ? 3 : 1, n % 3 == 0 ? n / 3 : n};
  bg_tensor *x = bg_tn_from_file(c, file, offset, t, 2, shape);
  ck_assert_msg(bg_tctx_error(c) == NULL, "%s at %llu, %lld x %s: %s", file, (unsigned long long)offset, (long long)n,
                bg_dtype_name(t), bg_tctx_error(c));
  ck_assert_uint_eq(bg_tn_ndim(x), 2);
  ck_assert_int_eq(bg_tn_shape(x)[0], shape[0]);
  ck_assert_int_eq(bg_tn_shape(x)[1], shape[1]);
  ck_assert_int_eq(bg_tn_dtype(x), t);
  ck_assert_int_eq(lstats().used_direct, !t_load_no_direct && fs_direct(file));   /* no silent fallback */
  uint8_t *got = read_back(x, bytes);
  for (size_t i = 0; i < bytes; i++)
    ck_assert_msg(got[i] == data[offset + i], "%s at offset %llu, %lld x %s: byte %zu is 0x%02x, the file has 0x%02x",
                  file, (unsigned long long)offset, (long long)n, bg_dtype_name(t), i, got[i], data[offset + i]);
  uint8_t *ref = read_back(bg_tn_from(c, t, 2, shape, data + offset), bytes);
  ck_assert_msg(memcmp(got, ref, bytes) == 0, "from_file and from differ (%s)", bg_dtype_name(t));
  free(ref);
  free(got);
}

/* Every dtype the build runs, at block-aligned and unaligned offsets, with sizes across the chunk boundaries. */
START_TEST(every_dtype_at_offsets) {
  const size_t fsize = 5 * CHUNK + 777;
  uint8_t *data = random_bytes(fsize, 1);
  char f[300];
  path_of(f, sizeof f, "data.bin");
  write_file(f, data, fsize);
  const uint64_t offsets[] = {0, 4096, 1, 4093, 8190};
  for (int t = BG_BOOL; t <= BG_BFLOAT16; t++) {
    unsigned sz = bg_dtype_size((enum bg_dtype)t);
    ck_assert_uint_ne(sz, 0);   /* every dtype of the enum loads */
    for (size_t k = 0; k < sizeof offsets / sizeof *offsets; k++) {
      int64_t n = (int64_t)((2 * CHUNK + 3 * (k + 1)) / sz);   /* 2 chunks and a bit: 3 or 4 staged reads */
      check_load(f, data, offsets[k], (enum bg_dtype)t, n);
    }
  }
  free(data);
}
END_TEST

/* uint8 sizes around the block and chunk sizes, from an aligned and an unaligned offset; the last bytes of the file. */
START_TEST(sizes_across_chunks) {
  const size_t fsize = 4 * CHUNK + 100;
  uint8_t *data = random_bytes(fsize, 2);
  char f[300];
  path_of(f, sizeof f, "sizes.bin");
  write_file(f, data, fsize);
  const int64_t sizes[] = {1, 4095, 4096, 4097, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 1};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    check_load(f, data, 0, BG_UINT8, sizes[k]);
    check_load(f, data, 4097, BG_UINT8, sizes[k]);
    check_load(f, data, fsize - (uint64_t)sizes[k], BG_UINT8, sizes[k]);   /* up to the unaligned end of the file */
  }
  free(data);
}
END_TEST

/* Loads of 64 KiB and more get page-aligned buffers on the CPU device: from a block-aligned offset their whole blocks
 * are read straight into the destination and only an unaligned tail goes through a staging buffer. */
START_TEST(direct_into_destination) {
  const size_t fsize = 12 * CHUNK + 300;
  uint8_t *data = random_bytes(fsize, 8);
  char f[300];
  path_of(f, sizeof f, "big.bin");
  write_file(f, data, fsize);
  const int64_t sizes[] = {65536, 65537, 65536 + 4095, 65536 + 3 * 4096 + 17};
  const uint64_t offsets[] = {0, 8192, 4096 * 3};
  bool cpu = !strcmp(bg_tctx_device(c), "CPU");
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
    for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++) {
      bg_load_stats before = lstats();
      check_load(f, data, offsets[o], BG_UINT8, sizes[k]);
      if (cpu && fs_direct(f))   /* the staged chunks: the tail's block, if any */
        ck_assert_uint_eq(lstats().chunks_copied - before.chunks_copied, sizes[k] % 4096 ? 1 : 0);
    }
  free(data);
}
END_TEST

/* The pread path (forced) gives the same bytes as io_uring; the stats say which ran; several reads were in flight
 * with io_uring on a multi-chunk load, one with pread. */
START_TEST(pread_fallback_and_stats) {
  const size_t fsize = 6 * CHUNK + 5;
  uint8_t *data = random_bytes(fsize, 3);
  char f[300];
  path_of(f, sizeof f, "stats.bin");
  write_file(f, data, fsize);
  const int64_t n = (int64_t)(fsize - 3) / 4;
  bg_load_stats before = lstats();
  check_load(f, data, 3, BG_FLOAT32, n);
  bg_load_stats a = lstats();
  ck_assert_uint_ge(a.bytes - before.bytes, (uint64_t)n * 4);
  ck_assert_uint_ge(a.reads - before.reads, 6);
  if (uring_works()) {
    ck_assert_msg(a.used_uring, "io_uring works here but the load did not use it");
    ck_assert_uint_gt(a.max_inflight, 1);
  } else {
    fprintf(stderr, "test_load: io_uring is not available here: only the pread path is checked\n");
  }
  t_load_force_pread = true;
  check_load(f, data, 3, BG_FLOAT32, n);
  bg_load_stats b = lstats();
  ck_assert(!b.used_uring);
  ck_assert_uint_ge(b.reads - a.reads, 6);
  ck_assert_uint_ge(b.chunks_copied, a.chunks_copied);
  /* O_DIRECT off gives the same bytes too */
  t_load_force_pread = false;
  t_load_no_direct = true;
  check_load(f, data, 3, BG_FLOAT32, n);
  ck_assert(!lstats().used_direct);
  free(data);
}
END_TEST

/* O_DIRECT is used where the file system takes it. */
START_TEST(direct_where_possible) {
  char f[300];
  path_of(f, sizeof f, "direct.bin");
  uint8_t *data = random_bytes(3 * CHUNK, 4);
  write_file(f, data, 3 * CHUNK);
  check_load(f, data, 100, BG_INT16, CHUNK);
  ck_assert_int_eq(lstats().used_direct, fs_direct(f));
  check_load(f, data, 1, BG_UINT8, 5);   /* within one block */
  ck_assert_int_eq(lstats().used_direct, fs_direct(f));
  free(data);
}
END_TEST

static void expect_error(bg_tensor *x, const char *what, const char *const *parts) {
  const char *e = bg_tctx_error(c);
  ck_assert_msg(e != NULL, "%s: no error latched", what);
  for (const char *const *p = parts; *p; p++)
    ck_assert_msg(strstr(e, *p) != NULL, "%s: the error \"%s\" does not say \"%s\"", what, e, *p);
  if (x) {
    float v;
    ck_assert_int_lt(bg_tn_read(x, &v, sizeof v), 0);
  }
  bg_tctx_clear_error(c);
}

START_TEST(file_errors) {
  char f[300], fifo[300], msg[64];
  path_of(f, sizeof f, "short.bin");
  uint8_t *data = random_bytes(1000, 5);
  write_file(f, data, 1000);
  const int64_t sh[1] = {300};
  /* truncated: 1200 bytes wanted from 1000 */
  bg_tensor *x = bg_tn_from_file(c, f, 0, BG_FLOAT32, 1, sh);
  expect_error(x, "truncated", (const char *const[]){f, "has 1000 bytes", "expected at least 1200", NULL});
  /* one byte short at an offset */
  x = bg_tn_from_file(c, f, 801, BG_FLOAT32, 1, (const int64_t[]){50});
  expect_error(x, "one short", (const char *const[]){f, "expected at least 1001", "offset 801", NULL});
  /* exactly to the end is fine */
  x = bg_tn_from_file(c, f, 800, BG_FLOAT32, 1, (const int64_t[]){50});
  ck_assert_msg(bg_tctx_error(c) == NULL, "%s", bg_tctx_error(c));
  uint8_t *got = read_back(x, 200);
  ck_assert(memcmp(got, data + 800, 200) == 0);
  free(got);
  /* the offset past the end */
  x = bg_tn_from_file(c, f, 5000, BG_UINT8, 1, (const int64_t[]){1});
  expect_error(x, "offset past end", (const char *const[]){f, "offset 5000", NULL});
  /* a huge offset does not wrap */
  x = bg_tn_from_file(c, f, UINT64_MAX - 2, BG_UINT8, 1, (const int64_t[]){8});
  expect_error(x, "offset wraps", (const char *const[]){f, "has 1000 bytes", NULL});
  /* missing file, FIFO, directory */
  path_of(fifo, sizeof fifo, "missing.bin");
  x = bg_tn_from_file(c, fifo, 0, BG_UINT8, 1, (const int64_t[]){1});
  expect_error(x, "missing", (const char *const[]){fifo, "cannot open", NULL});
  path_of(fifo, sizeof fifo, "fifo");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  x = bg_tn_from_file(c, fifo, 0, BG_UINT8, 1, (const int64_t[]){1});
  expect_error(x, "fifo", (const char *const[]){fifo, "not a regular file", "FIFO", NULL});
  x = bg_tn_from_file(c, dir, 0, BG_UINT8, 1, (const int64_t[]){1});
  expect_error(x, "directory", (const char *const[]){dir, "not a regular file", "directory", NULL});
  /* bad arguments */
  snprintf(msg, sizeof msg, "unknown dtype 99");
  x = bg_tn_from_file(c, f, 0, (enum bg_dtype)99, 1, sh);
  expect_error(x, "dtype", (const char *const[]){msg, NULL});
  x = bg_tn_from_file(c, f, 0, BG_UINT8, 1, (const int64_t[]){-3});
  expect_error(x, "negative dim", (const char *const[]){"dimension 0 is -3", NULL});
  /* the error tensor passes through ops; the context has no tensor left half-loaded */
  ck_assert_ptr_null(bg_tn_from_file(NULL, f, 0, BG_UINT8, 1, sh));
  free(data);
}
END_TEST

START_TEST(unknown_dtype) {
  /* a dtype value outside the enum is refused with its number (bg_dtype_size 0 dtypes of this build, too) */
  char f[300];
  path_of(f, sizeof f, "u.bin");
  write_file(f, "abcdefgh", 8);
  for (int t = BG_BOOL; t <= BG_BFLOAT16 + 1; t++) {
    bg_tensor *x = bg_tn_from_file(c, f, 0, (enum bg_dtype)t, 0, NULL);
    if (bg_dtype_size((enum bg_dtype)t)) {
      ck_assert_msg(bg_tctx_error(c) == NULL, "%s", bg_tctx_error(c));
      uint8_t *got = read_back(x, bg_dtype_size((enum bg_dtype)t));
      ck_assert(memcmp(got, "abcdefgh", bg_dtype_size((enum bg_dtype)t)) == 0);
      free(got);
    } else {
      expect_error(x, "unsupported dtype", (const char *const[]){"unknown dtype", NULL});
    }
  }
}
END_TEST

/* ---- safetensors ---- */

typedef struct st_dt {
  const char *name;
  enum bg_dtype dt;
  unsigned size;
} st_dt;
static const st_dt ST_DT[] = {{"F64", BG_FLOAT64, 8}, {"F32", BG_FLOAT32, 4}, {"F16", BG_FLOAT16, 2}, {"BF16", BG_BFLOAT16, 2},
             {"I64", BG_INT64, 8},   {"I32", BG_INT32, 4},   {"I16", BG_INT16, 2},   {"I8", BG_INT8, 1},
             {"U8", BG_UINT8, 1},    {"BOOL", BG_BOOL, 1},   {"U16", BG_UINT16, 2},  {"U32", BG_UINT32, 4},
             {"U64", BG_UINT64, 8}};
enum { NST = sizeof ST_DT / sizeof *ST_DT };

/* Writes an 8-byte length, the header (padded with spaces to 8 bytes), then data. */
static void write_st(const char *path, const char *header, const void *data, size_t n) {
  size_t hl = strlen(header), pad = (8 - hl % 8) % 8;
  size_t total = 8 + hl + pad + n;
  uint8_t *b = malloc(total);
  ck_assert_ptr_nonnull(b);
  uint64_t len = hl + pad;
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(len >> (8 * i));
  memcpy(b + 8, header, hl);
  memset(b + 8 + hl, ' ', pad);
  if (n) memcpy(b + 8 + hl + pad, data, n);
  write_file(path, b, total);
  free(b);
}

/* Every dtype of the format (those the build runs), shapes 0-3-D with a zero-size one, names with escapes, metadata;
 * the tensors come back in file order with their bytes. */
START_TEST(safetensors_round_trip) {
  char hdr[8192], f[300];
  size_t at = 0, hn = 0;
  int64_t shapes[NST][3];
  unsigned ndims[NST];
  uint64_t begin[NST], end[NST];
  size_t ntens = 0;
  hn += (size_t)snprintf(hdr + hn, sizeof hdr - hn, "{\"__metadata__\": {\"format\": \"pt\", \"q\\\"uote\": \"\\u00e9\"}");
  /* reverse dtype order in the JSON, ascending offsets in the data: the JSON order is not the file order */
  for (size_t k = 0; k < NST; k++) {
    size_t i = ntens++;
    ndims[i] = (unsigned)(k % 4);
    int64_t numel = 1;
    for (unsigned d = 0; d < ndims[i]; d++) {
      shapes[i][d] = (int64_t)(k % 2 == 0 && d == 1 ? 0 : 2 + d + k);
      numel *= shapes[i][d];
    }
    if (k == 1) {   /* F32: a big one across chunk boundaries */
      ndims[i] = 2;
      shapes[i][0] = 3;
      shapes[i][1] = CHUNK / 2 + 1;
      numel = shapes[i][0] * shapes[i][1];
    }
    begin[i] = at;
    end[i] = at + (uint64_t)numel * ST_DT[k].size;
    at = end[i];
  }
  for (size_t i = ntens; i-- > 0;) {
    size_t k = i;   /* tensor i has dtype ST_DT[i] */
    hn += (size_t)snprintf(hdr + hn, sizeof hdr - hn, ", \"t%zu\\n%s\":{\"shape\":[", i, ST_DT[k].name);
    for (unsigned d = 0; d < ndims[i]; d++)
      hn += (size_t)snprintf(hdr + hn, sizeof hdr - hn, "%s%lld", d ? ", " : "", (long long)shapes[i][d]);
    hn += (size_t)snprintf(hdr + hn, sizeof hdr - hn, "] ,\"dtype\" : \"%s\", \"data_offsets\":[%llu,%llu]}", ST_DT[k].name,
                           (unsigned long long)begin[i], (unsigned long long)end[i]);
  }
  hn += (size_t)snprintf(hdr + hn, sizeof hdr - hn, "}");
  ck_assert_uint_lt(hn, sizeof hdr - 1);
  uint8_t *data = random_bytes(at, 6);
  path_of(f, sizeof f, "model.safetensors");
  write_st(f, hdr, data, at);
  const char *const *names;
  bg_tensor *const *ts;
  size_t n = 0;
  ck_assert_msg(bg_tn_load_safetensors(c, f, &names, &ts, &n) == 0, "%s", bg_last_error());
  ck_assert_uint_eq(n, ntens);
  for (size_t i = 0, k = 0; i < n; i++, k++) {
    char want[32];
    snprintf(want, sizeof want, "t%zu\n%s", i, ST_DT[k].name);
    ck_assert_str_eq(names[i], want);
    ck_assert_int_eq(bg_tn_dtype(ts[i]), ST_DT[k].dt);
    ck_assert_uint_eq(bg_tn_ndim(ts[i]), ndims[i]);
    for (unsigned d = 0; d < ndims[i]; d++) ck_assert_int_eq(bg_tn_shape(ts[i])[d], shapes[i][d]);
    size_t bytes = end[i] - begin[i];
    if (!bytes) continue;
    uint8_t *got = read_back(ts[i], bytes);
    ck_assert_msg(memcmp(got, data + begin[i], bytes) == 0, "tensor %s: bytes differ", names[i]);
    free(got);
  }
  ck_assert_uint_gt(lstats().chunks_copied, 0);
  ck_assert_int_eq(lstats().used_direct, fs_direct(f));
  free(data);
}
END_TEST

/* A bad file gives its message; nothing is returned and the context latches it. */
static void st_error(const char *name, const char *header, size_t data_len, const char *const *parts) {
  char f[300];
  path_of(f, sizeof f, name);
  uint8_t *data = random_bytes(data_len, 7);
  write_st(f, header, data, data_len);
  free(data);
  const char *const *names = (const char *const *)1;
  bg_tensor *const *ts = (bg_tensor *const *)1;
  size_t n = 99;
  int e = bg_tn_load_safetensors(c, f, &names, &ts, &n);
  ck_assert_msg(e < 0, "%s: loaded", name);
  ck_assert_ptr_null(names);
  ck_assert_ptr_null(ts);
  ck_assert_uint_eq(n, 0);
  const char *parts2[8] = {f};
  for (int i = 0; i < 6 && parts[i]; i++) parts2[i + 1] = parts[i];
  expect_error(NULL, name, parts2);
}

START_TEST(safetensors_errors) {
  const char *ok = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  st_error("bad-json", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8,
           (const char *const[]){"safetensors header", "expected ',' or '}'", NULL});
  st_error("bad-json2", "{\"a\" {}}", 0, (const char *const[]){"expected ':'", NULL});
  st_error("trailing", "{} x", 0, (const char *const[]){"after the header", NULL});
  st_error("unknown-dtype", "{\"a\":{\"dtype\":\"F8_E5M2\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2,
           (const char *const[]){"tensor 'a'", "unknown dtype \"F8_E5M2\"", NULL});
  st_error("out-of-range", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8,
           (const char *const[]){"tensor 'a'", "out of the data section (8 bytes)", NULL});
  st_error("truncated-data", ok, 7, (const char *const[]){"out of the data section (7 bytes)", NULL});
  st_error("extra-data", ok, 12, (const char *const[]){"data section has 12 bytes", NULL});
  st_error("shape-mismatch", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
           (const char *const[]){"tensor 'a'", "give 12 bytes", NULL});
  st_error("overlap",
           "{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
           "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}",
           8, (const char *const[]){"overlap", NULL});
  st_error("reversed", "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[8,0]}}", 8,
           (const char *const[]){"end before they begin", NULL});
  st_error("negative", "{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,0]}}", 0,
           (const char *const[]){"shape: expected a non-negative integer", NULL});
  st_error("missing-key", "{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, (const char *const[]){"no data_offsets", NULL});
  st_error("dup-name",
           "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
           "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
           2, (const char *const[]){"'a' appears twice", NULL});
  /* a header length beyond the file */
  char f[300];
  path_of(f, sizeof f, "bad-len");
  uint8_t b[16] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'};
  write_file(f, b, sizeof b);
  const char *const *names;
  bg_tensor *const *ts;
  size_t n;
  ck_assert_int_lt(bg_tn_load_safetensors(c, f, &names, &ts, &n), 0);
  expect_error(NULL, "bad-len", (const char *const[]){f, "header length 65535 beyond the file (16 bytes", NULL});
  write_file(f, b, 5);
  ck_assert_int_lt(bg_tn_load_safetensors(c, f, &names, &ts, &n), 0);
  expect_error(NULL, "short", (const char *const[]){f, "5 bytes, too short", NULL});
  ck_assert_int_lt(bg_tn_load_safetensors(c, dir, &names, &ts, &n), 0);
  expect_error(NULL, "dir", (const char *const[]){dir, "directory", NULL});
  /* after the errors a good file still loads */
  path_of(f, sizeof f, "good");
  write_st(f, ok, "\0\0\x80?\0\0\0@", 8);
  ck_assert_msg(bg_tn_load_safetensors(c, f, &names, &ts, &n) == 0, "%s", bg_last_error());
  float v[2];
  ck_assert_int_eq(bg_tn_read(ts[0], v, sizeof v), 0);
  ck_assert(v[0] == 1.0f && v[1] == 2.0f);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("load");
  TCase *t = tcase_create("load");
  tcase_add_checked_fixture(t, load_setup, load_teardown);
  tcase_set_timeout(t, 600);
  tcase_add_test(t, every_dtype_at_offsets);
  tcase_add_test(t, sizes_across_chunks);
  tcase_add_test(t, direct_into_destination);
  tcase_add_test(t, pread_fallback_and_stats);
  tcase_add_test(t, direct_where_possible);
  tcase_add_test(t, file_errors);
  tcase_add_test(t, unknown_dtype);
  tcase_add_test(t, safetensors_round_trip);
  tcase_add_test(t, safetensors_errors);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
