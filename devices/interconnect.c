/* interconnect.c: the bandwidth/latency matrix between locations — defaults, CSV load, save.
 *
 * File format (CSV, one directed link per line):
 *
 *   # polygpu interconnect: bandwidth (GB/s) and latency (us) of each directed link
 *   src,dst,bandwidth_gbps,latency_us
 *   host,0,55.0,2.0
 *   0,host,53.1,2.0
 *   0,1,394.0,1.0
 *
 * A location is `host` or a device index (0-based). Lines starting with '#' and blank lines are
 * comments. The header line must be the first line that is not a comment. Bandwidth must be
 * positive, latency non-negative; a link from a location to itself is not allowed (local access
 * is free), nor giving a link twice. Links the file does not name keep their current values.
 * Only a regular file of at most 1 MiB, lines of at most 1024 characters, is read. */
#include "devices/interconnect.h"
#include "base/alloc.h"
#include "base/error.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER "src,dst,bandwidth_gbps,latency_us"
/* A full 17-location matrix is about 10 KiB: these bounds only stop reading what is not one. */
#define MAX_FILE (1u << 20)
#define MAX_LINE 1024
/* The diagonal: data already where it is needed moves "for free". */
#define LOCAL_GBPS 1e9
#define DEFAULT_LATENCY_US 1.0

