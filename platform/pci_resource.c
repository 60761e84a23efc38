/* platform/pci_resource.c: BARs from the sysfs "resource" file; line i describes resource i
 * (BARs 0-5, then the expansion ROM and bridge windows) as Linux resource_show prints it. */
#include "platform/pci_resource.h"

#include <stdio.h>
#include <string.h>

#include "platform/pci_regs.h"

bool bg_pci_resource_line(const char *line, bg_pci_bar *out) {
  if (!line) return false;
  char one[128]; /* this line only: sscanf's blanks would read on into the next one */
  size_t n = strcspn(line, "\n");
  if (n >= sizeof(one)) return false;
  memcpy(one, line, n);
  one[n] = 0;
  unsigned long long start, end, flags;
  if (sscanf(one, "%llx %llx %llx", &start, &end, &flags) != 3) return false;
  memset(out, 0, sizeof(*out));
  out->base = start;
  out->size = (flags & (BG_IORESOURCE_IO | BG_IORESOURCE_MEM)) && end >= start ? end - start + 1 : 0;
  out->is_io = (flags & BG_IORESOURCE_IO) != 0;
  out->is_64 = (flags & BG_IORESOURCE_MEM_64) != 0;
  out->prefetch = (flags & BG_IORESOURCE_PREFETCH) != 0;
  return true;
}

bool bg_pci_resource_bar(const char *text, int bar, bg_pci_bar *out) {
  const char *line = bar >= 0 ? text : NULL;
  for (int i = 0; i < bar && line; i++) {
    line = strchr(line, '\n');
    if (line) line++;
  }
  return line && *line && bg_pci_resource_line(line, out);
}
