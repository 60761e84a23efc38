/* nv/nv_boot_fsp.c: the Hopper/Blackwell boot (nv/nv_falcon.h): the FSP chain of trust. The FMC image and its boot
 * parameters go into host DMA memory, the COT message into FSP's EMEM command queue; FSP answers in its message queue
 * and starts GSP-RM; GSP's RISC-V leaves its boot-ROM lockdown when it runs.
 *
 * Facts: tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT; open-gpu-kernel-modules src/nvidia/src/kernel/gpu/fsp/kern_fsp.c and
 * arch/hopper/kern_fsp_gh100.c (EMEM with auto-increment, QUEUE_TAIL = last dword, the NVDM response); Linux nouveau
 * nvkm/subdev/fsp/gh100.c (gh100_fsp_send_sync: MCTP SOM/EOM, NVDM type 0x15 FSP_RESPONSE, commandNvdmType, errorCode;
 * COT version 1 on GH100, 2 on GB20x). tinygrad discards FSP's response unread and keys this path on arch >= 0x1a, so
 * it cannot boot GH100; the chip table's fsp_boot picks it here. */
#include <inttypes.h>
#include <string.h>

#include "baregpu/error.h"
#include "util/clock.h"
#include "nv/nv_falcon.h"
#include "nv/nv_regs.h"

#define NVDM_TYPE_COT 0x14u
#define NVDM_TYPE_FSP_RESPONSE 0x15u
#define COT_PAYLOAD_SIZE 860u
#define FRTS_VIDMEM_OFFSET 0x1c00000u /* from the end of VRAM, as tinygrad ip.py NV_FLCN_COT passes it */
#define FSP_TIMEOUT_MS 4000

int bg_nv_boot_fsp_prepare(bg_nv_pci *d, bg_nv_fsp_boot *b, uint64_t libos_bus, uint64_t wpr_meta_bus) {
  memset(b, 0, sizeof(*b));
  const bg_nv_fmc *fmc = &d->fw.fmc;
  /* page 0: GSP_FMC_BOOT_PARAMS; from page 1: the FMC image (one contiguous range: FSP takes one address each) */
  uint64_t size = 4096 + ((fmc->image_size + 4095) & ~(uint64_t)4095);
  int e = bg_nv_boot_mem(d, &d->fmc_mem, size, "the FMC image");
  if (e < 0) return e;
  uint8_t *p = (uint8_t *)d->fmc_mem.view.ptr;
  uint64_t params_bus = d->fmc_mem.bus[0], image_bus = d->fmc_mem.bus[0] + 4096;
  memcpy(p + 4096, fmc->image, fmc->image_size);
  uint8_t cot[COT_PAYLOAD_SIZE];
  e = bg_nv_fmc_boot_params(p, 4096, wpr_meta_bus, libos_bus);
  /* NVDM_PAYLOAD_COT.version: 1 on GH100, 2 on GB20x (open-gpu-kernel-modules g_kern_fsp_nvoc.c cotPayloadVersion) */
  uint16_t cot_version = d->chip->family == BG_NV_HOPPER ? 1 : 2;
  if (e >= 0) e = bg_nv_cot_payload(cot, sizeof(cot), cot_version, fmc, image_bus, FRTS_VIDMEM_OFFSET, params_bus);
  if (e >= 0) e = bg_nv_fsp_message(b->msg, sizeof(b->msg), NVDM_TYPE_COT, cot, sizeof(cot), &b->msg_len);
  if (e < 0) return bg_error_context(e, "nv: %s: FSP COT message: ", bg_pci_name(d->pci));
  if (b->msg_len < 12 || b->msg_len % 4 || b->msg_len > NV_PFSP_EMEM_QUEUE_MAX)
    return bg_error(BG_EINVAL, "nv: %s: FSP COT message of %zu bytes (a whole number of dwords up to %u expected)",
                    bg_pci_name(d->pci), b->msg_len, NV_PFSP_EMEM_QUEUE_MAX);
  return 0;
}

/* Poll until QUEUE/MSGQ head and tail compare as wanted (equal: FSP took the last command; different: a message). */
static int wait_pair(bg_nv_pci *d, uint32_t head_reg, uint32_t tail_reg, bool equal, const char *what, uint32_t *head,
                     uint32_t *tail) {
  int ms = bg_nv_timeout_ms(FSP_TIMEOUT_MS);
  uint64_t end = bg_now_ns() + (uint64_t)ms * 1000000u;
  for (unsigned i = 0;; i++) {
    *head = bg_nv_rd32(d, head_reg);
    *tail = bg_nv_rd32(d, tail_reg);
    if ((*head == *tail) == equal) return 0;
    if (bg_now_ns() > end) break;
    if (i >= 16) bg_nv_sleep_us(i >= 256 ? 1000 : 10);
  }
  char hb[64], tb[64];
  return bg_error(BG_EHANG, "nv: %s: FSP: %s: timeout after %d ms: %s = 0x%" PRIx32 ", %s = 0x%" PRIx32,
                  bg_pci_name(d->pci), what, ms, bg_nv_reg_name(head_reg, hb, sizeof(hb)), *head,
                  bg_nv_reg_name(tail_reg, tb, sizeof(tb)), *tail);
}

