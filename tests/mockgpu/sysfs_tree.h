/* tests/mockgpu/sysfs_tree.h: building fake sysfs trees in temp directories (no emulation: files, directories,
 * links). Built whether or not the emulated devices are (the tools tests use it without them). Errors are -errno. */
#ifndef BG_TESTS_SYSFS_TREE_H
#define BG_TESTS_SYSFS_TREE_H

#include <stddef.h>

/* root/rel into buf (PATH_MAX bytes); -ENAMETOOLONG if it does not fit. */
int sysfs_tree_path(const char *root, const char *rel, char *buf);
/* Write n bytes of data to root/rel: off < 0 creates or truncates the file, else writes at off in an existing one. */
int sysfs_tree_put(const char *root, const char *rel, const void *data, size_t n, long off);
/* mkdir root/rel (an existing directory is fine). */
int sysfs_tree_mkdir(const char *root, const char *rel);
/* root/rel becomes a symlink to target (replacing what was there). */
int sysfs_tree_symlink(const char *root, const char *target, const char *rel);
/* root/rel becomes a relative symlink to root/target ("../" for each directory rel is in, then target). */
int sysfs_tree_link(const char *root, const char *target, const char *rel);
void sysfs_tree_unlink(const char *root, const char *rel);

/* A new temp dir <TMPDIR>/bg-mock-<pid>-<tag>-XXXXXX into buf, after sweeping the trees of processes that are
 * gone (a killed run's); removed at this process's normal exit if sysfs_tree_rm has not removed it. */
int sysfs_tree_tmpdir_new(const char *tag, char *buf, size_t n);
/* $TMPDIR, or /tmp when it is unset or empty. */
const char *sysfs_tree_tmp_base(void);
/* Remove the bg-mock-<pid>-* trees whose process is gone; the number removed. */
int sysfs_tree_tmpdir_sweep(void);
/* Remove a tree (no symlink followed) and forget it. */
void sysfs_tree_rm(const char *path);

#endif
