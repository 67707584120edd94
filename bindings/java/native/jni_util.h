/* jni_util.h: what the JNI files share: status-to-exception mapping, strings and handles. */
#ifndef PGJ_UTIL_H
#define PGJ_UTIL_H

#include <jni.h>
#include <stdint.h>

#include "polygpu.h"

/* Handles travel to Java as longs. */
#define PGJ_PTR(type, h) ((type *)(intptr_t)(h))
#define PGJ_HANDLE(p) ((jlong)(intptr_t)(p))

/* Throw the exception class of `st` with pg_last_error() (and pg_last_error_log() for compile
 * errors). Call it right after the failing pg_* call, on the same thread, before any other. */
void pgj_throw_status(JNIEnv *env, pg_status st);
/* Throw the exception class of `st` with a message of the binding's own. */
void pgj_throw_message(JNIEnv *env, pg_status st, const char *msg);

/* A malloc'd copy of a NUL-terminated UTF-8 byte[] from Java; NULL for a null array (then
 * *failed stays 0) or on failure (*failed = 1, an exception is pending). */
char *pgj_cstr(JNIEnv *env, jbyteArray bytes, int *failed);

/* A Java String from UTF-8 text of any content (not only JNI's modified UTF-8); NULL with an
 * exception pending on failure. */
jstring pgj_string(JNIEnv *env, const char *utf8);

#endif
