/* tools/smi.h: hcq_smi's command table and the inventory the list command prints.
 *
 * A command is a row of the table in hcq_smi.c: its name, the options it accepts and a run
 * function taking the parsed options. Later commands (pids, kill_pids, unbind, bind, reset) add
 * a row and a run function; option parsing and --dev validation are shared. */
#ifndef BG_TOOLS_SMI_H
#define BG_TOOLS_SMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "baregpu/hcq.h"
#include "hcq/pci_scan.h"
#include "usb/usb_scan.h"

enum { SMI_EXIT_OK = 0, SMI_EXIT_FAIL = 1, SMI_EXIT_USAGE = 2 };

enum smi_opt_bits {
  SMI_OPT_JSON = 1u << 0, /* --json */
  SMI_OPT_ALL = 1u << 1,  /* --all */
  SMI_OPT_DEV = 1u << 2,  /* --dev DEV */
  SMI_OPT_ARG = 1u << 3,  /* one positional argument after the command */
};

typedef struct smi_opts {
  bool json, all;
  const char *dev;     /* --dev as given, NULL when absent */
  bg_target target;    /* parsed --dev (bg_target_parse) */
  bool dev_has_index;  /* --dev named an explicit :INDEX */
  const char *arg;     /* the positional argument, NULL when absent */
} smi_opts;

typedef struct smi_cmd {
  const char *name;
  const char *args;    /* usage after the name */
  const char *summary;
  unsigned opts;       /* SMI_OPT_* accepted */
  int (*run)(const smi_opts *o);
} smi_cmd;

/* What `list` shows, after the --dev filter. Errors of one source do not hide the others. */
typedef struct smi_inventory {
  bg_pci_info *pci;
  size_t npci, pci_scanned, pci_gpus;
  int pci_err;                 /* 0 or negative BG_E* */
  char pci_msg[512];
  char pci_source[160];        /* "libpciaccess" or "sysfs tree <root>" */
  bool usb_searched;           /* false when --dev excludes USB */
  bg_usb_info *usb;
  size_t nusb;
  int usb_err;
  char usb_msg[512];
  char (*devs)[48];            /* openable devices from bg_dev_list */
  size_t ndevs;
  int devs_err;
  char devs_msg[512];
} smi_inventory;

int smi_inventory_collect(const smi_opts *o, smi_inventory *inv);
void smi_inventory_free(smi_inventory *inv);
/* The closing line: "no GPU found on PCI (N devices scanned) or USB", or the counts. */
void smi_inventory_summary(const smi_inventory *inv, const smi_opts *o, char *buf, size_t n);

void smi_list_text(const smi_inventory *inv, const smi_opts *o, FILE *f);
int smi_list_json(const smi_inventory *inv, const smi_opts *o, FILE *f);

int smi_cmd_list(const smi_opts *o);

#endif
