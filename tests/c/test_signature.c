/* test_signature.c: explicit signatures, signatures inferred from kernel source, and every
 * error case of both. */
#include "check.h"
#include "nvrtc/signature.h"

#include <string.h>

/* Parse sig and expect n params; the result stays in *p (caller frees). */
static int parse_ok(const char *sig, pg_param_info **p, int expect_n) {
    int n = -1;
    pg_status st = pg__signature_parse(sig, p, &n);
    if (st != PG_OK) {
        fprintf(stderr, "parse(\"%s\") failed: %s\n", sig, pg_last_error());
        *p = NULL;
        return 0;
    }
    if (n != expect_n) {
        fprintf(stderr, "parse(\"%s\") gave %d params, expected %d\n", sig, n, expect_n);
        free(*p);
        *p = NULL;
        return 0;
    }
    return 1;
}

static int param_is(const pg_param_info *p, const char *name, const char *type, int is_array,
                    pg_dtype dt, pg_access acc) {
    int ok = strcmp(p->name, name) == 0 && strcmp(p->type, type) == 0 && p->is_array == is_array &&
             p->dtype == dt && (!is_array || p->access == acc);
    if (!ok)
        fprintf(stderr,
                "param {name '%s' type '%s' array %d dtype %d access %d}, expected {'%s' '%s' %d "
                "%d %d}\n",
                p->name, p->type, p->is_array, (int)p->dtype, (int)p->access, name, type, is_array,
                (int)dt, (int)acc);
    return ok;
}

/* One scalar parameter of the given spelling has this dtype and normalised type. */
static void check_scalar(const char *sig, pg_dtype dt, const char *type) {
    pg_param_info *p;
    if (!parse_ok(sig, &p, 1)) {
        CHECK(0);
        return;
    }
    if (!param_is(&p[0], "v", type, 0, dt, PG_ACCESS_IN)) {
        fprintf(stderr, "  for \"%s\"\n", sig);
        CHECK(0);
    }
    free(p);
}

static void test_types(void) {
    check_scalar("char v", PG_INT8, "char");
    check_scalar("signed char v", PG_INT8, "signed char");
    check_scalar("unsigned char v", PG_UINT8, "unsigned char");
    check_scalar("short v", PG_INT16, "short");
    check_scalar("short int v", PG_INT16, "short int");
    check_scalar("unsigned short v", PG_UINT16, "unsigned short");
    check_scalar("unsigned short int v", PG_UINT16, "unsigned short int");
    check_scalar("int v", PG_INT32, "int");
    check_scalar("signed v", PG_INT32, "signed");
    check_scalar("signed int v", PG_INT32, "signed int");
    check_scalar("unsigned v", PG_UINT32, "unsigned");
    check_scalar("unsigned int v", PG_UINT32, "unsigned int");
    check_scalar("long v", PG_INT64, "long");
    check_scalar("long int v", PG_INT64, "long int");
    check_scalar("long long v", PG_INT64, "long long");
    check_scalar("long long int v", PG_INT64, "long long int");
    check_scalar("unsigned long v", PG_UINT64, "unsigned long");
    check_scalar("unsigned long long v", PG_UINT64, "unsigned long long");
    check_scalar("unsigned long long int v", PG_UINT64, "unsigned long long int");
    check_scalar("size_t v", PG_UINT64, "size_t");
    check_scalar("std::size_t v", PG_UINT64, "std::size_t");
    check_scalar("ptrdiff_t v", PG_INT64, "ptrdiff_t");
    check_scalar("int8_t v", PG_INT8, "int8_t");
    check_scalar("int16_t v", PG_INT16, "int16_t");
    check_scalar("int32_t v", PG_INT32, "int32_t");
    check_scalar("int64_t v", PG_INT64, "int64_t");
    check_scalar("uint8_t v", PG_UINT8, "uint8_t");
    check_scalar("uint16_t v", PG_UINT16, "uint16_t");
    check_scalar("uint32_t v", PG_UINT32, "uint32_t");
    check_scalar("uint64_t v", PG_UINT64, "uint64_t");
    check_scalar("float v", PG_FLOAT32, "float");
    check_scalar("double v", PG_FLOAT64, "double");
    check_scalar("bool v", PG_UINT8, "bool");
    check_scalar("const int v", PG_INT32, "int"); /* top-level const on a value: irrelevant */
    check_scalar("int const v", PG_INT32, "int");
    check_scalar("  unsigned \t long\n long   v  ", PG_UINT64, "unsigned long long");
}

