/* baregpu/hcq.h: hardware command queues (HCQ) — devices, buffers, signals, queues, programs.
 *
 * The model follows tinygrad's HCQ: a device owns a timeline signal; work is recorded into a
 * queue (wait, signal, timestamp, memory_barrier, exec, copy) and submitted to the hardware ring.
 * Operands may be symbolic: constants, buffer addresses, kernel variables and timeline values are
 * ir expressions. The first submit lowers the recorded program once into a command template plus
 * patch records; every later submit evaluates only the patches whose variables changed. Recorded
 * graphs (JIT) are replayed this way.
 *
 * Errors: the rule of baregpu/error.h: 0 or a negative BG_E* code with a message from bg_last_error(); values
 * through out-parameters; recording calls keep their first error on the queue for bg_queue_submit.
 *
 * Ownership: every object is made by one call and freed by one (bg_dev_open/bg_dev_close, bg_buf_alloc/bg_buf_free,
 * bg_signal_new/bg_signal_free, bg_queue_new/bg_queue_free, bg_program_load/bg_program_free); the caller owns
 * what it made and frees it before closing the bg_dev it came from (bg_dev_close frees leftovers, logged). Strings
 * and pointers returned by getters belong to the object and live as long as it does.
 *
 * Thread safety (what the library guarantees, and what the caller serializes):
 *   - bg_dev_open and bg_dev_close may be called from any number of threads at once, for the same
 *     device or for different ones. Every bg_dev_open returns a bg_dev of its own; opens of a GPU that
 *     is already open in the process share it (one boot, one lock file, one USB bridge), and the last
 *     bg_dev_close of it shuts it down. Opens and closes of one GPU are serialized inside the library,
 *     so an open waits while another thread boots or shuts down that GPU.
 *   - Different bg_devs may be used from different threads at once, also when they are the same
 *     GPU: the library serializes what they share (hardware rings, memory and address-space
 *     allocators, scratch, the interrupt ring, the USB bridge's requests).
 *   - One bg_dev and everything made from it (its buffers, signals, queues, programs, and its
 *     timeline) belong to one thread at a time: the caller serializes every call on them (a mutex of
 *     its own, or one bg_dev per thread). Two threads submitting on two queues of the same bg_dev, or
 *     one freeing a buffer the other copies into, is a data race on the bg_dev's timeline and its list of freed
 *     buffers waiting for their work to retire.
 *   - Exception: a signal's value and timestamp may be read, set and waited for from any thread
 *     (bg_signal_value, bg_signal_set, bg_signal_wait, bg_signal_timestamp_*) while its owner
 *     submits; creating and freeing signals stays with the owner.
 *   - bg_dev_close must not race with other calls on the same bg_dev or its objects (the caller
 *     serializes it like any other call), and the objects made from a bg_dev are freed before it.
 *   - Errors are per thread: bg_last_error() returns the message of the calling thread's last error.
 *   - Environment variables are read while devices open (DEV, BG_*): a program that calls setenv
 *     must not do so while another thread opens a device. */
#ifndef BAREGPU_HCQ_H
#define BAREGPU_HCQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "baregpu/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bg_dev bg_dev;
typedef struct bg_buf bg_buf;
typedef struct bg_signal bg_signal;
typedef struct bg_queue bg_queue;
typedef struct bg_program bg_program;

/* ---------------- device selection: DEV=[IFACE[:INDICES]+]KIND[:INDEX] ---------------- */

typedef struct bg_target {
  char kind[16];      /* "CPU", "AMD", "NV" (upper-cased) */
  char iface[16];     /* "" (try every non-mock interface), "PCI", "USB", "NVK", "MOCKPCI", ... */
  char indices[64];   /* visibility filter: "" (all), "0,2" or "1-3" */
  int index;          /* device index within the visible list, default 0 */
} bg_target;

/* Parse one target into the caller's *out. Errors name the string, what is wrong, and the valid forms.
 * Thread safety (bg_target_*): pure functions, callable from any thread. */
int bg_target_parse(const char *s, bg_target *out);
/* Format a target back to its canonical DEV= string into the caller's buf of n bytes (truncated to fit;
 * cannot fail). */
void bg_target_format(const bg_target *t, char *buf, size_t n);
/* The valid forms, for error messages and --help (static storage). */
const char *bg_target_forms(void);

/* Open a device. `dev` is a DEV= string; NULL uses the DEV environment variable, and without it the
 * first GPU found by a non-mock interface, else CPU. Thread safety: callable from several threads at
 * once; each call gets its own bg_dev, and a GPU already open in the process is shared, not opened
 * again (see "Thread safety" above). */
