/* examples/fmnist_io.h: what fashion_mnist.c and fashion_mnist_dp.c share: reading the dataset's gzip'd IDX files
 * (Debian dataset-fashion-mnist; format: big-endian magic 0x0000080d for unsigned bytes in d dimensions, then d
 * big-endian sizes, then the bytes) and the layers' parameter initialization. */
#ifndef FMNIST_IO_H
#define FMNIST_IO_H

#include <stdbool.h>
#include <stdint.h>

#include <baregpu/tensor.h>

/* Program name the messages start with (set by main). */
extern const char *fm_prog;
/* Read path (gzip'd IDX of dims dimensions, magic 0x0800 | dims) into *data (malloc'd, the caller frees) and its
 * sizes into dim[0..dims); a progress bar on stderr when it is a terminal. 0, or -1 after a message naming the file
 * and what was expected. */
int fm_read_idx(const char *path, unsigned dims, uint32_t *dim, unsigned char **data);
/* The next number of that stream (the examples shuffle with it after initializing). */
uint32_t fm_rnd(void);
/* PyTorch's default init of conv and linear layers: uniform in +-1/sqrt(fan_in), from one fixed xorshift64* stream
 * (the same weights in every process), as a float32 tensor of c that requires grad; NULL on out of memory. */
bg_tensor *fm_param(bg_tctx *c, unsigned ndim, const int64_t *shape, int64_t fan_in);
/* An integer option value in lo..hi into *out; false after a message naming the option and the range. */
bool fm_parse_uint(const char *opt, const char *s, unsigned lo, unsigned hi, unsigned *out);

#endif
