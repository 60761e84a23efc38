/* platform/pci_regs.h: PCI configuration-space layout used by platform/pci_* and the emulated device.
 *
 * Offsets and bits from the PCI Local Bus Specification 3.0 (type 0 header, 6.2) and the PCI
 * Express Base Specification (extended capabilities 7.6, Resizable BAR 7.8.6), named as Linux
 * names them in include/uapi/linux/pci_regs.h. */
#ifndef BG_HCQ_PCI_REGS_H
#define BG_HCQ_PCI_REGS_H

/* Configuration space sizes: conventional PCI, PCI Express. */
#define BG_PCI_CFG_SPACE_SIZE 256u
#define BG_PCI_CFG_SPACE_EXP_SIZE 4096u

/* Type 0 header. */
#define BG_PCI_VENDOR_ID 0x00u        /* 16 bits */
#define BG_PCI_DEVICE_ID 0x02u        /* 16 bits */
#define BG_PCI_COMMAND 0x04u          /* 16 bits */
#define  BG_PCI_COMMAND_IO 0x0001u     /* respond to I/O space */
#define  BG_PCI_COMMAND_MEMORY 0x0002u /* respond to memory space (BAR decoding) */
#define  BG_PCI_COMMAND_MASTER 0x0004u /* bus mastering: the device may DMA */
#define  BG_PCI_COMMAND_INTX_DISABLE 0x0400u
#define BG_PCI_STATUS 0x06u           /* 16 bits */
#define  BG_PCI_STATUS_CAP_LIST 0x0010u
#define BG_PCI_CLASS_REVISION 0x08u   /* revision in bits 0-7, class code in 8-31 */
#define BG_PCI_HEADER_TYPE 0x0eu      /* 8 bits */
#define BG_PCI_BASE_ADDRESS_0 0x10u   /* six 32-bit BAR registers */
#define  BG_PCI_BASE_ADDRESS_SPACE_IO 0x01u
#define  BG_PCI_BASE_ADDRESS_MEM_TYPE_64 0x04u
#define  BG_PCI_BASE_ADDRESS_MEM_PREFETCH 0x08u
#define  BG_PCI_BASE_ADDRESS_MEM_MASK (~0x0fu)
#define BG_PCI_SUBSYSTEM_VENDOR_ID 0x2cu
#define BG_PCI_SUBSYSTEM_ID 0x2eu
#define BG_PCI_CAPABILITY_LIST 0x34u  /* 8 bits: first capability */
#define BG_PCI_INTERRUPT_LINE 0x3cu
#define BG_PCI_INTERRUPT_PIN 0x3du

/* Capability list entries: id at +0, next at +1. */
#define BG_PCI_CAP_ID_MSI 0x05u
#define BG_PCI_CAP_ID_EXP 0x10u
#define BG_PCI_CAP_ID_MSIX 0x11u
#define BG_PCI_EXP_LNKSTA 0x12u       /* in the PCIe capability: speed bits 0-3, width bits 4-9 */

/* Extended capabilities start at 0x100: id bits 0-15, version 16-19, next 20-31. */
#define BG_PCI_EXT_CAP_START 0x100u
#define BG_PCI_EXT_CAP_ID(h) ((h) & 0xffffu)
#define BG_PCI_EXT_CAP_NEXT(h) (((h) >> 20) & 0xffcu)
#define BG_PCI_EXT_CAP_ID_REBAR 0x15u

/* Resizable BAR capability: one (CAP, CTRL) pair of dwords per resizable BAR, from +4. */
#define BG_PCI_REBAR_CAP 4u           /* supported sizes: bit n+4 = 2^n MiB */
#define  BG_PCI_REBAR_CAP_SIZES 0xfffffff0u
#define BG_PCI_REBAR_CTRL 8u
#define  BG_PCI_REBAR_CTRL_BAR_IDX 0x7u
#define  BG_PCI_REBAR_CTRL_NBAR_MASK 0xe0u
#define  BG_PCI_REBAR_CTRL_NBAR_SHIFT 5
#define  BG_PCI_REBAR_CTRL_BAR_SIZE 0x3f00u  /* current size: 2^n MiB */
#define  BG_PCI_REBAR_CTRL_BAR_SHIFT 8

/* Linux IORESOURCE_* flags in sysfs "resource" lines (include/linux/ioport.h). */
#define BG_IORESOURCE_IO 0x100u
#define BG_IORESOURCE_MEM 0x200u
#define BG_IORESOURCE_PREFETCH 0x2000u
#define BG_IORESOURCE_MEM_64 0x100000u

#endif
