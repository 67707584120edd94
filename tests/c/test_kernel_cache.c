/* test_kernel_cache.c: the on-disk kernel cache is code, so it is checked before use: a corrupt
 * cached object (truncated, overwritten) is rebuilt and never loaded, a cache folder or object that
 * others can write (or that another user owns) is not used, and the normal cache still hits. Every
 * run that reads the cache is a new process (this program re-executed with "child"): dlopen reuses
 * a path already loaded in a process, and a crash must show as a crash, not end the test. */
#include "kernels_common.h"
#include "nvrtc/kernel_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 1000
#define OTHER_UID 54321 /* a user that is not this one (only root can hand files to it) */

/* ------------------------------------------------------------------ the child */

/* Build one kernel (fill) or two (fill, add1) with the runtime's cache in dir, run them on one
 * CPU device, check the values. Exit 0 right, 3 wrong, 4 an API error. */
static int child(const char *dir, int two) {
    pg_options o;
    pg_options_init(&o);
    o.devices = "host:1";
    o.cache_dir = dir;
    pg_runtime *rt = NULL;
    if (pg_runtime_new(&o, &rt) != PG_OK)
        return 4;
    pg_kernel *fill = NULL, *add1 = NULL;
    pg_array *x = NULL, *y = NULL;
    int64_t n = N;
    if (pg_kernel_new(rt, TEST_SRC, "fill", NULL, NULL, &fill) ||
        (two && pg_kernel_new(rt, TEST_SRC, "add1", NULL, NULL, &add1)) ||
        pg_array_new(rt, PG_FLOAT32, 1, &n, &x) || pg_array_new(rt, PG_FLOAT32, 1, &n, &y)) {
        fprintf(stderr, "child: %s\n", pg_last_error());
        return 4;
    }
    pg_arg fa[] = {pg_arg_array(x), pg_arg_float(7.0f), pg_arg_int(N)};
    pg_arg aa[] = {pg_arg_array(y), pg_arg_array(x), pg_arg_int(N)};
    static float v[N];
    if (pg_kernel_launch(fill, dim1(4), dim1(256), 0, fa, 3) ||
        (two && pg_kernel_launch(add1, dim1(4), dim1(256), 0, aa, 3)) ||
        pg_array_read(two ? y : x, 0, N, v)) {
        fprintf(stderr, "child: %s\n", pg_last_error());
        return 4;
    }
    for (int i = 0; i < N; i++)
        if (v[i] != (two ? 8.0f : 7.0f))
            return 3;
    return pg_runtime_free(rt) == PG_OK ? 0 : 4;
}

/* ------------------------------------------------------------------ the parent */

static char counter[1100], errlog[1100];
static int nkernels; /* the child builds 1 or 2 */

static int count_lines(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (!needle || strstr(line, needle))
            n++;
    fclose(f);
    return n;
}

static int builds(void) {
    return count_lines(counter, NULL);
}

/* Run the child on dir, its stderr to errlog. Its exit code, or -signal when it crashed. */
static int run_child(const char *dir) {
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 2);
            close(fd);
        }
        execl("/proc/self/exe", "test_kernel_cache", "child", dir, nkernels == 2 ? "2" : "1",
              (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 127;
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "child crashed: signal %d (%s)\n", WTERMSIG(status),
                strsignal(WTERMSIG(status)));
        return -WTERMSIG(status);
    }
    int code = WEXITSTATUS(status);
    if (code != 0)
        fprintf(stderr, "child exited with %d\n", code);
    return code;
}

/* The cache's kernel objects: "<16 hex digits>.so". Up to 8 paths; returns how many. */
static int cached_objects(const char *dir, char paths[][1200]) {
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len == 19 && de->d_name[0] != '.' && !strcmp(de->d_name + 16, ".so") && n < 8)
            snprintf(paths[n++], 1200, "%s/%s", dir, de->d_name);
    }
    if (d)
        closedir(d);
    return n;
}

