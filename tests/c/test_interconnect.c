/* test_interconnect.c: the bandwidth matrix — defaults, loading a partial file, save and load
 * round trip, and every kind of bad file named by file and line. */
#include "check.h"
#include "devices/interconnect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static const char *write_file(const char *name, const char *text) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

static double bw(const pg__interconnect *m, int s, int d) {
    return pg__interconnect_bw(m, s, d);
}

static double lat(const pg__interconnect *m, int s, int d) {
    return m->lat_us[s * m->nloc + d];
}

static void test_default(void) {
    pg__interconnect m;
    pg__interconnect_default(&m, 3, 12.5, 300.0);
    CHECK(m.nloc == 4);
    for (int s = 0; s < 4; s++) {
        for (int d = 0; d < 4; d++) {
            double want = s == d ? 1e9 : (s == 0 || d == 0) ? 12.5 : 300.0;
            CHECK(bw(&m, s, d) == want);
            CHECK(m.bw[s * m.nloc + d] == want);
            CHECK(lat(&m, s, d) == (s == d ? 0.0 : 1.0));
        }
    }
    pg__interconnect_default(&m, 0, 1, 2);
    CHECK(m.nloc == 1 && bw(&m, 0, 0) == 1e9);
}

static void test_load_partial(void) {
    pg__interconnect m;
    pg__interconnect_default(&m, 2, 10, 20);
    const char *p =
        write_file("partial.csv", "# polygpu interconnect: bandwidth (GB/s) and latency (us)\n"
                                  "\n"
                                  "src,dst,bandwidth_gbps,latency_us\n"
                                  "host,0,55.0,2.0\n"
                                  "  # an indented comment\n"
                                  "0, host ,53.1,2.5\r\n"
                                  "0,1,394,0\n"
                                  "\n");
    CHECK_OK(pg__interconnect_load(&m, p));
    CHECK(bw(&m, 0, 1) == 55.0 && lat(&m, 0, 1) == 2.0);
    CHECK(bw(&m, 1, 0) == 53.1 && lat(&m, 1, 0) == 2.5);
    CHECK(bw(&m, 1, 2) == 394.0 && lat(&m, 1, 2) == 0.0);
    /* Not named: unchanged. */
    CHECK(bw(&m, 2, 1) == 20.0 && lat(&m, 2, 1) == 1.0);
    CHECK(bw(&m, 0, 2) == 10.0 && bw(&m, 2, 0) == 10.0);
    CHECK(bw(&m, 1, 1) == 1e9);
    /* A file with only the header changes nothing. */
    pg__interconnect before = m;
    CHECK_OK(
        pg__interconnect_load(&m, write_file("header.csv", "src,dst,bandwidth_gbps,latency_us\n")));
    CHECK(memcmp(&before, &m, sizeof m) == 0);
}

/* Policies see links measured within 10% of each other as one class, at the class's mean:
 * host links 53-56 GB/s become one value, NVLink 380-394 another, a 2x slower link stays. */
static void test_equalize(void) {
    pg__interconnect m;
    pg__interconnect_default(&m, 3, 55, 390);
    m.bw[0 * 4 + 1] = 53;
    m.bw[0 * 4 + 2] = 56;
    m.bw[0 * 4 + 3] = 27; /* a slower host link */
    m.bw[1 * 4 + 2] = 380;
    m.bw[2 * 4 + 1] = 394;
    double out[4 * 4];
    pg__interconnect_equalize(&m, 0.10, out);
    for (int i = 0; i < 16; i++) {
        int s = i / 4, d = i % 4;
        if (s == d)
            CHECK(out[i] == m.bw[i]);
        else if (m.bw[i] < 40)
            CHECK(out[i] == 27);
        else if (m.bw[i] < 100)
            CHECK(fabs(out[i] - out[0 * 4 + 1]) < 1e-9 && out[i] > 53 && out[i] < 56);
        else
            CHECK(fabs(out[i] - out[1 * 4 + 2]) < 1e-9 && out[i] > 380 && out[i] < 394);
    }
    /* tol 0: the matrix unchanged. */
    pg__interconnect_equalize(&m, 0, out);
    CHECK(memcmp(out, m.bw, sizeof out) == 0);
}

static void test_roundtrip(void) {
    pg__interconnect m, back;
    pg__interconnect_default(&m, 4, 10, 20);
    for (int s = 0; s < m.nloc; s++)
        for (int d = 0; d < m.nloc; d++)
            if (s != d) {
                m.bw[s * m.nloc + d] = 1.0 / 3.0 + s * 10 + d;
                m.lat_us[s * m.nloc + d] = 0.1 * (s + 1) + d;
            }
    char path[512];
    snprintf(path, sizeof path, "%s/saved.csv", dir);
    REQUIRE_OK(pg__interconnect_save(&m, path));
    pg__interconnect_default(&back, 4, 1, 2);
    CHECK_OK(pg__interconnect_load(&back, path));
    CHECK(memcmp(m.bw, back.bw, sizeof m.bw) == 0);
    CHECK(memcmp(m.lat_us, back.lat_us, sizeof m.lat_us) == 0);
    /* The file is the documented format: a comment, the header, 20 off-diagonal links. */
    FILE *f = fopen(path, "r");
    REQUIRE_OK(f ? PG_OK : PG_ERROR_IO);
    char line[256];
    int n = 0, comments = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            comments++;
        else if (n++ == 0)
            CHECK(!strcmp(line, "src,dst,bandwidth_gbps,latency_us\n"));
    }
    fclose(f);
    CHECK(comments == 1 && n == 1 + 20);
    /* Saving where no file can be written. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.csv", dir);
    CHECK_STATUS(pg__interconnect_save(&m, bad), PG_ERROR_IO);
    CHECK(strstr(pg_last_error(), bad) != NULL);
}

/* A bad file: the call fails with `st`, names file:line and `what`, and leaves m alone. */
static void bad_file(const char *name, const char *text, pg_status st, int line, const char *what) {
    pg__interconnect m, before;
    pg__interconnect_default(&m, 2, 10, 20);
    before = m;
    const char *p = write_file(name, text);
    char where[600];
    snprintf(where, sizeof where, "%s:%d:", p, line);
    CHECK_STATUS(pg__interconnect_load(&m, p), st);
    if (!strstr(pg_last_error(), where) || !strstr(pg_last_error(), what)) {
        fprintf(stderr, "%s: message '%s' lacks '%s' or '%s'\n", name, pg_last_error(), where,
                what);
        CHECK(0);
    }
    CHECK(memcmp(&before, &m, sizeof m) == 0);
}

