/* usb/usb_pci.h: the GPU behind an ASM24 bridge as a bg_pci_dev (platform/pci.h; reference
 * tinygrad tinygrad/runtime/support/system.py USBPCIDevice), so that am/ drives it like a PCI function.
 *
 * Open: the bridge protocol (usb/asm24.h) brings the PCIe link up, then the hierarchy is set up
 * (bus numbers, windows, the largest Resizable BAR, BARs placed at 0x10000000 / 32 GiB) and the
 * GPU at bus 4 gets memory decoding and bus mastering.
 *
 * BAR views are callback views (platform/mmio.h): reads are streaming PCIe reads; writes through a
 * view mapped with BG_PCI_MAP_WC (VRAM) are queued like write-combined stores and go out with the
 * next flush: any read, any write through an uncached view (registers, doorbells), unmap,
 * bg_usb_pci_flush or close. So ring bytes + wptr in VRAM followed by the doorbell write cost one
 * round trip. An error of a queued write is reported by the access that flushes it.
 *
 * System memory (alloc_sysmem) comes from the bridge's 512 KiB SRAM, bump-allocated in 16 KiB
 * slots without wrap; its bus addresses are the SRAM's PCIe addresses (0x200000 + offset). Host
 * writes go through the SRAM engine (a shadow copy fills the rest of the 512-byte sectors they
 * touch); host reads arm the engine and read from slot 0 (on hardware the firmware releases an
 * armed read once the GPU wrote it, tinygrad tinygrad/runtime/ops_amd.py USBIface; the emulated bridge answers at once). dma_map
 * is not possible: the GPU cannot reach host RAM over USB (BG_PCI_FEAT_NO_HOST_DMA). No function reset, no interrupts.
 * Internal: not installed. */
#ifndef BG_USB_USB_PCI_H
#define BG_USB_USB_PCI_H

#include "platform/pci.h"
#include "platform/pci_usb.h"
#include "usb/asm24.h"
#include "usb/usb_transport.h"

/* bg_usb_pci_scan, bg_usb_pci_open, bg_usb_pci_open_index: platform/pci_usb.h (what drivers use). Copies to and
 * from VRAM through bg_pci_copy_in/out are the bridge's pipelined copies (bg_asm24_copy_in/out). */

/* True when d was opened here. */
bool bg_usb_pci_is_usb(const bg_pci_dev *d);
/* Send queued write-combined writes now (one round trip; 0 when none are queued). */
int bg_usb_pci_flush(bg_pci_dev *d);
/* The bridge under d (statistics, SRAM, XDATA); NULL when d is not a USB device. */
bg_asm24 *bg_usb_pci_bridge(bg_pci_dev *d);
/* A view of a bridge window (BG_ASM24_WIN_SYSBUF / _CQBUF through XDATA reads and byte writes;
 * BG_ASM24_WIN_SRAM like sysmem). Unmap with bg_pci_unmap_bar. */
int bg_usb_pci_map_window(bg_pci_dev *d, int which, bg_mmio *out);

#endif
