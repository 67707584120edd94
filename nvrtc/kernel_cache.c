/* kernel_cache.c: cache keys, their hashes, and the files of the on-disk kernel cache. */
#include "nvrtc/kernel_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void key_append(pg__kcache_key *k, const void *data, size_t len) {
    if (k->failed)
        return;
    if (k->len + len + 1 > k->cap) {
        size_t cap = k->cap ? k->cap : 256;
        while (cap < k->len + len + 1)
            cap *= 2;
        char *t = realloc(k->text, cap);
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
    free(k->text);
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

uint64_t pg__kcache_key_id(const pg__kcache_key *k) {
    return pg__kcache_hash(k->text, k->ident_len);
}

char *pg__kcache_path(const char *dir, const pg__kcache_key *k, const char *ext) {
    size_t n = strlen(dir) + strlen(ext) + 20;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%016llx%s", dir, (unsigned long long)pg__kcache_key_id(k), ext);
    return p;
}

int pg__kcache_mkdir(const char *dir) {
    size_t n = strlen(dir);
    if (n == 0) {
        errno = ENOENT;
        return -1;
    }
    char *p = strdup(dir);
    if (!p)
        return -1;
    /* Each prefix in turn; EEXIST is fine, anything else is the answer. */
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            int e = errno;
            free(p);
            errno = e;
            return -1;
        }
        p[i] = c;
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int pg__kcache_read(const char *path, char **data, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return -1;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *b = realloc(buf, cap * 2);
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
    free(buf);
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
    char *stored;
    size_t n;
    int r = pg__kcache_read(path, &stored, &n);
    free(path);
    if (r != 0)
        return 0;
    int match;
    if (ident_only)
        match = n >= k->ident_len && memcmp(stored, k->text, k->ident_len) == 0 &&
                (n == k->ident_len || strncmp(stored + k->ident_len, "--- tools\n", 10) == 0);
    else
        match = n == k->len && memcmp(stored, k->text, n) == 0;
    if (match && stored_check)
        *stored_check = pg__kcache_check(stored, n);
    free(stored);
    return match;
}

int pg__kcache_temp(const char *dir, const char *ext, char **path) {
    static const char mid[] = "/.tmp-XXXXXX";
    size_t dn = strlen(dir), en = strlen(ext);
    char *p = malloc(dn + sizeof mid + en);
    if (!p)
        return -1;
    memcpy(p, dir, dn);
    memcpy(p + dn, mid, sizeof mid - 1);
    memcpy(p + dn + sizeof mid - 1, ext, en + 1);
    int fd = mkostemps(p, (int)strlen(ext), O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(p);
        errno = e;
        return -1;
    }
    close(fd);
    *path = p;
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

int pg__kcache_write_atomic(const char *path, const void *data, size_t len) {
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        errno = e;
        return -1;
    }
    int r = write_all(fd, data, len);
    if (close(fd) != 0)
        r = -1;
    if (r == 0)
        r = rename(tmp, path);
    if (r != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
    }
    free(tmp);
    return r;
}

static int store_key(const char *dir, const pg__kcache_key *k) {
    char *key_path = pg__kcache_path(dir, k, ".key");
    if (!key_path)
        return -1;
    int r = pg__kcache_write_atomic(key_path, k->text, k->len);
    free(key_path);
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
    /* Artifact first: a reader that sees the new key then finds the new artifact (or, in a race
     * with a colliding key, an artifact whose embedded check tells it apart). */
    int r = pg__kcache_write_atomic(path, data, len);
    free(path);
    return r == 0 ? store_key(dir, k) : r;
}

int pg__kcache_install(const char *dir, const pg__kcache_key *k, const char *ext,
                       const char *tmp_path) {
    char *path = k->failed ? NULL : pg__kcache_path(dir, k, ext);
    int r = path ? rename(tmp_path, path) : -1;
    if (r != 0) {
        int e = path ? errno : ENOMEM;
        unlink(tmp_path);
        errno = e;
    }
    free(path);
    return r == 0 ? store_key(dir, k) : r;
}