#define H "src,dst,bandwidth_gbps,latency_us\n"

static void test_errors(void) {
    bad_file("empty.csv", "", PG_ERROR_ARGUMENT, 1, "no header");
    bad_file("comments.csv", "# only\n\n", PG_ERROR_ARGUMENT, 3, "no header");
    bad_file("noheader.csv", "# c\nhost,0,1,1\n", PG_ERROR_ARGUMENT, 2, "header");
    bad_file("unknown.csv", H "host,0,5,1\ngpu0,host,5,1\n", PG_ERROR_ARGUMENT, 3,
             "unknown location 'gpu0'");
    bad_file("negdev.csv", H "host,-1,5,1\n", PG_ERROR_ARGUMENT, 2, "unknown location '-1'");
    bad_file("range.csv", "# two devices\n" H "host,1,5,1\n1,2,5,1\n", PG_ERROR_ARGUMENT, 4,
             "device index 2");
    bad_file("zero.csv", H "host,0,0,1\n", PG_ERROR_ARGUMENT, 2, "bandwidth '0'");
    bad_file("neg.csv", H "host,0,-3.5,1\n", PG_ERROR_ARGUMENT, 2, "bandwidth '-3.5'");
    bad_file("nan.csv", H "host,0,fast,1\n", PG_ERROR_ARGUMENT, 2, "bandwidth 'fast'");
    bad_file("lat.csv", H "host,0,5,-1\n", PG_ERROR_ARGUMENT, 2, "latency '-1'");
    bad_file("cols3.csv", H "host,0,5\n", PG_ERROR_ARGUMENT, 2, "3 column(s), expected 4");
    bad_file("cols5.csv", H "host,0,5,1,9\n", PG_ERROR_ARGUMENT, 2, "5 column(s), expected 4");
    bad_file("self.csv", H "0,0,5,1\n", PG_ERROR_ARGUMENT, 2, "itself");
    /* A good line before a bad one is not applied either (bad_file checks m is unchanged). */
    bad_file("late.csv", H "host,0,77,1\n0,host,5\n", PG_ERROR_ARGUMENT, 3, "column");

    pg__interconnect m;
    pg__interconnect_default(&m, 2, 10, 20);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.csv", dir);
    CHECK_STATUS(pg__interconnect_load(&m, missing), PG_ERROR_IO);
    CHECK(strstr(pg_last_error(), missing) != NULL);
}

/* Measured through a runtime's own copy path (CPU devices here, GPUs under tests/gpu/run.sh):
 * every link positive and finite, the matrix in use afterwards, and the saved file loads back
 * as the same matrix through the `interconnect` option. */
static void test_measure(void) {
    const char *devs = getenv("PG_TEST_DEVICES");
    pg_options o;
    pg_options_init(&o);
    o.devices = devs && devs[0] ? devs : "host:2";
    o.interconnect = "default";
    pg_runtime *rt;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    static double before[PG__NLOC * PG__NLOC], g[PG__NLOC * PG__NLOC], l[PG__NLOC * PG__NLOC];
    int n = 0, n2 = 0;
    REQUIRE_OK(pg_runtime_interconnect(rt, &n, before, NULL));
    char path[512], saved[512] = "";
    snprintf(path, sizeof path, "%s/measured.csv", dir);
    CHECK(pg_runtime_measure_interconnect(rt, 4, 1, path, NULL, 0) == PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "bytes") != NULL);
    REQUIRE_OK(pg_runtime_measure_interconnect(rt, 1 << 20, 2, path, saved, sizeof saved));
    CHECK(!strcmp(saved, path));
    REQUIRE_OK(pg_runtime_interconnect(rt, &n2, g, l));
    CHECK(n2 == n && n >= 2);
    int changed = 0;
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++) {
            int i = s * n + d;
            if (s == d)
                continue;
            CHECK(g[i] > 0 && g[i] < 1e6 && l[i] >= 0 && l[i] < 1e6);
            changed |= g[i] != before[i];
        }
    CHECK(changed); /* the measurement replaced the defaults */
    REQUIRE_OK(pg_runtime_free(rt));

    o.interconnect = path;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    static double g2[PG__NLOC * PG__NLOC];
    REQUIRE_OK(pg_runtime_interconnect(rt, &n2, g2, NULL));
    for (int i = 0; i < n * n; i++)
        if (i % (n + 1)) /* off the diagonal */
            CHECK(fabs(g2[i] - g[i]) <= 1e-3 * g[i]);
    CHECK(pg_runtime_interconnect(rt, NULL, g2, NULL) == PG_ERROR_ARGUMENT);
    REQUIRE_OK(pg_runtime_free(rt));
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pg-ic-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_default();
    test_load_partial();
    test_roundtrip();
    test_equalize();
    test_errors();
    test_measure();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    CHECK_DONE();
}
