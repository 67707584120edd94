/* sim_text.c: small-file reading and line splitting for topology and profile files. */
#include "devices/sim/sim_text.h"
#include "base/alloc.h"
#include "base/error.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

pg_status pg__sim_read_file(const char *path, const char *what, size_t max_bytes, char **text,
                            size_t *len) {
    /* O_NONBLOCK: a FIFO must not block the open; regular files ignore it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return pg__error(errno == ENOENT ? PG_ERROR_NOT_FOUND : PG_ERROR_IO,
                         "cannot read %s %s: %s", what, path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return pg__error(PG_ERROR_IO, "%s %s is not a regular file", what, path);
    }
    if ((uint64_t)sb.st_size > max_bytes) {
        close(fd);
        return pg__error(PG_ERROR_IO, "%s %s is larger than %zu bytes: is it a %s?", what, path,
                         max_bytes, what);
    }
    size_t cap = (size_t)sb.st_size + 2, n = 0;
    char *buf = pg__malloc(cap);
    if (!buf) {
        close(fd);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory reading %s %s", what, path);
    }
    /* Read at most one byte past the size seen: a file growing meanwhile is cut there. */
    while (n < cap - 1) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            pg__free(buf);
            return pg__error(PG_ERROR_IO, "reading %s %s failed: %s", what, path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (memchr(buf, '\0', n)) {
        pg__free(buf);
        return pg__error(PG_ERROR_ARGUMENT, "%s %s holds a NUL byte: it is not a text file", what,
                         path);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return PG_OK;
}

char *pg__sim_next_line(char *text, size_t len, size_t *at) {
    if (*at >= len)
        return NULL;
    char *line = text + *at;
    char *nl = memchr(line, '\n', len - *at);
    size_t n = nl ? (size_t)(nl - line) : len - *at;
    *at += n + 1;
    line[n] = '\0';
    if (n && line[n - 1] == '\r')
        line[n - 1] = '\0';
    return line;
}

int pg__sim_words(char *line, char **word, int max, const char **why) {
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            return n;
        if (n == max) {
            *why = "too many words on the line";
            return -1;
        }
        /* A word runs to a blank outside quotes; quotes are removed (key="a b" is key=a b). */
        char *out = p;
        word[n++] = out;
        int quoted = 0;
        while (*p && (quoted || (!isspace((unsigned char)*p) && *p != '#'))) {
            if (*p == '"')
                quoted = !quoted;
            else
                *out++ = *p;
            p++;
        }
        if (quoted) {
            *why = "a quote that is not closed";
            return -1;
        }
        int end = !*p || *p == '#';
        *out = '\0';
        if (end)
            return n;
        p++;
    }
}

int pg__sim_csv(char *line, char **field, int max, const char **why) {
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max) {
            *why = "too many fields on the line";
            return -1;
        }
        if (*p == '"') {
            /* Unquote in place: "" becomes ". */
            char *out = p, *in = p + 1;
            field[n++] = out;
            for (;;) {
                if (!*in) {
                    *why = "a quoted field that is not closed";
                    return -1;
                }
                if (*in == '"' && in[1] == '"') {
                    *out++ = '"';
                    in += 2;
                } else if (*in == '"') {
                    in++;
                    break;
                } else {
                    *out++ = *in++;
                }
            }
            *out = '\0';
            if (*in && *in != ',') {
                *why = "text after a quoted field";
                return -1;
            }
            if (!*in)
                return n;
            p = in + 1;
            continue;
        }
        field[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            return n;
        *c = '\0';
        p = c + 1;
    }
}

int pg__sim_number(const char *s, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!s[0] || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int pg__sim_bytes(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || !isfinite(v))
        return -1;
    double unit = 1;
    if (*end) {
        const char *units = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u || end[1])
            return -1;
        for (const char *k = units; k <= u; k++)
            unit *= 1024;
    }
    double b = v * unit;
    if (b >= 18446744073709551616.0 || b != floor(b))
        return -1;
    *out = (uint64_t)b;
    return 0;
}