/* FSP's answer (open-gpu-kernel-modules kern_fsp.c kfspProcessNvdmMessage / NVDM_PAYLOAD_COMMAND_RESPONSE):
 * MCTP header (SOM bit 31, EOM bit 30), NVDM header (type 0x7e, vendor 0x10de, NVDM type 0x15), then taskId,
 * commandNvdmType (the command answered) and errorCode. */
static int check_response(bg_nv_pci *d, const uint32_t *r, uint32_t n) {
  const char *bdf = bg_pci_name(d->pci);
  if (n < 20)
    return bg_error(BG_EIO, "nv: %s: FSP response of %" PRIu32 " bytes (20 expected: MCTP and NVDM headers, taskId, "
                    "commandNvdmType, errorCode)", bdf, n);
  if ((r[0] & 0xc0000000u) != 0xc0000000u)
    return bg_error(BG_EIO, "nv: %s: FSP response MCTP header 0x%08" PRIx32 ": SOM and EOM (bits 31, 30) expected",
                    bdf, r[0]);
  uint32_t want = 0x7eu | (0x10deu << 8) | (NVDM_TYPE_FSP_RESPONSE << 24);
  if ((r[1] & 0xffffff7fu) != want)
    return bg_error(BG_EIO, "nv: %s: FSP response NVDM header 0x%08" PRIx32 " (0x%08" PRIx32 " expected: vendor PCI "
                    "0x7e, 0x10de, NVDM type 0x15 FSP_RESPONSE)", bdf, r[1], want);
  if (r[3] != NVDM_TYPE_COT)
    return bg_error(BG_EIO, "nv: %s: FSP response answers NVDM type 0x%02" PRIx32 ", not the COT command (0x14)", bdf,
                    r[3]);
  if (r[4] != 0)
    return bg_error(BG_EIO, "nv: %s: FSP rejected the chain-of-trust command: errorCode 0x%08" PRIx32
                    " (FMC image, hash, signature or boot parameters refused)", bdf, r[4]);
  return 0;
}

static int send_cot(bg_nv_pci *d, const bg_nv_fsp_boot *b) {
  uint32_t head, tail;
  int e = wait_pair(d, NV_PFSP_QUEUE_HEAD(0), NV_PFSP_QUEUE_TAIL(0), true, "command queue busy", &head, &tail);
  if (e < 0) return e;
  bg_nv_wr32(d, NV_PFSP_EMEMC(0), NV_PFSP_EMEMC_AINCW); /* block 0, offset 0, auto-increment on write */
  for (size_t i = 0; i < b->msg_len; i += 4) {
    uint32_t w;
    memcpy(&w, b->msg + i, 4);
    bg_nv_wr32(d, NV_PFSP_EMEMD(0), w);
  }
  bg_nv_wr32(d, NV_PFSP_QUEUE_TAIL(0), (uint32_t)b->msg_len - 4); /* the last dword written */
  bg_nv_wr32(d, NV_PFSP_QUEUE_HEAD(0), 0);

  if ((e = wait_pair(d, NV_PFSP_MSGQ_HEAD(0), NV_PFSP_MSGQ_TAIL(0), false, "no response to the COT command", &head,
                     &tail)) < 0)
    return e;
  uint32_t n = tail - head + 4, r[8] = {0};
  if (tail < head || n % 4 || n > sizeof(r))
    return bg_error(BG_EIO, "nv: %s: FSP message queue head 0x%" PRIx32 " tail 0x%" PRIx32 ": a response of whole "
                    "dwords up to %zu bytes expected", bg_pci_name(d->pci), head, tail, sizeof(r));
  bg_nv_wr32(d, NV_PFSP_EMEMC(0), NV_PFSP_EMEMC_OFFS(head) | NV_PFSP_EMEMC_BLK(head >> 8) | NV_PFSP_EMEMC_AINCR);
  for (uint32_t i = 0; i < n / 4; i++) r[i] = bg_nv_rd32(d, NV_PFSP_EMEMD(0));
  /* consumed (nouveau gh100_fsp_recv) */
  bg_nv_wr32(d, NV_PFSP_MSGQ_TAIL(0), 0);
  bg_nv_wr32(d, NV_PFSP_MSGQ_HEAD(0), 0);
  return check_response(d, r, n);
}

int bg_nv_boot_fsp_run(bg_nv_pci *d, const bg_nv_fsp_boot *b) {
  bg_nv_step_begin(d, "FSP chain of trust");
  int e = send_cot(d, b);
  /* GSP-RM runs once its RISC-V core leaves the boot ROM's lockdown (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT) */
  if (e >= 0)
    e = bg_nv_poll(d, NV_FALCON_BASE_GSP + NV_PFALCON_FALCON_HWCFG2, NV_PFALCON_FALCON_HWCFG2_RISCV_BR_PRIV_LOCKDOWN, 0,
                   BG_NV_TIMEOUT_BOOT_MS, "FSP boot: GSP RISC-V leaving the boot-ROM lockdown");
  bg_nv_step_end(d);
  return e;
}
