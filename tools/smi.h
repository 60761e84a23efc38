/* tools/smi.h: hcq_smi's command table, device selection, and what the commands share.
 *
 * A command is a row of the table in hcq_smi.c: its name, the options it accepts and a run
 * function taking the parsed options. Option parsing and the device selector (--dev or a
 * positional device: a BDF, a DEV string, a lock name) are shared. Each command lives in its own
 * file: smi_list.c (list), smi_pids.c (pids), smi_kill.c (kill_pids), smi_admin.c (unbind, bind,
 * reset); smi_select.c resolves selectors to PCI GPUs, smi_proc.c reads lock owners and /proc. */
#ifndef BG_TOOLS_SMI_H
#define BG_TOOLS_SMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "baregpu/hcq.h"
#include "hcq/gpu_scan.h"
#include "hcq/usage.h"
#include "nv/nv_query.h"
#include "usb/usb_scan.h"

enum { SMI_EXIT_OK = 0, SMI_EXIT_FAIL = 1, SMI_EXIT_USAGE = 2 };

enum smi_opt_bits {
  SMI_OPT_JSON = 1u << 0, /* --json */
  SMI_OPT_ALL = 1u << 1,  /* --all */
  SMI_OPT_DEV = 1u << 2,  /* --dev DEV */
  SMI_OPT_ARG = 1u << 3,  /* one positional argument after the command (help: a command name) */
  SMI_OPT_POSDEV = 1u << 4, /* the positional argument is a device selector, like --dev */
  SMI_OPT_DRIVER = 1u << 5, /* --driver NAME */
  SMI_OPT_GRACE = 1u << 6,  /* --grace SECONDS */
  SMI_OPT_FUNCTION = 1u << 7, /* --function (reset: a PCI function reset even where a mode1 reset is possible) */
  SMI_OPT_INTERVAL = 1u << 8, /* -n SECONDS (watch) */
  SMI_OPT_COUNT = 1u << 9,    /* --count N (watch) */
  SMI_OPT_ENVDEV = 1u << 10,  /* reads DEV when no --dev, positional device or --all is given */
};

/* What a device selector names. */
typedef enum smi_sel_kind {
  SMI_SEL_NONE,    /* no selector: every device */
  SMI_SEL_TARGET,  /* DEV=[IFACE[:INDICES]+]KIND[:INDEX] (bg_target_parse) */
  SMI_SEL_BDF,     /* a PCI address, "0000:03:00.0" or "03:00.0" */
  SMI_SEL_NAME,    /* a lock name of another interface, "usb:3-2" */
} smi_sel_kind;

typedef struct smi_opts {
  bool json, all;
  const char *dev;     /* the selector as given (--dev, positional or DEV), NULL when absent */
  bool dev_from_env;   /* dev came from the DEV variable (messages say DEV=...) */
  smi_sel_kind sel;
  bg_target target;    /* SMI_SEL_TARGET: the parsed DEV string */
  bool dev_has_index;  /* SMI_SEL_TARGET: an explicit :INDEX was given */
  char name[64];       /* SMI_SEL_BDF: the normalized address; SMI_SEL_NAME: the lock name */
  const char *arg;     /* the positional argument, NULL when absent */
  const char *driver;  /* bind --driver, NULL for the vendor's default */
  double grace_s;      /* kill_pids --grace: seconds between SIGTERM and SIGKILL */
  bool function;       /* reset --function: PCI function reset through sysfs, never a mode1 reset */
  double interval_s;   /* watch -n: seconds between refreshes */
  long count;          /* watch --count: refreshes, 0 for no limit */
} smi_opts;

/* Lock owner of a device (platform/pci_lock.h) with its process name. */
typedef struct smi_owner {
  pid_t pid;           /* 0 free, -1 held by a process that has not written its pid yet */
  char comm[64];       /* /proc/<pid>/comm, "" when unknown */
  bool known;          /* false: the lock file could not be read (err holds why) */
  char err[160];
} smi_owner;

