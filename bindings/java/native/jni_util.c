/* jni_util.c: class cache, status-to-exception mapping, UTF-8 strings across JNI. */
#include "jni_util.h"

#include <stdlib.h>
#include <string.h>

/* Exception classes by status; the class cache lives as long as the library. */
enum {
    EX_BASE,
    EX_ARGUMENT,
    EX_STATE,
    EX_COMPILE,
    EX_DEVICE,
    EX_OOM,
    EX_NOT_FOUND,
    EX_TIMEOUT,
    EX_INTERRUPTED,
    EX_COUNT
};

static const char *const ex_names[EX_COUNT] = {
    "polygpu/PolygpuException",        "polygpu/ArgumentException",
    "polygpu/StateException",          "polygpu/CompileException",
    "polygpu/DeviceException",         "polygpu/OutOfMemoryException",
    "polygpu/NotFoundException",       "polygpu/WaitTimeoutException",
    "polygpu/WaitInterruptedException"};

/* Thread.interrupt() ends a wait: the runtime asks, on the waiting thread, whether it was
 * interrupted (the interrupt status is left set, as for calls that cannot throw
 * InterruptedException). Threads the JVM does not know are not interruptible. */
static JavaVM *jvm;
static jclass thread_class;
static jmethodID thread_current, thread_is_interrupted;

static int java_interrupt_check(void *ctx) {
    (void)ctx;
    JNIEnv *env;
    if (!jvm || (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_8) != JNI_OK ||
        (*env)->ExceptionCheck(env))
        return -1;
    jobject t = (*env)->CallStaticObjectMethod(env, thread_class, thread_current);
    if (!t || (*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        return -1;
    }
    jboolean yes = (*env)->CallBooleanMethod(env, t, thread_is_interrupted);
    (*env)->DeleteLocalRef(env, t);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        return -1;
    }
    return yes ? 1 : 0;
}

static jclass ex_class[EX_COUNT];
static jmethodID ex_ctor[EX_COUNT];
static jclass string_class;
static jmethodID string_from_bytes;
static jstring utf8_name;

static jclass global_class(JNIEnv *env, const char *name) {
    jclass local = (*env)->FindClass(env, name);
    if (!local)
        return NULL;
    jclass global = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
        return JNI_ERR;
    for (int i = 0; i < EX_COUNT; i++) {
        if (!(ex_class[i] = global_class(env, ex_names[i])))
            return JNI_ERR;
        ex_ctor[i] = (*env)->GetMethodID(
            env, ex_class[i], "<init>",
            i == EX_COMPILE ? "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)V"
                            : "(Ljava/lang/String;Ljava/lang/String;)V");
        if (!ex_ctor[i])
            return JNI_ERR;
    }
    if (!(string_class = global_class(env, "java/lang/String")))
        return JNI_ERR;
    string_from_bytes = (*env)->GetMethodID(env, string_class, "<init>", "([BLjava/lang/String;)V");
    jstring name = (*env)->NewStringUTF(env, "UTF-8");
    if (!string_from_bytes || !name || !(utf8_name = (*env)->NewGlobalRef(env, name)))
        return JNI_ERR;
    (*env)->DeleteLocalRef(env, name);
    if (!(thread_class = global_class(env, "java/lang/Thread")) ||
        !(thread_current = (*env)->GetStaticMethodID(env, thread_class, "currentThread",
                                                     "()Ljava/lang/Thread;")) ||
        !(thread_is_interrupted = (*env)->GetMethodID(env, thread_class, "isInterrupted", "()Z")))
        return JNI_ERR;
    jvm = vm;
    pg_set_interrupt_check(java_interrupt_check, NULL);
    pg_node_language_set("java"); /* what pg_node_status says of this process's runtimes */
    return JNI_VERSION_1_8;
}

static int ex_index(pg_status st) {
    switch (st) {
    case PG_ERROR_ARGUMENT:
        return EX_ARGUMENT;
    case PG_ERROR_STATE:
        return EX_STATE;
    case PG_ERROR_COMPILE:
        return EX_COMPILE;
    case PG_ERROR_DEVICE:
    case PG_ERROR_UNSUPPORTED:
        return EX_DEVICE;
    case PG_ERROR_OUT_OF_MEMORY:
        return EX_OOM;
    case PG_ERROR_NOT_FOUND:
        return EX_NOT_FOUND;
    case PG_ERROR_TIMEOUT:
        return EX_TIMEOUT;
    case PG_ERROR_INTERRUPTED:
        return EX_INTERRUPTED;
    default:
        return EX_BASE;
    }
}

jstring pgj_string(JNIEnv *env, const char *utf8) {
    const unsigned char *p = (const unsigned char *)utf8;
    size_t n = 0;
    int ascii = 1;
    for (; p[n]; n++)
        ascii &= p[n] < 0x80;
    /* NewStringUTF reads modified UTF-8, which differs from UTF-8 beyond ASCII. */
    if (ascii)
        return (*env)->NewStringUTF(env, utf8);
    if (n > INT32_MAX)
        n = INT32_MAX;
    jbyteArray bytes = (*env)->NewByteArray(env, (jsize)n);
    if (!bytes)
        return NULL;
    (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)n, (const jbyte *)utf8);
    jstring s = (*env)->NewObject(env, string_class, string_from_bytes, bytes, utf8_name);
    (*env)->DeleteLocalRef(env, bytes);
    return s;
}

static void throw_with(JNIEnv *env, pg_status st, const char *msg, const char *log) {
    int i = ex_index(st);
    jstring jmsg = pgj_string(env, msg);
    jstring jstatus = jmsg ? pgj_string(env, pg_status_name(st)) : NULL;
    jstring jlog = jstatus && i == EX_COMPILE ? pgj_string(env, log) : NULL;
    if (!jstatus || (i == EX_COMPILE && !jlog))
        return; /* an OutOfMemoryError is pending instead */
    jobject ex = i == EX_COMPILE
                     ? (*env)->NewObject(env, ex_class[i], ex_ctor[i], jmsg, jstatus, jlog)
                     : (*env)->NewObject(env, ex_class[i], ex_ctor[i], jmsg, jstatus);
    if (ex)
        (*env)->Throw(env, ex);
}

void pgj_throw_status(JNIEnv *env, pg_status st) {
    const char *msg = pg_last_error();
    const char *log = pg_last_error_log();
    if (!msg || !*msg)
        msg = pg_status_name(st);
    throw_with(env, st, msg, log ? log : "");
}

void pgj_throw_message(JNIEnv *env, pg_status st, const char *msg) {
    throw_with(env, st, msg, "");
}

char *pgj_cstr(JNIEnv *env, jbyteArray bytes, int *failed) {
    *failed = 0;
    if (!bytes)
        return NULL;
    jsize n = (*env)->GetArrayLength(env, bytes);
    char *s = malloc((size_t)n + 1);
    if (!s) {
        *failed = 1;
        pgj_throw_message(env, PG_ERROR_OUT_OF_MEMORY, "out of host memory for a string");
        return NULL;
    }
    (*env)->GetByteArrayRegion(env, bytes, 0, n, (jbyte *)s);
    s[n] = '\0'; /* Java sends the terminator too; this guards a caller that did not */
    return s;
}