static int count_temp_files(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d)))
        if (!strncmp(de->d_name, ".tmp-", 5))
            n++;
    if (d)
        closedir(d);
    return n;
}

static off_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static unsigned file_mode(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
}

/* Overwrite [from, size) of path with pseudo-random bytes: same size, other content. */
static void scribble(const char *path, off_t from) {
    int fd = open(path, O_WRONLY);
    off_t size = file_size(path);
    CHECK(fd >= 0 && size > from);
    if (fd < 0)
        return;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    char buf[4096];
    for (off_t at = from; at < size;) {
        size_t k = 0;
        for (; k < sizeof buf; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            buf[k] = (char)(s >> 56);
        }
        size_t w = (size_t)(size - at) < k ? (size_t)(size - at) : k;
        CHECK(pwrite(fd, buf, w, at) == (ssize_t)w);
        at += (off_t)w;
    }
    close(fd);
}

/* A second process with nothing changed: right values, no build, no warning. */
static void expect_hit(const char *dir, const char *what) {
    int before = builds();
    int code = run_child(dir);
    if (code != 0 || builds() != before || count_lines(errlog, "polygpu:") != 0)
        fprintf(stderr, "after %s: expected a clean cache hit (exit %d, %d builds)\n", what, code,
                builds() - before);
    CHECK(code == 0);
    CHECK(builds() == before);
    CHECK(count_lines(errlog, "polygpu:") == 0);
}

/* Damage every cached object with `damage`, then: the next process runs right, rebuilds each
 * kernel, says so in one line each, and leaves whole objects of the old sizes behind. */
static void check_rebuilt(const char *dir, const char *what, void (*damage)(const char *path)) {
    char objs[8][1200];
    int n = cached_objects(dir, objs);
    CHECK(n == nkernels);
    off_t sizes[8];
    for (int i = 0; i < n; i++) {
        sizes[i] = file_size(objs[i]);
        damage(objs[i]);
    }
    int before = builds();
    int code = run_child(dir);
    if (code != 0)
        fprintf(stderr, "%s cached object: the child failed\n", what);
    CHECK(code == 0);
    CHECK(builds() == before + nkernels);
    CHECK(count_lines(errlog, "polygpu:") == nkernels);
    CHECK(count_lines(errlog, "rebuil") == nkernels);
    for (int i = 0; i < n; i++) {
        CHECK(file_size(objs[i]) == sizes[i]);
        CHECK(file_mode(objs[i]) == 0600);
    }
    CHECK(count_temp_files(dir) == 0);
    expect_hit(dir, what);
}

static void truncate_page(const char *path) {
    CHECK(truncate(path, 4096) == 0);
}
static void truncate_half(const char *path) {
    CHECK(truncate(path, file_size(path) / 2) == 0);
}
static void garbage_all(const char *path) {
    scribble(path, 0);
}
static void garbage_after_headers(const char *path) {
    scribble(path, 4096); /* ELF headers kept: a loader would take it */
}
static void group_writable(const char *path) {
    CHECK(chmod(path, 0620) == 0);
}
static void others_writable(const char *path) {
    CHECK(chmod(path, 0602) == 0);
}
static void other_owner(const char *path) {
    CHECK(chown(path, OTHER_UID, (gid_t)-1) == 0);
}

/* The cache folder cannot be used: every process compiles, runs right, says so once (naming the
 * folder and the fix), and writes nothing into it. */
static void check_refused(const char *dir, const char *named, const char *fix) {
    char objs[8][1200];
    int before = builds(), nobj = cached_objects(dir, objs);
    int code = run_child(dir);
    CHECK(code == 0);
    CHECK(builds() == before + nkernels);
    CHECK(count_lines(errlog, "polygpu:") == 1);
    CHECK(count_lines(errlog, named) == 1);
    CHECK(count_lines(errlog, fix) == 1);
    CHECK(cached_objects(dir, objs) == nobj);
    CHECK(count_temp_files(dir) == 0);
    if (count_lines(errlog, fix) != 1) {
        fprintf(stderr, "child's stderr:\n");
        FILE *f = fopen(errlog, "r");
        char line[4096];
        while (f && fgets(line, sizeof line, f))
            fputs(line, stderr);
        if (f)
            fclose(f);
    }
}