/* VRAM use of a device (smi_mem.c): the holder's published use (hcq/usage.h). */
typedef struct smi_mem {
  bool used_known;     /* free (0 used) or the holder published its use */
  bool published;      /* u holds the holder's use */
  bg_usage u;
  char comm[64];       /* the holder's process name */
} smi_mem;

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
  smi_owner *pci_owner;        /* [npci] */
  size_t npci, pci_scanned, pci_gpus;
  int pci_err;                 /* 0 or negative BG_E* */
  char pci_msg[512];
  char pci_source[160];        /* "libpciaccess" or "sysfs tree <root>" */
  bool usb_searched;           /* false when --dev excludes USB */
  bg_usb_info *usb;
  smi_owner *usb_owner;        /* [nusb] */
  size_t nusb;
  int usb_err;
  char usb_msg[512];
  char (*devs)[48];            /* openable devices from bg_dev_list */
  size_t ndevs;
  int devs_err;
  char devs_msg[512];
  struct smi_am_metrics *am;   /* [npci] SMU metrics of the AMD GPUs (smi_am_collect), NULL: not read */
  struct smi_inventory *emu;   /* list --all: the emulated MOCKPCI devices (smi_mock_inventory), NULL: none */
  struct smi_inventory *emu_usb; /* list --all, --dev MOCKUSB+AMD: the GPUs behind emulated bridges, NULL: none */
  smi_mem *pci_mem;            /* [npci] VRAM use (smi_mem_get) */
  struct smi_nv_inventory *nv; /* the NVIDIA GPUs opened through NVK / MOCKNVK (smi_nv_collect), NULL: not gathered */
} smi_inventory;

int smi_inventory_collect(const smi_opts *o, smi_inventory *inv);
/* Keep the entries of v[0..*n) (one scan, sorted) that o's selector names, in place, in order. */
int smi_pci_select(const smi_opts *o, bg_pci_info *v, size_t *n);
void smi_inventory_free(smi_inventory *inv);
/* The closing line: "no GPU found on PCI (N devices scanned) or USB", or the counts. */
void smi_inventory_summary(const smi_inventory *inv, const smi_opts *o, char *buf, size_t n);
/* The same, plus "; N emulated GPUs (MOCKPCI+AMD)" when inv->emu was gathered. */
void smi_inventory_summary_all(const smi_inventory *inv, const smi_opts *o, char *buf, size_t n);

/* Keep[i] stays true only for the entries o's visibility filter and :INDEX select (among those kept). */
int smi_select_visible(const smi_opts *o, bool *keep, size_t n);

void smi_list_text(const smi_inventory *inv, const smi_opts *o, FILE *f);
int smi_list_json(const smi_inventory *inv, const smi_opts *o, FILE *f);

/* ---------------- selection (smi_select.c) ---------------- */

/* Parse a selector into o->sel/target/name: a PCI address (contains '.'), "usb:..." or a DEV
 * string. 0, or -1 with the reason in err. */
int smi_sel_parse(const char *s, smi_opts *o, char *err, size_t n);
/* The PCI GPUs a command acts on: every GPU without a selector, else those it names. When the
 * selector names none, or (one == true, no --all) more than one, prints why with the list of
 * GPUs and returns SMI_EXIT_USAGE; a failed scan returns SMI_EXIT_FAIL. On SMI_EXIT_OK *out
 * (free with free()) holds *n >= 0 GPUs. */
int smi_select_gpus(const smi_opts *o, const char *cmd, bool one, bg_pci_info **out, size_t *n);
/* "  0000:03:00.0  AMD 1002:744c navi31, driver amdgpu" lines. */
void smi_print_gpus(FILE *f, const bg_pci_info *v, size_t n);
/* Print "hcq_smi: <cmd>: <msg>" and, for a missing privilege, how to run as root. */
void smi_report_error(const char *cmd, int code, const char *msg);

/* ---------------- processes and locks (smi_proc.c) ---------------- */

/* Process name from <BG_PROC_ROOT>/<pid>/comm, else /proc/<pid>/comm; "" when unreadable. */
void smi_proc_comm(pid_t pid, char *buf, size_t n);
/* The process exists and is not a zombie. */
bool smi_proc_alive(pid_t pid);
/* The owner of name's lock file. */
void smi_owner_get(const char *name, smi_owner *ow);

/* A held lock file. */
typedef struct smi_holder {
  char name[64];       /* device: "0000:03:00.0", "usb:3-2" */
  pid_t pid;           /* > 0, or -1 when the holder has not written its pid yet */
  char comm[64];
  char lock[512];
} smi_holder;

/* Held locks, sorted by name: all of them when names is NULL, else those in names[0..nnames).
 * 0 or a negative BG_E* code (the lock dir cannot be listed). Free *out with free(). */
int smi_holders_collect(char (*names)[64], size_t nnames, smi_holder **out, size_t *n);
/* The device names (lock names) o's selector resolves to: NULL with *n = 0 for every device.
 * Returns like smi_select_gpus. */
