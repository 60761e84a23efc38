/* usb/asm24_proto.h: the ASM24 custom-firmware vendor protocol as constants and pure encoders
 * (tinygrad tinygrad/runtime/support/usb.py ASM24Controller). No I/O here: usb/asm24.c sends what these build,
 * and the unit tests check them against the reference's tables. Internal: not installed. */
#ifndef BG_USB_ASM24_PROTO_H
#define BG_USB_ASM24_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: vendor requests (bRequest). */
enum bg_asm24_req {
  BG_ASM24_REQ_XDATA_READ = 0xE4,   /* IN, wValue = XDATA address, <= 255 bytes */
  BG_ASM24_REQ_XDATA_WRITE = 0xE5,  /* OUT, wValue = address, wIndex = the byte, no data */
  BG_ASM24_REQ_TLP = 0xF0,          /* OUT: wValue = fmt_type | byte_en << 8, wIndex = mode, 12 bytes;
                                       IN: 8-byte completion of the last mode-0 TLP */
  BG_ASM24_REQ_SRAM = 0xF2,         /* OUT: arm the SRAM stream engine for one bulk transfer */
  BG_ASM24_REQ_PCIE_POWER = 0xF3,   /* OUT: wValue 1 = link on, 0 = off */
};

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: 0xF0 modes (wIndex). */
enum bg_asm24_tlp_mode {
  BG_ASM24_MODE_SINGLE = 0,        /* one TLP of <= 4 bytes, completion read back for non-posted */
  BG_ASM24_MODE_STREAM_WRITE = 1,  /* MWr of value dwords, data in one bulk OUT */
  BG_ASM24_MODE_STREAM_READ = 2,   /* MRd of value dwords, data in one bulk IN */
};

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: fmt_type, the first TLP header byte. */
enum bg_asm24_fmt {
  BG_TLP_MRD32 = 0x00, BG_TLP_MWR32 = 0x40,
  BG_TLP_MRD64 = 0x20, BG_TLP_MWR64 = 0x60,
  BG_TLP_CFGRD0 = 0x04, BG_TLP_CFGWR0 = 0x44,
  BG_TLP_CFGRD1 = 0x05, BG_TLP_CFGWR1 = 0x45,
};

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: completion status (byte 4 bits 7:5). */
enum bg_asm24_cpl_status { BG_CPL_SC = 0, BG_CPL_UR = 1, BG_CPL_CRS = 2, BG_CPL_CA = 4 };

/* Reference 1.4, 1.15: timeouts per request (ms) and the mode-0 retry rule. */
#define BG_ASM24_TMO_XDATA_MS 1000u
#define BG_ASM24_TMO_TLP_MS 5000u
#define BG_ASM24_TMO_POWER_MS 10000u
#define BG_ASM24_TMO_SRAM_MS 10000u
#define BG_ASM24_TMO_STREAM_READ_MS 30000u
#define BG_ASM24_TMO_BULK_MS 10000u
#define BG_ASM24_RETRIES 10
#define BG_ASM24_RETRY_SLEEP_US 1000u

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: limits. */
#define BG_ASM24_XDATA_READ_MAX 255u
#define BG_ASM24_TLP_PAYLOAD 12u
#define BG_ASM24_CPL_SIZE 8u
#define BG_ASM24_SECTOR 512u
#define BG_ASM24_SLOT 0x4000u              /* 16 KiB SRAM slot */
#define BG_ASM24_SRAM_SIZE 0x80000u        /* 512 KiB, at most one arm */
#define BG_ASM24_SECTORS_MAX 0x7FFFu

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: XDATA registers and windows. */
#define BG_ASM24_XDATA_LTSSM 0xB450u       /* 0x78 = L0, link up */
#define BG_ASM24_LTSSM_L0 0x78u

typedef struct bg_asm24_window {
  const char *name;
  uint16_t xdata;        /* host side (controller address) */
  uint64_t sys;          /* GPU side (PCIe system address) */
  uint32_t size;
} bg_asm24_window;

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: the SRAM ("copy_bufs", sysmem), sys_buf (NVMe SQ region; copy-in fence at +0x800)
 * and cq_buf (NVMe CQ region; copy-out release at +12). */