/* A new cache folder <tmp>/<name>/cache (the runtime creates both levels) filled by one process;
 * a second process builds nothing. */
static void fresh_cache(const char *tmp, const char *name, char *dir, size_t dirn) {
    char parent[1100];
    snprintf(parent, sizeof parent, "%.900s/%.100s", tmp, name);
    snprintf(dir, dirn, "%s/cache", parent);
    int before = builds();
    CHECK(run_child(dir) == 0);
    CHECK(builds() == before + nkernels);
    CHECK(count_lines(errlog, "polygpu:") == 0);
    CHECK(file_mode(parent) == 0700 && file_mode(dir) == 0700);
    char objs[8][1200];
    CHECK(cached_objects(dir, objs) == nkernels);
    for (int i = 0; i < nkernels; i++)
        CHECK(file_mode(objs[i]) == 0600);
    CHECK(count_temp_files(dir) == 0);
    expect_hit(dir, name);
}

/* Integrity and trust of cached objects: each damage in a cache of its own (one kernel). */
static void test_objects(const char *tmp) {
    nkernels = 1;
    static const struct {
        const char *name;
        void (*damage)(const char *path);
        int root_only;
    } cases[] = {
        {"truncated to 4096 bytes", truncate_page, 0},
        {"truncated to half", truncate_half, 0},
        {"overwritten with garbage", garbage_all, 0},
        {"overwritten after its ELF headers", garbage_after_headers, 0},
        {"group-writable", group_writable, 0},
        {"world-writable", others_writable, 0},
        {"owned by another user", other_owner, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].root_only && geteuid() != 0) {
            fprintf(stderr, "note: not root, so '%s' is not tried\n", cases[i].name);
            continue;
        }
        char name[64], dir[1200];
        snprintf(name, sizeof name, "objects-%zu", i);
        fresh_cache(tmp, name, dir, sizeof dir);
        check_rebuilt(dir, cases[i].name, cases[i].damage);
    }
}

/* Trust of the cache folder: one that others can write, or another user owns, is not used (two
 * kernels: the refusal is said once, not once per kernel). */
static void test_folder(const char *tmp) {
    nkernels = 2;
    char dir[1200], fix[1300];
    fresh_cache(tmp, "folder", dir, sizeof dir);
    snprintf(fix, sizeof fix, "chmod 700 %s", dir);
    CHECK(chmod(dir, 0777) == 0);
    check_refused(dir, dir, fix);
    CHECK(chmod(dir, 0770) == 0);
    check_refused(dir, dir, fix);
    CHECK(chmod(dir, 0700) == 0);
    expect_hit(dir, "chmod 700");
    if (geteuid() == 0) {
        CHECK(chown(dir, OTHER_UID, (gid_t)-1) == 0);
        check_refused(dir, dir, "a folder of your own");
        CHECK(chown(dir, 0, (gid_t)-1) == 0);
        expect_hit(dir, "chown back");
    } else {
        fprintf(stderr, "note: not root, so a folder owned by another user is not tried\n");
    }

    /* Only the folder and the parents the runtime creates are judged: a cache created below an
     * existing world-writable folder is used (its own mode is 0700, its objects are checked). */
    char open_parent[1200];
    snprintf(open_parent, sizeof open_parent, "%s/open", tmp);
    CHECK(mkdir(open_parent, 0700) == 0);
    CHECK(chmod(open_parent, 0777) == 0);
    fresh_cache(open_parent, "sub", dir, sizeof dir);
}

/* ------------------------------------------------------------------ the cache's own calls */

/* stderr into a file while a call runs, to see what it says. */
static int saved_stderr = -1;
static void capture_begin(void) {
    fflush(stderr);
    saved_stderr = dup(2);
    int fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
    }
}
static void capture_end(void) {
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
}

