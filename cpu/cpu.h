/* cpu/cpu.h: the CPU device backend (internal to cpu_*.c).
 *
 * Memory is one large anonymous reservation managed by the TLSF allocator: device address = host
 * address (unified addressing). Each queue is a worker thread consuming a ring of fixed 64-byte
 * command slots (tinygrad's CPU device, tinygrad/runtime/ops_cpu.py): submit copies the lowered slots into the
 * ring and publishes `put`; the worker executes them in order and publishes `done`. */
#ifndef BG_HCQ_CPU_H
#define BG_HCQ_CPU_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/host_obj.h"
#include "hcq/backend.h"
#include "hcq/tlsf.h"

enum { CPU_SLOT_SIZE = 64, CPU_RING_SLOTS = 16384 };

/* Opcodes carry a tag so a zeroed or garbage slot is recognized as unknown and faults the queue. */
enum cpu_op {
  CPU_OP_WAIT = 0xb9c0de01u,
  CPU_OP_SIGNAL,
  CPU_OP_TIMESTAMP,
  CPU_OP_BARRIER,
  CPU_OP_COPY,
  CPU_OP_EXEC,
};

/* One ring slot. Operand fields are filled by bg_tmpl_put at the offsets below. */
typedef struct cpu_slot {
  uint32_t op, reserved0;
  uint64_t a;          /* WAIT/SIGNAL/TIMESTAMP: signal address; COPY: destination; EXEC: entry */
  uint64_t b;          /* WAIT/SIGNAL: value; COPY: source; EXEC: kernel-argument block address */
  union {
    uint64_t size;     /* COPY: bytes */
    struct { uint32_t gsz[3], lsz[3]; } grid;   /* EXEC */
  } c;
  uint64_t prg;        /* EXEC: the cpu_prog, for logs and fault reports */
  uint64_t reserved1;
} cpu_slot;
_Static_assert(sizeof(cpu_slot) == CPU_SLOT_SIZE, "a CPU queue slot is 64 bytes");

/* Kernel entry ABI (baregpu/compile.h). */
typedef void (*cpu_entry_fn)(const void *kargs, const uint32_t gid[3], const uint32_t gsz[3], const uint32_t lsz[3]);

typedef struct cpu_prog {
  cpu_entry_fn fn;
  void *dl;            /* an ET_DYN shared object: its dlopen handle; NULL for an ET_REL object (obj) */
  int fd;              /* the memfd stays open while loaded: its /proc path names the library uniquely */
  bg_host_obj obj;     /* an ET_REL relocatable object loaded by formats/host_obj.c */
  char name[64];
  _Atomic uint64_t ns_per_gid;      /* last launch's time per work-group (0: none yet): small grids run inline */
  struct cpu_prog *next_deferred;   /* freed while a queue still had work: unloaded at device close */
} cpu_prog;

/* Fault containment for one worker (cpu_fault.c): while `armed`, a SIGSEGV/SIGBUS/SIGFPE/SIGILL
 * raised by the kernel on this thread jumps back to `jmp` with what happened. */
typedef struct cpu_fault_ctx {
  sigjmp_buf jmp;
  volatile sig_atomic_t armed;
  int sig, code;
  uintptr_t addr;      /* si_addr: the data address (SEGV/BUS) or the instruction (FPE/ILL) */
  uintptr_t pc;        /* the faulting instruction, 0 where the architecture is not known */
  uint32_t gid[3];     /* the work-group being run (outside the jumping frame, so it survives the jump) */
  void *altstack;      /* signal stack of the worker: a kernel's stack overflow is reported too */
  size_t altstack_size;
} cpu_fault_ctx;

typedef struct cpu_dev cpu_dev;
typedef struct cpu_pool cpu_pool;   /* cpu_pool.c */
enum { CPU_MAX_THREADS = 256 };

struct bg_queue_hw {
  /* Producer side (submit). */
  alignas(64) _Atomic uint64_t put;
  /* Consumer side (worker). */
  alignas(64) _Atomic uint64_t done;
  _Atomic uint64_t wait_addr, wait_value;   /* the WAIT the worker is blocked in (0: none), for reports */
  alignas(64) atomic_uint wake_seq;         /* futex word: bumped to wake a sleeping worker */
  atomic_int sleeping;
  atomic_bool stop;
  cpu_dev *cd;
  cpu_slot *ring;
  uint32_t nslots;
  enum bg_queue_kind kind;
  char name[24];                            /* "compute queue 0" */
  pthread_t thread;
  _Atomic uint64_t exec_since_ns;           /* CLOCK_MONOTONIC start of the running kernel, 0: none */
  _Atomic(const cpu_prog *) exec_prg;       /* the running kernel, for reports */
  cpu_fault_ctx fault;
  struct bg_queue_hw *next;                 /* cpu_dev's list of live queues */
};

