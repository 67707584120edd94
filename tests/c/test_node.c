/* test_node.c: several processes share a node (issue 39), on CPU devices. The driver runs this
 * same program as child processes (argv[1] = "child") with the default share ("node") in a
 * node folder of its own (PG_NODE_DIR), and checks:
 * - two processes see each other in pg_node_status, and the second places its independent
 *   calls on the devices the first does not keep busy (the first holds kernels on host:0 and
 *   host:1; without the node, the second's calls go to devices 0 and 1);
 * - a process killed with kill -9 is gone from pg_node_status, with its work and memory, as
 *   soon as it is dead; one waiting for its memory then proceeds;
 * - admission: a call whose array does not fit beside another process's memory (under
 *   device_memory_limit) waits until that memory is freed, then runs; one that could never fit
 *   fails at once naming the sizes;
 * - four processes on host:2, all busy (a held kernel each), settle two per device: each
 *   places its independent calls on one device (its home), as pinning would, rather than
 *   spreading them over both (4 processes time-sharing each GPU); once the others are idle,
 *   one process's calls spread over both devices again;
 * - a home left by every process that called it home is taken by one of the processes that
 *   share another (clients of the node in this process);
 * - another user (as root: a child run as nobody) gets a node of its own, sees nothing of ours
 *   and cannot open our state. */
#include "check.h"
#include "node/node.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *SRC =
    "extern \"C\" __global__ void hold(float *y, int n, unsigned long long flag) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i == 0) while (*(volatile const int *)flag == 0) {\n"
    "    struct timespec t = {0, 200000}; nanosleep(&t, 0); }\n"
    "  if (i < n) y[i] = 1.0f; }\n"
    "extern \"C\" __global__ void add(float *y, const float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }\n"
    "extern \"C\" __global__ void fill(float *y, float v, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = v; }\n";

static pg_runtime *runtime(const char *devices, const char *limit) {
    pg_options o;
    pg_options_init(&o);
    REQUIRE_OK(pg_options_set(&o, "devices", devices));
    if (limit)
        REQUIRE_OK(pg_options_set(&o, "device_memory_limit", limit));
    pg_runtime *rt = NULL;
    REQUIRE_OK(pg_runtime_new(&o, &rt));
    return rt;
}

static pg_kernel *kernel(pg_runtime *rt, const char *name) {
    pg_kernel *k = NULL;
    REQUIRE_OK(pg_kernel_new(rt, SRC, name, NULL, NULL, &k));
    return k;
}

static pg_array *array(pg_runtime *rt, int64_t n) {
    pg_array *a = NULL;
    REQUIRE_OK(pg_array_new(rt, PG_FLOAT32, 1, &n, &a));
    return a;
}

static void fill(pg_kernel *k, pg_array *a, int n, float v) {
    pg_arg args[] = {pg_arg_array(a), pg_arg_float(v), pg_arg_int(n)};
    REQUIRE_OK(pg_kernel_launch(k, (pg_dim3){(unsigned)(n + 255) / 256, 1, 1}, (pg_dim3){256, 1, 1},
                                0, args, 3));
}

static char *status(void) {
    char *s = NULL;
    REQUIRE_OK(pg_node_status(&s));
    return s;
}

/* Does the status list a client with this pid? */
static int has_client(const char *s, int pid) {
    char key[64];
    snprintf(key, sizeof key, "{\"pid\": %d,", pid);
    return strstr(s, key) != NULL;
}

static void say(const char *line) {
    printf("%s\n", line);
    fflush(stdout);
}

static void hear(const char *want) {
    char line[128];
    if (!fgets(line, sizeof line, stdin) || strncmp(line, want, strlen(want))) {
        fprintf(stderr, "child: expected '%s'\n", want);
        exit(3);
    }
}

/* ---- children ---- */

/* Two kernels held on host:0 and host:1 until told to go. */
static int child_hold(void) {
    pg_runtime *rt = runtime("host:2", NULL);
    pg_kernel *k = kernel(rt, "hold");
    static volatile int flag;
    pg_array *a[2] = {array(rt, 1 << 20), array(rt, 1 << 20)};
    for (int i = 0; i < 2; i++) {
        pg_arg args[] = {pg_arg_array(a[i]), pg_arg_int(1 << 20),
                         pg_arg_uint((uint64_t)(uintptr_t)&flag)};
        REQUIRE_OK(pg_kernel_launch(k, (pg_dim3){4096, 1, 1}, (pg_dim3){256, 1, 1}, 0, args, 3));
    }
    say("ready");
    hear("go");
    flag = 1;
    REQUIRE_OK(pg_runtime_sync(rt));
    REQUIRE_OK(pg_runtime_free(rt));
    return 0;
}

