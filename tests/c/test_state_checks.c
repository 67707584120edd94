/* test_state_checks.c: the engine's state checks (core/check.h, issue 37). Each invariant
 * function says "fine" of a runtime's real state and names what is wrong once the state is
 * broken by hand: coherence (a piece current on a device with no buffer there, valid nowhere),
 * memory (a device over device_memory_limit, a running kernel's buffer gone) and the DAG (a
 * history naming a freed computation). In a debug build (the ASan and TSan suites) the checks
 * also run where each module's work ends: a broken history makes the next launch that commits
 * into it abort naming the check, in a child process. */
#include "core/check.h"
#include "core/handle.h"
#include "kernels_common.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N = 4096 };

static pg_options limited(void) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:2";
    o.device_memory_limit = 4 * N * sizeof(float);
    return o;
}

/* x written by a kernel on a device: one piece, current there only. */
static void make_written(pg_runtime **rt, pg_kernel **fill, pg_array **x) {
    pg_options o = limited();
    REQUIRE_OK(pg_runtime_new(&o, rt));
    *fill = test_kernel(*rt, "fill", NULL);
    *x = test_array(*rt, N);
    pg_arg args[] = {pg_arg_array(*x), pg_arg_float(1.0f), pg_arg_int(N)};
    REQUIRE_OK(pg_kernel_launch(*fill, dim1(N / 256), dim1(256), 0, args, 3));
    REQUIRE_OK(pg_runtime_sync(*rt));
}

static void expect(int broken, const char *why, const char *needle, const char *what) {
    if (!broken || !strstr(why, needle)) {
        fprintf(stderr, "%s: %s \"%s\", expected a failure naming \"%s\"\n", what,
                broken ? "failed with" : "passed", broken ? why : "", needle);
        pg_check_failures++;
    }
}

static void invariants(void) {
    pg_runtime *rth;
    pg_kernel *fill;
    pg_array *xh;
    make_written(&rth, &fill, &xh);
    pg__array *x = pg__enter_array(xh, "test");
    REQUIRE_OK(x ? PG_OK : PG_ERROR_STATE);
    pg__runtime *rt = x->rt;
    char why[512];
    int dev = -1;
    for (int d = 0; d < rt->ndev; d++)
        if (x->valid & PG__LOC_BIT(PG__LOC(d)))
            dev = d;
    CHECK(dev >= 0);
    int other = dev == 0 ? 1 : 0;

    /* the state as the runtime left it is fine */
    CHECK(pg__coh_invariant(rt, x, why, sizeof why) == 0);
    CHECK(pg__evict_invariant(rt, dev, NULL, why, sizeof why) == 0);
    CHECK(pg__deps_invariant(rt, x, NULL, why, sizeof why) == 0);

    /* coherence: current on a device that has no buffer of it (as if evicted) */
    uint32_t valid = x->valid;
    CHECK(x->dev[other] == NULL);
    x->valid |= PG__LOC_BIT(PG__LOC(other));
    expect(pg__coh_invariant(rt, x, why, sizeof why), why, "which has no buffer",
           "coherence: valid without a buffer");
    /* ... and valid nowhere while not lost */
    x->valid = 0;
    expect(pg__coh_invariant(rt, x, why, sizeof why), why, "valid nowhere",
           "coherence: valid nowhere");
    x->valid = valid;

    /* memory: over the limit */
    uint64_t used = rt->stats.device_bytes[dev];
    rt->stats.device_bytes[dev] = rt->opt.device_memory_limit + 1;
    expect(pg__evict_invariant(rt, dev, NULL, why, sizeof why), why, "over device_memory_limit",
           "memory: over the limit");
    rt->stats.device_bytes[dev] = used;
    /* ... and a computation placed there without its buffer */
    pg__comp c;
    memset(&c, 0, sizeof c);
    pg__carg arg = {x, PG_ACCESS_OUT};
    c.id = 77;
    c.refs = 1;
    c.kind = PG__KERNEL;
    c.nargs = 1;
    c.args = &arg;
    expect(pg__evict_invariant(rt, other, &c, why, sizeof why), why, "lacks array",
           "memory: a placed computation's buffer missing");
    CHECK(pg__evict_invariant(rt, dev, &c, why, sizeof why) == 0);

    /* the DAG: a history naming a freed computation */
    c.refs = 0;
    void *writer = x->hist.writer;
    x->hist.writer = &c;
    expect(pg__deps_invariant(rt, x, NULL, why, sizeof why), why, "freed computation",
           "DAG: a freed writer");
    x->hist.writer = writer;
    pg__comp *parent = &c;
    pg__comp keep;
    memset(&keep, 0, sizeof keep);
    keep.refs = 1;
    keep.nparents = 1;
    keep.parents = &parent;
    expect(pg__deps_invariant(rt, x, &keep, why, sizeof why), why, "a parent",
           "DAG: a freed parent");

    pg__leave(rt);
    CHECK_OK(pg_kernel_free(fill));
    CHECK_OK(pg_array_free(xh));
    CHECK_OK(pg_runtime_free(rth));
}

/* In the child: break x's history (a reader freed), then launch a kernel reading x: committing
 * it into that history runs the DAG check, which must abort. */
static void child_breaks_history(void) {
    pg_runtime *rth;
    pg_kernel *fill;
    pg_array *xh;
    make_written(&rth, &fill, &xh);
    pg__array *x = pg__enter_array(xh, "test");
    if (!x)
        _exit(3);
    static pg__comp gone; /* refs 0: freed */
    gone.id = 99;
    gone.state = PG__DONE;
    if (pg__history_reserve(&x->hist))
        _exit(3);
    pg__history_add_reader(&x->hist, &gone);
    pg__leave(x->rt);
    pg_kernel *add1 = test_kernel(rth, "add1", NULL);
    pg_array *y = test_array(rth, N);
    pg_arg args[] = {pg_arg_array(y), pg_arg_array(xh), pg_arg_int(N)};
    (void)pg_kernel_launch(add1, dim1(N / 256), dim1(256), 0, args, 3);
    _exit(0); /* the check did not stop it */
}

static void checks_at_boundaries(void) {
    if (!PG__CHECKS) {
        printf("state checks are compiled out of this build (NDEBUG): the checks at module "
               "boundaries run in Debug builds (make test-asan, make test-tsan)\n");
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child_breaks_history();
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
        fprintf(stderr,
                "the launch into a broken history was not stopped by the DAG check "
                "(status %#x)\n",
                status);
        pg_check_failures++;
    }
}

int main(void) {
    checks_at_boundaries(); /* first: the child makes its runtime in a process with no other */
    invariants();
    CHECK_DONE();
}
