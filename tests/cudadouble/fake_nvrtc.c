/* fake_nvrtc.c: a stand-in libnvrtc for tests/cudadouble (found through PG_NVRTC_PATH, which
 * nvrtc/nvrtc_compile.c honours). It compiles nothing: the "CUBIN" of a program is
 * "fake-cubin:<name>", naming the kernel asked for by name expression, which fake_cuda.c's
 * cuModuleLoadData reads to pick its C version of that kernel. Source containing "#error" fails
 * to compile, with the line in the log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct prog {
    char *src;
    char *name; /* the last name expression */
    char *image;
    char log[256];
} prog;

enum {
    OK = 0,
    OUT_OF_MEMORY = 1,
    INVALID_INPUT = 3,
    INVALID_PROGRAM = 4,
    COMPILATION = 6,
    NAME_NOT_VALID = 10
};

EXPORT const char *nvrtcGetErrorString(int r) {
    return r == OK            ? "NVRTC_SUCCESS"
           : r == COMPILATION ? "NVRTC_ERROR_COMPILATION"
                              : "NVRTC_ERROR (fake)";
}

EXPORT int nvrtcVersion(int *major, int *minor) {
    *major = 12;
    *minor = 99;
    return OK;
}

EXPORT int nvrtcGetNumSupportedArchs(int *n) {
    *n = 1;
    return OK;
}

EXPORT int nvrtcGetSupportedArchs(int *a) {
    a[0] = 90;
    return OK;
}

EXPORT int nvrtcCreateProgram(prog **out, const char *src, const char *name, int nh,
                              const char *const *h, const char *const *hn) {
    prog *p = calloc(1, sizeof *p);
    if (!p || !(p->src = strdup(src))) {
        free(p);
        return OUT_OF_MEMORY;
    }
    *out = p;
    return OK;
}

EXPORT int nvrtcDestroyProgram(prog **p) {
    if (!p || !*p)
        return INVALID_PROGRAM;
    free((*p)->src);
    free((*p)->name);
    free((*p)->image);
    free(*p);
    *p = NULL;
    return OK;
}

EXPORT int nvrtcAddNameExpression(prog *p, const char *name) {
    free(p->name);
    p->name = strdup(name);
    return p->name ? OK : OUT_OF_MEMORY;
}

EXPORT int nvrtcCompileProgram(prog *p, int n, const char *const *opts) {
    const char *e = strstr(p->src, "#error");
    if (e) {
        snprintf(p->log, sizeof p->log, "kernel.cu: error: %.*s\n", (int)strcspn(e, "\n"), e);
        return COMPILATION;
    }
    if (!p->name)
        return INVALID_INPUT;
    size_t len = strlen("fake-cubin:") + strlen(p->name) + 1;
    if (!(p->image = malloc(len)))
        return OUT_OF_MEMORY;
    snprintf(p->image, len, "fake-cubin:%s", p->name);
    return OK;
}

EXPORT int nvrtcGetProgramLogSize(prog *p, size_t *n) {
    *n = strlen(p->log) + 1;
    return OK;
}

EXPORT int nvrtcGetProgramLog(prog *p, char *out) {
    memcpy(out, p->log, strlen(p->log) + 1);
    return OK;
}

static int image_size(prog *p, size_t *n) {
    if (!p->image)
        return INVALID_PROGRAM;
    *n = strlen(p->image) + 1;
    return OK;
}

static int image(prog *p, char *out) {
    if (!p->image)
        return INVALID_PROGRAM;
    memcpy(out, p->image, strlen(p->image) + 1);
    return OK;
}

EXPORT int nvrtcGetCUBINSize(prog *p, size_t *n) {
    return image_size(p, n);
}
EXPORT int nvrtcGetCUBIN(prog *p, char *out) {
    return image(p, out);
}
EXPORT int nvrtcGetPTXSize(prog *p, size_t *n) {
    return image_size(p, n);
}
EXPORT int nvrtcGetPTX(prog *p, char *out) {
    return image(p, out);
}

/* The lowered name of an extern "C" kernel is its name. */
EXPORT int nvrtcGetLoweredName(prog *p, const char *name, const char **lowered) {
    if (!p->name || strcmp(p->name, name))
        return NAME_NOT_VALID;
    *lowered = p->name;
    return OK;
}
