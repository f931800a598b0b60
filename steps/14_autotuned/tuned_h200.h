/* Step 14's configurations, written by make tune (steps/14_autotuned/tune.sh); not edited by hand.
 * Device: NVIDIA H200, 9.0; 2026-11-29; 97 candidates timed, 5 min 14 s.
 * Each: block BM, BN, BK, warp WM, WN, thread TM, TN, pipeline depth, blocks per SM, FFMA order,
 * copy issue point; GFLOP/s at the class's shape (median of 5 after 2 warm-up) and cuBLAS SGEMM's
 * in the same run. */
#define TUNED_SQUARE 256, 128, 16, 64, 64, 16, 8, 4, 1, 1, 8 /* 4096x4096x4096: 52670 GFLOP/s, cuBLAS 51200, 1.029 */
#define TUNED_TALL 256, 128, 16, 64, 64, 16, 8, 4, 1, 1, 8 /* 8192x1024x4096: 52535 GFLOP/s, cuBLAS 51348, 1.023 */
#define TUNED_WIDE 256, 128, 16, 64, 64, 16, 8, 4, 1, 1, 8 /* 1024x8192x4096: 52553 GFLOP/s, cuBLAS 50713, 1.036 */
#define TUNED_SHORT_K 128, 128, 16, 64, 32, 8, 8, 5, 2, 0, 8 /* 4096x4096x256: 46864 GFLOP/s, cuBLAS 45040, 1.040 */
#define TUNED_SMALL 128, 64, 32, 16, 64, 4, 8, 4, 2, 0, 16 /* 1024x1024x1024: 37979 GFLOP/s, cuBLAS 37283, 1.019 */
#define TUNED_UNALIGNED 128, 128, 16, 64, 32, 8, 8, 2, 2, 0, -1 /* 4095x4095x4095: 44646 GFLOP/s, cuBLAS 48287, 0.925 */
