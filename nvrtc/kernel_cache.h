/* kernel_cache.h: the on-disk cache of compiled kernels, shared by the CPU and the CUDA paths.
 * An entry is <hash>.<ext> (the artifact) plus <hash>.key (the full key it was built from); the
 * hash names files, the key decides: a different key under the same hash is a miss, never a
 * wrong kernel. Files are written to a temporary name and renamed, so concurrent processes only
 * ever see whole files.
 *
 * The cache is code (a CPU kernel is a shared object dlopen'ed into the process), so nothing in it
 * is used unchecked: the folder must belong to this user and be writable by no one else
 * (pg__kcache_dir), and an artifact carries a header with the length and digest of its content,
 * checked together with the file's owner and mode through the one descriptor it is read from
 * (pg__kcache_load). A refused folder or artifact is reported in one line on stderr (a
 * security-relevant fact is not left to the log level); everything else touches no message: the
 * helpers return 0 or -1 (errno set) and the caller decides whether a cache failure matters
 * (usually it does not: it compiles without the cache). */
#ifndef PG_KERNEL_CACHE_H
#define PG_KERNEL_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* A key: labelled, length-prefixed parts, so two different part lists never give the same text.
 * The identity parts (what the artifact is built from) come first, then, after
 * pg__kcache_key_tools(), the tool parts (which compiler built it). Only the identity part is
 * hashed into the file name, so a process without the tool can still find an entry. The caller
 * owns the struct; pg__kcache_key_free releases its text. */
typedef struct pg__kcache_key {
    char *text;
    size_t len, cap;
    size_t ident_len; /* length of the identity part; == len until pg__kcache_key_tools */
    int tools;        /* pg__kcache_key_tools was called */
    int failed;       /* out of memory while building: the key must not be used */
} pg__kcache_key;

void pg__kcache_key_init(pg__kcache_key *k);
/* Append a part. value NULL is recorded as absent, distinct from "". */
void pg__kcache_key_add(pg__kcache_key *k, const char *label, const char *value);
void pg__kcache_key_add_bytes(pg__kcache_key *k, const char *label, const void *data, size_t len);
/* Parts added from now on describe the tool, not the artifact's inputs. */
void pg__kcache_key_tools(pg__kcache_key *k);
void pg__kcache_key_free(pg__kcache_key *k);

/* 64-bit FNV-1a. */
uint64_t pg__kcache_hash(const void *data, size_t len);
/* A second 64-bit hash of a different construction, for checks that must not collide together
 * with the file-name hash (an artifact can embed it to prove which key built it). */
uint64_t pg__kcache_check(const void *data, size_t len);
/* A digest of an artifact's content (8 bytes at a time: CUBINs run to megabytes). It finds
 * corruption; it is no defence against a writer who means harm (the owner and mode checks are). */
uint64_t pg__kcache_digest(const void *data, size_t len);
/* The file-name hash of a key (its identity part). */
uint64_t pg__kcache_key_id(const pg__kcache_key *k);

/* "<dir>/<16 hex digits of the key id><ext>" (ext includes its dot), malloc'ed; NULL: no memory. */
char *pg__kcache_path(const char *dir, const pg__kcache_key *k, const char *ext);

/* A folder fit to cache kernels in: created if missing (mkdir -p, new folders 0700), then checked
 * as OpenSSH checks ~/.ssh: the folder and every folder this call created must belong to this user
 * (or root) and not be writable by group or others. 0: use it. -1: do not (errno EPERM: refused,
 * and said once per folder and process on stderr, naming the folder and the fix; other errno: it
 * could not be created (as from mkdir), and nothing is said). */
int pg__kcache_dir(const char *dir);

/* Does <dir>/<id>.key hold this key? ident_only: compare the identity part only (used when the
 * tool is missing and any build of the same inputs will do). On a match, *stored_check (may be
 * NULL) gets pg__kcache_check of the stored key text. 1 match, 0 not. */
int pg__kcache_match(const char *dir, const pg__kcache_key *k, int ident_only,
                     uint64_t *stored_check);

/* A new empty file "<dir>/.tmp-XXXXXX<ext>" (mode 0600) that no other process can pick; the path
 * is malloc'ed. For a tool that writes its output to a path. */
int pg__kcache_temp(const char *dir, const char *ext, char **path);

/* Write data to path atomically: a temporary file in the same folder, then rename. */
int pg__kcache_write_atomic(const char *path, const void *data, size_t len);

/* Read a whole file; *data is malloc'ed (NUL-terminated for convenience). */
int pg__kcache_read(const char *path, char **data, size_t *len);

/* A new file "<dir>/.tmp-XXXXXX<ext>" (mode 0600, created by this call so no one else has it
 * open) holding data; the path is malloc'ed. For loading checked bytes from a file of our own. */
int pg__kcache_temp_write(const char *dir, const char *ext, const void *data, size_t len,
                          char **path);

/* Store an entry: <id><ext> (a header with key_check = pg__kcache_check of the key text, then
 * data), then <id>.key. */
int pg__kcache_store(const char *dir, const pg__kcache_key *k, const char *ext, const void *data,
                     size_t len);
/* Install an artifact already written to tmp_path: store its bytes as pg__kcache_store does.
 * tmp_path is removed in every case. */
int pg__kcache_install(const char *dir, const pg__kcache_key *k, const char *ext,
                       const char *tmp_path);

/* An artifact's content, or -1. The file is opened once (not following a symbolic link) and that
 * descriptor is checked: a regular file of this user (or root), not writable by group or others;
 * its header must name key_check (the check pg__kcache_match gave) and its content must have the
 * recorded length and digest. *data is malloc'ed (NUL-terminated for convenience) and holds what
 * was checked. A file that fails the owner/mode check or is corrupt is removed (the caller
 * rebuilds it) and said in one line on stderr; a missing file or one built from another key is
 * just a miss. */
int pg__kcache_load(const char *path, uint64_t key_check, char **data, size_t *len);

#endif
