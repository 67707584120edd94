/* gemm_ref.h: the C suite's reference GEMM, C = alpha op(A) op(B) + beta C, naive, row-major
 * (op(A) is m x k: A stored m x k, or k x m when ta), in double precision. */
#ifndef PG_TEST_GEMM_REF_H
#define PG_TEST_GEMM_REF_H

static inline void gemm_ref(int m, int n, int k, int ta, int tb, double alpha, const double *a,
                            const double *b, double beta, double *c) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
            c[i * n + j] = alpha * s + beta * c[i * n + j];
        }
}

#endif
