/* test_coherence.c: which locations hold each array's current value, and how many bytes moved
 * over which link, for a scripted sequence on four CPU devices. */
#include "kernels_common.h"

#include <stdio.h>
#include <unistd.h>

#define N 4096
#define BYTES (N * 4)
#define HOSTL 0
#define DEV(d) ((d) + 1)

static uint32_t valid(pg_array *a) {
    pg_array_desc d;
    REQUIRE_OK(pg_array_describe(a, &d));
    return d.valid;
}

int main(void) {
    /* Peers are faster than the host links, so device-to-device copies are preferred. */
    char path[] = "/tmp/pg-coh-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE_OK(fd >= 0 ? PG_OK : PG_ERROR_IO);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "src,dst,bandwidth_gbps,latency_us\n");
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 4; d++)
            if (s != d)
                fprintf(f, "%d,%d,50,1\n", s, d);
    fclose(f);
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:4";
    o.policy = "round-robin";
    o.interconnect = path;
    pg_runtime *rt;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_kernel *scale = test_kernel(rt, "scale", NULL);
    pg_kernel *fill_out = test_kernel(rt, "fill", "out float *y, float v, int n");
    pg_array *a = test_array(rt, N), *b = test_array(rt, N);
    pg_stats st;

    /* A new array is zeros, valid everywhere, and nothing has moved. */
    CHECK(valid(a) == 0x1f);
    float v;
    REQUIRE_OK(pg_array_read(a, 5, 1, &v));
    CHECK(v == 0.0f);

    /* A host write leaves only the host valid. */
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    REQUIRE_OK(pg_array_write(a, 0, N, host));
    CHECK(valid(a) == (1u << HOSTL));

    /* A kernel reading a on device 0 copies it there: host and device 0 valid. */
    pg_arg args[] = {pg_arg_array(b), pg_arg_array(a), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, args, 3));
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.link_bytes[HOSTL][DEV(0)] == BYTES);
    CHECK(valid(a) == ((1u << HOSTL) | (1u << DEV(0))));
    CHECK(valid(b) == (1u << DEV(0)));

    /* Device 1 updates a in place: it pulls a from device 0 (faster than the host), then only
     * device 1 holds the new value. */
    pg_arg sargs[] = {pg_arg_array(a), pg_arg_float(2.0f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(scale, dim1(N / 256), dim1(256), 0, sargs, 3));
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.link_bytes[DEV(0)][DEV(1)] == BYTES);
    CHECK(st.link_bytes[HOSTL][DEV(1)] == 0);
    CHECK(valid(a) == (1u << DEV(1)));

    /* A host read copies device 1 -> host once; a second read moves nothing. */
    REQUIRE_OK(pg_array_read(a, 10, 1, &v));
    CHECK(v == 20.0f);
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.link_bytes[DEV(1)][HOSTL] == BYTES);
    uint64_t moved = st.bytes_moved;
    REQUIRE_OK(pg_array_read(a, 11, 1, &v));
    CHECK(v == 22.0f);
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.bytes_moved == moved);
    CHECK(valid(a) == ((1u << HOSTL) | (1u << DEV(1))));

    /* An out-only write on device 2 copies nothing in. */
    pg_arg fargs[] = {pg_arg_array(a), pg_arg_float(7.0f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(fill_out, dim1(N / 256), dim1(256), 0, fargs, 3));
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.bytes_moved == moved);
    CHECK(valid(a) == (1u << DEV(2)));

    /* Partial host write (inout): the host copy is brought up to date first. */
    float nine = 9.0f;
    REQUIRE_OK(pg_array_write(a, 0, 1, &nine));
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    CHECK(st.link_bytes[DEV(2)][HOSTL] == BYTES);
    CHECK(valid(a) == (1u << HOSTL));
    float back[3];
    REQUIRE_OK(pg_array_read(a, 0, 3, back));
    CHECK(back[0] == 9.0f && back[1] == 7.0f && back[2] == 7.0f);

    /* Map for writing: host is the only valid copy; the next kernel waits and copies in. */
    float *p;
    REQUIRE_OK(pg_array_map(a, PG_ACCESS_INOUT, (void **)&p));
    p[1] = 100.0f;
    REQUIRE_OK(pg_array_unmap(a));
    REQUIRE_OK(pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, args, 3));
    REQUIRE_OK(pg_array_read(b, 1, 1, &v));
    CHECK(v == 101.0f);

    /* Counters add up. */
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    uint64_t sum = 0;
    for (int s = 0; s <= 4; s++)
        for (int d = 0; d <= 4; d++)
            sum += st.link_bytes[s][d];
    CHECK(sum == st.bytes_moved);
    CHECK(st.kernels == 4 && st.computations == st.kernels + st.host_accesses + st.copies);
    CHECK(st.ndevices == 4);

    CHECK_OK(pg_runtime_free(rt));
    unlink(path);
    CHECK_DONE();
}
