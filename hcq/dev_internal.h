/* hcq/dev_internal.h: device core functions shared inside hcq/ (and the open-device registry with the backends'
 * open and close paths). */
#ifndef BG_HCQ_DEV_INTERNAL_H
#define BG_HCQ_DEV_INTERNAL_H
#include "hcq/backend.h"

int bg_dev_create(const bg_iface *ifc, const bg_target *t, int phys_index, bg_dev **out);
/* Signal pool (signal.c). */
void bg_sigpool_free(bg_dev *d);
/* A backend whose signals have no CPU view reports each submit (after its doorbell), key naming the recorded work (e.g.
 * the command bytes' address and length): waits on such signals poll when the work is expected done (signal.c). */
void bg_signal_note_submit(bg_dev *d, uint64_t key);
/* Latched error state: non-zero (negative) when an earlier sync failed. */
int bg_dev_check(bg_dev *d);
/* Process-wide registry of open physical devices (registry.c). A backend that shares one physical device between the
 * bg_devs of a process (AMD: one booted GPU, one lock file, one USB bridge) holds the key of that device (sysfs root +
 * BDF, bridge name) across its whole share-or-open and across its last close, so a second thread's open of the same
 * device waits for them instead of racing for the lock file or the bridge. Keys are counted: an entry lives while a
 * thread holds or waits for it. */
typedef struct bg_phys_key bg_phys_key;
/* Hold key (blocking while another thread holds it): 0, or -BG_EINVAL (key empty or too long) / -BG_ENOMEM. */
int bg_phys_lock(const char *key, bg_phys_key **out);
void bg_phys_unlock(bg_phys_key *k);
/* Test hook, not exported: set the next timeline value and the signal to value-1, so the wrap-around tests
 * (tests/unit/hcq/test_core.c, tests/conformance/hcq_sync.c) reach 2^31 without 2^31 submits. */
void bg_dev_set_timeline(bg_dev *d, uint64_t next_value);
/* Give the buffers freed while their work was pending (d->deferred) back to the allocator once the timeline has
 * passed the value they wait for (dev.c; bg_queue_submit calls it). */
void bg_dev_reap(bg_dev *d);
/* Several devices (peer.c): bg_dev_create registers every open bg_dev (its serial), bg_dev_close unregisters it and
 * drops the peer mappings other devices' buffers hold into it; bg_buf_free undoes b's peer mappings. */
void bg_peer_dev_opened(bg_dev *d);
void bg_peer_dev_closing(const bg_dev *d);
void bg_peer_buf_freeing(bg_buf *b);
/* bg_dev_synchronize wrapped d's timeline: write dependencies recorded before it are complete. */
void bg_peer_timeline_wrapped(bg_dev *d);
/* The signal page holding s (signal.c), mapped into other devices by bg_signal_va_on. */
bg_buf *bg_signal_page_buf(const bg_signal *s);
/* Bench hook, not exported: while on, bg_buf_transfer stages through host memory even where P2P is possible
 * (tests/bench/p2p.c measures both paths between the same devices). */
void bg_peer_set_staged_only(bool on);
/* Wait on the host until b's last write by another device (bg_buf_write_dep) is complete: 0 or the wait's error. */
int bg_peer_wait_writer(const bg_buf *b);
/* Programs keep a cached run queue (program.c). */
void bg_program_release_queue(bg_program *p);
#endif
