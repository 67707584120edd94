/* nvrtc_compile.c: NVRTC found and loaded with dlopen at run time (the toolkit, the loader
 * path, or a Python wheel's nvidia/cu13 folder); compiles per architecture with name
 * expressions, so C++ and extern "C" kernels and templates all work; caches on disk. */
#include "nvrtc/nvrtc_compile.h"
#include "base/alloc.h"
#include "base/dl_find.h"
#include "base/error.h"
#include "nvrtc/kernel_cache.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct _nvrtcProgram *nvrtcProgram;
typedef int nvrtcResult;

static struct {
    nvrtcResult (*version)(int *, int *);
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *);
    nvrtcResult (*destroy)(nvrtcProgram *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
    nvrtcResult (*cubin)(nvrtcProgram, char *);
    nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
    nvrtcResult (*ptx)(nvrtcProgram, char *);
    nvrtcResult (*add_name)(nvrtcProgram, const char *);
    nvrtcResult (*lowered)(nvrtcProgram, const char *, const char **);
    nvrtcResult (*num_archs)(int *);
    nvrtcResult (*archs)(int *);
    const char *(*error_string)(nvrtcResult);
} api;
static int loaded;
static char where[2048];
static char version[32];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *try_open(const char *path) {
    return pg__dl_try(where, sizeof where, path);
}

static void *open_glob(const char *pattern) {
    return pg__dl_glob(where, sizeof where, pattern, 0);
}

static void *find_nvrtc(void) {
    void *h = NULL;
    char path[1024];
    const char *envs[] = {"PG_NVRTC_PATH", "CUDA_HOME", "CUDA_PATH"};
    for (int i = 0; i < 3 && !h; i++) {
        const char *e = getenv(envs[i]);
        if (!e || !*e)
            continue;
        if (i == 0)
            h = try_open(e);
        else {
            snprintf(path, sizeof path, "%s/lib64/libnvrtc.so*", e);
            h = open_glob(path);
        }
    }
    const char *names[] = {"/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                           "libnvrtc.so"};
    for (int i = 0; i < 4 && !h; i++)
        h = try_open(names[i]);
    const char *wheels[] = {
        "/usr/local/lib/python3*/dist-packages/nvidia/cu13/lib/libnvrtc.so*",
        "/usr/local/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so*",
        "/usr/lib/python3/dist-packages/nvidia/cu13/lib/libnvrtc.so*",
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so*",
        "/usr/local/lib/python3*/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so*",
        "/usr/local/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so*",
    };
    for (size_t i = 0; i < sizeof wheels / sizeof *wheels && !h; i++)
        h = open_glob(wheels[i]);
    return h;
}

static void load(void) {
    void *h = find_nvrtc();
    if (!h)
        return;
#define SYM(field, name)                                                                           \
    if (!(*(void **)&api.field = dlsym(h, name)))                                                  \
        return;
    SYM(version, "nvrtcVersion")
    SYM(create, "nvrtcCreateProgram")
    SYM(destroy, "nvrtcDestroyProgram")
    SYM(compile, "nvrtcCompileProgram")
    SYM(log_size, "nvrtcGetProgramLogSize")
    SYM(log, "nvrtcGetProgramLog")
    SYM(cubin_size, "nvrtcGetCUBINSize")
    SYM(cubin, "nvrtcGetCUBIN")
    SYM(ptx_size, "nvrtcGetPTXSize")
    SYM(ptx, "nvrtcGetPTX")
    SYM(add_name, "nvrtcAddNameExpression")
    SYM(lowered, "nvrtcGetLoweredName")
    SYM(num_archs, "nvrtcGetNumSupportedArchs")
    SYM(archs, "nvrtcGetSupportedArchs")
    SYM(error_string, "nvrtcGetErrorString")
#undef SYM
    int major = 0, minor = 0;
    api.version(&major, &minor);
    snprintf(version, sizeof version, "%d.%d", major, minor);
    loaded = 1;
}

/* Is sm_<arch> a CUBIN target this NVRTC knows? */
static int supports(int arch) {
    int n = 0;
    if (api.num_archs(&n) || n <= 0 || n > 256)
        return 0;
    int list[256];
    if (api.archs(list))
        return 0;
    for (int i = 0; i < n; i++)
        if (list[i] == arch)
            return 1;
    return 0;
}

static int has_option(const char *opts, const char *prefix) {
    return opts && strstr(opts, prefix) != NULL;
}

/* Split options on spaces into argv (strings point into the returned buffer). */
static char *split(const char *opts, const char **argv, int *argc, int max) {
    char *copy = pg__strdup(opts ? opts : "");
    if (!copy)
        return NULL;
    for (char *tok = strtok(copy, " \t\n"); tok && *argc < max; tok = strtok(NULL, " \t\n"))
        argv[(*argc)++] = tok;
    return copy;
}

static pg_status compile(const pg__kernel_src *src, int arch, int ptx, pg__nvrtc_image *out) {
    const char *argv[72];
    int argc = 0;
    char archopt[32];
    char *buf = split(src->options, argv, &argc, 64);
    if (!buf)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (!has_option(src->options, "-arch") && !has_option(src->options, "--gpu-architecture")) {
        snprintf(archopt, sizeof archopt, "-arch=%s_%d", ptx ? "compute" : "sm", arch);
        argv[argc++] = archopt;
    }
    if (!has_option(src->options, "-std"))
        argv[argc++] = "-std=c++17";
    nvrtcProgram prog;
    if (api.create(&prog, src->source, "kernel.cu", 0, NULL, NULL)) {
        pg__free(buf);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "NVRTC could not create a program");
    }
    api.add_name(prog, src->name);
    nvrtcResult r = api.compile(prog, argc, argv);
    pg__free(buf);
    size_t ls = 0;
    char *log = NULL;
    if (!api.log_size(prog, &ls) && ls > 1 && (log = pg__malloc(ls + 1)) && !api.log(prog, log))
        log[ls] = '\0';
    pg_status st = PG_OK;
    if (r) {
        /* The caller puts the kernel's name and the device before this (pg__error_wrap). */
        st = pg__error(PG_ERROR_COMPILE, "NVRTC %s for %s_%d failed (see the log): %.600s", version,
                       ptx ? "compute" : "sm", arch, log ? log : api.error_string(r));
        pg__error_set_log(log ? log : api.error_string(r));
    }
    const char *lowered = NULL;
    if (!st && api.lowered(prog, src->name, &lowered))
        st = pg__error(PG_ERROR_NOT_FOUND, "kernel '%s' not found in the source compiled by NVRTC",
                       src->name);
    size_t size = 0;
    if (!st && (ptx ? api.ptx_size(prog, &size) : api.cubin_size(prog, &size)))
        st = pg__error(PG_ERROR_COMPILE, "NVRTC produced no %s for '%s'", ptx ? "PTX" : "CUBIN",
                       src->name);
    if (!st) {
        out->data = pg__malloc(size + 1);
        out->lowered = pg__strdup(lowered);
        if (!out->data || !out->lowered ||
            (ptx ? api.ptx(prog, out->data) : api.cubin(prog, out->data))) {
            pg__nvrtc_image_free(out);
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        } else {
            out->data[size] = '\0';
            out->size = size;
            out->is_ptx = ptx;
        }
    }
    pg__free(log);
    api.destroy(&prog);
    return st;
}