int bg_dev_open(const char *dev, bg_dev **out);    /* *out: the caller's, freed by bg_dev_close */
/* Synchronizes (a wait gives up after BG_WAIT_TIMEOUT_MS without progress), then frees everything the
 * device owns, and always returns; the last close of a shared GPU shuts it down. Close has no result: a
 * failure is left in bg_last_error() and logged. On the CPU device a kernel still running after the wait
 * timeout (it never returns) gets its worker thread cancelled, and the message names the kernel;
 * generated kernels take no locks and allocate nothing, so stopping one anywhere is safe.
 * Thread safety: closes of different bg_devs (of the same GPU or not) may run at once and alongside
 * other threads' opens; a close must not race with other calls on the same bg_dev. */
void bg_dev_close(bg_dev *d);
/* Getters of a bg_dev (cannot fail; strings live as long as d; any thread while d is open). */
const char *bg_dev_name(const bg_dev *d);        /* canonical, e.g. "CPU", "MOCKPCI+AMD:0" */
const char *bg_dev_arch(const bg_dev *d);        /* "host", "gfx1100", ... */
bool bg_dev_has_copy_queue(const bg_dev *d);
/* Raw timestamp ticks per microsecond (CPU: 1000, AMD: 100). */
double bg_dev_ticks_per_us(const bg_dev *d);

/* Enumerate openable devices: every registered kind and interface (mocks only when
 * include_mock), by canonical name into the caller's names[0..max). Returns the count found (may exceed max);
 * cannot fail: an interface whose scan fails lists nothing and its message is logged (BG_DEBUG=1).
 * Thread safety: any thread. */
int bg_dev_list(bool include_mock, char (*names)[48], size_t max);

/* ---------------- buffers ---------------- */

enum bg_buf_flags {
  BG_BUF_HOST = 1u << 0,        /* system memory mapped for the device */
  BG_BUF_UNCACHED = 1u << 1,
  BG_BUF_CPU_ACCESS = 1u << 2,  /* needs a CPU view */
  BG_BUF_CONTIGUOUS = 1u << 3,
  BG_BUF_ZERO = 1u << 4,        /* zero-filled */
};

/* *out: the caller's, freed by bg_buf_free before bg_dev_close. When the device is out of memory while freed
 * buffers wait for their work to retire, the allocation synchronizes once and tries again. */
int bg_buf_alloc(bg_dev *d, uint64_t size, unsigned flags, bg_buf **out);
/* Free b without waiting for the device: b stops being a valid operand at once (a copy recorded or re-checked
 * afterwards fails: no live allocation), but its memory goes back to the allocator only when the work submitted
 * before the free retires, i.e. the device timeline reaches the last value claimed so far (checked at later
 * allocations, submits and frees, at bg_dev_synchronize, bg_dev_recover and bg_dev_close). Work submitted before
 * the free may still use b. Cannot fail; NULL is a no-op. Thread safety: the owner's (see above). */
void bg_buf_free(bg_buf *b);
/* Getters (cannot fail). */
uint64_t bg_buf_va(const bg_buf *b);             /* device virtual address */
uint64_t bg_buf_size(const bg_buf *b);
void *bg_buf_cpu(const bg_buf *b);               /* direct CPU view owned by b, or NULL */
bg_dev *bg_buf_dev(const bg_buf *b);
/* Host <-> device copies through the device's copy path (synchronous); src and dst stay the caller's. */
int bg_buf_write(bg_buf *b, uint64_t off, const void *src, uint64_t n);
int bg_buf_read(const bg_buf *b, uint64_t off, void *dst, uint64_t n);

/* ---------------- symbolic operands ---------------- */

struct ir_node;
/* A queue operand: a constant (sym == NULL) or an ir expression owned by the queue's context (freed with the queue
 * by bg_queue_free). The functions making operands cannot fail: an error (bad slot, out of
 * host memory) is kept on the queue like a recording error and returned by bg_queue_submit. */
typedef struct bg_val {
  const struct ir_node *sym;
  uint64_t c;
} bg_val;

static inline bg_val bg_const(uint64_t c) { bg_val v = {NULL, c}; return v; }
bg_val bg_addr(const bg_buf *b, uint64_t off);   /* constant address of b + off */

/* Kernel variable number `slot` (0..BG_MAX_VARS-1) of queue q, bound at every submit from the
 * vars array; name and bounds are for printing and checks. */
#define BG_MAX_VARS 64
bg_val bg_var(bg_queue *q, unsigned slot, const char *name, uint64_t min, uint64_t max);
/* Address of the device's active timeline signal, and the device's next timeline value plus delta,
 * both bound at submit. A program that signals bg_timeline_value(q, 0) claims that value: each
 * submit advances the device timeline by one. */
