/* tools/smi_fmt.h: human-readable formatting shared by the tools. */
#ifndef BG_TOOLS_SMI_FMT_H
#define BG_TOOLS_SMI_FMT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes in binary units: "512 B", "4 KiB", "256 MiB", "1.5 GiB" (one decimal unless exact). */
char *smi_fmt_size(uint64_t bytes, char *buf, size_t n);
/* PCI class name from the 24-bit class code: "VGA controller", "3D controller", "network", ... */
const char *smi_class_name(uint32_t class_code);

#endif
