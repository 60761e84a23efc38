/* compile/kcache.h: the on-disk cache of compiled kernels. Internal.
 *
 * An entry is a file <dir>/<key>.<ext> holding the payload followed by a 48-byte trailer
 * (magic, payload size, SHA-256 of the payload), so a truncated or damaged entry is detected and
 * recompiled instead of being handed to the loader. Entries are written to a temporary file in the
 * same directory and renamed into place: concurrent readers see the old entry, the new one or
 * nothing, never half a file. */
#ifndef BG_COMPILE_KCACHE_H
#define BG_COMPILE_KCACHE_H

#include <stddef.h>

/* The cache directory (BG_CACHE_DIR, else $XDG_CACHE_HOME/baregpu, else $HOME/.cache/baregpu),
 * created with its parents if missing. */
int bg_kcache_dir(char *out, size_t n);
/* Path of the entry for a key (64 hex chars) and extension ("so"). */
int bg_kcache_path(const char *dir, const char *key, const char *ext, char *out, size_t n);
/* 1 and the payload (malloc'd) on a valid entry; 0 when missing or corrupt; negative on error. */
int bg_kcache_load(const char *path, void **data, size_t *size);
/* Write an entry atomically (temporary file + rename). */
int bg_kcache_store(const char *path, const void *data, size_t size);
/* Read a whole file (malloc'd). */
int bg_read_file(const char *path, void **data, size_t *size);

#endif