static void key_of(pg__kcache_key *k, const char *what) {
    pg__kcache_key_init(k);
    pg__kcache_key_add(k, "what", what);
    pg__kcache_key_tools(k);
    pg__kcache_key_add(k, "tool", "test");
}

/* Store "content" under a new key in dir; the artifact's path. */
static char *stored(const char *dir, pg__kcache_key *k, const char *what) {
    key_of(k, what);
    CHECK(pg__kcache_store(dir, k, ".bin", "some content", 12) == 0);
    return pg__kcache_path(dir, k, ".bin");
}

/* Load k's artifact as the compile paths do: the key, then the checked content. 1 loaded (and
 * right), 0 not; *said: the lines it wrote on stderr. */
static int load(const char *dir, const pg__kcache_key *k, const char *path, int *said) {
    uint64_t check = 0;
    char *data = NULL;
    size_t len = 0;
    capture_begin();
    int ok = pg__kcache_match(dir, k, 0, &check) && pg__kcache_load(path, check, &data, &len) == 0;
    capture_end();
    *said = count_lines(errlog, "polygpu:");
    if (ok)
        CHECK(len == 12 && !memcmp(data, "some content", 12) && data[12] == 0);
    free(data);
    return ok;
}

static void test_calls(const char *tmp) {
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/calls", tmp);
    CHECK(pg__kcache_dir(dir) == 0);
    CHECK(file_mode(dir) == 0700);
    pg__kcache_key k;
    int said;

    /* Stored whole: loads, says nothing; the file is a header and the content, mode 0600. */
    char *path = stored(dir, &k, "plain");
    CHECK(load(dir, &k, path, &said) == 1 && said == 0);
    CHECK(file_size(path) == 40 + 12 && file_mode(path) == 0600);
    CHECK(count_temp_files(dir) == 0);

    /* The content's digest is checked: one byte changed, one byte more, a shorter file. */
    int fd = open(path, O_WRONLY);
    CHECK(fd >= 0 && pwrite(fd, "S", 1, 40) == 1);
    close(fd);
    CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "digest") == 1);
    CHECK(file_size(path) == -1); /* removed */
    free(path);
    pg__kcache_key_free(&k);
    path = stored(dir, &k, "longer");
    FILE *f = fopen(path, "a");
    if (f) {
        fputc('x', f);
        fclose(f);
    }
    CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "too long") == 1);
    free(path);
    pg__kcache_key_free(&k);
    path = stored(dir, &k, "shorter");
    CHECK(truncate(path, 45) == 0);
    CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "truncated") == 1);
    free(path);
    pg__kcache_key_free(&k);
    path = stored(dir, &k, "headless");
    CHECK(pg__kcache_write_atomic(path, "some content", 12) == 0);
    CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "header") == 1);
    free(path);
    pg__kcache_key_free(&k);

    /* Another key's artifact under this name (a hash collision): a miss, kept, nothing said. */
    pg__kcache_key other;
    path = stored(dir, &k, "mine");
    char *other_path = stored(dir, &other, "theirs");
    CHECK(rename(other_path, path) == 0);
    CHECK(load(dir, &k, path, &said) == 0 && said == 0);
    CHECK(file_size(path) == 52);
    free(other_path);
    pg__kcache_key_free(&other);

    /* Not a file of ours that only we can write: refused, removed, said. */
    CHECK(pg__kcache_store(dir, &k, ".bin", "some content", 12) == 0);
    CHECK(load(dir, &k, path, &said) == 1);
    CHECK(chmod(path, 0660) == 0);
    CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "its group") == 1);
    CHECK(file_size(path) == -1);
    char target[1200];
    snprintf(target, sizeof target, "%s/elsewhere", tmp);
    CHECK(pg__kcache_store(dir, &k, ".bin", "some content", 12) == 0);
    CHECK(rename(path, target) == 0 && symlink(target, path) == 0);
    CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "symbolic") == 1);
    CHECK(file_size(target) == 52); /* the link went, not what it pointed to */
    CHECK(mkfifo(path, 0600) == 0); /* must not block reading */
    CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "regular") == 1);
    if (geteuid() == 0) {
        CHECK(pg__kcache_store(dir, &k, ".bin", "some content", 12) == 0);
        CHECK(chown(path, OTHER_UID, (gid_t)-1) == 0);
        CHECK(load(dir, &k, path, &said) == 0 && said == 1 && count_lines(errlog, "uid") == 1);
    }
    /* The key is held to the same rules (a miss, nothing said). */
    CHECK(pg__kcache_store(dir, &k, ".bin", "some content", 12) == 0);
    char *key_path = pg__kcache_path(dir, &k, ".key");
    CHECK(chmod(key_path, 0602) == 0);
    CHECK(load(dir, &k, path, &said) == 0 && said == 0);
    CHECK(chmod(key_path, 0600) == 0);
    CHECK(load(dir, &k, path, &said) == 1);
    free(key_path);
    free(path);
    pg__kcache_key_free(&k);

    /* Install reads the build's output into a checked entry and removes it. */
    char *out = NULL;
    CHECK(pg__kcache_temp_write(dir, ".bin", "some content", 12, &out) == 0);
    key_of(&k, "installed");
    CHECK(out && pg__kcache_install(dir, &k, ".bin", out) == 0);
    CHECK(file_size(out) == -1);
    path = pg__kcache_path(dir, &k, ".bin");
    CHECK(load(dir, &k, path, &said) == 1);
    free(path);
    free(out);
    pg__kcache_key_free(&k);
    CHECK(count_temp_files(dir) == 0);

    /* Folders: refused when others can write or another user owns them, said once each. */
    capture_begin();
    CHECK(chmod(dir, 0707) == 0);
    errno = 0;
    int r1 = pg__kcache_dir(dir), e1 = errno, r2 = pg__kcache_dir(dir);
    CHECK(chmod(dir, 0700) == 0);
    int r3 = pg__kcache_dir(dir);
    capture_end();
    CHECK(r1 == -1 && e1 == EPERM && r2 == -1 && r3 == 0);
    CHECK(count_lines(errlog, "polygpu:") == 1 && count_lines(errlog, "chmod 700") == 1);
    /* Below a file: cannot be created, nothing said (the compile runs uncached). */
    char below[1200];
    snprintf(below, sizeof below, "%s/elsewhere/sub", tmp);
    capture_begin();
    errno = 0;
    r1 = pg__kcache_dir(below);
    e1 = errno;
    capture_end();
    CHECK(r1 == -1 && e1 == ENOTDIR && count_lines(errlog, "polygpu:") == 0);
}

static void write_compiler(const char *tmp) {
    char script[1100];
    snprintf(script, sizeof script, "%s/cxx.sh", tmp);
    snprintf(counter, sizeof counter, "%s/builds", tmp);
    snprintf(errlog, sizeof errlog, "%s/child-stderr", tmp);
    /* A compiler that counts its builds (not its --version answers). */
    FILE *f = fopen(script, "w");
    REQUIRE_OK(f ? PG_OK : PG_ERROR_IO);
    fprintf(f, "#!/bin/sh\n[ \"$1\" = --version ] || echo build >> '%s'\nexec c++ \"$@\"\n",
            counter);
    fclose(f);
    chmod(script, 0700);
    setenv("PG_CXX", script, 1);
}

static void remove_tree(const char *path) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", path);
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "child"))
        return child(argv[2], !strcmp(argv[3], "2"));
    char tmp[] = "/tmp/pg-test-kcache-XXXXXX";
    REQUIRE_OK(mkdtemp(tmp) ? PG_OK : PG_ERROR_IO);
    write_compiler(tmp);
    test_calls(tmp);
    test_objects(tmp);
    test_folder(tmp);
    remove_tree(tmp);
    CHECK_DONE();
}
