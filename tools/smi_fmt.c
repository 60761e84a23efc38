/* tools/smi_fmt.c: formatting helpers (tools/smi_fmt.h). */
#include <inttypes.h>
#include <stdio.h>

#include "tools/smi_fmt.h"

char *smi_fmt_size(uint64_t bytes, char *buf, size_t n) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (u < 6 && bytes >= ((uint64_t)1 << (10 * (u + 1)))) u++;
  uint64_t unit = (uint64_t)1 << (10 * u);
  uint64_t whole = bytes / unit, rest = bytes % unit;
  /* One decimal, rounded in integer arithmetic (rest < unit <= 2^60, so rest*10 fits). */
  uint64_t tenths = (rest * 10 + unit / 2) / unit;
  if (tenths == 10) {
    whole++;
    tenths = 0;
  }
  if (tenths == 0)
    snprintf(buf, n, "%" PRIu64 " %s", whole, units[u]);
  else
    snprintf(buf, n, "%" PRIu64 ".%" PRIu64 " %s", whole, tenths, units[u]);
  return buf;
}

const char *smi_class_name(uint32_t class_code) {
  switch ((class_code >> 8) & 0xffff) {
  case 0x0300: return "VGA controller";
  case 0x0302: return "3D controller";
  case 0x0380: return "display controller";
  case 0x0403: return "audio device";
  case 0x0600: return "host bridge";
  case 0x0601: return "ISA bridge";
  case 0x0604: return "PCI bridge";
  case 0x0c03: return "USB controller";
  case 0x1200: return "processing accelerator";
  default: break;
  }
  switch ((class_code >> 16) & 0xff) {
  case 0x00: return "unclassified";
  case 0x01: return "storage controller";
  case 0x02: return "network controller";
  case 0x03: return "display controller";
  case 0x04: return "multimedia controller";
  case 0x05: return "memory controller";
  case 0x06: return "bridge";
  case 0x07: return "communication controller";
  case 0x08: return "system peripheral";
  case 0x0c: return "serial bus controller";
  case 0x12: return "processing accelerator";
  case 0xff: return "unassigned class";
  default: return "other";
  }
}
