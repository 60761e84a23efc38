/* tests/mockgpu/mock_shm.h: the emulated hardware's memory, private to the process (default) or shared between a
 * process and the children it forks afterwards (MOCKGPU_SHARED=1, tests/stress/kill.c).
 *
 * On real hardware the GPU's registers, VRAM and engine state outlive the process that drives it; the next process
 * finds whatever a killed one left (Linux amdgpu_device_need_reset_on_init; tinygrad
 * tinygrad/runtime/support/am/amdev.py AMDev.__init__ checks SCRATCH_REG6/7 for that). In shared mode the models put
 * that state into one MAP_SHARED|MAP_ANONYMOUS|MAP_NORESERVE arena made before any fork (the same addresses in every
 * child), BARs into MAP_SHARED mappings, and the device lock is a robust process-shared mutex: a process killed while
 * holding it hands it to the next locker (EOWNERDEAD -> pthread_mutex_consistent) together with the half-done state.
 * What stays per process: engine threads and condition variables (amd_engine.c starts them in the process that rings
 * a doorbell), the sysfs tree's DMA table (host memory of a dead process is gone), BAR view handles.
 *
 * The arena is a bump allocator (lock-free: a killed process cannot leave it locked); freed blocks are not reused
 * (their pages are given back with MADV_REMOVE when large). Without shared mode every call is the libc one. */
#ifndef BG_MOCKGPU_MOCK_SHM_H
#define BG_MOCKGPU_MOCK_SHM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* Create the arena (size bytes of address space, NORESERVE) and switch shared mode on for this process and the
 * children it forks afterwards. Idempotent. 0, or -1 (mmap failed, errno set). */
int mock_shm_init(size_t size);
/* Shared mode is on. */
bool mock_shm_on(void);
/* MOCKGPU_SHARED from the environment: 1 when "1", 0 when unset, empty or "0", -1 for anything else. */
int mock_shm_env(void);

/* calloc/malloc/realloc/free: from the arena in shared mode (free/realloc also take libc pointers). */
void *mock_shm_calloc(size_t n, size_t size);
void *mock_shm_malloc(size_t size);
void *mock_shm_realloc(void *p, size_t size);
void mock_shm_free(void *p);

/* Backing memory of a BAR: MAP_SHARED in shared mode, else MAP_PRIVATE (anonymous, NORESERVE); munmap frees it.
 * NULL on failure. */
void *mock_shm_map(size_t size);
/* Drop a BAR's contents (function reset): MADV_REMOVE on shared memory (MADV_DONTNEED keeps shared pages). */
void mock_shm_discard(void *p, size_t size);

/* The device lock: recursive; process-shared and robust in shared mode. */
int mock_shm_mutex_init(pthread_mutex_t *m);
/* Lock it; a lock whose owner died is taken over (made consistent): the state is what the dead owner left. */
void mock_shm_lock(pthread_mutex_t *m);
/* Condition waits on such a lock (same take-over on EOWNERDEAD). The timed one returns 0 or ETIMEDOUT. */
void mock_shm_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int mock_shm_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime);
/* Locks taken over from a dead owner since start (this process's count, for tests and the README's figures). */
unsigned mock_shm_takeovers(void);

/* Death at a chosen point (fault kind "kill-reg-write" of mock_plugin.c, tests/stress/kill.c): this process SIGKILLs
 * itself just before its n-th GPU register write from now (0: never), holding the device lock: the next process
 * takes the lock over (EOWNERDEAD) with the state as it was. mock_amd_wreg calls mock_shm_kill_point. */
void mock_shm_kill_after(unsigned n);
void mock_shm_kill_point(void);

#endif