static void test_pointers(void) {
    pg_param_info *p;
    if (parse_ok("out float *y, in const float *x, int n", &p, 3)) {
        CHECK(param_is(&p[0], "y", "float *", 1, PG_FLOAT32, PG_ACCESS_OUT));
        CHECK(param_is(&p[1], "x", "const float *", 1, PG_FLOAT32, PG_ACCESS_IN));
        CHECK(param_is(&p[2], "n", "int", 0, PG_INT32, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    /* Defaults: const T* in, T* inout; const after the type; restrict spellings. */
    if (parse_ok("double *a, const double *b, float const *c, const float *__restrict__ d, "
                 "int *__restrict e, unsigned char * restrict f, float *const g",
                 &p, 7)) {
        CHECK(param_is(&p[0], "a", "double *", 1, PG_FLOAT64, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "b", "const double *", 1, PG_FLOAT64, PG_ACCESS_IN));
        CHECK(param_is(&p[2], "c", "const float *", 1, PG_FLOAT32, PG_ACCESS_IN));
        CHECK(param_is(&p[3], "d", "const float *", 1, PG_FLOAT32, PG_ACCESS_IN));
        CHECK(param_is(&p[4], "e", "int *", 1, PG_INT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[5], "f", "unsigned char *", 1, PG_UINT8, PG_ACCESS_INOUT));
        CHECK(param_is(&p[6], "g", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        free(p);
    } else
        CHECK(0);
    /* Prefixes: inout on a non-const pointer, in on a non-const pointer (allowed: the caller
     * promises not to write), prefixes with odd spacing, pointer spacing variants. */
    if (parse_ok("inout int*a,in float* b,  out   uint64_t  *  c , in const int8_t*d", &p, 4)) {
        CHECK(param_is(&p[0], "a", "int *", 1, PG_INT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "b", "float *", 1, PG_FLOAT32, PG_ACCESS_IN));
        CHECK(param_is(&p[2], "c", "uint64_t *", 1, PG_UINT64, PG_ACCESS_OUT));
        CHECK(param_is(&p[3], "d", "const int8_t *", 1, PG_INT8, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    /* Unnamed parameters, array syntax, parameters named like prefixes. */
    if (parse_ok("float *, const int *, int, unsigned long, float x[], const double y[16], "
                 "float *in, int out",
                 &p, 8)) {
        CHECK(param_is(&p[0], "", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "", "const int *", 1, PG_INT32, PG_ACCESS_IN));
        CHECK(param_is(&p[2], "", "int", 0, PG_INT32, PG_ACCESS_IN));
        CHECK(param_is(&p[3], "", "unsigned long", 0, PG_UINT64, PG_ACCESS_IN));
        CHECK(param_is(&p[4], "x", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[5], "y", "const double *", 1, PG_FLOAT64, PG_ACCESS_IN));
        CHECK(param_is(&p[6], "in", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[7], "out", "int", 0, PG_INT32, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    /* Empty lists. */
    if (parse_ok("", &p, 0))
        free(p);
    else
        CHECK(0);
    if (parse_ok("  void ", &p, 0))
        free(p);
    else
        CHECK(0);
    /* A 63-character name is the longest allowed. */
    char sig[128];
    snprintf(sig, sizeof sig, "float *%s",
             "a23456789012345678901234567890123456789012345678901"
             "234567890123");
    if (parse_ok(sig, &p, 1)) {
        CHECK(strlen(p[0].name) == 63);
        free(p);
    } else
        CHECK(0);
}

/* Expect a parse failure whose message contains each of the given fragments. */
static void check_parse_error(const char *sig, const char *frag1, const char *frag2) {
    pg_param_info *p = (pg_param_info *)1;
    int n = -1;
    pg_status st = pg__signature_parse(sig, &p, &n);
    if (st != PG_ERROR_ARGUMENT) {
        fprintf(stderr, "parse(\"%s\") returned %s, expected PG_ERROR_ARGUMENT\n", sig,
                pg_status_name(st));
        CHECK(0);
        if (st == PG_OK)
            free(p);
        return;
    }
    const char *m = pg_last_error();
    if (!strstr(m, frag1) || (frag2 && !strstr(m, frag2))) {
        fprintf(stderr, "parse(\"%s\"): message \"%s\" lacks \"%s\"%s%s\n", sig, m, frag1,
                frag2 ? " or " : "", frag2 ? frag2 : "");
        CHECK(0);
    }
}

static void test_parse_errors(void) {
    check_parse_error("float *y, float4 *x", "parameter 2 'x'", "unknown type 'float4'");
    check_parse_error("int n, mytype v", "parameter 2 'v'", "unknown type 'mytype'");
    check_parse_error("float **y", "parameter 1 'y'", "pointers to pointers");
    check_parse_error("float *x[]", "parameter 1 'x'", "pointers to pointers");
    check_parse_error("out const float *x", "parameter 1 'x'", "contradicts const");
    check_parse_error("float *a, inout float const *b", "parameter 2 'b'", "contradicts const");
    check_parse_error("in int n", "parameter 1 'n'", "pointers only");
    check_parse_error("float *a, out double s", "parameter 2 's'", "pointers only");
    check_parse_error("float *a, , int n", "parameter 2", "empty");
    check_parse_error("float *a,", "parameter 2", "empty");
    check_parse_error(",float *a", "parameter 1", "empty");
    check_parse_error("float *a234567890123456789012345678901234567890123456789012345678901234",
                      "parameter 1", "at most 63");
    check_parse_error("float &x", "parameter 1 'x'", "references");
    check_parse_error("long double d", "parameter 1 'd'", "long double");
    check_parse_error("int int v", "parameter 1 'v'", "not a valid type");
    check_parse_error("signed unsigned v", "parameter 1 'v'", "not a valid type");
    check_parse_error("long long long v", "parameter 1 'v'", "not a valid type");
    check_parse_error("short long v", "parameter 1 'v'", "not a valid type");
    check_parse_error("void *p", "parameter 1 'p'", "void");
    check_parse_error("bool *flags", "parameter 1 'flags'", "bool arrays");
    check_parse_error("float *x, int n = 3", "parameter 2", "unexpected '='");
    check_parse_error("const *x", "parameter 1", "no type");
    check_parse_error("float *int", "parameter 1", "not a valid parameter name");
    check_parse_error("x", "parameter 1", "unknown type 'x'");
    /* NULL arguments */
    pg_param_info *p;
    int n;
    CHECK(pg__signature_parse(NULL, &p, &n) == PG_ERROR_ARGUMENT);
    CHECK(pg__signature_parse("int n", NULL, &n) == PG_ERROR_ARGUMENT);
}

static int infer_ok(const char *src, const char *name, pg_param_info **p, int expect_n) {
    int n = -1;
    pg_status st = pg__signature_infer(src, name, p, &n);
    if (st != PG_OK) {
        fprintf(stderr, "infer('%s') failed: %s\n", name, pg_last_error());
        return 0;
    }
    if (n != expect_n) {
        fprintf(stderr, "infer('%s') gave %d params, expected %d\n", name, n, expect_n);
        free(*p);
        return 0;
    }
    return 1;
}

static const char *multi_src =
    "#include <cstdint>\n"
    "// __global__ void fake(double *d) {}  -- a kernel in a comment\n"
    "/* __global__ void fake2(int *q); */\n"
    "#define KERNEL_NOTE \"__global__ void fake3(int *z)\"\n"
    "const char *s = \"__global__ void fake4(short *w)\";\n"
    "__device__ float twice(float v) { return 2 * v; }\n"
    "extern \"C\" __global__ void saxpy(float *y, const float *__restrict__ x, float a,\n"
    "                                   int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "__global__ void __launch_bounds__(256, 2)\n"
    "saxpy_wide(double *y,\n"
    "           const double *x,\n"
    "           double a, long n) {}\n"
    "static __global__\n"
    "void\n"
    "scale ( int64_t * v , unsigned n ) { }\n"
    "__global__ void sax(char c) {}\n"
    "void __global__ late_qualifier(uint8_t *b) {}\n"
    "__global__ void nothing() {}\n"
    "__global__ void nothing_void(void) {}\n";

static void test_infer(void) {
    pg_param_info *p;
    if (infer_ok(multi_src, "saxpy", &p, 4)) {
        CHECK(param_is(&p[0], "y", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "x", "const float *", 1, PG_FLOAT32, PG_ACCESS_IN));
        CHECK(param_is(&p[2], "a", "float", 0, PG_FLOAT32, PG_ACCESS_IN));
        CHECK(param_is(&p[3], "n", "int", 0, PG_INT32, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    /* saxpy is a prefix of saxpy_wide; sax a prefix of both. */
    if (infer_ok(multi_src, "saxpy_wide", &p, 4)) {
        CHECK(param_is(&p[0], "y", "double *", 1, PG_FLOAT64, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "x", "const double *", 1, PG_FLOAT64, PG_ACCESS_IN));
        CHECK(param_is(&p[3], "n", "long", 0, PG_INT64, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    if (infer_ok(multi_src, "sax", &p, 1)) {
        CHECK(param_is(&p[0], "c", "char", 0, PG_INT8, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    if (infer_ok(multi_src, "scale", &p, 2)) {
        CHECK(param_is(&p[0], "v", "int64_t *", 1, PG_INT64, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "n", "unsigned", 0, PG_UINT32, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    if (infer_ok(multi_src, "late_qualifier", &p, 1)) {
        CHECK(param_is(&p[0], "b", "uint8_t *", 1, PG_UINT8, PG_ACCESS_INOUT));
        free(p);
    } else
        CHECK(0);
    if (infer_ok(multi_src, "nothing", &p, 0))
        free(p);
    else
        CHECK(0);
    if (infer_ok(multi_src, "nothing_void", &p, 0))
        free(p);
    else
        CHECK(0);
    /* A declaration before the definition: the definition's names win. */
    if (infer_ok("__global__ void d(float *, int);\nint x;\n__global__ void d(float *v, int n) {}",
                 "d", &p, 2)) {
        CHECK(param_is(&p[0], "v", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "n", "int", 0, PG_INT32, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    /* Kernels that only appear in comments, strings and macros are not kernels. */
    int n;
    const char *fakes[] = {"fake", "fake2", "fake3", "fake4", "twice", "saxp", "saxpy_"};
    for (size_t i = 0; i < sizeof fakes / sizeof fakes[0]; i++) {
        CHECK_STATUS(pg__signature_infer(multi_src, fakes[i], &p, &n), PG_ERROR_NOT_FOUND);
        CHECK(strstr(pg_last_error(), fakes[i]) != NULL);
        CHECK(strstr(pg_last_error(),
                     "kernels found: saxpy, saxpy_wide, scale, sax, late_qualifier") != NULL);
        CHECK(strstr(pg_last_error(), "fake") == NULL || strstr(pg_last_error(), "'fake"));
    }
    CHECK_STATUS(pg__signature_infer("int x;", "k", &p, &n), PG_ERROR_NOT_FOUND);
    CHECK(strstr(pg_last_error(), "no __global__ function") != NULL);
    /* find agrees */
    CHECK_OK(pg__signature_find(multi_src, "saxpy_wide"));
    CHECK_STATUS(pg__signature_find(multi_src, "fake"), PG_ERROR_NOT_FOUND);
    /* Errors in an inferred list name the kernel and the parameter. */
    CHECK_STATUS(pg__signature_infer("__global__ void k(float4 *v, int n) {}", "k", &p, &n),
                 PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "kernel 'k'") && strstr(pg_last_error(), "parameter 1 'v'"));
    /* No access prefixes in source: "in" is an unknown type there. */
    CHECK_STATUS(pg__signature_infer("__global__ void k(in float *v) {}", "k", &p, &n),
                 PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg__signature_infer(multi_src, "saxpy<", &p, &n), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg__signature_infer(multi_src, "", &p, &n), PG_ERROR_ARGUMENT);
}

static const char *template_src =
    "template <typename T>\n"
    "__global__ void axpy(T *y, const T *x, T a, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "template <class T, int N>\n"
    "__global__ void __launch_bounds__(128)\n"
    "scale(T *v, const T *__restrict__ w, int n) {}\n"
    "template <typename TIn, typename TOut = double, unsigned K = 4>\n"
    "__global__ void convert(const TIn *in, TOut *out, size_t n) {}\n"
    "template <typename T> __device__ T sq(T v) { return v * v; }\n"
    "__global__ void plain(int *T) {}\n";

static void test_templates(void) {
    pg_param_info *p;
    int n;
    if (infer_ok(template_src, "axpy<float>", &p, 4)) {
        CHECK(param_is(&p[0], "y", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "x", "const float *", 1, PG_FLOAT32, PG_ACCESS_IN));
        CHECK(param_is(&p[2], "a", "float", 0, PG_FLOAT32, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    if (infer_ok(template_src, " axpy < unsigned long long > ", &p, 4)) {
        CHECK(param_is(&p[0], "y", "unsigned long long *", 1, PG_UINT64, PG_ACCESS_INOUT));
        free(p);
    } else
        CHECK(0);
    if (infer_ok(template_src, "scale<double, 4>", &p, 3)) {
        CHECK(param_is(&p[0], "v", "double *", 1, PG_FLOAT64, PG_ACCESS_INOUT));
        CHECK(param_is(&p[1], "w", "const double *", 1, PG_FLOAT64, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    /* Defaults fill missing arguments. */
    if (infer_ok(template_src, "convert<int16_t>", &p, 3)) {
        CHECK(param_is(&p[0], "in", "const int16_t *", 1, PG_INT16, PG_ACCESS_IN));
        CHECK(param_is(&p[1], "out", "double *", 1, PG_FLOAT64, PG_ACCESS_INOUT));
        CHECK(param_is(&p[2], "n", "size_t", 0, PG_UINT64, PG_ACCESS_IN));
        free(p);
    } else
        CHECK(0);
    if (infer_ok(template_src, "convert<int, float, 2>", &p, 3)) {
        CHECK(param_is(&p[1], "out", "float *", 1, PG_FLOAT32, PG_ACCESS_INOUT));
        free(p);
    } else
        CHECK(0);
    /* A non-template kernel after template functions keeps its own names (T is a name here). */
    if (infer_ok(template_src, "plain", &p, 1)) {
        CHECK(param_is(&p[0], "T", "int *", 1, PG_INT32, PG_ACCESS_INOUT));
        free(p);
    } else
        CHECK(0);
    CHECK_STATUS(pg__signature_infer(template_src, "axpy", &p, &n), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "template") && strstr(pg_last_error(), "axpy<float>"));
    CHECK_STATUS(pg__signature_infer(template_src, "axpy<float, 3>", &p, &n), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg__signature_infer(template_src, "plain<int>", &p, &n), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "not a template") != NULL);
    CHECK_STATUS(pg__signature_infer(template_src, "axpy<float4>", &p, &n), PG_ERROR_ARGUMENT);
    CHECK(strstr(pg_last_error(), "unknown type 'float4'") != NULL);
    CHECK_STATUS(pg__signature_infer(template_src, "axpy<float,>", &p, &n), PG_ERROR_ARGUMENT);
    CHECK_STATUS(pg__signature_infer(template_src, "sq<float>", &p, &n), PG_ERROR_NOT_FOUND);
}

static void test_strip(void) {
    const char *src = "a // x\nb /* y\n z */ c \"s//t\" 'q' 1'000 R\"(u\")\"\n#define D 1\ne";
    char *s = pg__signature_strip(src, 0);
    REQUIRE_OK(s ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    CHECK(strlen(s) == strlen(src));
    CHECK(strstr(s, "x") == NULL && strstr(s, "y") == NULL && strstr(s, "z") == NULL);
    CHECK(strstr(s, "s//t") == NULL && strstr(s, "'q'") == NULL && strstr(s, "u") == NULL);
    CHECK(strstr(s, "1'000") != NULL && strstr(s, "#define D 1") != NULL);
    CHECK(s[strlen(s) - 1] == 'e');
    int lines_src = 0, lines_s = 0;
    for (const char *q = src; *q; q++)
        lines_src += *q == '\n';
    for (const char *q = s; *q; q++)
        lines_s += *q == '\n';
    CHECK(lines_src == lines_s);
    free(s);
    s = pg__signature_strip(src, 1);
    REQUIRE_OK(s ? PG_OK : PG_ERROR_OUT_OF_MEMORY);
    CHECK(strstr(s, "#define") == NULL && s[strlen(s) - 1] == 'e');
    free(s);
}

int main(void) {
    test_types();
    test_pointers();
    test_parse_errors();
    test_infer();
    test_templates();
    test_strip();
    CHECK(strcmp(pg__dtype_ctype(PG_FLOAT32), "float") == 0);
    CHECK(strcmp(pg__dtype_ctype(PG_UINT16), "uint16_t") == 0);
    CHECK(strcmp(pg__dtype_ctype(PG_INT64), "int64_t") == 0);
    CHECK(pg__dtype_ctype(PG_DTYPE_COUNT) == NULL);
    CHECK_DONE();
}