int smi_select_names(const smi_opts *o, const char *cmd, char (**names)[64], size_t *n);

/* ---------------- AMD SMU metrics (smi_am.c) ---------------- */

typedef enum smi_am_state {
  SMI_AM_NONE,     /* not an AMD GPU: nothing to show */
  SMI_AM_OK,       /* metrics read */
  SMI_AM_IN_USE,   /* locked by another process (pid) */
  SMI_AM_BOUND,    /* bound to a kernel driver (driver) */
  SMI_AM_DOWN,     /* opened, but the SMU is not running (not booted: bg-bringup) */
  SMI_AM_ERROR,    /* open or read failed (msg) */
} smi_am_state;

typedef struct smi_am_metrics {
  smi_am_state state;
  pid_t pid;                   /* SMI_AM_IN_USE: the holder, -1 when it has not written its pid */
  char driver[64];             /* SMI_AM_BOUND */
  char msg[512];               /* SMI_AM_DOWN / SMI_AM_ERROR: why */
  char arch[16];               /* "gfx1100" from discovery, when opened */
  uint64_t vram_size;          /* VRAM bytes from discovery (am/), when opened; 0 unknown */
  unsigned temp_edge, temp_hotspot, temp_mem; /* C */
  unsigned power_w, power_limit_w;
  unsigned gfxclk, socclk, uclk, fclk;        /* MHz (gfxclk: average pre-DS, others: current) */
  unsigned gfx_activity, mem_activity;        /* % */
  unsigned fan_rpm;
  bool cdna;                   /* SMU 13.0.6 (MI300): no edge temperature and no fan (text n/a, JSON null) */
} smi_am_metrics;

/* Whether a function bound to driver (may be NULL or "") is baregpu's to open: no driver, or vfio-pci, which
 * platform/pci_sysfs.c opens through VFIO (platform/pci_vfio.h). Used by reset; list does not open vfio-pci
 * functions, because a VFIO open resets them. */
bool smi_driver_is_ours(const char *driver);

/* Metrics of the AMD GPU bdf: not opened when owner (may be NULL) says another process holds it or
 * driver (may be NULL or "") names a bound kernel driver (vfio-pci included: a VFIO open resets the device); else opened through am/ (lock, BARs,
 * discovery, firmware), and when its SMU answers the driver table is pointed at the boot region and the
 * metrics table read. Never boots, never resets. Returns 0 when m->state == SMI_AM_OK, else -1. */
int smi_am_metrics_read(const char *bdf, const smi_owner *owner, const char *driver, smi_am_metrics *m);
/* The same on a device already opened through am/ (over USB: the emulated bridge's GPU). */
struct bg_am_dev;
int smi_am_metrics_dev(struct bg_am_dev *d, smi_am_metrics *m);
/* smi_am_mode1_reset: opening failed for a reason other than a lock or a bound driver (err says why). */
#define SMI_AM_RESET_NOT_OPENED 1
/* SMU mode1 reset of the AMD GPU bdf, which the caller checked is neither bound nor locked: opened through am/
 * (taking its lock), bus mastering off, mode1 reset (then the reset delay), bus mastering on, closed. smu_ver gets
 * "14.0.2" once opened. 0 done; SMI_AM_RESET_NOT_OPENED; or a negative BG_E* code with err set: -BG_EBUSY /
 * -BG_EPERM from the open, -BG_ETIMEDOUT when the SMU does not answer (err suggests --function), others from the
 * reset. */
int smi_am_mode1_reset(const char *bdf, char *smu_ver, size_t nver, char *err, size_t nerr);
/* inv->am for every AMD GPU of inv->pci (others: SMI_AM_NONE); free(inv->am) before smi_inventory_free. */
void smi_am_collect(smi_inventory *inv);
/* "      metrics    edge 45 C, ..." (nothing for SMI_AM_NONE). */
void smi_am_text(const smi_am_metrics *m, FILE *f);
/* "metrics": {...} or null, as a key of the current object (w is a tools/json.h writer). */
struct jw;
void smi_am_json(struct jw *w, const smi_am_metrics *m);

/* ---------------- VRAM (smi_mem.c) ---------------- */

