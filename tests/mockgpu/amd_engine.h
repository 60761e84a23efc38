/* tests/mockgpu/amd_engine.h: the emulated AMD GPU's queue executors run asynchronously, one thread per engine
 * (the compute queue's CP, amd_pm4.c; SDMA0 queue 0, amd_sdma_exec.c), woken by doorbell writes.
 *
 * BAR2 (doorbells, 2 MiB of 64-bit slots) is hooked: a 32- or 64-bit write to the slot an enabled queue listens to
 * (CP_HQD_PQ_DOORBELL_CONTROL.DOORBELL_OFFSET / SDMA0_QUEUE0_DOORBELL_OFFSET.OFFSET, in dwords) stores the value (the
 * queue's new write pointer) and wakes that engine; a write to a slot no enabled queue uses is a failure. Reads
 * return what was written.
 *
 * Synchronisation: the device lock (recursive) guards the register file, the failure list and the engines' state;
 * the host's BAR2/BAR5 accesses take it, an engine holds it while it executes a packet and drops it while it waits
 * (WAIT_REG_MEM / POLL_REGMEM re-poll memory with a backoff of 10 us .. 1 ms, so the host can write it) and while
 * the shader core runs a dispatch. VRAM and host pages are plain memory, as on hardware.
 *
 * Time: each engine counts the wall time it spends executing packets (waits excluded); mock_amd_exec_ns sums it per
 * device so benches can subtract the emulator's own cost. */
#ifndef BG_MOCKGPU_AMD_ENGINE_H
#define BG_MOCKGPU_AMD_ENGINE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amd_gpu.h"
#include "amd_vm.h"

/* Nanoseconds the device's engines spent executing (sum over engines, since creation). */
uint64_t mock_amd_exec_ns(const mock_amd *g);
/* Wait until no engine has pending doorbells or a packet in progress (a queue blocked in a wait counts as busy).
 * 0, or -1 after timeout_ms. */
int mock_amd_engines_wait_idle(mock_amd *g, int timeout_ms);

/* Fault injection ("doorbell-drop" of the mock plugin's table): the next count doorbell writes that an enabled queue
 * listens to are lost (the slot keeps the value, the engine is not woken), as a posted write dropped on the bus.
 * 0, or -1 when the chip has no queue engines. */
int mock_amd_inject_doorbell_drop(mock_amd *g, unsigned count);
/* Doorbell writes lost so far by injection. */
uint64_t mock_amd_doorbells_dropped(mock_amd *g);

/* ---- internal (amd_pm4.c, amd_sdma_exec.c, amd_gpu.c) ---- */
typedef struct amd_engine amd_engine;
typedef struct amd_engine_ops {
  const char *name;
  /* BAR2 byte offset of the doorbell the engine's queue listens to now, or -1 (no enabled queue). Lock held. */
  int64_t (*doorbell)(amd_engine *e);
  /* Execute up to the doorbell's write pointer, or until the queue stops (lock held, count 1). */
  void (*run)(amd_engine *e);
  void (*destroy)(amd_engine *e);
} amd_engine_ops;

struct amd_engine {
  mock_amd *g;
  struct amd_engines *en;   /* this process's engines of g (amd_engine.c) */
  const amd_engine_ops *ops;
  void *priv;
  pthread_t thr;
  pthread_cond_t cv;        /* doorbells and stop */
  bool started, stop, kicked, running;
  int alive; /* set (atomically) by the thread itself once it runs: start_threads waits for it */
  uint64_t db;              /* last doorbell value */
  uint64_t exec_ns, slept_ns;
  /* The queue the engine runs: the model's enable flag and activation count (amd_cp.h), set by the constructor. */
  const bool *q_active;
  const unsigned *q_nactivate;
  unsigned seen;            /* *q_nactivate the read pointer belongs to */
  bool fresh;               /* an ASIC reset happened: restart at the next activation */
  bool latched;             /* the engine stopped on an error; only an engine reset clears it (amd_sdma_exec.h) */
};

/* What executing a packet did: done, the queue hung (failure recorded), the queue stopped (disabled, re-activated,
 * reset, or the engine stopping). Executors add their own values above AMD_X_STOPPED. */
enum { AMD_X_OK = 0, AMD_X_HUNG = -1, AMD_X_STOPPED = 1 };

/* Where a packet was read from, for failure messages: the ring (va = its base) or an IB (va = its address), and the
 * packet's offset in the executor's unit (CP dwords, SDMA bytes). */