bg_val bg_timeline_addr(bg_queue *q);
bg_val bg_timeline_value(bg_queue *q, int64_t delta);
/* Expressions over operands (in q's context). */
bg_val bg_add(bg_queue *q, bg_val a, bg_val b);
bg_val bg_mul(bg_queue *q, bg_val a, bg_val b);

/* ---------------- signals: 16 bytes, u64 value at +0, u64 raw timestamp at +8 ---------------- */

/* *out: the caller's, freed by bg_signal_free before bg_dev_close (the device's timeline is the device's). */
int bg_signal_new(bg_dev *d, uint64_t init, bg_signal **out);
void bg_signal_free(bg_signal *s);
uint64_t bg_signal_va(const bg_signal *s);
bg_val bg_sig(const bg_signal *s);               /* bg_const(bg_signal_va(s)) */
/* Value and timestamp reads and the value write. On a device without a CPU view of signal memory (a GPU behind a
 * USB bridge) each is a device access that can fail: -BG_EIO (or the backend's code) naming the signal, and *out
 * untouched. Thread safety: any thread, also while the owner submits (see above). */
int bg_signal_value(const bg_signal *s, uint64_t *out);
int bg_signal_set(bg_signal *s, uint64_t v);
int bg_signal_timestamp_raw(const bg_signal *s, uint64_t *out);
int bg_signal_timestamp_us(const bg_signal *s, double *out);
/* Wait until value >= v. The timeout restarts whenever the value changes; on timeout the message
 * names the signal, the expected and the seen value. timeout_ms <= 0 uses BG_WAIT_TIMEOUT_MS or
 * 30000. */
int bg_signal_wait(const bg_signal *s, uint64_t v, int timeout_ms);

/* The device timeline: signal value reaches timeline_value-1 when all submitted work is done. The signal is the
 * device's (never free it) and changes when the timeline wraps: call bg_dev_timeline again after a synchronize.
 * These cannot fail; they belong to the owner's thread. */
bg_signal *bg_dev_timeline(bg_dev *d);
uint64_t bg_dev_timeline_value(const bg_dev *d);  /* the next value to signal */
uint64_t bg_dev_next_timeline(bg_dev *d);         /* returns the next value and advances it */
/* Wait for all submitted work; wraps the timeline to 1 after it passes 2^31. After new submits it also checks
 * for faults latched by ANY queue of the device, including queues that never signal the timeline (an SDMA page
 * fault of a copy queue signalling its own signal): such a fault is returned as -BG_EHANG naming the address. A
 * failed sync latches the device's error state: every later sync (and bg_queue_new/submit) fails with the same
 * message until bg_dev_recover. */
int bg_dev_synchronize(bg_dev *d, int timeout_ms);
/* Hangs: a wait without progress asks the backend to look for faults and hangs (after 200 ms, or BG_HANG_CHECK_MS
 * when less). AMD reports -BG_EHANG for a GPU page fault or shader error interrupt (with the fault address) and for a
 * queue with work pending whose read pointer has not moved for BG_HANG_CHECK_MS (default 10000) while the packet
 * there is not a memory wait whose condition is still unmet: an endless kernel, a lost doorbell, a stuck engine.
 * The message names the queue, the packet at its read pointer and the packet's GPU address. Recovery is not
 * automatic: the error is latched and returned by every synchronize until the caller calls bg_dev_recover (only the
 * caller knows whether dropping the work in flight is acceptable); the device stays open throughout.
 *
 * Recovery after a timeout or fault, without closing the device: THE one call that does it. Resets every hardware
 * queue of the device (AMD: the compute HQD is dequeued (CP_HQD_DEQUEUE_REQUEST, which also stops the waves of a
 * kernel still running) and its MQD loaded again, the SDMA engine halted, soft-reset and its ring set up again,
 * their ring pointers zeroed, the latched VM fault cleared; when a queue does not stop, a mode1 reset of the GPU
 * and its bring-up again, in place, with buffers and mappings kept; CPU: each queue's worker is stopped and restarted with an
 * empty ring), drops whatever was pending on them, clears the latched error and declares the timeline reached.
 * Buffers, signals, programs and recorded queues stay valid and can be submitted again; signals the dropped work
 * would have written keep their old values. AMD devices opened twice in one process share the queues: recovery
 * resets them for both. -BG_ENOTSUP when the backend cannot reset its queues (close and reopen instead); on the
 * CPU device -BG_ETIMEDOUT when a kernel does not return within BG_WAIT_TIMEOUT_MS. */
