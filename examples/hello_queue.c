/* examples/hello_queue.c: the smallest complete use of the installed library.
 * Build: cc hello_queue.c $(pkg-config --cflags --libs baregpu)
 * Opens a device (DEV, default CPU), compiles a kernel, records a compute queue
 *   wait(timeline, tv-1) -> exec(double) -> signal(my_signal, 1) -> signal(timeline, tv)
 * submits it, waits on the signal and checks the result. */
#include <baregpu/compile.h>
#include <baregpu/hcq.h>
#include <stdio.h>
#include <stdlib.h>

static const char *kernel_src =
    "#include <stdint.h>\n"
    "void twice(const void *args, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]) {\n"
    "  const uint64_t *a = args;\n"
    "  float *out = (float *)(uintptr_t)a[0];\n"
    "  const float *in = (const float *)(uintptr_t)a[1];\n"
    "  uint32_t n = (uint32_t)a[2];\n"
    "  (void)gsz; (void)lsz;\n"
    "  uint32_t i = gid[0];\n"
    "  if (i < n) out[i] = in[i] * 2.0f;\n"
    "}\n";

#define CHECK(x) do { if ((x) < 0) { fprintf(stderr, "hello_queue: %s: %s\n", #x, bg_last_error()); return 1; } } while (0)

int main(void) {
  enum { N = 1000 };
  bg_dev *dev;
  CHECK(bg_dev_open(NULL, &dev));
  printf("device: %s (%s)\n", bg_dev_name(dev), bg_dev_arch(dev));

  void *so;
  size_t so_size;
  CHECK(bg_compile_c(kernel_src, "", &so, &so_size));
  static const uint8_t sizes[] = {8, 8, 8};
  bg_program_info info = {"twice", 3, sizes};
  bg_program *prg;
  CHECK(bg_program_load(dev, so, so_size, &info, &prg));
  free(so);

  float host[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  bg_buf *in, *out;
  CHECK(bg_buf_alloc(dev, sizeof(host), 0, &in));
  CHECK(bg_buf_alloc(dev, sizeof(host), 0, &out));
  CHECK(bg_buf_write(in, 0, host, sizeof(host)));

  bg_signal *done;
  CHECK(bg_signal_new(dev, 0, &done));
  bg_queue *q;
  CHECK(bg_queue_new(dev, BG_QUEUE_COMPUTE, &q));
  bg_val args[3] = {bg_addr(out, 0), bg_addr(in, 0), bg_const(N)};
  bg_val gsz[3] = {bg_const(N), bg_const(1), bg_const(1)}, lsz[3] = {bg_const(1), bg_const(1), bg_const(1)};
  bg_queue_wait(q, bg_timeline_addr(q), bg_timeline_value(q, -1));
  bg_queue_exec(q, prg, args, 3, gsz, lsz);
  bg_queue_signal(q, bg_sig(done), bg_const(1));
  bg_queue_signal(q, bg_timeline_addr(q), bg_timeline_value(q, 0));
  CHECK(bg_queue_submit(q, NULL, 0));
  CHECK(bg_signal_wait(done, 1, 5000));

  float result[N];
  CHECK(bg_buf_read(out, 0, result, sizeof(result)));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += result[i] != 2.0f * (float)i;
  printf("%d of %d results correct\n", N - bad, N);

  bg_queue_free(q);
  bg_signal_free(done);
  bg_buf_free(in);
  bg_buf_free(out);
  bg_program_free(prg);
  bg_dev_close(dev);
  return bad ? 1 : 0;
}
