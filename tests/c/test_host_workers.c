/* test_host_workers.c: CPU devices serve their streams with a fixed set of workers. 10,000
 * independent launches (each only reads a shared array, so the stream policy spreads them over
 * many streams) on host:2 with one thread per device must leave the process with at most the
 * configured threads (a worker per device; a kernel pool has threads - 1 more), where a thread
 * per stream grew 33-64 threads. Then the results of a mix of both patterns are right. */
#include "kernels_common.h"

#include <dirent.h>
#include <pthread.h>

static long threads_now(void) {
    DIR *d = opendir("/proc/self/task");
    long n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void *nothing(void *arg) {
    return arg;
}

int main(void) {
    setenv("PG_HOST_THREADS", "1", 1);
    /* A first thread, so that a sanitizer's background thread (ThreadSanitizer starts one with
     * the process's second thread) is there before counting. */
    pthread_t t;
    pthread_create(&t, NULL, nothing, NULL);
    pthread_join(t, NULL);
    long before = threads_now();
    pg_runtime *rt = test_runtime_on("host:2", NULL, NULL);
    pg_kernel *reader = NULL, *add1 = test_kernel(rt, "add1", NULL);
    REQUIRE_OK(pg_kernel_new(rt, "extern \"C\" __global__ void touch(const float *v) { }", "touch",
                             NULL, NULL, &reader));
    pg_array *v = test_array(rt, 1024), *x = test_array(rt, 1024), *y = test_array(rt, 1024);
    pg_arg a[] = {pg_arg_array(v)};
    for (int i = 0; i < 10000; i++)
        CHECK_OK(pg_kernel_launch(reader, dim1(1), dim1(1), 0, a, 1));
    CHECK_OK(pg_runtime_sync(rt));
    long gained = threads_now() - before;
    if (gained > 2)
        fprintf(stderr,
                "10,000 independent launches on host:2 (1 thread each) left %ld more "
                "threads in the process, expected at most 2\n",
                gained);
    CHECK(gained >= 1 && gained <= 2);
    /* A chain through x and y interleaved with independent readers: the values. */
    pg_arg c[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(1024)};
    pg_arg d[] = {pg_arg_array(x), pg_arg_array(y), pg_arg_int(1024)};
    for (int i = 0; i < 200; i++) {
        CHECK_OK(pg_kernel_launch(add1, dim1(4), dim1(256), 0, i % 2 ? d : c, 3));
        CHECK_OK(pg_kernel_launch(reader, dim1(1), dim1(1), 0, a, 1));
    }
    float got[2] = {0, 0};
    CHECK_OK(pg_array_read(x, 0, 1, &got[0]));
    CHECK_OK(pg_array_read(y, 0, 1, &got[1]));
    CHECK(got[0] == 200.0f && got[1] == 199.0f);
    CHECK(threads_now() - before <= 2);
    CHECK_OK(pg_runtime_free(rt));
    CHECK_DONE();
}
