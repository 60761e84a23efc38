/* hcq/backend.h: the interface a device backend (CPU, am/, nv/) implements, and the recorded
 * queue program it lowers. Internal: not installed. */
#ifndef BG_HCQ_BACKEND_H
#define BG_HCQ_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "baregpu/hcq.h"
#include "hcq/bump.h"
#include "hcq/chip.h"
#include "ir/ir.h"

/* ---------------- memory ---------------- */

/* One allocation as the backend sees it. */
typedef struct bg_mem {
  uint64_t va;        /* device virtual address */
  uint64_t size;
  void *cpu;          /* direct CPU view or NULL */
  void *meta;         /* backend's own */
} bg_mem;

/* The last write of a buffer by some device's queues (hcq/peer.c): the writer's serial (bg_dev.serial: a closed
 * writer's work is complete, since close synchronizes), its timeline signal at the time and the value covering it. */
typedef struct bg_buf_write_dep {
  uint64_t serial;            /* 0: no write recorded */
  bg_dev *dev;
  bg_signal *sig;
  uint64_t value;
  uint64_t epoch;             /* the writer's timeline wraps so far (hcq/peer.c): an older epoch is complete */
} bg_buf_write_dep;

struct bg_buf {
  bg_dev *dev;
  bg_mem mem;
  unsigned flags;
  bg_buf_write_dep writer;    /* bg_buf_mark_written / bg_buf_transfer */
  struct bg_peer_map *peers;  /* mappings into other devices (bg_buf_map_peer), undone by bg_buf_free */
};

/* ---------------- recorded queue programs ---------------- */

enum bg_cmd_op { BG_CMD_WAIT, BG_CMD_SIGNAL, BG_CMD_TIMESTAMP, BG_CMD_BARRIER, BG_CMD_EXEC, BG_CMD_COPY };

/* Every operand is an interned ir expression of dtype UINT64 in the queue's ir context:
 * a CONST, or an expression over DEFINE_VAR nodes whose names are slot names (see below). */
typedef struct bg_cmd {
  enum bg_cmd_op op;
  const ir_node *addr;      /* WAIT/SIGNAL/TIMESTAMP: signal address; COPY: destination */
  const ir_node *value;     /* WAIT/SIGNAL: value; COPY: source */
  uint64_t size;            /* COPY: bytes */
  bg_program *prg;          /* EXEC */
  const ir_node **args;     /* EXEC: prg->nargs operands */
  const ir_node *gsz[3], *lsz[3];
} bg_cmd;

/* Variable slots: 0..BG_MAX_VARS-1 are the user's (bg_var), then the builtins the core binds. */
enum {
  BG_SLOT_TIMELINE_ADDR = BG_MAX_VARS,  /* active timeline signal address */
  BG_SLOT_TIMELINE_VALUE,               /* device's next timeline value at submit */
  BG_SLOT_KARGS_BASE,                   /* address of this submit's kernel-argument block */
  BG_NSLOTS
};

/* ---------------- templates and patches ---------------- */

enum bg_tmpl_section { BG_SEC_CMD = 0, BG_SEC_KARGS = 1 };

/* A patch operand compiled to postfix code over slots (evaluated with uint64 wrap-around). */
enum bg_pop { BG_P_CONST, BG_P_SLOT, BG_P_ADD, BG_P_SUB, BG_P_MUL, BG_P_AND, BG_P_OR, BG_P_XOR,
              BG_P_SHL, BG_P_SHR, BG_P_DIV, BG_P_MOD, BG_P_MAX };
typedef struct bg_pinsn { uint8_t op; uint8_t slot; uint64_t c; } bg_pinsn;

typedef struct bg_patch {
  uint8_t section;          /* enum bg_tmpl_section */
  uint8_t width;            /* 1, 2, 4 or 8 bytes, little-endian */
  uint32_t offset;          /* byte offset in the section */
  uint64_t deps[2];         /* bitmask of slots the value depends on */
  uint32_t code_start, code_len;  /* into bg_tmpl.code */
  uint64_t last;            /* last written value */
} bg_patch;

/* The lowered form of a queue program: command bytes, a kernel-argument block copied to fresh
 * memory at each submit, and the patch records that fill their symbolic fields. */
typedef struct bg_tmpl {
  uint8_t *cmd;  size_t cmd_len, cmd_cap;
  uint8_t *kargs; size_t kargs_len, kargs_cap;
  bg_patch *patches; size_t npatches, patches_cap;
  bg_pinsn *code; size_t ncode, code_cap;
  bool claims_timeline;     /* signals the timeline value: submit advances the timeline */
  ir_ctx *ir;               /* the queue's context (operands live there) */
  const ir_node *slot_var[BG_NSLOTS];  /* DEFINE_VAR node bound to each slot, or NULL */
} bg_tmpl;

/* Reserve n zeroed bytes at the end of a section; returns their offset or a negative error. */
long bg_tmpl_reserve(bg_tmpl *t, enum bg_tmpl_section sec, size_t n, size_t align);
/* Write operand v (width bytes) at offset: constants are written now, anything else becomes a
 * patch. Fails with a message if a constant does not fit in width bytes. */
