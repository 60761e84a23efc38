/* usb/asm24_proto.c: encoders of usb/asm24_proto.h (tinygrad tinygrad/runtime/support/usb.py ASM24Controller). */
#include <string.h>

#include "baregpu/error.h"
#include "usb/asm24_proto.h"

const bg_asm24_window bg_asm24_windows[BG_ASM24_NWIN] = {
  [BG_ASM24_WIN_SRAM] = {"sram", 0xF000, 0x200000, BG_ASM24_SRAM_SIZE},
  [BG_ASM24_WIN_SYSBUF] = {"sys_buf", 0xA000, 0x820000, 0x1000},
  [BG_ASM24_WIN_CQBUF] = {"cq_buf", 0xB800, 0x822000, 0x1000},
};

const bg_asm24_queue_sizes bg_asm24_usb_sizes = {
  .compute_ring = 0x2000, .kernargs = 8u << 10, .signal_page = 0x100, .sdma_ring = 1u << 20, .pm4_ibs = 0x2000,
};

bool bg_asm24_tlp_posted(uint8_t f) { return (f & 0xDF) == 0x40 || (f & 0xB8) == 0x30; }
bool bg_asm24_tlp_is_cfg(uint8_t f) { return (f & 0xBE) == 0x04; }

int bg_asm24_cfg_addr(unsigned bus, unsigned dev, unsigned fn, unsigned reg, uint64_t *addr) {
  if (bus > 255 || dev > 31 || fn > 7 || reg > 0xFFF)
    return bg_error(BG_EINVAL, "asm24: config address %u:%u.%u reg 0x%x out of range (bus<256, dev<32, fn<8, "
                    "reg<4096)", bus, dev, fn, reg);
  *addr = (uint64_t)bus << 24 | (uint64_t)dev << 19 | (uint64_t)fn << 16 | reg;
  return 0;
}

uint8_t bg_asm24_cfg_fmt(bool write, unsigned bus) {
  return (uint8_t)((write ? BG_TLP_CFGWR0 : BG_TLP_CFGRD0) | (bus > 0));
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

int bg_asm24_tlp_encode(uint8_t fmt_type, uint64_t addr, unsigned size, uint32_t value, uint16_t *wvalue,
                        uint8_t payload[BG_ASM24_TLP_PAYLOAD]) {
  unsigned lane = (unsigned)(addr & 3);
  if (size < 1 || size > 4 || lane + size > 4)
    return bg_error(BG_EINVAL, "asm24: TLP of %u bytes at 0x%llx crosses a dword (1..4 bytes inside one dword)", size,
                    (unsigned long long)addr);
  unsigned byte_en = ((1u << size) - 1) << lane;
  uint32_t mask = size == 4 ? 0xFFFFFFFFu : (1u << (8 * size)) - 1;
  *wvalue = (uint16_t)(fmt_type | byte_en << 8);
  put32(payload, (uint32_t)(addr & ~3ull));
  put32(payload + 4, (uint32_t)(addr >> 32));
  put32(payload + 8, (value & mask) << (8 * lane));
  return 0;
}

void bg_asm24_stream_encode(bool write, uint64_t addr, uint32_t ndw, uint16_t *wvalue,
                            uint8_t payload[BG_ASM24_TLP_PAYLOAD]) {
  *wvalue = (uint16_t)((write ? BG_TLP_MWR64 : BG_TLP_MRD64) | 0xFu << 8);
  put32(payload, (uint32_t)addr);
  put32(payload + 4, (uint32_t)(addr >> 32));
  put32(payload + 8, ndw);
}

void bg_asm24_cpl_decode(const uint8_t cpl[BG_ASM24_CPL_SIZE], uint64_t addr, unsigned size, uint32_t *value,
                         unsigned *status, unsigned *ret) {
  uint32_t raw;
  memcpy(&raw, cpl, 4);
  unsigned lane = (unsigned)(addr & 3);
  uint32_t mask = size >= 4 ? 0xFFFFFFFFu : (1u << (8 * size)) - 1;
  *value = (raw >> (8 * lane)) & mask;
  *status = (cpl[4] >> 5) & 7u;
  *ret = cpl[7];
}

const char *bg_asm24_cpl_name(unsigned s) {
  switch (s) {
  case BG_CPL_SC: return "Successful Completion";
  case BG_CPL_UR: return "Unsupported Request";
  case BG_CPL_CRS: return "Configuration Request Retry Status";
  case BG_CPL_CA: return "Completer Abort";
  default: return "reserved completion status";
  }
}

const char *bg_asm24_fmt_name(uint8_t f) {
  switch (f) {
  case BG_TLP_MRD32: return "MRd32";
  case BG_TLP_MWR32: return "MWr32";
  case BG_TLP_MRD64: return "MRd64";
  case BG_TLP_MWR64: return "MWr64";
  case BG_TLP_CFGRD0: return "CfgRd0";
  case BG_TLP_CFGWR0: return "CfgWr0";
  case BG_TLP_CFGRD1: return "CfgRd1";
  case BG_TLP_CFGWR1: return "CfgWr1";
  default: return (f & 0xB8) == 0x30 ? "Msg" : "TLP";
  }
}

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

int bg_asm24_sram_write_args(size_t len, unsigned slot, uint16_t *wvalue, uint16_t *windex, size_t *wire) {
  size_t padded = div_up(len, BG_ASM24_SECTOR) * BG_ASM24_SECTOR;
  if (!len || slot > 0xFF || (size_t)slot * BG_ASM24_SLOT + padded > BG_ASM24_SRAM_SIZE)
    return bg_error(BG_EINVAL, "asm24: SRAM write of %zu bytes at slot %u does not fit the 512 KiB SRAM", len, slot);
  *wvalue = (uint16_t)(padded / BG_ASM24_SECTOR);
  *windex = (uint16_t)(slot | div_up(padded, BG_ASM24_SLOT) << 8);
  *wire = padded;
  return 0;
}

int bg_asm24_sram_read_args(size_t len, uint16_t *wvalue, uint16_t *windex, size_t *wire) {
  size_t sectors = div_up(len, BG_ASM24_SECTOR);
  if (!len || len > BG_ASM24_SRAM_SIZE || sectors > BG_ASM24_SECTORS_MAX)
    return bg_error(BG_EINVAL, "asm24: SRAM read of %zu bytes: 1..512 KiB per arm", len);
  *wvalue = (uint16_t)((sectors & 0x7FFF) | 0x8000);
  *windex = (uint16_t)((div_up(len, BG_ASM24_SLOT) & 0xFF) << 8);
  *wire = sectors * BG_ASM24_SECTOR;
  return 0;
}