typedef struct amd_pk_src {
  bool ib;
  uint64_t va, off;
} amd_pk_src;

/* Lock set-up (mock_amd_new, first thing) and teardown (mock_amd_free, last thing). */
void amd_lock_init(mock_amd *g);
void amd_lock_destroy(mock_amd *g);
/* Hook BAR2 and start the engine threads of the chip (GC 11/12: PM4 CP + SDMA0; GC 9.4.3: the AQL processor +
 * SDMA 4.4.2 instance 0; none elsewhere). 0 or -1 (failure recorded). */
int amd_engines_start(mock_amd *g);
/* Stop and join the threads (before the device is freed). */
void amd_engines_stop(mock_amd *g);
/* ASIC reset: every engine forgets its queue (restarts at the next activation). */
void amd_engines_reset(mock_amd *g);
/* Start of run(): true when the queue was activated again or reset since the engine last ran it (the executor then
 * restarts at read pointer 0, not hung). */
bool amd_engine_new_activation(amd_engine *e);
/* The queue the engine started on is still enabled, not re-activated or reset, and the engine is not stopping. */
bool amd_engine_alive(const amd_engine *e);
/* The engine named name ("CP", "SDMA0") is inside a run (executing or polling); false when there is none. Lock held. */
bool amd_engine_busy(mock_amd *g, const char *name);
/* The queue was dequeued, reset or re-activated, or the engine stops, seen from the shader core's thread without the
 * lock (a dispatch polls it to stop an endless wave, rdna3_mem.preempted). */
bool amd_engine_preempted(const amd_engine *e);
/* Record "<engine>: <fmt...>; packet at ring|IB 0x<va> <unit> 0x<off>: <up to 8 dwords> (queue hung)". */
void amd_engine_vbad(const amd_engine *e, const amd_pk_src *s, const char *unit, const uint32_t *pk, unsigned n,
                     const char *fmt, va_list ap);
/* n dwords from byte position at of a ring of size bytes at base (wrapping). 0, or -1 (VM fault recorded). */
int amd_engine_ring_read(amd_engine *e, amd_vm *vm, uint64_t base, uint64_t size, uint64_t at, unsigned n,
                         uint32_t *dst, unsigned cid);
/* WAIT_REG_MEM / POLL_REGMEM: until amd_wait_compare(func, value & mask, ref) holds for the dword in memory at where
 * (mem) or the register where, re-polled every 10 us .. 1 ms with the lock dropped. AMD_X_OK, AMD_X_STOPPED, or
 * AMD_X_HUNG when the memory faulted (recorded by the VM as fault_what). */
int amd_engine_poll(amd_engine *e, amd_vm *vm, bool mem, uint64_t where, unsigned func, uint32_t ref, uint32_t mask,
                    const char *fault_what, unsigned cid);
/* Copy n bytes at offset off of the private state of the device's engine with these ops (its stats), under the lock.
 * false when the device has no such engine. */
bool amd_engine_read_priv(mock_amd *g, const amd_engine_ops *ops, size_t off, void *out, size_t n);
/* Inside run(): drop the lock for about us microseconds (a doorbell or stop wakes it earlier); the time is not
 * counted as execution. false when the engine must stop. */
bool amd_engine_sleep(amd_engine *e, unsigned us);
/* GPU timestamp: 100 MHz counter from CLOCK_MONOTONIC. */
uint64_t amd_gpu_clock(void);
/* The engine of the device with these ops, or NULL (lock held or engines idle). */
amd_engine *amd_engine_find(mock_amd *g, const amd_engine_ops *ops);
/* Compare of WAIT_REG_MEM.FUNCTION / POLL_REGMEM.FUNC (same encoding): 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >;
 * 7 is reserved (the callers refuse it). */
static inline bool amd_wait_compare(unsigned func, uint32_t v, uint32_t ref) {
  switch (func) {
  case 0: return true;
  case 1: return v < ref;
  case 2: return v <= ref;
  case 3: return v == ref;
  case 4: return v != ref;
  case 5: return v >= ref;
  case 6: return v > ref;
  default: return false;
  }
}

/* Engine constructors (amd_pm4.c, amd_sdma_exec.c): NULL when the chip has no such queue model. */
amd_engine *amd_pm4_engine(mock_amd *g);
amd_engine *amd_sdma_engine(mock_amd *g);
/* gfx942: the AQL packet processor of queue 1 on every XCC (amd_aql.h); NULL on other chips. */
amd_engine *amd_aql_engine(mock_amd *g);

#endif
