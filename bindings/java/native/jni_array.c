/* jni_array.c: polygpu.Native's array entry points: lifetime, views of rows, element and bulk
 * host access, host views. Java arrays are copied through a temporary buffer with
 * Get/Set<Type>ArrayRegion: pg_array_read/write may wait for devices, which no pinned (critical)
 * Java array may span. */
#include "jni_util.h"

#include <stdlib.h>
#include <string.h>

/* Java primitive array kinds, as polygpu.Native.J_*. */
enum { J_BYTE, J_SHORT, J_INT, J_LONG, J_FLOAT, J_DOUBLE };

JNIEXPORT jlong JNICALL Java_polygpu_Native_arrayNew(JNIEnv *env, jclass cls, jlong rt, jint dtype,
                                                     jlongArray shape) {
    jsize ndim = (*env)->GetArrayLength(env, shape);
    int64_t *dims = malloc(((size_t)ndim + 1) * sizeof *dims);
    if (!dims) {
        pgj_throw_message(env, PG_ERROR_OUT_OF_MEMORY, "out of host memory for the shape");
        return 0;
    }
    (*env)->GetLongArrayRegion(env, shape, 0, ndim, (jlong *)dims);
    pg_array *a = NULL;
    pg_status st = pg_array_new(PGJ_PTR(pg_runtime, rt), (pg_dtype)dtype, (int)ndim, dims, &a);
    if (st) {
        pgj_throw_status(env, st);
        a = NULL;
    }
    free(dims);
    return PGJ_HANDLE(a);
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayFree(JNIEnv *env, jclass cls, jlong a) {
    pg_status st = pg_array_free(PGJ_PTR(pg_array, a));
    if (st)
        pgj_throw_status(env, st);
}

/* A view of rows [lo, hi): a new handle, freed with arrayFree like any array. */
JNIEXPORT jlong JNICALL Java_polygpu_Native_arraySlice(JNIEnv *env, jclass cls, jlong a, jlong lo,
                                                       jlong hi) {
    pg_array *v = NULL;
    pg_status st = pg_array_slice(PGJ_PTR(pg_array, a), (int64_t)lo, (int64_t)hi, &v);
    if (st) {
        pgj_throw_status(env, st);
        return 0;
    }
    return PGJ_HANDLE(v);
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayOwnerSet(JNIEnv *env, jclass cls, jlong a,
                                                         jint owner) {
    pg_status st = pg_array_owner_set(PGJ_PTR(pg_array, a), owner);
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT jint JNICALL Java_polygpu_Native_arrayOwner(JNIEnv *env, jclass cls, jlong a) {
    int owner = 0;
    pg_status st = pg_array_owner(PGJ_PTR(pg_array, a), &owner);
    if (st)
        pgj_throw_status(env, st);
    return owner;
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayPrefetch(JNIEnv *env, jclass cls, jlong a,
                                                         jint location) {
    pg_status st = pg_array_prefetch(PGJ_PTR(pg_array, a), location);
    if (st)
        pgj_throw_status(env, st);
}

/* {id, dtype, ndim, shape[0..3], size, nbytes, valid}. */
JNIEXPORT jlongArray JNICALL Java_polygpu_Native_arrayDescribe(JNIEnv *env, jclass cls, jlong a) {
    pg_array_desc d;
    pg_status st = pg_array_describe(PGJ_PTR(pg_array, a), &d);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    jlong v[10] = {(jlong)d.id, d.dtype,    d.ndim,        d.shape[0],      d.shape[1],
                   d.shape[2],  d.shape[3], (jlong)d.size, (jlong)d.nbytes, d.valid};
    jlongArray out = (*env)->NewLongArray(env, 10);
    if (out)
        (*env)->SetLongArrayRegion(env, out, 0, 10, v);
    return out;
}

/* One element travels as its bits in a jlong, zero-extended; esize comes from the dtype. */
JNIEXPORT jlong JNICALL Java_polygpu_Native_arrayGet(JNIEnv *env, jclass cls, jlong a, jlong index,
                                                     jint esize) {
    union {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
    } v = {0};
    pg_status st = pg_array_read(PGJ_PTR(pg_array, a), (uint64_t)index, 1, &v);
    if (st) {
        pgj_throw_status(env, st);
        return 0;
    }
    switch (esize) {
    case 1:
        return v.u8;
    case 2:
        return v.u16;
    case 4:
        return v.u32;
    default:
        return (jlong)v.u64;
    }
}

JNIEXPORT void JNICALL Java_polygpu_Native_arraySet(JNIEnv *env, jclass cls, jlong a, jlong index,
                                                    jint esize, jlong bits) {
    union {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
    } v;
    switch (esize) {
    case 1:
        v.u8 = (uint8_t)bits;
        break;
    case 2:
        v.u16 = (uint16_t)bits;
        break;
    case 4:
        v.u32 = (uint32_t)bits;
        break;
    default:
        v.u64 = (uint64_t)bits;
        break;
    }
    pg_status st = pg_array_write(PGJ_PTR(pg_array, a), (uint64_t)index, 1, &v);
    if (st)
        pgj_throw_status(env, st);
}

static size_t jtype_size(jint jtype) {
    static const size_t sizes[] = {1, 2, 4, 8, 4, 8};
    return jtype >= 0 && jtype <= J_DOUBLE ? sizes[jtype] : 0;
}

static void *temp(JNIEnv *env, jint count, jint jtype) {
    size_t n = (size_t)count * jtype_size(jtype);
    void *p = malloc(n ? n : 1);
    if (!p)
        pgj_throw_message(env, PG_ERROR_OUT_OF_MEMORY,
                          "out of host memory for the temporary copy of a Java array: copy "
                          "fewer elements at a time or use a direct ByteBuffer");
    return p;
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayReadArray(JNIEnv *env, jclass cls, jlong a,
                                                          jlong first, jint count, jarray dst,
                                                          jint offset, jint jtype) {
    void *buf = temp(env, count, jtype);
    if (!buf)
        return;
    pg_status st = pg_array_read(PGJ_PTR(pg_array, a), (uint64_t)first, (uint64_t)count, buf);
    if (st) {
        pgj_throw_status(env, st);
    } else {
        switch (jtype) {
        case J_BYTE:
            (*env)->SetByteArrayRegion(env, dst, offset, count, buf);
            break;
        case J_SHORT:
            (*env)->SetShortArrayRegion(env, dst, offset, count, buf);
            break;
        case J_INT:
            (*env)->SetIntArrayRegion(env, dst, offset, count, buf);
            break;
        case J_LONG:
            (*env)->SetLongArrayRegion(env, dst, offset, count, buf);
            break;
        case J_FLOAT:
            (*env)->SetFloatArrayRegion(env, dst, offset, count, buf);
            break;
        case J_DOUBLE:
            (*env)->SetDoubleArrayRegion(env, dst, offset, count, buf);
            break;
        }
    }
    free(buf);
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayWriteArray(JNIEnv *env, jclass cls, jlong a,
                                                           jlong first, jint count, jarray src,
                                                           jint offset, jint jtype) {
    void *buf = temp(env, count, jtype);
    if (!buf)
        return;
    switch (jtype) {
    case J_BYTE:
        (*env)->GetByteArrayRegion(env, src, offset, count, buf);
        break;
    case J_SHORT:
        (*env)->GetShortArrayRegion(env, src, offset, count, buf);
        break;
    case J_INT:
        (*env)->GetIntArrayRegion(env, src, offset, count, buf);
        break;
    case J_LONG:
        (*env)->GetLongArrayRegion(env, src, offset, count, buf);
        break;
    case J_FLOAT:
        (*env)->GetFloatArrayRegion(env, src, offset, count, buf);
        break;
    case J_DOUBLE:
        (*env)->GetDoubleArrayRegion(env, src, offset, count, buf);
        break;
    }
    if (!(*env)->ExceptionCheck(env)) {
        pg_status st = pg_array_write(PGJ_PTR(pg_array, a), (uint64_t)first, (uint64_t)count, buf);
        if (st)
            pgj_throw_status(env, st);
    }
    free(buf);
}

/* A direct buffer's memory never moves, so the runtime copies straight into or out of it. */
static char *buffer_at(JNIEnv *env, jobject buf, jlong byte_offset) {
    char *p = (*env)->GetDirectBufferAddress(env, buf);
    if (!p)
        pgj_throw_message(env, PG_ERROR_ARGUMENT,
                          "the ByteBuffer is not a direct buffer this JVM can address");
    return p ? p + byte_offset : NULL;
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayReadBuffer(JNIEnv *env, jclass cls, jlong a,
                                                           jlong first, jlong count, jobject dst,
                                                           jlong byte_offset) {
    char *p = buffer_at(env, dst, byte_offset);
    if (!p)
        return;
    pg_status st = pg_array_read(PGJ_PTR(pg_array, a), (uint64_t)first, (uint64_t)count, p);
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayWriteBuffer(JNIEnv *env, jclass cls, jlong a,
                                                            jlong first, jlong count, jobject src,
                                                            jlong byte_offset) {
    char *p = buffer_at(env, src, byte_offset);
    if (!p)
        return;
    pg_status st = pg_array_write(PGJ_PTR(pg_array, a), (uint64_t)first, (uint64_t)count, p);
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT jobject JNICALL Java_polygpu_Native_arrayMap(JNIEnv *env, jclass cls, jlong a,
                                                       jint access, jlong nbytes) {
    void *p = NULL;
    pg_status st = pg_array_map(PGJ_PTR(pg_array, a), (pg_access)access, &p);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    jobject buf = (*env)->NewDirectByteBuffer(env, p, nbytes);
    if (!buf) /* the Java side counts only views it got: end this one */
        pg_array_unmap(PGJ_PTR(pg_array, a));
    return buf;
}

JNIEXPORT void JNICALL Java_polygpu_Native_arrayUnmap(JNIEnv *env, jclass cls, jlong a) {
    pg_status st = pg_array_unmap(PGJ_PTR(pg_array, a));
    if (st)
        pgj_throw_status(env, st);
}
