/* jni_kernel.c: polygpu.Native's kernel entry points: compile, built-in tasks, free, launch. */
#include "jni_util.h"

#include <stdlib.h>
#include <string.h>

/* Argument kinds, as polygpu.Native.ARG_*; values carry a handle, an integer or double bits. */
enum { ARG_ARRAY, ARG_INT, ARG_FLOAT, ARG_DOUBLE };

JNIEXPORT jlong JNICALL Java_polygpu_Native_kernelNew(JNIEnv *env, jclass cls, jlong rt,
                                                      jbyteArray source, jbyteArray name,
                                                      jbyteArray signature, jbyteArray options,
                                                      jbyteArray where) {
    int f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0;
    char *src = pgj_cstr(env, source, &f1);
    char *nm = f1 ? NULL : pgj_cstr(env, name, &f2);
    char *sig = f1 || f2 ? NULL : pgj_cstr(env, signature, &f3);
    char *opt = f1 || f2 || f3 ? NULL : pgj_cstr(env, options, &f4);
    char *wh = f1 || f2 || f3 || f4 ? NULL : pgj_cstr(env, where, &f5);
    pg_kernel *k = NULL;
    if (!(f1 || f2 || f3 || f4 || f5)) {
        pg_status st = pg_kernel_new_where(PGJ_PTR(pg_runtime, rt), src, nm, sig, opt, wh, &k);
        if (st) {
            pgj_throw_status(env, st);
            k = NULL;
        }
    }
    free(src);
    free(nm);
    free(sig);
    free(opt);
    free(wh);
    return PGJ_HANDLE(k);
}

JNIEXPORT void JNICALL Java_polygpu_Native_kernelSplit(JNIEnv *env, jclass cls, jlong k,
                                                       jbyteArray mode) {
    int failed = 0;
    char *m = pgj_cstr(env, mode, &failed);
    if (!failed) {
        pg_status st = pg_kernel_split(PGJ_PTR(pg_kernel, k), m);
        if (st)
            pgj_throw_status(env, st);
    }
    free(m);
}

JNIEXPORT void JNICALL Java_polygpu_Native_kernelFree(JNIEnv *env, jclass cls, jlong k) {
    pg_status st = pg_kernel_free(PGJ_PTR(pg_kernel, k));
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT void JNICALL Java_polygpu_Native_kernelLaunch(JNIEnv *env, jclass cls, jlong k, jint gx,
                                                        jint gy, jint gz, jint bx, jint by, jint bz,
                                                        jlong shared_mem, jintArray kinds,
                                                        jlongArray values) {
    jsize n = (*env)->GetArrayLength(env, kinds);
    pg_arg *args = malloc(((size_t)n + 1) * sizeof *args);
    jint *kind = malloc(((size_t)n + 1) * sizeof *kind);
    jlong *value = malloc(((size_t)n + 1) * sizeof *value);
    if (!args || !kind || !value) {
        pgj_throw_message(env, PG_ERROR_OUT_OF_MEMORY, "out of host memory for the arguments");
        goto out;
    }
    (*env)->GetIntArrayRegion(env, kinds, 0, n, kind);
    (*env)->GetLongArrayRegion(env, values, 0, n, value);
    for (jsize i = 0; i < n; i++) {
        double d;
        switch (kind[i]) {
        case ARG_ARRAY:
            args[i] = pg_arg_array(PGJ_PTR(pg_array, value[i]));
            break;
        case ARG_INT:
            args[i] = pg_arg_int((int64_t)value[i]);
            break;
        case ARG_FLOAT:
            memcpy(&d, &value[i], sizeof d);
            args[i] = pg_arg_float((float)d);
            break;
        default:
            memcpy(&d, &value[i], sizeof d);
            args[i] = pg_arg_double(d);
            break;
        }
    }
    pg_dim3 grid = {(uint32_t)gx, (uint32_t)gy, (uint32_t)gz};
    pg_dim3 block = {(uint32_t)bx, (uint32_t)by, (uint32_t)bz};
    pg_status st =
        pg_kernel_launch(PGJ_PTR(pg_kernel, k), grid, block, (size_t)shared_mem, args, (int)n);
    if (st)
        pgj_throw_status(env, st);
out:
    free(args);
    free(kind);
    free(value);
}

/* A built-in task (pg_task_builtin: "gemm_f32", "dot_f64", ...) as a kernel handle, launched
 * with kernelLaunch (grid and block are ignored) and freed with kernelFree. */
JNIEXPORT jlong JNICALL Java_polygpu_Native_taskBuiltin(JNIEnv *env, jclass cls, jlong rt,
                                                        jbyteArray name) {
    int failed = 0;
    char *nm = pgj_cstr(env, name, &failed);
    pg_kernel *k = NULL;
    if (!failed) {
        pg_status st = pg_task_builtin(PGJ_PTR(pg_runtime, rt), nm, &k);
        if (st) {
            pgj_throw_status(env, st);
            k = NULL;
        }
    }
    free(nm);
    return PGJ_HANDLE(k);
}