pg_status pg__nvrtc_compile(const pg__kernel_src *src, int major, int minor, pg__nvrtc_image *out) {
    pthread_once(&once, load);
    memset(out, 0, sizeof *out);
    if (!loaded)
        return pg__error(
            PG_ERROR_DEVICE,
            "NVRTC (libnvrtc.so) not found or incomplete: install the CUDA toolkit "
            "or the nvidia-cuda-nvrtc wheel, or set PG_NVRTC_PATH (looked in: %.1500s)",
            where);
    int arch = major * 10 + minor, ptx = !supports(arch);
    char archs[16], ptxs[4];
    snprintf(archs, sizeof archs, "%d", arch);
    snprintf(ptxs, sizeof ptxs, "%d", ptx);
    pg__kcache_key key;
    pg__kcache_key_init(&key);
    pg__kcache_key_add(&key, "kind", "nvrtc-v2");
    pg__kcache_key_add(&key, "source", src->source);
    pg__kcache_key_add(&key, "name", src->name);
    pg__kcache_key_add(&key, "options", src->options);
    pg__kcache_key_add(&key, "arch", archs);
    pg__kcache_key_add(&key, "ptx", ptxs);
    pg__kcache_key_tools(&key);
    pg__kcache_key_add(&key, "nvrtc", version);
    /* A folder others could write is no cache: a CUBIN runs on the device with this user's rights
     * (v2: entries carry a header with their digest). */
    const char *dir = src->cache_dir && *src->cache_dir && pg__kcache_dir(src->cache_dir) == 0
                          ? src->cache_dir
                          : NULL;
    char *path = dir && !key.failed ? pg__kcache_path(dir, &key, ".cubin") : NULL;
    char *data = NULL;
    size_t len = 0;
    uint64_t key_check;
    /* Cached entry: "<lowered name>\0<image>", loaded from the bytes that were checked. */
    if (path && pg__kcache_match(dir, &key, 0, &key_check) &&
        !pg__kcache_load(path, key_check, &data, &len)) {
        size_t nl = strnlen(data, len);
        if (nl < len && (out->lowered = pg__strdup(data)) && (out->data = pg__malloc(len - nl))) {
            memcpy(out->data, data + nl + 1, len - nl - 1);
            out->data[len - nl - 1] = '\0';
            out->size = len - nl - 1;
            out->is_ptx = ptx;
            pg__free(data);
            pg__free(path);
            pg__kcache_key_free(&key);
            return PG_OK;
        }
        pg__nvrtc_image_free(out);
    }
    pg__free(data);
    pg_status st = compile(src, arch, ptx, out);
    if (!st && path) {
        size_t nl = strlen(out->lowered);
        char *entry = pg__malloc(nl + 1 + out->size);
        if (entry) {
            memcpy(entry, out->lowered, nl + 1);
            memcpy(entry + nl + 1, out->data, out->size);
            pg__kcache_store(dir, &key, ".cubin", entry, nl + 1 + out->size);
            pg__free(entry);
        }
    }
    pg__free(path);
    pg__kcache_key_free(&key);
    return st;
}

void pg__nvrtc_image_free(pg__nvrtc_image *img) {
    pg__free(img->data);
    pg__free(img->lowered);
    memset(img, 0, sizeof *img);
}
