/* test_gpu_faults.c: a kernel that faults on a GPU (illegal address, __trap, assert) fails its
 * computation with PG_ERROR_DEVICE naming the kernel, the GPU and CUDA's error; the GPU is out
 * for the runtime (CUDA keeps such a fault for the context's life); arrays with a host copy
 * stay readable, an array whose only copy was on that GPU is reported by name, new arrays work
 * on the host, the runtime closes, and a new runtime on that GPU says why it cannot have it (the
 * driver keeps the fault for the process). With two GPUs, work goes on on the other. Without a GPU
 * it says so and passes, unless PG_TEST_REQUIRE_GPU=1 (the GPU script), where a missing GPU is a
 * failure. */
#include "fault_checks.h"
#include "kernels_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 16)

static const char *SRC =
    "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n"
    /* The address comes in as a parameter, so the compiler cannot see it. */
    "extern \"C\" __global__ void wild(float *y, const float *x, long addr, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; if (i == n / 2) *(volatile float *)addr = 1.0f; }\n"
    "extern \"C\" __global__ void trap(float *y, const float *x, long unused, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; if (i == n - 1) __trap(); }\n"
    "extern \"C\" __global__ void asserts(float *y, const float *x, long unused, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;\n"
    "  y[i] = x[i]; assert(i != n / 2); }\n";

static pg_runtime *runtime(const char *devices) {
    pg_options o;
    pg_options_init(&o);
    o.devices = devices;
    o.policy = "gpu-fault-test";
    pg_runtime *rt = NULL;
    return pg_runtime_new(&o, &rt) == PG_OK ? rt : NULL;
}

static pg_array *array(pg_runtime *rt) {
    return test_array(rt, N);
}

static char fill_error[2048];

static pg_status fill(pg_runtime *rt, pg_array *y, float v, int dev) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, "fill", "out float *y, float v, int n", NULL, &k));
    pg_arg args[] = {pg_arg_array(y), pg_arg_float(v), pg_arg_int(N)};
    want = dev;
    pg_status st = pg_kernel_launch(k, dim1(N / 256), dim1(256), 0, args, 3);
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", pg_last_error());
    pg_kernel_free(k);
    if (st) /* the message again, for the caller: the free above cleared it */
        snprintf(fill_error, sizeof fill_error, "%s", msg);
    return st;
}

typedef struct fault_case {
    const char *kernel;
    const char *cuda_error; /* in the error message */
} fault_case;

