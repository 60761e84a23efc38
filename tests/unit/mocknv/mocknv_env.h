/* tests/unit/mocknv/mocknv_env.h: drive the emulated nvidia kernel module (tests/mockgpu/nv) through its system-call
 * table with parameter blocks written here (offsets from NVIDIA's nvos.h / uvm_ioctl.h / ctrl headers, 580). */
#ifndef BG_TESTS_MOCKNV_ENV_H
#define BG_TESTS_MOCKNV_ENV_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "mock_nv.h"
#include "nv/nv_sys.h"

#define NV_IOWR(nr, size) (0xC0000000ul | ((unsigned long)(size) << 16) | ((unsigned long)'F' << 8) | (unsigned long)(nr))

static inline uint32_t g32(const void *p, size_t off) {
  uint32_t v;
  memcpy(&v, (const uint8_t *)p + off, 4);
  return v;
}
static inline uint64_t g64(const void *p, size_t off) {
  uint64_t v;
  memcpy(&v, (const uint8_t *)p + off, 8);
  return v;
}
static inline void p32(void *p, size_t off, uint32_t v) { memcpy((uint8_t *)p + off, &v, 4); }
static inline void p64(void *p, size_t off, uint64_t v) { memcpy((uint8_t *)p + off, &v, 8); }

/* Statuses (nvstatuscodes.h). */
enum {
  ST_OK = 0, ST_ILLEGAL_ACTION = 0x16, ST_DUPLICATE = 0x19, ST_INVALID_ADDRESS = 0x1e, ST_INVALID_ARGUMENT = 0x1f,
  ST_INVALID_CLASS = 0x22, ST_INVALID_DEVICE = 0x26, ST_INVALID_LIMIT = 0x2e, ST_INVALID_PARENT = 0x36,
  ST_INVALID_OFFSET = 0x37, ST_NOT_SUPPORTED = 0x56, ST_UVM_IN_USE = 0x68,
};

typedef struct mnv {
  const bg_nv_sys *sys;
  int ctl, dev, uvm, uvm2;
  uint32_t root, device, subdev, virtmem, usermode, vaspace, tsg, ctxshare, area, cmdq, sigmem;
  uint32_t ch[2], eng[2], debugger, token[2];
  uint8_t uuid[16];
  uint8_t *um;         /* usermode mapping */
  uint8_t *area_cpu;   /* GPFIFO area: rings @0 / @0x100000, USERD after 0x400 entries */
  uint64_t area_va, cmdq_va, sig_va, next_va;
  uint8_t *cmdq_cpu, *sig_cpu;
  uint32_t notif;             /* error notifier of both channels (NvNotification at +0) */
  uint64_t notif_va;
  uint8_t *notif_cpu;
  uint32_t cmdq_put;
  uint32_t gpput[2];
  uint32_t compute_cls, copy_cls, gpfifo_cls, usermode_cls;
} mnv;

/* Start the emulated GPUs as cfg ("hopper" / "ada") and open the nodes. */
void mnv_start(mnv *e, const char *cfg);
uint32_t mnv_alloc(mnv *e, uint32_t parent, uint32_t *h, uint32_t cls, void *params, uint32_t size);
uint32_t mnv_control(mnv *e, uint32_t obj, uint32_t cmd, void *params, uint32_t size);
uint32_t mnv_free(mnv *e, uint32_t parent, uint32_t obj);
uint32_t mnv_uvm(mnv *e, int fd, unsigned long nr, void *p, size_t status_off);
/* Everything up to the GPU VA space registered with UVM (no channels). */
void mnv_graph_base(mnv *e);
/* Video memory of size bytes at a fresh VA, GPU-mapped; cpu: also CPU-mapped at the same VA. Returns the handle. */
uint32_t mnv_vidmem(mnv *e, uint64_t size, uint64_t *va, uint8_t **cpu);
/* The whole graph: two channels (compute, copy) scheduled, tokens read. */
void mnv_graph_full(mnv *e);
/* Push dwords as one GPFIFO entry on channel ch (0 compute, 1 copy) and ring the doorbell. */
void mnv_submit(mnv *e, int ch, const uint32_t *dw, uint32_t n);
/* Wait (bounded, 20 s guard against a hang) until the u64 at p reaches v; 0 ok, -1 never. */
int mnv_wait64(const volatile uint8_t *p, uint64_t v);
/* Wait until the channel consumed everything (GPGet == GPPut) or stopped; returns the model's failure count. */
unsigned mnv_drain(mnv *e, int ch);

#endif