int bg_tmpl_put(bg_tmpl *t, enum bg_tmpl_section sec, size_t offset, unsigned width, const ir_node *v);
void bg_tmpl_free(bg_tmpl *t);
/* Append n dwords to the command section: their byte offset, or a negative error. */
long bg_tmpl_emit_dw(bg_tmpl *t, const uint32_t *dw, unsigned n);
/* bg_tmpl_put at dword dw of the command-section block that starts at byte off. */
int bg_tmpl_put_dw(bg_tmpl *t, long off, unsigned dw, unsigned width, const ir_node *v);
/* The operand "address of this submit's kernel-argument block + kargs_offset" (for EXEC lowering). */
const ir_node *bg_tmpl_kargs_addr(bg_tmpl *t, size_t kargs_offset);

/* ---------------- peer access ---------------- */

/* Where another device's engines reach an allocation (bg_backend_ops.peer_export): bus addresses for a GPU (one
 * contiguous range, or one address per 4 KiB page), the CPU address for the CPU device. */
typedef struct bg_peer_pages {
  char func[32];              /* the owner's PCI function ("0000:03:00.0"); "" when it has none */
  bool vram;                  /* device memory reached through the owner's BAR (else host memory) */
  uint64_t size;              /* bytes a mapping covers (whole 4 KiB pages for a GPU) */
  uint64_t bus;               /* contiguous: bus address of the first byte (pages == NULL) */
  const uint64_t *pages;      /* else npages bus addresses, one per 4 KiB page (owned by the allocation) */
  size_t npages;
  uint64_t host;              /* CPU device: the allocation's CPU address */
} bg_peer_pages;

/* ---------------- backend operations ---------------- */

typedef struct bg_queue_hw bg_queue_hw;   /* backend's per-queue state */

/* AMD's limit on threads per work-group (LLVM AMDGPUUsage: amdgpu-flat-work-group-size at most 1024); the CPU device
 * uses it too, so a program that runs on one runs on the other. */
#define BG_DEFAULT_MAX_WORKGROUP 1024u

typedef struct bg_backend_ops {
  const char *kind;                 /* "CPU", "AMD", "NV" */
  double ticks_per_us;
  bool has_copy_queue;
  int (*alloc)(bg_dev *d, uint64_t size, unsigned flags, bg_mem *out);
  void (*free)(bg_dev *d, bg_mem *m);
  /* Host <-> device copies; NULL means through the CPU view after a synchronize. */
  int (*copyin)(bg_dev *d, bg_mem *dst, uint64_t off, const void *src, uint64_t n);
  int (*copyout)(bg_dev *d, const bg_mem *src, uint64_t off, void *dst, uint64_t n);
  /* One hardware queue per kind and device, created on first use: every bg_queue of that kind
   * submits into it, so submissions of one kind execute in submission order. */
  int (*queue_create)(bg_dev *d, enum bg_queue_kind kind, bg_queue_hw **out);
  void (*queue_destroy)(bg_dev *d, bg_queue_hw *hq);
  /* Encode the recorded commands into t (bg_tmpl_put for every operand). Called once per recording. */
  int (*lower)(bg_dev *d, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t);
  /* Push the patched command bytes to the hardware ring and ring the doorbell. */
  int (*submit)(bg_dev *d, bg_queue_hw *hq, const void *cmd, size_t len);
  int (*program_load)(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, void **handle);
  void (*program_free)(bg_dev *d, void *handle);
  /* Optional, for memory without a direct CPU view (a GPU behind a USB bridge: every access is a bridge request).
   * When mem.cpu is NULL the core reads and writes signals and kernel arguments through these, without
   * synchronizing (unlike copyin/copyout). NULL: such memory has no CPU access. */
  int (*mem_read)(bg_dev *d, const bg_mem *m, uint64_t off, void *dst, uint64_t n);
  int (*mem_write)(bg_dev *d, const bg_mem *m, uint64_t off, const void *src, uint64_t n);
  /* Called by waits after 200 ms (or BG_HANG_CHECK_MS, when less) without progress; may return -BG_EHANG with a
   * fault or hang report (a queue whose read pointer stands still with work pending, hcq.h "Hangs"). */
  int (*sleep)(bg_dev *d, int ms);
  /* Optional: a cheap check for faults latched by any queue of the device (bg_dev_synchronize calls it after the
   * timeline wait while work submitted since the last conclusive check may be pending): -BG_EHANG with a report,
   * 0 when every queue is idle and nothing faulted, 1 when nothing faulted yet but a queue still has work.
   * NULL: bg_dev_synchronize calls sleep(d, 0) every time. */
  int (*fault_check)(bg_dev *d);
  /* Optional: reset every hardware queue of the device after a fault or timeout (stop it, reset its ring pointers,
   * clear latched fault state) so the same device runs work again (bg_dev_recover). NULL: not supported. */
  int (*recover)(bg_dev *d);
  /* Optional: the largest work-group (threads) a loaded program supports, from its code object; 0: no own limit. */
  uint32_t (*program_max_workgroup)(bg_dev *d, void *handle);
  /* Optional peer access between two devices of this backend (hcq/peer.c; NULL: none, transfers are staged).
   * peer_export: where other devices reach m of owner (0, or -BG_ENOTSUP with the reason: behind a USB bridge, BAR0
   * smaller than VRAM). peer_reach: whether d's engines reach owner's memory (device memory when vram, else host
   * memory): 0, or -BG_ENOTSUP with the reason written to why[0..n) (no bg_error: a question, not a failure).
   * peer_map: map p into d's GPU address space at a VA of d's own (*va: the first byte); peer_unmap undoes it. */
  int (*peer_export)(bg_dev *owner, const bg_mem *m, bg_peer_pages *out);
  int (*peer_reach)(const bg_dev *d, const bg_dev *owner, bool vram, char *why, size_t n);
  int (*peer_map)(bg_dev *d, const bg_peer_pages *p, uint64_t *va);
  void (*peer_unmap)(bg_dev *d, uint64_t va, uint64_t size);
  /* Largest work-group size (threads) of the device; 0: BG_DEFAULT_MAX_WORKGROUP. */
  uint32_t max_workgroup;
  void (*close)(bg_dev *d);
} bg_backend_ops;