static const fault_case CASES[] = {
    {"wild", "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {"trap", "CUDA_ERROR_"},
    {"asserts", "CUDA_ERROR_ASSERT"},
};

/* One fault on GPU `dev` of a runtime over `devices`. Runs in a process of its own: the CUDA
 * driver keeps such a fault until the process ends (a fresh context on that GPU gets it back,
 * measured with CUDA 13 on an H100), so nothing after it in the process can use that GPU. */
static void one_case(const fault_case *fc, const char *devices, int dev) {
    printf("case %s on GPU %d of devices=%s\n", fc->kernel, dev, devices);
    fflush(stdout);
    pg_runtime *rt = runtime(devices);
    if (!rt) {
        fprintf(stderr, "runtime on %s: %s\n", devices, pg_last_error());
        exit(1);
    }
    int ndev;
    pg_device_info info[PG_MAX_DEVICES];
    REQUIRE_OK(pg_runtime_devices(rt, info, PG_MAX_DEVICES, &ndev));
    static float host[N];
    for (int i = 0; i < N; i++)
        host[i] = 1.0f;
    pg_array *x = array(rt), *z = array(rt), *w = array(rt), *y = array(rt);
    REQUIRE_OK(pg_array_write(x, 0, N, host)); /* current on the host */
    REQUIRE_OK(fill(rt, z, 3.0f, dev));
    CHECK(holds_n(z, N, 3.0f)); /* z has a host copy now */
    REQUIRE_OK(fill(rt, w, 5.0f, dev));
    REQUIRE_OK(pg_runtime_sync(rt)); /* w's only copy is on the GPU, fine so far */

    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, fc->kernel, NULL, NULL, &k));
    pg_arg args[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(16), pg_arg_int(N)};
    want = dev;
    CHECK_OK(pg_kernel_launch(k, dim1(N / 256), dim1(256), 0, args, 4));
    char gpu[16], quoted[64];
    snprintf(gpu, sizeof gpu, "GPU %d", dev);
    snprintf(quoted, sizeof quoted, "'%s'", fc->kernel);
    CHECK(read_fails_n(y, N, quoted, gpu, fc->cuda_error));
    /* The fault is reported once by the next sync (reads do not take it), then never again. */
    pg_status s1 = pg_runtime_sync(rt);
    CHECK(s1 == PG_ERROR_DEVICE || s1 == PG_OK);
    CHECK_OK(pg_runtime_sync(rt));

    /* What has a host copy is still there; w's only copy was on the failed GPU. */
    CHECK(holds_n(x, N, 1.0f));
    CHECK(holds_n(z, N, 3.0f));
    char wid[32];
    snprintf(wid, sizeof wid, "array %llu", (unsigned long long)array_id(w));
    CHECK(read_fails_n(w, N, wid, NULL, NULL));

    /* New arrays work on the host; new launches go to another GPU, or fail clearly. */
    pg_array *v = array(rt);
    for (int i = 0; i < N; i++)
        host[i] = 7.0f;
    CHECK_OK(pg_array_write(v, 0, N, host));
    CHECK(holds_n(v, N, 7.0f));
    pg_status sf = fill(rt, v, 8.0f, dev);
    printf("a launch after the fault: %s: %s\n", pg_status_name(sf), sf ? fill_error : "");
    if (ndev == 1) {
        CHECK(sf == PG_ERROR_DEVICE && strstr(fill_error, "every device has failed"));
        CHECK(holds_n(v, N, 7.0f)); /* the failed launch changed nothing */
    } else if (sf == PG_OK) {
        CHECK(holds_n(v, N, 8.0f)); /* ran on another GPU */
    } else {
        /* A driver that keeps the fault for the whole process refuses the other GPUs too: then
         * the error says so for each of them, with the CUDA error that refused it. */
        CHECK(sf == PG_ERROR_DEVICE && strstr(fill_error, "every device has failed") &&
              strstr(fill_error, "device 1: ") && strstr(fill_error, "CUDA_ERROR_"));
        CHECK(holds_n(v, N, 7.0f));
    }
    /* x was only read by the failed kernel: writing it works. */
    for (int i = 0; i < N; i++)
        host[i] = 2.0f;
    CHECK_OK(pg_array_write(x, 0, N, host));
    CHECK(holds_n(x, N, 2.0f));
    pg_kernel_free(k);
    pg_status sc = pg_runtime_free(rt);
    CHECK(sc == PG_OK || sc == PG_ERROR_DEVICE);

    /* A new runtime on that GPU says why it cannot have it; devices=auto goes on without. */
    pg_options o;
    pg_options_init(&o);
    o.devices = "cuda:0";
    pg_runtime *rt2 = NULL;
    CHECK_STATUS(pg_runtime_new(&o, &rt2), PG_ERROR_DEVICE);
    printf("a new runtime on GPU 0: %s\n", pg_last_error());
    CHECK(strstr(pg_last_error(), "GPU 0") && strstr(pg_last_error(), "restart the process"));
    o.devices = "auto";
    if (ndev == 1) {
        REQUIRE_OK(pg_runtime_new(&o, &rt2));
        pg_array *a = array(rt2);
        CHECK_OK(fill(rt2, a, 4.0f, 0));
        CHECK(holds_n(a, N, 4.0f));
        CHECK_OK(pg_runtime_free(rt2));
    }
}

/* After a kernel's fault nothing has seen yet, a new array's host copy (pinned memory needs a
 * context, and the faulted one fails every call): it works (another context, or plain memory),
 * or the error says that the GPU is unusable after an earlier fault, that CUDA keeps such
 * faults, which kernel was running there, and what to do (issue 36: it read as if the pinned
 * allocation had faulted). In a child of its own; 77: no GPU. */
