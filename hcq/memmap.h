/* hcq/memmap.h: the live allocations of every device, for checking queue operands before anything runs.
 *
 * One process-wide set of intervals sorted by (address space, va): the address space is the backend's device state
 * (bg_dev.priv), so bg_devs sharing one GPU (am/: a second open of the same function) see each other's buffers,
 * as their queues do. Lookups are O(log n) under a mutex; they run when a copy is recorded with constant operands
 * and, for symbolic ones, at a submit whose variables changed; every copy again at a submit after an allocation was
 * forgotten (bg_buf_free), else never on an unchanged re-submit. */
#ifndef BG_HCQ_MEMMAP_H
#define BG_HCQ_MEMMAP_H
#include "hcq/backend.h"

/* Flags bg_buf_alloc accepts (enum bg_buf_flags). */
#define BG_BUF_KNOWN_FLAGS (BG_BUF_HOST | BG_BUF_UNCACHED | BG_BUF_CPU_ACCESS | BG_BUF_CONTIGUOUS | BG_BUF_ZERO)
/* 0, or -BG_EINVAL naming the unknown bits and the known flags. */
int bg_buf_flags_check(const bg_dev *d, unsigned flags);

/* Record [va, va+size) as live on d (owner) in d's address space; -BG_ENOMEM. */
int bg_memmap_add(bg_dev *d, uint64_t va, uint64_t size);
/* Forget the allocation at va (a no-op when unknown). */
void bg_memmap_remove(bg_dev *d, uint64_t va);
/* Allocations forgotten so far in the process (any device): a queue whose copies were checked at another count
 * checks them again before it submits. */
uint64_t bg_memmap_frees(void);
/* Forget every allocation d recorded (bg_dev_close: buffers the caller leaked). */
void bg_memmap_drop_dev(const bg_dev *d);
/* 0 when [va, va+n) lies inside one live allocation of d's address space, else -BG_EINVAL with a message
 * "<what> 0x<va> + <n> bytes ..." naming the allocation it overruns or saying it is in none. */
int bg_memmap_check(const bg_dev *d, uint64_t va, uint64_t n, const char *what);

#endif
