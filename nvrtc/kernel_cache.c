/* kernel_cache.c: cache keys, their hashes, and the files of the on-disk kernel cache: written
 * whole, read back only from a folder and files no one else can write, and verified. */
#include "nvrtc/kernel_cache.h"
#include "base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An artifact file: this header, then the content. Numbers little-endian. */
static const char magic[16] = "polygpu-kcache1\n";
enum { HDR_KEY = 16, HDR_LEN = 24, HDR_DIGEST = 32, HDR_SIZE = 40 };

static void key_append(pg__kcache_key *k, const void *data, size_t len) {
    if (k->failed)
        return;
    if (k->len + len + 1 > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->len + len + 1)
            cap *= 2;
        char *t = pg__realloc(k->text, cap);
        if (!t) {
            k->failed = 1;
            return;
        }
        k->text = t;
        k->cap = cap;
    }
    memcpy(k->text + k->len, data, len);
    k->len += len;
    k->text[k->len] = '\0';
    if (!k->tools)
        k->ident_len = k->len;
}

void pg__kcache_key_init(pg__kcache_key *k) {
    memset(k, 0, sizeof *k);
}

void pg__kcache_key_add_bytes(pg__kcache_key *k, const char *label, const void *data, size_t len) {
    char head[160];
    int n = data ? snprintf(head, sizeof head, "%s %zu\n", label, len)
                 : snprintf(head, sizeof head, "%s absent\n", label);
    if (n < 0 || (size_t)n >= sizeof head) {
        k->failed = 1;
        return;
    }
    key_append(k, head, (size_t)n);
    if (data) {
        key_append(k, data, len);
        key_append(k, "\n", 1);
    }
}

void pg__kcache_key_add(pg__kcache_key *k, const char *label, const char *value) {
    pg__kcache_key_add_bytes(k, label, value, value ? strlen(value) : 0);
}

void pg__kcache_key_tools(pg__kcache_key *k) {
    k->tools = 1; /* first: the marker belongs to the tool part */
    key_append(k, "--- tools\n", 10);
}

void pg__kcache_key_free(pg__kcache_key *k) {
    pg__free(k->text);
    memset(k, 0, sizeof *k);
}