/* ---------------- device core state ---------------- */

struct bg_signal {
  bg_dev *dev;
  volatile uint64_t *cpu;   /* value at cpu[0], timestamp at cpu[1]; NULL: through ops->mem_read/mem_write */
  uint64_t va;
  struct bg_sigpage *page;
  unsigned slot;
};

struct bg_program {
  bg_dev *dev;
  void *handle;
  char *name;
  unsigned nargs;
  uint8_t *arg_sizes;
  uint32_t *arg_offsets;
  unsigned kargs_size;
  uint32_t max_workgroup;     /* threads per work-group: min(device, code object) */
  bg_queue *run_q;            /* recorded once by bg_program_run */
  bg_signal *run_ts[2];
};

struct bg_dev {
  uint64_t serial;              /* unique per bg_dev in the process, never reused (hcq/peer.c liveness checks) */
  const bg_backend_ops *ops;
  void *priv;                   /* backend's own */
  char name[48];
  char arch[32];
  bg_target target;
  bg_signal *timeline, *timeline_shadow;
  uint64_t timeline_value;      /* next value to signal */
  bg_buf *kargs_buf;            /* wrapping bump arena for kernel arguments */
  bg_bump kargs;
  struct bg_sigpage *sigpages;  /* signal pool */
  bg_queue_hw *hwq[2];          /* hardware queue per enum bg_queue_kind */
  int error;                    /* latched error state (negative code) or 0 */
  bool closing;                 /* bg_dev_close has synchronized and stops the queues: frees release at once */
  struct bg_buf_node *deferred; /* freed buffers the queues may still use, released when they retire (dev.c) */
  uint64_t submits;             /* submits so far; fault_checked: the count at the last fault check */
  uint64_t fault_checked;
  char error_msg[512];
};

/* Interfaces register the kinds they can open. */
typedef struct bg_iface {
  const char *kind;                /* "CPU", "AMD", "NV" */
  const char *name;                /* "" for the CPU device, "PCI", "USB", "MOCKPCI", ... */
  bool mock;                       /* never chosen unless named */
  int (*count)(void);              /* visible devices (0 when none; negative on error) */
  int (*open)(bg_dev *d, int index);  /* fill d->ops, d->priv, d->arch */
  /* The backend's entry for a PCI id, or NULL (NULL member: the interface knows no PCI ids). bg_chip_lookup walks
   * the interfaces through it, so the PCI scan and the tools read the backend's one table. */
  const bg_chip_info *(*chip_lookup)(uint16_t vendor, uint16_t device);
} bg_iface;

/* The interfaces built into this library, in order: bg_builtin_ifaces is generated by meson (bg_backends.c from
 * hcq/backends.c.in) from the symbols each backend's meson.build appends to backend_ifaces; bg_ifaces (registry.c)
 * hands it out. The DEV parser, its messages and the tools read only this table. */
extern const bg_iface *const bg_builtin_ifaces[];
extern const size_t bg_builtin_niface;
size_t bg_ifaces(const bg_iface *const **out);

/* The 32-bit word at GPU address va when it lies in one of d's signal pages (1), read through the CPU view or
 * ops->mem_read; 0 when va is not in d's signal pool; negative on a read error. For a backend's hang check: is the
 * wait a stalled queue sits at satisfied already? */
int bg_signal_pool_read32(bg_dev *d, uint64_t va, uint32_t *out);

/* Bump allocation in a wrapping arena (kernel arguments): offset or negative error. *cpu is NULL when the arena
 * has no CPU view (write with bg_kargs_write). */
int bg_kargs_alloc(bg_dev *d, uint64_t size, uint64_t *va, void **cpu);
/* Write a kernel-argument block at va through the CPU view or the backend's mem_write. */
int bg_kargs_write(bg_dev *d, uint64_t va, const void *src, uint64_t n);

#endif