enum { BG_ASM24_WIN_SRAM, BG_ASM24_WIN_SYSBUF, BG_ASM24_WIN_CQBUF, BG_ASM24_NWIN };
extern const bg_asm24_window bg_asm24_windows[BG_ASM24_NWIN];
#define BG_ASM24_COPYIN_FENCE_OFF 0x800u
#define BG_ASM24_COPYOUT_RELEASE_OFF 12u

/* tinygrad tinygrad/runtime/ops_amd.py USBIface: queue and buffer sizes on USB (every host access to them is a PCIe request, and SDMA
 * submits never wait for ring space: USB devices run single-step). */
typedef struct bg_asm24_queue_sizes {
  uint32_t compute_ring, kernargs, signal_page, sdma_ring, pm4_ibs;
} bg_asm24_queue_sizes;
extern const bg_asm24_queue_sizes bg_asm24_usb_sizes;

/* tinygrad tinygrad/runtime/support/system.py System.pci_setup_usb_bars: the hierarchy behind the bridge. */
#define BG_ASM24_GPU_BUS 4u
#define BG_ASM24_MEM_BASE 0x10000000ull
#define BG_ASM24_PREF_BASE (32ull << 30)
#define BG_ASM24_BAR_ALIGN (2ull << 20)

/* tinygrad tinygrad/runtime/support/usb.py ASM24Controller: TLPs without a completion (memory writes, messages). */
bool bg_asm24_tlp_posted(uint8_t fmt_type);
bool bg_asm24_tlp_is_cfg(uint8_t fmt_type);
/* Config request address bus<<24 | dev<<19 | fn<<16 | reg; -BG_EINVAL when out of range. */
int bg_asm24_cfg_addr(unsigned bus, unsigned dev, unsigned fn, unsigned reg, uint64_t *addr);
/* CfgRd0/CfgWr0 for bus 0, CfgRd1/CfgWr1 beyond. */
uint8_t bg_asm24_cfg_fmt(bool write, unsigned bus);

/* A mode-0 TLP of size 1..4 bytes at addr (not crossing a dword): wValue and the 12-byte payload
 * (addr & ~3 low, high, value shifted into its byte lanes). */
int bg_asm24_tlp_encode(uint8_t fmt_type, uint64_t addr, unsigned size, uint32_t value, uint16_t *wvalue,
                        uint8_t payload[BG_ASM24_TLP_PAYLOAD]);
/* A mode-1/2 streaming request of ndw dwords at addr (dword-aligned). */
void bg_asm24_stream_encode(bool write, uint64_t addr, uint32_t ndw, uint16_t *wvalue,
                            uint8_t payload[BG_ASM24_TLP_PAYLOAD]);
/* Decode a completion: data (shifted down and masked to size), status (enum bg_asm24_cpl_status)
 * and the firmware's return status (byte 7, non-zero = transport error: re-issue). */
void bg_asm24_cpl_decode(const uint8_t cpl[BG_ASM24_CPL_SIZE], uint64_t addr, unsigned size, uint32_t *value,
                         unsigned *status, unsigned *ret);
const char *bg_asm24_cpl_name(unsigned status);
const char *bg_asm24_fmt_name(uint8_t fmt_type);

/* 0xF2 arguments (tinygrad tinygrad/runtime/support/usb.py ASM24Controller): a write of len bytes into SRAM slot, and a read arm of len
 * bytes from slot 0. *wire = the bulk length (len rounded up to 512). -BG_EINVAL beyond 512 KiB or
 * the 15-bit sector count. */
int bg_asm24_sram_write_args(size_t len, unsigned slot, uint16_t *wvalue, uint16_t *windex, size_t *wire);
int bg_asm24_sram_read_args(size_t len, uint16_t *wvalue, uint16_t *windex, size_t *wire);

#endif
