/* compile/kcache.h: the on-disk cache of compiled kernels. Internal.
 *
 * An entry is a file <dir>/<key>.<ext> holding the payload followed by a 48-byte trailer
 * (magic, payload size, SHA-256 of the payload), so a truncated or damaged entry is detected and
 * recompiled instead of being handed to the loader. Entries are written to a temporary file in the
 * same directory and renamed into place: concurrent readers see the old entry, the new one or
 * nothing, never half a file.
 *
 * The cache is an optimisation, never a requirement: a directory that is missing and cannot be created
 * (HOME=/nonexistent), one that is not writable, an entry that is a directory, a FIFO or unreadable all make
 * the caller compile without the cache. The first such problem in a process is printed as one warning on
 * stderr (bg_kcache_warn); later ones go to the BG_DEBUG=1 log. Entries are opened non-blocking and must be
 * regular files (util/fd_io.h), so a FIFO in the cache cannot hang a compile. */
#ifndef BG_COMPILE_KCACHE_H
#define BG_COMPILE_KCACHE_H

#include <stddef.h>

/* The cache directory (BG_CACHE_DIR, else $XDG_CACHE_HOME/baregpu, else $HOME/.cache/baregpu),
 * created with its parents if missing (a read-only one still serves hits). On failure a negative code, the
 * message, and the process's one cache warning (bg_kcache_warn): callers compile without the cache. */
int bg_kcache_dir(char *out, size_t n);
/* Path of the entry for a key (64 hex chars) and extension ("so"). */
int bg_kcache_path(const char *dir, const char *key, const char *ext, char *out, size_t n);
/* 1 and the payload (malloc'd) on a valid entry; 0 when missing, corrupt (logged) or unusable (not a regular
 * file, unreadable: the warning). Never blocks on what is at path. */
int bg_kcache_load(const char *path, void **data, size_t *size);
/* Write an entry atomically (temporary file + rename). 0 when stored; 1 when it could not be (the warning;
 * bg_last_error() says why): the kernel is still good. */
int bg_kcache_store(const char *path, const void *data, size_t size);
/* The kernel cache's one warning per process on stderr: "baregpu: warning: kernel cache: <msg>; compiling
 * without the cache"; after the first, messages go to BG_DEBUG=1 only. */
void bg_kcache_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Read a whole regular file (malloc'd); a FIFO or other special file is refused without blocking. */
int bg_read_file(const char *path, void **data, size_t *size);

#endif