int bg_dev_recover(bg_dev *d);

/* ---------------- several devices: peer access, transfers, cross-device dependencies ----------------
 *
 * Devices opened together (AMD:0 and AMD:1, MOCKPCI+AMD:0 and :1 with MOCKGPU_COUNT=2, two CPU devices) each keep
 * their own queues and timeline. One device's engines reach another's memory through a peer mapping: the other
 * GPU's VRAM through its BAR (peer-to-peer over PCIe), host memory through its pages' bus addresses. Where a
 * mapping is impossible (GPUs under different root complexes, a GPU behind a USB bridge, a BAR smaller than VRAM,
 * backends of different kinds) transfers go through pinned host memory instead; BG_DEBUG=1 logs which path a
 * transfer took and why.
 *
 * Dependencies across devices: every buffer remembers its last write by a device's queues (the writer device and the
 * writer's timeline value that covers it). bg_buf_transfer records it for its destination; a program that writes a
 * buffer records it with bg_buf_mark_written. Before device B's queues read a buffer A wrote, bg_dev_wait_bufs makes
 * B's compute queue wait, on the GPU, for exactly A's value (A's timeline signal mapped into B), not for all of A's
 * work; host reads (bg_buf_read) and bg_buf_free wait for it on the host.
 * Thread safety: the calls below touch both devices named; the caller serializes them with other calls on either. */

/* Whether d's engines can reach peer's memory directly. true, or false with the reason written to why[0..n) (why may
 * be NULL): "different root complexes (pci0000:00, pci0000:40)", "peer is behind a USB bridge", ... A device reaches
 * its own memory (true). Cannot fail. */
bool bg_dev_can_p2p(const bg_dev *d, const bg_dev *peer, char *why, size_t n);
/* Map buffer b, allocated on another device, into d's GPU address space; *va is its address for d's queues and
 * kernels. b's device memory is mapped through its owner's BAR (bg_dev_can_p2p must hold: else -BG_ENOTSUP with the
 * reason), its host memory (BG_BUF_HOST) through its pages' bus addresses. A buffer of d itself gives its own va;
 * mapping again gives the same va. The mapping lives until b is freed (bg_buf_free unmaps it from every device) or d
 * closes. */
int bg_buf_map_peer(bg_buf *b, bg_dev *d, uint64_t *va);
/* The address of signal s for d's queues (bg_queue_wait/signal on d): its own va when s is d's, else its signal page
 * mapped into d as by bg_buf_map_peer. Signals live in host memory, so every PCI GPU can map them; -BG_ENOTSUP when d
 * cannot reach s's memory (a GPU behind a USB bridge). */
int bg_signal_va_on(const bg_signal *s, bg_dev *d, uint64_t *va);
/* Copy n bytes from src+soff to dst+doff, devices of any kind (the same device: its copy queue). Asynchronous: it
 * runs after all work submitted so far on both devices that may use the ranges (the copy waits for both timelines)
 * and is recorded as dst's last write (bg_dev_wait_bufs, bg_buf_read wait for it). Peer-to-peer through the source
 * device's copy queue when bg_dev_can_p2p(src dev, dst dev) holds (dst mapped into src), else staged through pinned
 * host memory in chunks (device -> host and host -> device copies overlapped), which returns when the data is in
 * dst. Ranges are checked (-BG_EINVAL naming the buffer and the overrun). */
int bg_buf_transfer(bg_buf *dst, uint64_t doff, bg_buf *src, uint64_t soff, uint64_t n);
/* How the calling thread's last bg_buf_transfer went (for tests and benches; cannot fail). */
typedef struct bg_transfer_info {
  bool p2p;            /* true: peer-to-peer; false: staged through host memory */
  char why[160];       /* the fallback's reason ("" for p2p) */
  uint64_t bytes;
} bg_transfer_info;
void bg_transfer_last(bg_transfer_info *out);
/* Record that the work submitted so far on d (up to d's last claimed timeline value) writes b; b may belong to any
 * device. Cannot fail. */
void bg_buf_mark_written(bg_buf *b, bg_dev *d);
/* Make the work d submits next on its compute queue wait for the last recorded writes of bufs[0..n) by other devices
 * (one GPU-side wait per writer, for the newest value among its writes; writes already complete cost a signal read
 * and no wait). 0, or the error of the wait's submit; -BG_ENOTSUP naming the writer when d cannot see its signals
 * (then it waits on the host instead and returns 0). */
int bg_dev_wait_bufs(bg_dev *d, bg_buf *const *bufs, size_t n);