/* Two independent calls on host:4; prints where they ran and whether it saw `other`. */
static int child_place(int other) {
    pg_runtime *rt = runtime("host:4", NULL);
    char *s = status();
    int seen = has_client(s, other) && has_client(s, (int)getpid());
    pg_string_free(s);
    pg_kernel *k = kernel(rt, "add");
    enum { N = 1 << 14 };
    static float host[N];
    pg_array *x[2], *y[2];
    for (int i = 0; i < 2; i++) {
        x[i] = array(rt, N);
        y[i] = array(rt, N);
        REQUIRE_OK(pg_array_write(x[i], 0, N, host));
        pg_arg args[] = {pg_arg_array(y[i]), pg_arg_array(x[i]), pg_arg_int(N)};
        REQUIRE_OK(pg_kernel_launch(k, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, args, 3));
    }
    REQUIRE_OK(pg_runtime_sync(rt));
    pg_dag *dag = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &dag));
    size_t nv = 0;
    REQUIRE_OK(pg_dag_vertex_count(dag, &nv));
    int dev[2] = {-1, -1}, nk = 0;
    for (size_t i = 0; i < nv && nk < 2; i++) {
        pg_dag_vertex_info v;
        REQUIRE_OK(pg_dag_vertex(dag, i, &v));
        if (v.kind == PG_DAG_KERNEL)
            dev[nk++] = v.device;
    }
    pg_dag_free(dag);
    printf("seen %d devices %d %d\n", seen, dev[0], dev[1]);
    fflush(stdout);
    REQUIRE_OK(pg_runtime_free(rt));
    return 0;
}

/* The devices of the kernel vertices named `name` in rt's DAG after the first `skip`, as
 * " d d d ...". */
static void devices_of(pg_runtime *rt, const char *name, int skip, char *out, size_t size) {
    pg_dag *dag = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &dag));
    size_t nv = 0, len = 0;
    REQUIRE_OK(pg_dag_vertex_count(dag, &nv));
    out[0] = '\0';
    for (size_t i = 0; i < nv; i++) {
        pg_dag_vertex_info v;
        REQUIRE_OK(pg_dag_vertex(dag, i, &v));
        if (v.kind == PG_DAG_KERNEL && !strcmp(v.name, name) && skip-- <= 0 && len + 8 < size)
            len += (size_t)snprintf(out + len, size - len, " %d", v.device);
    }
    pg_dag_free(dag);
}

enum { SETTLE_CALLS = 8 };

/* One of four processes on host:2: holds a kernel (it is busy), then places SETTLE_CALLS
 * independent calls while all four are busy and prints their devices; the first (`again`)
 * places as many more once the others are idle. */