void pg__interconnect_default(pg__interconnect *m, int ndevices, double host_gbps,
                              double peer_gbps) {
    if (ndevices < 0)
        ndevices = 0;
    if (ndevices > PG_MAX_DEVICES)
        ndevices = PG_MAX_DEVICES;
    memset(m, 0, sizeof *m);
    m->nloc = ndevices + 1;
    for (int s = 0; s < m->nloc; s++) {
        for (int d = 0; d < m->nloc; d++) {
            int i = s * m->nloc + d;
            if (s == d) {
                m->bw[i] = LOCAL_GBPS;
                m->lat_us[i] = 0.0;
            } else {
                m->bw[i] = s == 0 || d == 0 ? host_gbps : peer_gbps;
                m->lat_us[i] = DEFAULT_LATENCY_US;
            }
        }
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void pg__interconnect_equalize(const pg__interconnect *m, double tol, double *out) {
    int n = m->nloc, k = 0;
    double v[PG__NLOC * PG__NLOC];
    for (int i = 0; i < n * n; i++) {
        out[i] = m->bw[i];
        if (i / n != i % n)
            v[k++] = m->bw[i];
    }
    qsort(v, (size_t)k, sizeof v[0], cmp_double);
    /* Groups of sorted values no wider than tol from their smallest; each link takes its
     * group's mean. */
    for (int g = 0; g < k;) {
        int e = g;
        double sum = 0;
        while (e < k && v[e] <= v[g] * (1 + tol)) {
            sum += v[e];
            e++;
        }
        double lo = v[g], hi = v[e - 1], mean = sum / (e - g);
        for (int i = 0; i < n * n; i++)
            if (i / n != i % n && m->bw[i] >= lo && m->bw[i] <= hi)
                out[i] = mean;
        g = e;
    }
}

double pg__interconnect_bw(const pg__interconnect *m, int src_loc, int dst_loc) {
    if (src_loc < 0 || dst_loc < 0 || src_loc >= m->nloc || dst_loc >= m->nloc)
        return 0.0;
    return m->bw[src_loc * m->nloc + dst_loc];
}

static pg_status too_big(const char *path) {
    return pg__error(PG_ERROR_IO,
                     "interconnect file %s is larger than 1 MiB: is it an interconnect file?",
                     path);
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* Location text -> location index, or -1 with the reason in `why`. */
static int parse_loc(const pg__interconnect *m, const char *t, char *why, size_t nwhy) {
    if (!strcmp(t, "host"))
        return 0;
    char *end;
    errno = 0;
    long d = t[0] >= '0' && t[0] <= '9' ? strtol(t, &end, 10) : -1;
    if (d < 0 || errno || *end) {
        snprintf(why, nwhy, "unknown location '%s' (expected host or a device index)", t);
        return -1;
    }
    if (d >= m->nloc - 1) {
        snprintf(why, nwhy, "device index %ld out of range: this runtime has %d device(s)", d,
                 m->nloc - 1);
        return -1;
    }
    return (int)d + 1;
}

static int parse_num(const char *t, double *out) {
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (!t[0] || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* One link line into m (*link gets its index); 0 or -1 with the reason in `why`. */
static int parse_link(pg__interconnect *m, char *line, int *link, char *why, size_t nwhy) {
    char *col[5];
    int n = 0;
    for (char *p = line;; p++) {
        char *c = strchr(p, ',');
        if (n < 5)
            col[n] = p;
        n++;
        if (!c)
            break;
        *c = 0;
        p = c;
    }
    if (n != 4) {
        snprintf(why, nwhy, "%d column(s), expected 4 (%s)", n, HEADER);
        return -1;
    }
    for (int i = 0; i < 4; i++)
        col[i] = trim(col[i]);
    int s = parse_loc(m, col[0], why, nwhy);
    if (s < 0)
        return -1;
    int d = parse_loc(m, col[1], why, nwhy);
    if (d < 0)
        return -1;
    if (s == d) {
        snprintf(why, nwhy, "link from '%s' to itself (local access needs no entry)", col[0]);
        return -1;
    }
    double bw, lat;
    if (parse_num(col[2], &bw) || bw <= 0) {
        snprintf(why, nwhy, "bandwidth '%s' is not a positive number of GB/s", col[2]);
        return -1;
    }
    if (parse_num(col[3], &lat) || lat < 0) {
        snprintf(why, nwhy, "latency '%s' is not a non-negative number of microseconds", col[3]);
        return -1;
    }
    *link = s * m->nloc + d;
    m->bw[*link] = bw;
    m->lat_us[*link] = lat;
    return 0;
}

/* The whole file, read once: a regular file of at most MAX_FILE bytes (a device such as
 * /dev/zero, a pipe or an endless file would otherwise be read forever). malloc'ed, NUL ended,
 * its length in *len. */
static pg_status read_small_file(const char *path, char **out, size_t *len) {
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; regular files ignore it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return pg__error(PG_ERROR_IO, "cannot read interconnect file %s: %s", path,
                         strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return pg__error(PG_ERROR_IO, "cannot read interconnect file %s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return pg__error(PG_ERROR_IO,
                         "interconnect file %s is not a regular file (it is a %s): give the path "
                         "of a CSV file",
                         path,
                         S_ISDIR(sb.st_mode)    ? "folder"
                         : S_ISCHR(sb.st_mode)  ? "character device"
                         : S_ISBLK(sb.st_mode)  ? "block device"
                         : S_ISFIFO(sb.st_mode) ? "pipe"
                                                : "special file");
    }
    char *buf = NULL;
    size_t n = 0;
    pg_status st = PG_OK;
    if ((uint64_t)sb.st_size > MAX_FILE)
        st = too_big(path);
    else if (!(buf = pg__malloc(MAX_FILE + 2)))
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    /* Read one byte past the limit: the file may have grown since fstat. */
    while (!st && n <= MAX_FILE) {
        ssize_t r = read(fd, buf + n, MAX_FILE + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            st = pg__error(PG_ERROR_IO, "reading interconnect file %s failed: %s", path,
                           strerror(errno));
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    if (!st && n > MAX_FILE)
        st = too_big(path);
    close(fd);
    if (st) {
        pg__free(buf);
        return st;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return PG_OK;
}

pg_status pg__interconnect_load(pg__interconnect *m, const char *path) {
    char *text = NULL;
    size_t len = 0;
    pg_status st = read_small_file(path, &text, &len);
    if (st)
        return st;
    pg__interconnect next = *m;              /* m changes only if the whole file is good */
    int first_at[PG__NLOC * PG__NLOC] = {0}; /* the line that gave each link */
    char why[200];
    int lineno = 0, header = 0;
    for (size_t at = 0; !st && at < len;) {
        lineno++;
        char *buf = text + at;
        char *nl = memchr(buf, '\n', len - at);
        size_t n = nl ? (size_t)(nl - buf) : len - at;
        at += n + 1;
        if (n > MAX_LINE) {
            st = pg__error(PG_ERROR_ARGUMENT,
                           "%s:%d: line too long (%zu characters; a link line has at most %d): "
                           "is this an interconnect file?",
                           path, lineno, n, MAX_LINE);
            break;
        }
        if (memchr(buf, '\0', n)) {
            st = pg__error(PG_ERROR_ARGUMENT, "%s:%d: a NUL byte: this is not a text file", path,
                           lineno);
            break;
        }
        buf[n] = '\0';
        char *line = trim(buf);
        if (!line[0] || line[0] == '#')
            continue;
        if (!header) {
            if (strcmp(line, HEADER))
                st = pg__error(PG_ERROR_ARGUMENT, "%s:%d: expected the header line '%s'", path,
                               lineno, HEADER);
            header = 1;
            continue;
        }
        int link = -1;
        if (parse_link(&next, line, &link, why, sizeof why))
            st = pg__error(PG_ERROR_ARGUMENT, "%s:%d: %s", path, lineno, why);
        else if (first_at[link])
            st = pg__error(PG_ERROR_ARGUMENT,
                           "%s:%d: this link was already given at line %d: each link once", path,
                           lineno, first_at[link]);
        else
            first_at[link] = lineno;
    }
    if (!st && !header)
        st = pg__error(PG_ERROR_ARGUMENT, "%s:%d: no header line '%s'", path, lineno + 1, HEADER);
    pg__free(text);
    if (!st)
        *m = next;
    return st;
}

static void loc_name(int loc, char *out, size_t n) {
    if (loc == 0)
        snprintf(out, n, "host");
    else
        snprintf(out, n, "%d", loc - 1);
}

/* The shortest text that reads back as exactly v. */
static void put_num(FILE *f, double v) {
    char t[40];
    snprintf(t, sizeof t, "%.15g", v);
    if (strtod(t, NULL) != v)
        snprintf(t, sizeof t, "%.17g", v);
    fputs(t, f);
}

pg_status pg__interconnect_save(const pg__interconnect *m, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f)
        return pg__error(PG_ERROR_IO, "cannot write interconnect file %s: %s", path,
                         strerror(errno));
    fprintf(f, "# polygpu interconnect: bandwidth (GB/s) and latency (us) of each directed "
               "link\n" HEADER "\n");
    for (int s = 0; s < m->nloc; s++) {
        for (int d = 0; d < m->nloc; d++) {
            if (s == d)
                continue;
            char a[16], b[16];
            loc_name(s, a, sizeof a);
            loc_name(d, b, sizeof b);
            fprintf(f, "%s,%s,", a, b);
            put_num(f, m->bw[s * m->nloc + d]);
            fputc(',', f);
            put_num(f, m->lat_us[s * m->nloc + d]);
            fputc('\n', f);
        }
    }
    int bad = ferror(f);
    if (fclose(f) || bad)
        return pg__error(PG_ERROR_IO, "writing interconnect file %s failed: %s", path,
                         strerror(errno ? errno : EIO));
    return PG_OK;
}
