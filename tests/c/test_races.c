/* test_races.c: races between threads of one script — a read of a result whose writer waits
 * behind another thread's mapping, close() while other threads read, compile or launch, a
 * handle freed while another thread uses it, and fork() after the runtime was used. Each case
 * is a finding of issue 15; before the fixes they gave stale values, crashes or hangs. */
#include "kernels_common.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 4096

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int pending(pg_runtime *rt) {
    pg_stats st;
    REQUIRE_OK(pg_runtime_stats(rt, &st));
    return (int)st.pending;
}

/* ---- a read of y whose writer is held back behind another thread's mapping of its input */

typedef struct reader_job {
    pg_kernel *add1;
    pg_array *x, *y;
    float got[N];
    pg_status st;
} reader_job;

static void *launch_then_read(void *p) {
    reader_job *j = p;
    pg_arg args[] = {pg_arg_array(j->y), pg_arg_array(j->x), pg_arg_int(N)};
    j->st = pg_kernel_launch(j->add1, dim1(N / 256), dim1(256), 0, args, 3);
    if (!j->st)
        j->st = pg_array_read(j->y, 0, N, j->got);
    return NULL;
}

static void stale_read_behind_mapping(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *add1 = test_kernel(rt, "add1", NULL);
    pg_array *x = test_array(rt, N);
    float v[N];
    for (int i = 0; i < N; i++)
        v[i] = (float)i;
    REQUIRE_OK(pg_array_write(x, 0, N, v));
    int wrong = 0;
    for (int round = 0; round < 10; round++) {
        reader_job *j = calloc(1, sizeof *j);
        j->add1 = add1;
        j->x = x;
        j->y = test_array(rt, N);
        void *hv;
        REQUIRE_OK(pg_array_map(x, PG_ACCESS_INOUT, &hv)); /* a writable view of the input */
        pthread_t t;
        pthread_create(&t, NULL, launch_then_read, j);
        for (int w = 0; w < 2000 && pending(rt) == 0; w++)
            sleep_ms(1);
        CHECK(pending(rt) == 1); /* the launch is held back behind the mapping */
        sleep_ms(20);            /* the reader is now waiting for y */
        REQUIRE_OK(pg_array_unmap(x));
        pthread_join(t, NULL);
        CHECK_OK(j->st);
        for (int i = 0; i < N; i++)
            if (j->got[i] != (float)i + 1.0f) {
                if (!wrong++)
                    fprintf(stderr, "round %d: y[%d] = %g, expected %g\n", round, i, j->got[i],
                            (float)i + 1.0f);
                break;
            }
        CHECK_OK(pg_array_free(j->y));
        free(j);
    }
    CHECK(wrong == 0);
    CHECK_OK(pg_runtime_free(rt));
}

/* ---- close() while another thread reads, compiles or launches */

typedef struct close_job {
    pg_runtime *rt;
    pg_kernel *k;
    pg_array *a;
    int count;
    _Atomic int started;
    pg_status st;
    long launches;
} close_job;

static void *read_loop(void *p) {
    close_job *j = p;
    float *buf = malloc((size_t)j->count * sizeof *buf);
    atomic_store(&j->started, 1);
    for (;;) {
        pg_status st = pg_array_read(j->a, 0, (uint64_t)j->count, buf);
        if (st) {
            j->st = st;
            free(buf);
            return NULL;
        }
    }
}

static void *launch_loop(void *p) {
    close_job *j = p;
    pg_arg args[] = {pg_arg_array(j->a), pg_arg_float(2.0f), pg_arg_int(j->count)};
    atomic_store(&j->started, 1);
    for (;;) {
        pg_status st = pg_kernel_launch(j->k, dim1(1), dim1(64), 0, args, 3);
        if (st) {
            j->st = st;
            return NULL;
        }
        j->launches++;
    }
}

static const char *FRESH_SRC = "extern \"C\" __global__ void fresh_%d(float *y, int n) {\n"
                               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "  if (i < n) y[i] = 7.0f; }\n";

static void *compile_one(void *p) {
    close_job *j = p;
    char src[512], name[64];
    /* A name no earlier run cached: this compile really runs the compiler. */
    int tag = (int)(time(NULL) % 100000) * 100 + (int)(getpid() % 100);
    snprintf(src, sizeof src, FRESH_SRC, tag);
    snprintf(name, sizeof name, "fresh_%d", tag);
    atomic_store(&j->started, 1);
    j->st = pg_kernel_new(j->rt, src, name, NULL, NULL, &j->k);
    return NULL;
}

static void close_while(void *(*fn)(void *), int count, const char *what) {
    close_job j = {0};
    j.rt = test_runtime("host:2", NULL, NULL);
    j.count = count;
    j.k = test_kernel(j.rt, "fill", NULL);
    j.a = test_array(j.rt, count);
    pthread_t t;
    pthread_create(&t, NULL, fn, &j);
    while (!atomic_load(&j.started))
        sleep_ms(1);
    sleep_ms(30);
    pg_status st = pg_runtime_free(j.rt);
    CHECK_OK(st);
    pthread_join(t, NULL);
    /* The other thread's call either finished before the close or was refused by it. */
    if (fn != compile_one)
        CHECK(j.st == PG_ERROR_STATE);
    else
        CHECK(j.st == PG_OK || j.st == PG_ERROR_STATE);
    /* Everything of a closed runtime is refused, nothing crashes. */
    float f;
    CHECK_STATUS(pg_array_read(j.a, 0, 1, &f), PG_ERROR_STATE);
    pg_arg args[] = {pg_arg_array(j.a), pg_arg_float(1.0f), pg_arg_int(1)};
    CHECK_STATUS(pg_kernel_launch(j.k, dim1(1), dim1(1), 0, args, 3), PG_ERROR_STATE);
    CHECK_STATUS(pg_runtime_sync(j.rt), PG_ERROR_STATE);
    CHECK_STATUS(pg_runtime_free(j.rt), PG_ERROR_STATE);
    fprintf(stderr, "close while %s: other thread got %s\n", what, pg_status_name(j.st));
}