static int child_settle(int again) {
    pg_runtime *rt = runtime("host:2", NULL);
    pg_kernel *hold = kernel(rt, "hold"), *add = kernel(rt, "add");
    static volatile int flag;
    enum { N = 1 << 12 };
    say("joined");
    hear("hold");
    pg_array *h = array(rt, N);
    pg_arg hargs[] = {pg_arg_array(h), pg_arg_int(N), pg_arg_uint((uint64_t)(uintptr_t)&flag)};
    REQUIRE_OK(pg_kernel_launch(hold, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, hargs, 3));
    say("held");
    hear("place");
    static float host[N];
    for (int round = 0; round < 1 + again; round++) {
        for (int i = 0; i < SETTLE_CALLS; i++) {
            pg_array *x = array(rt, N), *y = array(rt, N);
            REQUIRE_OK(pg_array_write(x, 0, N, host));
            pg_arg args[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
            REQUIRE_OK(
                pg_kernel_launch(add, (pg_dim3){N / 256, 1, 1}, (pg_dim3){256, 1, 1}, 0, args, 3));
            REQUIRE_OK(pg_array_free(x));
            REQUIRE_OK(pg_array_free(y));
        }
        char devs[256];
        devices_of(rt, "add", round * SETTLE_CALLS, devs, sizeof devs);
        printf("devices%s\n", devs);
        fflush(stdout);
        if (round == 0) {
            hear("release");
            flag = 1;
            REQUIRE_OK(pg_runtime_sync(rt)); /* idle from here: nothing in flight */
            say("idle");
            if (again)
                hear("again"); /* the others are idle too */
        }
    }
    hear("bye");
    REQUIRE_OK(pg_runtime_free(rt));
    return 0;
}

/* Holds 768 KiB on host:0 (limit 1 MiB) until told to free it. */
static int child_hog(void) {
    pg_runtime *rt = runtime("host:1", "1M");
    pg_kernel *k = kernel(rt, "fill");
    pg_array *a = array(rt, 3 << 16);
    fill(k, a, 3 << 16, 2.0f);
    REQUIRE_OK(pg_runtime_sync(rt));
    say("ready");
    hear("free");
    REQUIRE_OK(pg_array_free(a));
    REQUIRE_OK(pg_runtime_sync(rt));
    say("freed");
    hear("end");
    REQUIRE_OK(pg_runtime_free(rt));
    return 0;
}

/* Wants 512 KiB on host:0 (limit 1 MiB): waits for the hog; then a call that never fits. */
static int child_want(void) {
    pg_runtime *rt = runtime("host:1", "1M");
    pg_kernel *k = kernel(rt, "fill");
    pg_array *a = array(rt, 1 << 17);
    say("launching");
    fill(k, a, 1 << 17, 3.0f);
    say("launched");
    float v[2] = {0, 0};
    REQUIRE_OK(pg_array_read(a, (1 << 17) - 2, 2, v));
    pg_array *big = array(rt, 1 << 19); /* 2 MiB */
    pg_arg args[] = {pg_arg_array(big), pg_arg_float(1.0f), pg_arg_int(1 << 19)};
    pg_status st = pg_kernel_launch(k, (pg_dim3){2048, 1, 1}, (pg_dim3){256, 1, 1}, 0, args, 3);
    int never = st == PG_ERROR_OUT_OF_MEMORY && strstr(pg_last_error(), "2097152 bytes") &&
                strstr(pg_last_error(), "1048576");
    if (!never)
        fprintf(stderr, "never-fits: %s: %s\n", pg_status_name(st), pg_last_error());
    printf("values %g %g never %d\n", v[0], v[1], never);
    fflush(stdout);
    REQUIRE_OK(pg_runtime_free(rt));
    return 0;
}

/* Wants 512 KiB on host:2 (limit 1 MiB) beside the hog's 768 KiB on host:0: goes to host:1,
 * where there is room, without waiting; prints the device. */
static int child_want_two(void) {
    pg_runtime *rt = runtime("host:2", "1M");
    pg_kernel *k = kernel(rt, "fill");
    pg_array *a = array(rt, 1 << 17);
    fill(k, a, 1 << 17, 4.0f);
    float v = 0;
    REQUIRE_OK(pg_array_read(a, 5, 1, &v));
    pg_dag *dag = NULL;
    REQUIRE_OK(pg_dag_snapshot(rt, &dag));
    size_t nv = 0;
    int dev = -1;
    REQUIRE_OK(pg_dag_vertex_count(dag, &nv));
    for (size_t i = 0; i < nv; i++) {
        pg_dag_vertex_info vi;
        REQUIRE_OK(pg_dag_vertex(dag, i, &vi));
        if (vi.kind == PG_DAG_KERNEL)
            dev = vi.device;
    }
    pg_dag_free(dag);
    printf("device %d value %g\n", dev, v);
    fflush(stdout);
    REQUIRE_OK(pg_runtime_free(rt));
    return 0;
}

/* Run as another user: its own node, ours neither seen nor opened. */
static int child_other(int root_pid, const char *root_state) {
    char cache[] = "/tmp/pg-node-nobody-XXXXXX";
    if (!mkdtemp(cache))
        return 4;
    setenv("PG_CACHE_DIR", cache, 1);
    pg_runtime *rt = runtime("host:1", NULL);
    char *s = status();
    int own = has_client(s, (int)getpid()), ours = has_client(s, root_pid);
    pg_string_free(s);
    int fd = open(root_state, O_RDWR);
    int opened = fd >= 0, why = errno;
    if (fd >= 0)
        close(fd);
    printf("own %d ours %d opened %d errno %d\n", own, ours, opened, opened ? 0 : why);
    fflush(stdout);
    REQUIRE_OK(pg_runtime_free(rt));
    rmdir(cache);
    return 0;
}

/* Joins the node, takes its lock and keeps it until killed. */
static int child_die_locked(void) {
    const char *keys[] = {"host:0"};
    pg__node *n = NULL;
    REQUIRE_OK(pg__node_join("c", 1, keys, &n));
    REQUIRE_OK(pg__node_test_hold_lock(n));
    say("locked");
    hear("never");
    return 0;
}

/* ---- the driver ---- */

typedef struct child {
    pid_t pid;
    FILE *in, *out; /* its stdin, its stdout */
} child;

static child spawn(const char *mode, const char *arg, int as_nobody) {
    int to[2], from[2];
    if (pipe(to) || pipe(from))
        exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]);
        close(to[1]);
        close(from[0]);
        close(from[1]);
        if (as_nobody && (setgid(65534) || setuid(65534)))
            _exit(5);
        execl("/proc/self/exe", "test_node", "child", mode, arg, (char *)NULL);
        _exit(6);
    }
    close(to[0]);
    close(from[1]);
    child c = {pid, fdopen(to[1], "w"), fdopen(from[0], "r")};
    return c;
}