/* ---------------- programs ---------------- */

typedef struct bg_program_info {
  const char *name;           /* entry symbol */
  unsigned nargs;             /* kernel arguments: buffers first, then scalars */
  const uint8_t *arg_sizes;   /* bytes per argument (8 for buffer addresses, 4 for int32 ...) */
} bg_program_info;

/* Load a binary the device's compiler produced (CPU: a shared object's bytes; AMD: a code object). */
/* bin and info stay the caller's (copied); *out: the caller's, freed by bg_program_free before bg_dev_close. */
int bg_program_load(bg_dev *d, const void *bin, size_t size, const bg_program_info *info, bg_program **out);
/* Synchronizes the device first (queues recorded with p must not be submitted again). Cannot fail. */
void bg_program_free(bg_program *p);
/* Getters (cannot fail; the name lives as long as p). */
const char *bg_program_name(const bg_program *p);
unsigned bg_program_nargs(const bg_program *p);
/* Kernel arguments block size in bytes (C-like layout: each arg aligned to its size). */
unsigned bg_program_kernargs_size(const bg_program *p);
/* Convenience: wait timeline, exec, signal timeline, submit; with `wait` also synchronize and
 * return the kernel time measured by queue timestamps in *us (us may be NULL). bufs and vals stay the caller's.
 * The queue it records is cached in p and freed with it. */
int bg_program_run(bg_program *p, bg_buf *const *bufs, size_t nbufs, const uint64_t *vals, size_t nvals,
                   const uint32_t gsz[3], const uint32_t lsz[3], bool wait, double *us);

/* ---------------- queues ---------------- */

enum bg_queue_kind { BG_QUEUE_COMPUTE = 0, BG_QUEUE_COPY = 1 };

/* A new empty recorded queue program for device d. A device without a copy engine gives
 * -BG_ENOTSUP for BG_QUEUE_COPY; a kind that is neither gives -BG_EINVAL. */
int bg_queue_new(bg_dev *d, enum bg_queue_kind kind, bg_queue **out);  /* *out: freed by bg_queue_free */
/* Frees the recording and its operands; work already submitted from q runs on. Cannot fail. */
void bg_queue_free(bg_queue *q);
/* Recording. Errors are sticky: the first one is kept and returned by bg_queue_submit. Each returns q.
 * Operands are checked before anything runs: a copy's destination and source ranges must each lie inside one live
 * allocation of the device (bg_buf_alloc; a second open of the same GPU shares them), and an exec's work-group
 * size must be 1..N in each dimension with at most N threads in all, N the smaller of the device's limit (1024)
 * and the kernel's (AMD: the code object's .max_flat_workgroup_size). Constant operands are checked when recorded
 * (the error is sticky), symbolic ones at each submit whose variables changed them, and every copy again at
 * a submit after a buffer was freed (bg_buf_free); a failed check submits nothing and names the command, the
 * operand and the buffer or limit. */
bg_queue *bg_queue_wait(bg_queue *q, bg_val signal_addr, bg_val value);
bg_queue *bg_queue_signal(bg_queue *q, bg_val signal_addr, bg_val value);
bg_queue *bg_queue_timestamp(bg_queue *q, bg_val signal_addr);
bg_queue *bg_queue_memory_barrier(bg_queue *q);
bg_queue *bg_queue_exec(bg_queue *q, bg_program *p, const bg_val *args, size_t nargs,
                        const bg_val gsz[3], const bg_val lsz[3]);
bg_queue *bg_queue_copy(bg_queue *q, bg_val dst, bg_val src, uint64_t n);
/* Lower (first time only), bind vars[0..nvars) and the timeline, patch what changed, push to the ring. vars stays
 * the caller's (copied). Returns the recording's sticky error if any. */
int bg_queue_submit(bg_queue *q, const uint64_t *vars, size_t nvars);
/* Drop the recording to record a new program (the lowered template and the sticky error are discarded; operands
 * made for q stay valid). Cannot fail. */
void bg_queue_reset(bg_queue *q);
/* Introspection for tests and benches: commands recorded, template bytes, patch records,
 * patches evaluated by the last submit. */
typedef struct bg_queue_stats {
  size_t ncmds, template_bytes, npatches, patches_applied_last, submits;
} bg_queue_stats;
void bg_queue_get_stats(const bg_queue *q, bg_queue_stats *st);   /* fills the caller's *st; cannot fail */
/* Debugging aid: print the recorded program to `f`, one command a line with its operands as expressions
 * (what BG_DEBUG shows). The format is for people and may change between releases; do not parse it. */
void bg_queue_dump(const bg_queue *q, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
