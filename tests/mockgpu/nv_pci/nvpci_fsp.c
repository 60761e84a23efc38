/* tests/mockgpu/nv_pci/nvpci_fsp.c: the FSP of the emulated Hopper/Blackwell GPU: channel 0's EMEM (1 KiB,
 * FSP_EMEM_CHANNEL_RM) behind NV_PFSP_EMEMC/EMEMD (offset = BLK 15:8 * 256 + OFFS 7:2 * 4, auto-increment on write
 * AINCW 24 / on read AINCR 25), the command queue (QUEUE_HEAD/TAIL) and the message queue (MSGQ_HEAD/TAIL), all from
 * open-gpu-kernel-modules gh100/dev_fsp_pri.h.
 *
 * A message is one MCTP packet (SOM|EOM, fsp_mctp_format.h) whose message header is vendor-defined PCI (0x7e),
 * vendor 0x10de and an NVDM type (fsp_nvdm_format.h). The host writes it to EMEM, sets QUEUE_TAIL to its last dword
 * and QUEUE_HEAD to its first (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT); the head write hands it over. The FSP accepts only NVDM_TYPE_COT (0x14)
 * with an NVDM_PAYLOAD_COT (kern_fsp_cot_payload.h: version 2, size 860): the FMC image at gspFmcSysmemOffset equal to
 * the generated fmc's image section, hash384 / publicKey / signature equal to its sections, frtsVidmemSize 1 MiB at a
 * 1 MiB-aligned frtsVidmemOffset (from the end of FB), and GSP_FMC_BOOT_PARAMS at gspBootArgsSysmemOffset naming the
 * WPR metadata (checked as the Booter does, FMC layout) and the libos arguments. Then GSP-RM starts (nvpci_gsp_start),
 * the GSP falcon's HWCFG2.riscv_br_priv_lockdown clears, and the response NVDM_TYPE_FSP_RESPONSE (0x15) with
 * NVDM_PAYLOAD_COMMAND_RESPONSE {taskId, commandNvdmType, errorCode} (nvdm_payload_cmd_response.h) goes to EMEM 0 with
 * MSGQ_HEAD = 0, MSGQ_TAIL = its last dword. A payload padded with 4 zero bytes although already dword-aligned (what
 * tinygrad's kfsp_send_msg does, tinygrad tinygrad/runtime/support/nv/ip.py kfsp_send_msg) is accepted and counted (nvpci_fsp_padded). */
#include "nvpci_internal.h"

#include <inttypes.h>
#include <string.h>

#define COT_SIZE 860u
#define MIB ((uint64_t)1 << 20)

void nvpci_fsp_cold(nvpci_gpu *g) {
  memset(g->emem, 0, sizeof(g->emem));
  g->ememc = g->q_head = g->q_tail = g->mq_head = g->mq_tail = 0;
  g->fsp_last_error = 0;
}

static uint32_t emem_off(const nvpci_gpu *g) { return (g->ememc >> 8 & 0xffu) * 256u + (g->ememc >> 2 & 0x3fu) * 4u; }
static void emem_set(nvpci_gpu *g, uint32_t off) { g->ememc = (g->ememc & 0xffff0000u) | (off / 256u) << 8 | (off % 256u); }

static void respond(nvpci_gpu *g, uint32_t nvdm, uint32_t error) {
  uint8_t r[20];
  nvpci_put32(r, 0xc0000000u);                                 /* SOM | EOM */
  nvpci_put32(r + 4, 0x7eu | 0x10deu << 8 | 0x15u << 24);      /* NVDM_TYPE_FSP_RESPONSE */
  nvpci_put32(r + 8, 0), nvpci_put32(r + 12, nvdm), nvpci_put32(r + 16, error);
  memcpy(g->emem, r, sizeof(r));
  g->mq_head = 0, g->mq_tail = sizeof(r) - 4;
  g->fsp_last_error = error;
}