/* ---- a handle freed while another thread uses it */

typedef struct free_job {
    pg_array *a;
    _Atomic int go;
} free_job;

static void *read_until_freed(void *p) {
    free_job *j = p;
    float buf[256];
    while (!atomic_load(&j->go))
        ;
    while (pg_array_read(j->a, 0, 256, buf) == PG_OK)
        ;
    return NULL;
}

static void free_racing_use(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    for (int round = 0; round < 3000; round++) {
        free_job j = {test_array(rt, 256), 0};
        pthread_t t;
        pthread_create(&t, NULL, read_until_freed, &j);
        atomic_store(&j.go, 1);
        for (volatile int spin = 0; spin < (round % 200) * 50; spin++)
            ;
        /* Refused while the reader's copy is in progress (the array is mapped for it). */
        pg_status st;
        while ((st = pg_array_free(j.a)) == PG_ERROR_STATE && strstr(pg_last_error(), "mapped"))
            ;
        CHECK_OK(st);
        pthread_join(t, NULL);
        float f;
        CHECK_STATUS(pg_array_read(j.a, 0, 1, &f), PG_ERROR_STATE);
    }
    CHECK_OK(pg_runtime_free(rt));
}

/* ---- fork() after the runtime was used */

static int child_after_fork(pg_runtime *rt, pg_kernel *fill, pg_array *a) {
    pg_arg args[] = {pg_arg_array(a), pg_arg_float(1.0f), pg_arg_int(N)};
    if (pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, args, 3) != PG_ERROR_STATE)
        return 10;
    if (!strstr(pg_last_error(), "fork"))
        return 11;
    float f;
    if (pg_array_read(a, 0, 1, &f) != PG_ERROR_STATE)
        return 12;
#if defined(__SANITIZE_THREAD__)
    /* ThreadSanitizer cannot start threads in the child of a multi-threaded fork ("dup thread
     * with used id"): the plain and ASan builds check the new runtime in the child. */
    fprintf(stderr, "fork: new runtime in the child not checked under ThreadSanitizer\n");
    return pg_runtime_free(rt) ? 18 : 0;
#endif
    /* A runtime of its own works in the child. */
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    pg_runtime *rt2 = NULL;
    if (pg_runtime_new(&o, &rt2))
        return 13;
    pg_kernel *k2 = NULL;
    if (pg_kernel_new(rt2, TEST_SRC, "fill", NULL, NULL, &k2))
        return 14;
    int64_t n = N;
    pg_array *b = NULL;
    if (pg_array_new(rt2, PG_FLOAT32, 1, &n, &b))
        return 15;
    pg_arg bargs[] = {pg_arg_array(b), pg_arg_float(4.0f), pg_arg_int(N)};
    if (pg_kernel_launch(k2, dim1(N / 256), dim1(256), 0, bargs, 3) || pg_array_read(b, 7, 1, &f) ||
        f != 4.0f)
        return 16;
    if (pg_runtime_free(rt2))
        return 17;
    /* Closing the inherited runtime forgets it: its threads are not in this process. */
    if (pg_runtime_free(rt))
        return 18;
    return 0;
}

static void fork_after_use(void) {
    pg_runtime *rt = test_runtime("host:2", NULL, NULL);
    pg_kernel *fill = test_kernel(rt, "fill", NULL);
    pg_array *a = test_array(rt, N);
    pg_arg args[] = {pg_arg_array(a), pg_arg_float(3.0f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(fill, dim1(N / 256), dim1(256), 0, args, 3));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* A sanitizer's allocator lock held by a busy worker at fork time stays held in the child,
     * where the next allocation then blocks for ever: fork with the workers idle. */
    REQUIRE_OK(pg_runtime_sync(rt));
#endif
    /* Otherwise work may still be in flight on the workers when the process forks. */
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60); /* a hang is a failure, not a stuck suite */
        _exit(child_after_fork(rt, fill, a));
    }
    int status = 0;
    int waited = 0;
    while (waitpid(pid, &status, WNOHANG) == 0 && waited < 60000) {
        sleep_ms(10);
        waited += 10;
    }
    if (waited >= 60000) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fprintf(stderr, "fork: the child hung\n");
        CHECK(0);
    } else {
        if (!WIFEXITED(status) || WEXITSTATUS(status))
            fprintf(stderr, "fork: child status %d (exit %d, signal %d)\n", status,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    /* The parent's runtime is untouched. */
    float f;
    CHECK_OK(pg_array_read(a, 5, 1, &f));
    CHECK(f == 3.0f);
    CHECK_OK(pg_runtime_free(rt));
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : "";
    if (!*only || !strcmp(only, "stale"))
        stale_read_behind_mapping();
    if (!*only || !strcmp(only, "close-read"))
        close_while(read_loop, 32 << 20, "another thread reads (128 MiB)");
    if (!*only || !strcmp(only, "close-launch"))
        close_while(launch_loop, 1024, "another thread launches");
    if (!*only || !strcmp(only, "close-compile"))
        close_while(compile_one, 1024, "another thread compiles");
    if (!*only || !strcmp(only, "free"))
        free_racing_use();
    if (!*only || !strcmp(only, "fork"))
        fork_after_use();
    CHECK_DONE();
}