struct cpu_dev {
  uint8_t *base;       /* the reservation: device memory is [base, base+size) */
  uint64_t size;
  bg_tlsf *tlsf;
  pthread_mutex_t mem_lock;
  pthread_mutex_t lock;                     /* queue list, queue numbering, fault message */
  bg_queue_hw *queues;
  unsigned nqueues[2];
  atomic_bool faulted;
  char fault_msg[512];
  cpu_prog *deferred;                       /* programs freed while a queue was busy */
  unsigned abandoned;                       /* workers that could not be stopped: leak what they use */
  unsigned nthreads;                        /* BG_CPU_THREADS: threads running one launch's grid, its queue's included */
  _Atomic(cpu_pool *) pool;                 /* made at the first launch that can use it (cd->lock) */
  bool pool_failed;
};

/* cpu_dev.c */
extern const bg_iface bg_cpu_iface;
bool bg_cpu_in_range(const cpu_dev *cd, uint64_t addr, uint64_t n);
/* Latch a fault (the first one wins); sleep() reports it as -BG_EHANG. */
void bg_cpu_fault(cpu_dev *cd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cpu_peer.c: bg_backend_ops.peer_* (hcq/backend.h), and whether [addr, addr+n) lies in a peer window mapped into
 * cd (bg_cpu_in_range's second chance) */
int bg_cpu_peer_export(bg_dev *owner, const bg_mem *m, bg_peer_pages *out);
int bg_cpu_peer_reach(const bg_dev *d, const bg_dev *owner, bool vram, char *why, size_t n);
int bg_cpu_peer_map(bg_dev *d, const bg_peer_pages *p, uint64_t *va);
void bg_cpu_peer_unmap(bg_dev *d, uint64_t va, uint64_t size);
bool bg_cpu_peer_in_range(const cpu_dev *cd, uint64_t addr, uint64_t n);
/* cpu_queue.c */
int bg_cpu_queue_create(bg_dev *d, enum bg_queue_kind kind, bg_queue_hw **out);
void bg_cpu_queue_destroy(bg_dev *d, bg_queue_hw *hq);
int bg_cpu_submit(bg_dev *d, bg_queue_hw *hq, const void *cmd, size_t len);
/* cpu_worker.c */
void *bg_cpu_worker(void *arg);
void bg_cpu_wake(bg_queue_hw *hq);
/* Under AddressSanitizer: unpoison the calling thread's stack (a cancelled thread's stack keeps the redzones of the
 * frames the unwinder skipped). */
void bg_cpu_unpoison_stack(void);
/* cpu_pool.c: BG_CPU_THREADS (1..256, unset: the online CPUs). */
int bg_cpu_threads(unsigned *out);
/* The device's pool for one launch, NULL when there is none or another queue's launch holds it (run inline). */
cpu_pool *bg_cpu_pool_acquire(cpu_dev *cd);
/* Run the grid (total work-groups) with the pool, hq's worker taking part, and give the pool back. Returns false
 * when a work-group faulted: what happened and its work-group are in what / fault_gid. *leader_gids: how many the
 * caller's thread ran. Cancellable: a pool thread's kernel that never returns is cancelled with the caller. */
bool bg_cpu_pool_run(cpu_pool *p, bg_queue_hw *hq, cpu_entry_fn fn, const void *kargs, const uint32_t gsz[3],
                     const uint32_t lsz[3], uint64_t total, uint64_t *leader_gids, char *what, size_t whatlen,
                     uint32_t fault_gid[3]);
/* Stop and join the pool threads (device close, after the queues). */
void bg_cpu_pool_destroy(cpu_dev *cd);
/* cpu_fault.c: the process-wide handlers (installed once; the application's are chained to), and
 * per worker: its signal stack, the synchronous signals unblocked, the context the handler uses. */
int bg_cpu_fault_install(void);
int bg_cpu_fault_thread_init(cpu_fault_ctx *f);
void bg_cpu_fault_thread_fini(cpu_fault_ctx *f);
/* After the jump: unblock the signal again and describe the fault ("SIGSEGV (address not mapped)
 * accessing 0x1230, at add_k+0x14"). */
void bg_cpu_fault_describe(const cpu_fault_ctx *f, char *buf, size_t n);
/* cpu_recover.c: bg_backend_ops.recover */
int bg_cpu_recover(bg_dev *d);
/* cpu_lower.c */
int bg_cpu_lower(bg_dev *d, bg_queue_hw *hq, const bg_cmd *cmds, size_t ncmds, bg_tmpl *t);
/* cpu_program.c */
int bg_cpu_program_load(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, void **handle);
void bg_cpu_program_free(bg_dev *d, void *handle);

#endif