static uint32_t cot(nvpci_gpu *g, const uint8_t *p, size_t n) {
  const nvpci_fw *fw = &g->fw;
  if (n == COT_SIZE + 4 && !nvpci_get32(p + COT_SIZE)) g->fsp_padded++;
  else if (n != COT_SIZE) {
    nvpci_fail(g, "FSP: COT payload of %zu bytes, NVDM_PAYLOAD_COT has %u", n, COT_SIZE);
    return NVPCI_FSP_ERR_PAYLOAD;
  }
  /* GH100 takes version 1, Blackwell 2 (open-gpu-kernel-modules g_kern_fsp_nvoc.c cotPayloadVersion) */
  unsigned want = g->chip == NVPCI_GH100 ? 1 : 2;
  if (nvpci_get16(p) != want || nvpci_get16(p + 2) != COT_SIZE) {
    nvpci_fail(g, "FSP: NVDM_PAYLOAD_COT version %u size %u, expected version %u size %u", nvpci_get16(p),
               nvpci_get16(p + 2), want, COT_SIZE);
    return NVPCI_FSP_ERR_PAYLOAD;
  }
  uint64_t frts_off = nvpci_get64(p + 24);
  uint32_t frts_size = nvpci_get32(p + 32);
  if (frts_size != MIB || !frts_off || frts_off % MIB || frts_off + MIB > g->vram_size) {
    nvpci_fail(g, "FSP: NVDM_PAYLOAD_COT frtsVidmemOffset 0x%" PRIx64 " / frtsVidmemSize 0x%x: expected 1 MiB at a 1 MiB-"
               "aligned offset from the end of the 0x%" PRIx64 "-byte FB", frts_off, frts_size, g->vram_size);
    return NVPCI_FSP_ERR_PAYLOAD;
  }
  if (memcmp(p + 36, fw->fmc_hash.p, 48)) {
    nvpci_fail(g, "FSP: NVDM_PAYLOAD_COT hash384 is not the fmc's hash section");
    return NVPCI_FSP_ERR_IMAGE;
  }
  uint8_t key[NVPCI_SIG_SIZE] = {0};
  memcpy(key, fw->fmc_pubkey.p, fw->fmc_pubkey.n);
  if (memcmp(p + 84, key, NVPCI_SIG_SIZE)) {
    nvpci_fail(g, "FSP: NVDM_PAYLOAD_COT publicKey is not the fmc's publickey section (zero-padded to 384 bytes)");
    return NVPCI_FSP_ERR_IMAGE;
  }
  if (memcmp(p + 468, fw->fmc_sig.p, NVPCI_SIG_SIZE)) {
    nvpci_fail(g, "FSP: NVDM_PAYLOAD_COT signature is not the fmc's signature section");
    return NVPCI_FSP_ERR_IMAGE;
  }
  if (nvpci_dma_same(g, nvpci_get64(p + 4), fw->fmc_image.p, fw->fmc_image.n, "FSP", "the FMC image at gspFmcSysmemOffset") < 0)
    return NVPCI_FSP_ERR_IMAGE;
  uint8_t bp[80];
  uint64_t bp_bus = nvpci_get64(p + 852);
  if (nvpci_dma_read(g, bp_bus, bp, sizeof(bp)) < 0) {
    nvpci_fail(g, "FSP: cannot read GSP_FMC_BOOT_PARAMS at gspBootArgsSysmemOffset 0x%" PRIx64, bp_bus);
    return NVPCI_FSP_ERR_BOOT;
  }
  /* GSP_FMC_BOOT_PARAMS: bootGspRmParams @8 {target, gspRmDescSize, gspRmDescOffset, ..., bIsGspRmBoot @28},
   * gspRmParams @40 {target, bootArgsOffset @8} (tinygrad tinygrad/runtime/support/nv/ip.py NV_FLCN_COT) */
  if (nvpci_get32(bp + 8) != 1 || nvpci_get32(bp + 12) != 256 || nvpci_get32(bp + 36) != 1 || nvpci_get32(bp + 40) != 1) {
    nvpci_fail(g, "FSP: GSP_FMC_BOOT_PARAMS target %u / gspRmDescSize %u / bIsGspRmBoot %u / gspRmParams.target %u, "
               "expected 1 (coherent sysmem) / 256 / 1 / 1", nvpci_get32(bp + 8), nvpci_get32(bp + 12),
               nvpci_get32(bp + 36), nvpci_get32(bp + 40));
    return NVPCI_FSP_ERR_BOOT;
  }
  uint64_t meta = nvpci_get64(bp + 16), libos = nvpci_get64(bp + 48);
  if (nvpci_check_wpr_meta(g, meta, true, "FSP") < 0) return NVPCI_FSP_ERR_BOOT;
  g->wpr2_lo = (uint32_t)((g->vram_size - frts_off) >> 12) << 4;
  g->wpr2_hi = (uint32_t)((g->vram_size - frts_off + MIB - 4096) >> 12) << 4;
  if (nvpci_start_gsp_rm(g, meta, libos, "FSP") < 0) return NVPCI_FSP_ERR_BOOT;
  g->handoff = true;
  g->flcn[NVPCI_FLCN_GSP].lockdown = false;
  return NVPCI_FSP_OK;
}