static int alloc_after_fault(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        pg_runtime *rt = runtime("cuda:0");
        if (!rt)
            _exit(77);
        static float host[N];
        pg_array *x = array(rt), *y = array(rt);
        REQUIRE_OK(pg_array_write(x, 0, N, host));
        pg_kernel *k = NULL;
        REQUIRE_OK(pg_kernel_new(rt, SRC, "wild", NULL, NULL, &k));
        pg_arg args[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(16), pg_arg_int(N)};
        want = 0;
        CHECK_OK(pg_kernel_launch(k, dim1(N / 256), dim1(256), 0, args, 4));
        usleep(200000); /* the kernel has faulted; nothing asked yet */
        pg_array *u = array(rt);
        pg_status su = pg_array_write(u, 0, N, host);
        printf("a new array after an unseen fault: %s: %s\n", pg_status_name(su),
               su ? pg_last_error() : "");
        if (su != PG_OK)
            CHECK(su == PG_ERROR_DEVICE && strstr(pg_last_error(), "unusable for the rest") &&
                  strstr(pg_last_error(), "sticky") && strstr(pg_last_error(), "'wild'") &&
                  strstr(pg_last_error(), "restart the process"));
        fflush(stdout);
        _exit(pg_check_failures ? 1 : 0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A fork() child of a process that initialised CUDA cannot use CUDA: its runtime on a GPU is
 * refused saying so, and what to do (spawn, a fresh process). In a child of its own, so that
 * this process stays free of CUDA for the cases' children; 77: no GPU. */
static int fork_after_cuda(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        pg_runtime *rt = runtime("cuda:0");
        if (!rt)
            _exit(77);
        REQUIRE_OK(pg_runtime_free(rt));
        fflush(stdout);
        pid_t child = fork();
        if (child == 0) {
            pg_runtime *rt2 = runtime("cuda:0");
            printf("a runtime on a GPU in a fork() child: %s\n",
                   rt2 ? "made (unexpected)" : pg_last_error());
            CHECK(!rt2 && strstr(pg_last_error(), "fork() child") &&
                  strstr(pg_last_error(), "cannot be used in a forked child") &&
                  strstr(pg_last_error(), "'spawn'"));
            fflush(stdout);
            _exit(pg_check_failures ? 1 : 0);
        }
        int st = 0;
        if (child < 0 || waitpid(child, &st, 0) < 0)
            _exit(1);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Each case in a child process (see one_case); 77 from a child: no GPU. */
static int run_child(int i, int all_gpus) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        pg_runtime *rt = runtime(all_gpus ? "cuda" : "cuda:0");
        if (!rt) {
            printf("no GPU: %s; the GPU fault cases need one\n", pg_last_error());
            fflush(stdout);
            _exit(77);
        }
        int ngpu;
        pg_device_info info[PG_MAX_DEVICES];
        REQUIRE_OK(pg_runtime_devices(rt, info, PG_MAX_DEVICES, &ngpu));
        REQUIRE_OK(pg_runtime_free(rt));
        if (all_gpus && ngpu < 2) {
            printf("one GPU: the case of a fault beside a working GPU needs two\n");
            fflush(stdout);
            _exit(0);
        }
        one_case(&CASES[i], all_gpus ? "cuda" : "cuda:0", 0);
        fflush(stdout);
        _exit(pg_check_failures ? 1 : 0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void) {
    pg_device_policy pol = {.choose = pick_device};
    REQUIRE_OK(pg_policy_register("gpu-fault-test", &pol));
    int rf = fork_after_cuda(), ra = alloc_after_fault();
    if (rf && rf != 77) {
        fprintf(stderr, "fork after CUDA: child exit %d\n", rf);
        pg_check_failures++;
    }
    if (ra && ra != 77) {
        fprintf(stderr, "a new array after an unseen fault: child exit %d\n", ra);
        pg_check_failures++;
    }
    const char *only = getenv("PG_FAULT_CASE");
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (only && strcmp(only, CASES[i].kernel))
            continue;
        for (int all = 0; all < 2; all++) {
            int rc = run_child((int)i, all);
            if (rc == 77) {
                if (getenv("PG_TEST_REQUIRE_GPU") && atoi(getenv("PG_TEST_REQUIRE_GPU")))
                    pg_check_failures++;
                CHECK_DONE();
            }
            if (rc) {
                fprintf(stderr, "case %s (%s): child exit %d\n", CASES[i].kernel,
                        all ? "every GPU" : "GPU 0", rc);
                pg_check_failures++;
            }
        }
    }
    CHECK_DONE();
}