/* name's (a lock name) use: free (owner pid 0), or what its holder published. */
void smi_mem_get(const char *name, const smi_owner *ow, smi_mem *m);
/* "      vram       64.0 MiB used of 512 MiB; pid 4242 (python3) 64.0 MiB in 3 buffers" */
void smi_mem_text(const smi_mem *m, const smi_am_metrics *am, FILE *f);
/* "vram": {"total", "used", "processes": [{"pid", "process", "dev", "bytes", "buffers"}]} */
void smi_mem_json(struct jw *w, const smi_mem *m, const smi_am_metrics *am);

/* ---------------- emulated devices (smi_mock.c) ---------------- */

#define SMI_MOCK_NENV 3
/* The environment smi_mock_enter replaced (BG_SYSFS_ROOT, BG_LOCK_DIR, BG_FIRMWARE_DIR), for smi_mock_leave. */
typedef struct smi_mock_env {
  bool entered;
  bool had[SMI_MOCK_NENV];
  char old[SMI_MOCK_NENV][512];
  char root[256];              /* the emulated sysfs tree */
  int count;                   /* emulated GPUs in it */
  bool nv;                     /* MOCKPCI+NV: the firmware variable is BG_NV_FIRMWARE_DIR */
} smi_mock_env;

/* The selector names the emulated PCI interface (MOCKPCI+AMD...). */
bool smi_sel_is_mockpci(const smi_opts *o);
/* Start the emulated MOCKPCI GPUs of kind ("AMD" or "NV"; NULL: AMD) of tests/mockgpu's plugin in this process and
 * point the PCI sysfs root, the lock directory and the firmware directory at the plugin's; with boot, cold-boot every
 * emulated AMD GPU (it starts powered on, not booted; NV GPUs stay cold). 0, or -BG_E* with err set (plugin not
 * found: the paths tried). */
int smi_mock_enter(const char *kind, bool boot, smi_mock_env *saved, char *err, size_t n);
/* bdf is one of the MOCKPCI+AMD devices smi_mock_enter started. */
bool smi_mock_is_device(const char *bdf);
/* Put the environment back as it was before smi_mock_enter. */
void smi_mock_leave(smi_mock_env *saved);
/* list --all's emulated section: the MOCKPCI+AMD devices (booted) with their SMU metrics, or pci_err/pci_msg
 * saying why not; NULL when out of memory. The environment is left as it was. */
smi_inventory *smi_mock_inventory(void);
void smi_mock_inventory_free(smi_inventory *emu);
/* The selector names the emulated USB interface (MOCKUSB+AMD...). */
bool smi_sel_is_mockusb(const smi_opts *o);
/* The MOCKUSB+AMD GPUs: each reached through its emulated ASM24 bridge (the plugin's USB transport), its ids and BARs
 * read over the bridge, booted (as MOCKUSB+AMD's open does) and its SMU metrics read; entries named "mockusb:N".
 * o (may be NULL) selects by index. pci_err/pci_msg say why not; NULL when out of memory. */
smi_inventory *smi_mockusb_inventory(const smi_opts *o);

/* ---------------- NVIDIA GPUs (smi_nv.c) ---------------- */

typedef struct smi_nv_gpu {
  char dev[48];                /* "NVK+NV:0" */
  int err;                     /* 0, or the open/query error (msg) */
  char msg[512];
  bg_nv_query q;
} smi_nv_gpu;

typedef struct smi_nv_inventory {
  bool searched;               /* false: the selector names no NV device */
  char iface[16];              /* "NVK", "MOCKNVK" */
  int err;                     /* the listing failed (msg) */
  char msg[512];
  smi_nv_gpu *gpus;
  size_t n;
} smi_nv_inventory;

/* The NVIDIA GPUs of o's selector (none: NVK; NV / NVK+NV / MOCKNVK+NV[:INDEX]), each opened and queried, then
 * closed. 0, or a negative BG_E* code with inv->msg. */
int smi_nv_collect(const smi_opts *o, smi_nv_inventory *inv);
void smi_nv_free(smi_nv_inventory *inv);
void smi_nv_text(const smi_nv_inventory *inv, FILE *f);
/* "nvidia": {...} or null */
void smi_nv_json(struct jw *w, const smi_nv_inventory *inv);

/* ---------------- commands ---------------- */

int smi_cmd_list(const smi_opts *o);
int smi_cmd_pids(const smi_opts *o);
int smi_cmd_kill_pids(const smi_opts *o);
int smi_cmd_unbind(const smi_opts *o);
int smi_cmd_bind(const smi_opts *o);
int smi_cmd_reset(const smi_opts *o);
int smi_cmd_watch(const smi_opts *o);

#endif