static void tell(child *c, const char *line) {
    fprintf(c->in, "%s\n", line);
    fflush(c->in);
}

/* The child's next line, or "" if none came within ms (or it ended). */
static const char *next_line(child *c, int ms, char *buf, size_t size) {
    struct pollfd p = {fileno(c->out), POLLIN, 0};
    buf[0] = '\0';
    if (poll(&p, 1, ms) <= 0 || !fgets(buf, (int)size, c->out))
        buf[0] = '\0';
    return buf;
}

static int finish(child *c) {
    fclose(c->in);
    fclose(c->out);
    int ws = 0;
    waitpid(c->pid, &ws, 0);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static void placement_and_kill(void) {
    char line[256], pidarg[32];
    child h = spawn("hold", "", 0);
    CHECK(!strcmp(next_line(&h, 60000, line, sizeof line), "ready\n"));
    char *s = status();
    CHECK(has_client(s, h.pid));
    CHECK(strstr(s, "\"language\": \"c\", \"devices\": [\"host:0\", \"host:1\"], \"inflight\": 2"));
    pg_string_free(s);

    snprintf(pidarg, sizeof pidarg, "%d", (int)h.pid);
    child p = spawn("place", pidarg, 0);
    int seen = 0, d0 = -1, d1 = -1;
    next_line(&p, 60000, line, sizeof line);
    CHECK(sscanf(line, "seen %d devices %d %d", &seen, &d0, &d1) == 3);
    CHECK(seen == 1);
    /* the devices host:0 and host:1 are busy with the other process's held kernels */
    CHECK(d0 >= 2 && d1 >= 2 && d0 != d1);
    if (!(d0 >= 2 && d1 >= 2))
        fprintf(stderr, "the second process placed its calls on devices %d and %d\n", d0, d1);
    CHECK(finish(&p) == 0);

    /* kill -9 of the holder: gone from the node as soon as it is dead */
    kill(h.pid, SIGKILL);
    CHECK(finish(&h) == 128 + SIGKILL);
    s = status();
    CHECK(!has_client(s, h.pid));
    CHECK(!strstr(s, "\"inflight\": 2"));
    pg_string_free(s);
}

/* Counts of 0s and 1s in "devices 0 1 ..."; 0 if the line is not that. */
static int count_devices(const char *line, int *n0, int *n1) {
    *n0 = *n1 = 0;
    if (strncmp(line, "devices", 7))
        return 0;
    for (const char *p = line + 7; *p; p++) {
        *n0 += *p == '0';
        *n1 += *p == '1';
    }
    return 1;
}

/* Four processes on two devices, all busy: two call each device home and place every
 * independent call there (before: each spread its calls over both, so each device time-shared
 * four processes' work where pinning gives it two). Then, with three of them idle, the fourth's
 * calls spread over both devices again. */
static void settle_and_spread(void) {
    enum { P = 4 };
    child c[P];
    char line[256];
    setenv("PG_NODE_HOMES", "1", 1); /* homes are off by default (core/share.h) */
    for (int i = 0; i < P; i++) { /* all join before any is busy, as processes started together */
        c[i] = spawn("settle", i == 0 ? "1" : "0", 0);
        CHECK(!strcmp(next_line(&c[i], 60000, line, sizeof line), "joined\n"));
    }
    for (int i = 0; i < P; i++) {
        tell(&c[i], "hold");
        CHECK(!strcmp(next_line(&c[i], 60000, line, sizeof line), "held\n"));
    }
    int home[2] = {0, 0};
    for (int i = 0; i < P; i++) {
        tell(&c[i], "place");
        int n0 = 0, n1 = 0;
        CHECK(count_devices(next_line(&c[i], 60000, line, sizeof line), &n0, &n1));
        CHECK(n0 + n1 == SETTLE_CALLS);
        CHECK(n0 == 0 || n1 == 0); /* concentrated on one device */
        if (n0 && n1)
            fprintf(stderr, "process %d placed its calls on both devices while all were busy: %s",
                    i, line);
        if (n0 + n1 == SETTLE_CALLS && (n0 == 0 || n1 == 0))
            home[n0 ? 0 : 1]++;
    }
    CHECK(home[0] == 2 && home[1] == 2); /* two per device */
    for (int i = 0; i < P; i++) {
        tell(&c[i], "release");
        CHECK(!strcmp(next_line(&c[i], 60000, line, sizeof line), "idle\n"));
    }
    tell(&c[0], "again");
    int n0 = 0, n1 = 0;
    CHECK(count_devices(next_line(&c[0], 60000, line, sizeof line), &n0, &n1));
    CHECK(n0 + n1 == SETTLE_CALLS);
    CHECK(n0 > 0 && n1 > 0); /* the others idle: its calls spread over both devices */
    if (!(n0 > 0 && n1 > 0))
        fprintf(stderr, "alone in work, process 0 placed its calls on one device: %s", line);
    for (int i = 0; i < P; i++) {
        tell(&c[i], "bye");
        CHECK(finish(&c[i]) == 0);
    }
    unsetenv("PG_NODE_HOMES");
}

/* Three clients of host:0 and host:1 (in this process): homes 0, 1, 0. The one homed on
 * host:1 leaves; within a reap period, one of the two sharing host:0 moves its home to host:1,
 * so while the other is busy on host:0 it keeps to host:1 alone. Before: it stayed on host:0
 * beside the other, for good (its work follows its data there). */
static void vacated_home_is_taken(void) {
    const char *keys[] = {"host:0", "host:1"};
    pg__node *a = NULL, *b = NULL, *c = NULL;
    REQUIRE_OK(pg__node_join("c", 2, keys, &a));
    REQUIRE_OK(pg__node_join("c", 2, keys, &b));
    REQUIRE_OK(pg__node_join("c", 2, keys, &c));
    pg__node_publish_load(a, 0, 1, 1000);
    pg__node_publish_load(b, 1, 1, 1000);
    CHECK(pg__node_home_mask(c) == 1u); /* beside busy a on host:0; busy b calls host:1 home */
    pg__node_leave(b);
    uint64_t inflight[2], backlog[2];
    int clients[2];
    for (int i = 0; i < 20 && pg__node_home_mask(c) != 2u; i++) {
        struct timespec t = {0, 50000000};
        nanosleep(&t, 0);
        pg__node_others(c, inflight, backlog, clients); /* reaps and rehomes every 200 ms */
    }
    CHECK(pg__node_home_mask(c) == 2u); /* its home is host:1 now; host:0 is a's, busy */
    CHECK(pg__node_home_mask(a) == 3u); /* a's home is host:0; c is not busy */
    pg__node_publish_load(a, 0, 0, 0);
    pg__node_leave(c);
    pg__node_leave(a);
}

/* A client killed while holding the node's lock: the next locker repairs (robust mutex), it
 * does not wait for ever; the dead client is gone. alarm: a hang fails the test. */
static void dies_holding_the_lock(void) {
    char line[64];
    child d = spawn("die_locked", "", 0);
    CHECK(!strcmp(next_line(&d, 60000, line, sizeof line), "locked\n"));
    kill(d.pid, SIGKILL);
    CHECK(finish(&d) == 128 + SIGKILL);
    alarm(20);
    char *s = status();
    alarm(0);
    CHECK(!has_client(s, d.pid));
    pg_string_free(s);
    pg_runtime *rt = runtime("host:1", NULL); /* joins: the lock works again */
    s = status();
    CHECK(has_client(s, (int)getpid()));
    pg_string_free(s);
    REQUIRE_OK(pg_runtime_free(rt));
}

static void admission(int kill_hog) {
    char line[256];
    child g = spawn("hog", "", 0);
    CHECK(!strcmp(next_line(&g, 60000, line, sizeof line), "ready\n"));
    char *s = status();
    CHECK(strstr(s, "\"bytes\": 786432"));
    pg_string_free(s);

    if (!kill_hog) { /* with two devices, the call goes where there is room */
        child t = spawn("want_two", "", 0);
        CHECK(!strcmp(next_line(&t, 60000, line, sizeof line), "device 1 value 4\n"));
        CHECK(finish(&t) == 0);
    }

    child w = spawn("want", "", 0);
    CHECK(!strcmp(next_line(&w, 60000, line, sizeof line), "launching\n"));
    /* It waits: the hog's 768 KiB and its 512 KiB do not fit under 1 MiB together. */
    CHECK(!strcmp(next_line(&w, 1000, line, sizeof line), ""));
    s = status();
    CHECK(has_client(s, w.pid) && has_client(s, g.pid));
    pg_string_free(s);
    if (kill_hog) {
        kill(g.pid, SIGKILL);
        CHECK(finish(&g) == 128 + SIGKILL);
    } else {
        tell(&g, "free");
        CHECK(!strcmp(next_line(&g, 60000, line, sizeof line), "freed\n"));
    }
    CHECK(!strcmp(next_line(&w, 60000, line, sizeof line), "launched\n"));
    next_line(&w, 60000, line, sizeof line);
    CHECK(!strcmp(line, "values 3 3 never 1\n"));
    if (strcmp(line, "values 3 3 never 1\n"))
        fprintf(stderr, "want said: %s\n", line);
    CHECK(finish(&w) == 0);
    if (!kill_hog) {
        tell(&g, "end");
        CHECK(finish(&g) == 0);
    }
}

static void other_user(const char *node_dir) {
    if (geteuid() != 0) {
        printf("not root: the other-user check needs root to start a process as nobody\n");
        return;
    }
    pg_runtime *rt = runtime("host:1", NULL); /* our node exists and lists us */
    char state[1200], line[256], pidarg[1300];
    snprintf(state, sizeof state, "%s/polygpu-0/node-v2", node_dir);
    snprintf(pidarg, sizeof pidarg, "%d:%s", (int)getpid(), state);
    child o = spawn("other", pidarg, 1);
    int own = -1, ours = -1, opened = -1, err = 0;
    next_line(&o, 60000, line, sizeof line);
    CHECK(sscanf(line, "own %d ours %d opened %d errno %d", &own, &ours, &opened, &err) == 4);
    CHECK(own == 1 && ours == 0 && opened == 0 && err == EACCES);
    CHECK(finish(&o) == 0);
    char *s = status();
    CHECK(has_client(s, (int)getpid()) && !has_client(s, o.pid));
    pg_string_free(s);
    struct stat st;
    CHECK(stat(state, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == 0);
    snprintf(state, sizeof state, "%s/polygpu-0", node_dir);
    CHECK(stat(state, &st) == 0 && (st.st_mode & 0777) == 0700);
    snprintf(state, sizeof state, "%s/polygpu-65534/node-v2", node_dir);
    CHECK(stat(state, &st) == 0 && st.st_uid == 65534);
    REQUIRE_OK(pg_runtime_free(rt));
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[2048];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR)
            remove_tree(p);
        else
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "child")) {
        const char *m = argv[2], *arg = argc > 3 ? argv[3] : "";
        if (!strcmp(m, "hold"))
            return child_hold();
        if (!strcmp(m, "place"))
            return child_place(atoi(arg));
        if (!strcmp(m, "hog"))
            return child_hog();
        if (!strcmp(m, "want"))
            return child_want();
        if (!strcmp(m, "want_two"))
            return child_want_two();
        if (!strcmp(m, "settle"))
            return child_settle(atoi(arg));
        if (!strcmp(m, "die_locked"))
            return child_die_locked();
        if (!strcmp(m, "other"))
            return child_other(atoi(arg), strchr(arg, ':') + 1);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    /* A node of this test's own (the machine's other processes stay out), world-writable and
     * sticky like /dev/shm, so that another user can make its folder there. */
    char dir[] = "/tmp/pg-node-test-XXXXXX";
    if (!mkdtemp(dir) || chmod(dir, 01777))
        return 2;
    setenv("PG_NODE_DIR", dir, 1);
    unsetenv("PG_SHARE"); /* the default */
    char *s = status();   /* no node yet: empty */
    CHECK(!strcmp(s, "{\"clients\": [], \"devices\": []}"));
    pg_string_free(s);

    placement_and_kill();
    settle_and_spread();
    vacated_home_is_taken();
    dies_holding_the_lock();
    admission(0);
    admission(1);
    other_user(dir);

    s = status(); /* everyone left */
    CHECK(!strcmp(s, "{\"clients\": [], \"devices\": []}"));
    if (strcmp(s, "{\"clients\": [], \"devices\": []}"))
        fprintf(stderr, "at the end: %s\n", s);
    pg_string_free(s);
    remove_tree(dir);
    CHECK_DONE();
}