/* The host handed over EMEM [head, tail + 4). */
static void message(nvpci_gpu *g) {
  g->fsp_msgs++;
  uint32_t head = g->q_head, tail = g->q_tail, err, nvdm = 0;
  if (tail < head || tail + 4 > NVPCI_EMEM_SIZE || head % 4 || tail % 4 || tail - head < 8) {
    nvpci_fail(g, "FSP: command queue head 0x%x tail 0x%x: not a message inside the %u-byte channel", head, tail,
               NVPCI_EMEM_SIZE);
    err = NVPCI_FSP_ERR_FORMAT;
  } else {
    const uint8_t *m = g->emem + head;
    uint32_t mctp = nvpci_get32(m), hdr = nvpci_get32(m + 4);
    nvdm = hdr >> 24;
    if ((mctp >> 30) != 3) {
      nvpci_fail(g, "FSP: MCTP header 0x%08x: a message must be one packet (SOM and EOM set)", mctp);
      err = NVPCI_FSP_ERR_FORMAT;
    } else if ((hdr & 0x7fu) != 0x7e || (hdr >> 8 & 0xffffu) != 0x10de) {
      nvpci_fail(g, "FSP: message header 0x%08x: expected vendor-defined PCI (0x7e) and vendor 0x10de", hdr);
      err = NVPCI_FSP_ERR_FORMAT;
    } else if (hdr >> 24 != 0x14) {
      nvpci_fail(g, "FSP: NVDM type 0x%x is not accepted by the model (only COT, 0x14)", hdr >> 24);
      err = NVPCI_FSP_ERR_TYPE;
    } else
      err = cot(g, m + 8, tail + 4 - head - 8);
  }
  g->q_head = g->q_tail; /* consumed */
  respond(g, nvdm, err);
}

bool nvpci_fsp_rd(nvpci_gpu *g, uint32_t off, uint32_t *v, bool fx) {
  if (!g->c->fsp) return false;
  switch (off) {
  case NV_PFSP_EMEMC0: *v = g->ememc; break;
  case NV_PFSP_EMEMD0: {
    uint32_t o = emem_off(g);
    *v = nvpci_get32(g->emem + o);
    if (fx && (g->ememc & NV_PFSP_EMEMC_AINCR)) emem_set(g, (o + 4) % NVPCI_EMEM_SIZE);
    break;
  }
  case NV_PFSP_QUEUE_HEAD0: *v = g->q_head; break;
  case NV_PFSP_QUEUE_TAIL0: *v = g->q_tail; break;
  case NV_PFSP_MSGQ_HEAD0: *v = g->mq_head; break;
  case NV_PFSP_MSGQ_TAIL0: *v = g->mq_tail; break;
  default: return false;
  }
  return true;
}

bool nvpci_fsp_wr(nvpci_gpu *g, uint32_t off, uint32_t v, bool fx) {
  if (!g->c->fsp) return false;
  switch (off) {
  case NV_PFSP_EMEMC0:
    if (fx && ((v >> 8 & 0xffu) * 256u + (v >> 2 & 0x3fu) * 4u >= NVPCI_EMEM_SIZE))
      nvpci_fail(g, "FSP: EMEMC 0x%x points past the %u-byte channel", v, NVPCI_EMEM_SIZE);
    else g->ememc = v & (NV_PFSP_EMEMC_AINCW | NV_PFSP_EMEMC_AINCR | 0xfffcu);
    break;
  case NV_PFSP_EMEMD0: {
    uint32_t o = emem_off(g);
    nvpci_put32(g->emem + o, v);
    if (fx && (g->ememc & NV_PFSP_EMEMC_AINCW)) emem_set(g, (o + 4) % NVPCI_EMEM_SIZE);
    break;
  }
  case NV_PFSP_QUEUE_HEAD0:
    g->q_head = v;
    if (fx) message(g);
    break;
  case NV_PFSP_QUEUE_TAIL0: g->q_tail = v; break;
  case NV_PFSP_MSGQ_HEAD0: g->mq_head = v; break;
  case NV_PFSP_MSGQ_TAIL0: g->mq_tail = v; break;
  default: return false;
  }
  return true;
}