uint64_t pg__kcache_hash(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Bytes taken from the end, each step mixed with a splitmix64 finaliser: two texts that share a
 * suffix and collide under FNV-1a (which runs front to back) are no closer here. */
uint64_t pg__kcache_check(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    for (size_t i = len; i > 0; i--) {
        h = (h ^ p[i - 1]) * 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    h ^= h >> 30;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

static uint64_t mix64(uint64_t h) { /* splitmix64's finaliser */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return h;
}

static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t pg__kcache_digest(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = mix64(0x243f6a8885a308d3ull ^ (uint64_t)len);
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        h = mix64(h ^ get64(p + i)) + 0x9e3779b97f4a7c15ull;
    unsigned char tail[8] = {0};
    memcpy(tail, p + i, len - i);
    return mix64(h ^ get64(tail) ^ (uint64_t)(len - i) << 59);
}

uint64_t pg__kcache_key_id(const pg__kcache_key *k) {
    return pg__kcache_hash(k->text, k->ident_len);
}

char *pg__kcache_path(const char *dir, const pg__kcache_key *k, const char *ext) {
    size_t n = strlen(dir) + strlen(ext) + 20;
    char *p = pg__malloc(n);
    if (p)
        snprintf(p, n, "%s/%016llx%s", dir, (unsigned long long)pg__kcache_key_id(k), ext);
    return p;
}

/* ------------------------------------------------------------------ trust */

/* Root may own what the user uses (as OpenSSH allows): it could replace anything anyway. */
static int owner_ok(uid_t uid) {
    return uid == geteuid() || uid == 0;
}

static const char *who_writes(mode_t m) {
    return (m & 022) == 022 ? "group and others" : (m & 020) ? "its group" : "others";
}

/* One line on stderr, "polygpu: " first. */
static void say(const char *fmt, ...) {
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "polygpu: %s\n", line);
}

/* Folders refused so far: each is said once per process, not once per kernel. */
static pthread_mutex_t said_mu = PTHREAD_MUTEX_INITIALIZER;
static char **said;
static size_t nsaid;

static int first_time(const char *dir) {
    pthread_mutex_lock(&said_mu);
    int first = 1;
    for (size_t i = 0; i < nsaid && first; i++)
        first = strcmp(said[i], dir) != 0;
    if (first) {
        char **t = pg__realloc(said, (nsaid + 1) * sizeof *t);
        char *d = t ? pg__strdup(dir) : NULL;
        if (t)
            said = t;
        if (d)
            said[nsaid++] = d; /* out of memory: said again next time, which is harmless */
    }
    pthread_mutex_unlock(&said_mu);
    return first;
}

/* Is the folder `f` (the cache `dir` itself, or a folder created for it) fit? Says why not. */
static int folder_ok(const char *dir, const char *f, const struct stat *st) {
    if (owner_ok(st->st_uid) && !(st->st_mode & 022) && S_ISDIR(st->st_mode))
        return 1;
    if (!first_time(dir))
        return 0;
    char which[1200] = "";
    if (strcmp(dir, f) != 0)
        snprintf(which, sizeof which, " (the folder %s created for it)", f);
    if (!S_ISDIR(st->st_mode))
        say("not using the kernel cache %s: %s is no longer a folder; compiling without a cache",
            dir, f);
    else if (!owner_ok(st->st_uid))
        say("not using the kernel cache %s%s: it belongs to uid %u, not to this user (uid %u), "
            "and cached kernels are code this process would run; compiling without a cache (fix: "
            "set cache_dir or PG_CACHE_DIR to a folder of your own)",
            dir, which, (unsigned)st->st_uid, (unsigned)geteuid());
    else
        say("not using the kernel cache %s%s: it is writable by %s (mode %04o), and cached "
            "kernels are code this process would run; compiling without a cache (fix: chmod 700 "
            "%s)",
            dir, which, who_writes(st->st_mode), (unsigned)(st->st_mode & 0777), f);
    return 0;
}

int pg__kcache_dir(const char *dir) {
    size_t n = strlen(dir);
    if (n == 0) {
        errno = ENOENT;
        return -1;
    }
    char *p = pg__strdup(dir);
    if (!p)
        return -1;
    struct stat st;
    int ok = 1;
    /* mkdir -p; a folder this call creates is checked at once (lstat: it must still be the
     * folder just made, not something put in its place). */
    for (size_t i = 1; i <= n && ok; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0700) == 0) {
            if (lstat(p, &st) != 0 || !folder_ok(dir, p, &st))
                ok = 0;
        } else if (errno != EEXIST) {
            int e = errno;
            pg__free(p);
            errno = e;
            return -1;
        }
        p[i] = c;
    }
    pg__free(p);
    /* The folder itself, through a symbolic link if it is one (~/.cache often is). */
    if (ok && stat(dir, &st) != 0)
        return -1;
    if (ok && !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    if (!ok || !folder_ok(dir, dir, &st)) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

/* Open path for reading, not following a symbolic link and not blocking on a FIFO, and check the
 * descriptor: a regular file of this user (or root) that neither group nor others can write.
 * The descriptor, or -1: errno set, and *why (may be NULL) filled when the file exists but is
 * refused. */
static int open_trusted(const char *path, struct stat *st, char *why, size_t whyn) {
    if (why)
        why[0] = '\0';
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP && why)
            snprintf(why, whyn, "a symbolic link");
        return -1;
    }
    const char *bad = NULL;
    char own[96];
    if (fstat(fd, st) != 0)
        bad = "not readable";
    else if (!S_ISREG(st->st_mode))
        bad = "not a regular file";
    else if (!owner_ok(st->st_uid)) {
        snprintf(own, sizeof own, "owned by uid %u, not by this user (uid %u)",
                 (unsigned)st->st_uid, (unsigned)geteuid());
        bad = own;
    } else if (st->st_mode & 022) {
        snprintf(own, sizeof own, "writable by %s (mode %04o)", who_writes(st->st_mode),
                 (unsigned)(st->st_mode & 0777));
        bad = own;
    }
    if (bad) {
        if (why)
            snprintf(why, whyn, "%s", bad);
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

static int read_full(int fd, void *buf, size_t len, size_t *got) {
    char *p = buf;
    *got = 0;
    while (*got < len) {
        ssize_t r = read(fd, p + *got, len - *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        *got += (size_t)r;
    }
    return 0;
}

int pg__kcache_load(const char *path, uint64_t key_check, char **data, size_t *len) {
    struct stat st;
    char why[200];
    int fd = open_trusted(path, &st, why, sizeof why);
    if (fd < 0) {
        if (!why[0])
            return -1; /* absent or unreadable: a miss */
        unlink(path);
        say("cached kernel %s is %s: not loaded, removed; it is rebuilt", path, why);
        errno = EPERM;
        return -1;
    }
    unsigned char hdr[HDR_SIZE];
    size_t got, size = (size_t)st.st_size;
    char *buf = NULL;
    const char *bad = NULL;
    if (read_full(fd, hdr, sizeof hdr, &got) != 0) {
        close(fd);
        return -1;
    }
    if (got < sizeof hdr || memcmp(hdr, magic, sizeof magic) != 0)
        bad = "no cache header";
    else if (get64(hdr + HDR_KEY) != key_check) {
        close(fd); /* another key's build (a hash collision, or a race with one): a miss */
        errno = ENOENT;
        return -1;
    }
    uint64_t want = bad ? 0 : get64(hdr + HDR_LEN);
    if (!bad && want != (uint64_t)size - HDR_SIZE) {
        snprintf(why, sizeof why, "%s: %llu bytes of content where its header says %llu",
                 (uint64_t)size - HDR_SIZE < want ? "truncated" : "too long",
                 (unsigned long long)(size - HDR_SIZE), (unsigned long long)want);
        bad = why;
    }
    if (!bad && !(buf = pg__malloc(want + 1))) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    if (!bad && (read_full(fd, buf, want, &got) != 0 || got != want))
        bad = "shorter than when it was opened";
    if (!bad && pg__kcache_digest(buf, want) != get64(hdr + HDR_DIGEST))
        bad = "content does not match its digest";
    close(fd);
    if (bad) {
        pg__free(buf);
        unlink(path);
        say("cached kernel %s is corrupt (%s): not loaded, removed; it is rebuilt", path, bad);
        errno = EINVAL;
        return -1;
    }
    buf[want] = '\0';
    *data = buf;
    *len = want;
    return 0;
}

/* ------------------------------------------------------------------ files */

int pg__kcache_read(const char *path, char **data, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = pg__malloc(cap);
    if (!buf) {
        close(fd);
        return -1;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *b = pg__realloc(buf, cap * 2);
            if (!b)
                break;
            buf = b;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (r == 0) {
            close(fd);
            buf[n] = '\0';
            *data = buf;
            *len = n;
            return 0;
        }
        n += (size_t)r;
    }
    int e = errno;
    pg__free(buf);
    close(fd);
    errno = e ? e : ENOMEM;
    return -1;
}

int pg__kcache_match(const char *dir, const pg__kcache_key *k, int ident_only,
                     uint64_t *stored_check) {
    if (k->failed)
        return 0;
    char *path = pg__kcache_path(dir, k, ".key");
    if (!path)
        return 0;
    /* The key decides what an artifact is, so it is held to the same rules: one that others could
     * have written is a miss (and the rebuild replaces it). */
    struct stat st;
    int fd = open_trusted(path, &st, NULL, 0);
    pg__free(path);
    if (fd < 0)
        return 0;
    char *stored = pg__malloc((size_t)st.st_size + 1);
    size_t n = 0;
    int r = stored ? read_full(fd, stored, (size_t)st.st_size, &n) : -1;
    close(fd);
    if (r != 0) {
        pg__free(stored);
        return 0;
    }
    int match;
    if (ident_only)
        match = n >= k->ident_len && memcmp(stored, k->text, k->ident_len) == 0 &&
                (n == k->ident_len || strncmp(stored + k->ident_len, "--- tools\n", 10) == 0);
    else
        match = n == k->len && memcmp(stored, k->text, n) == 0;
    if (match && stored_check)
        *stored_check = pg__kcache_check(stored, n);
    pg__free(stored);
    return match;
}

/* Create "<dir>/.tmp-XXXXXX<ext>" (0600, a name no other process can pick): its descriptor, the
 * malloc'ed path in *path. */
static int temp_open(const char *dir, const char *ext, char **path) {
    static const char mid[] = "/.tmp-XXXXXX";
    size_t dn = strlen(dir), en = strlen(ext);
    char *p = pg__malloc(dn + sizeof mid + en);
    if (!p)
        return -1;
    memcpy(p, dir, dn);
    memcpy(p + dn, mid, sizeof mid - 1);
    memcpy(p + dn + sizeof mid - 1, ext, en + 1);
    int fd = mkostemps(p, (int)en, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        pg__free(p);
        errno = e;
        return -1;
    }
    *path = p;
    return fd;
}

int pg__kcache_temp(const char *dir, const char *ext, char **path) {
    int fd = temp_open(dir, ext, path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int write_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int pg__kcache_temp_write(const char *dir, const char *ext, const void *data, size_t len,
                          char **path) {
    char *p;
    int fd = temp_open(dir, ext, &p);
    if (fd < 0)
        return -1;
    int r = write_all(fd, data, len);
    if (close(fd) != 0)
        r = -1;
    if (r != 0) {
        int e = errno;
        unlink(p);
        pg__free(p);
        errno = e;
        return -1;
    }
    *path = p;
    return 0;
}

/* Write head then data to path atomically: a temporary file in the same folder (mode 0600), then
 * rename. */
static int write_atomic2(const char *path, const void *head, size_t hlen, const void *data,
                         size_t len) {
    size_t n = strlen(path) + 8;
    char *tmp = pg__malloc(n);
    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        pg__free(tmp);
        errno = e;
        return -1;
    }
    int r = write_all(fd, head, hlen);
    if (r == 0)
        r = write_all(fd, data, len);
    if (close(fd) != 0)
        r = -1;
    if (r == 0)
        r = rename(tmp, path);
    if (r != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
    }
    pg__free(tmp);
    return r;
}

int pg__kcache_write_atomic(const char *path, const void *data, size_t len) {
    return write_atomic2(path, "", 0, data, len);
}

static int store_key(const char *dir, const pg__kcache_key *k) {
    char *key_path = pg__kcache_path(dir, k, ".key");
    if (!key_path)
        return -1;
    int r = pg__kcache_write_atomic(key_path, k->text, k->len);
    pg__free(key_path);
    return r;
}

int pg__kcache_store(const char *dir, const pg__kcache_key *k, const char *ext, const void *data,
                     size_t len) {
    if (k->failed) {
        errno = ENOMEM;
        return -1;
    }
    char *path = pg__kcache_path(dir, k, ext);
    if (!path)
        return -1;
    unsigned char hdr[HDR_SIZE];
    memcpy(hdr, magic, sizeof magic);
    put64(hdr + HDR_KEY, pg__kcache_check(k->text, k->len));
    put64(hdr + HDR_LEN, (uint64_t)len);
    put64(hdr + HDR_DIGEST, pg__kcache_digest(data, len));
    /* Artifact first: a reader that sees the new key then finds the new artifact (or, in a race
     * with a colliding key, an artifact whose header tells it apart). */
    int r = write_atomic2(path, hdr, sizeof hdr, data, len);
    pg__free(path);
    return r == 0 ? store_key(dir, k) : r;
}

int pg__kcache_install(const char *dir, const pg__kcache_key *k, const char *ext,
                       const char *tmp_path) {
    char *data;
    size_t len;
    int r = pg__kcache_read(tmp_path, &data, &len);
    if (r == 0) {
        r = pg__kcache_store(dir, k, ext, data, len);
        pg__free(data);
    }
    int e = errno;
    unlink(tmp_path);
    errno = e;
    return r;
}
