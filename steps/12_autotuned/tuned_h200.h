/* Step 12's configurations, written by make tune (steps/12_autotuned/tune.sh); not edited by hand.
 * Device: NVIDIA H200, 9.0; 2026-11-29; 57 candidates timed, 3 min 52 s.
 * Each: block BM, BN, BK, warp WM, WN, thread TM, TN, pipeline depth, blocks per SM; GFLOP/s at
 * the class's shape (median of 5 after 2 warm-up) and cuBLAS SGEMM's in the same run. */
#define TUNED_SQUARE 256, 128, 16, 128, 32, 16, 8, 2, 1 /* 4096x4096x4096: 46418 GFLOP/s, cuBLAS 51378, 0.903 */
#define TUNED_TALL 256, 128, 16, 128, 32, 16, 8, 2, 1 /* 8192x1024x4096: 45978 GFLOP/s, cuBLAS 51442, 0.894 */
#define TUNED_WIDE 256, 128, 16, 128, 32, 16, 8, 2, 1 /* 1024x8192x4096: 46158 GFLOP/s, cuBLAS 50830, 0.908 */
#define TUNED_SHORT_K 256, 128, 16, 128, 32, 16, 8, 2, 1 /* 4096x4096x256: 41910 GFLOP/s, cuBLAS 44554, 0.941 */
#define TUNED_SMALL 128, 64, 16, 32, 32, 4, 8, 3, 1 /* 1024x1024x1024: 35080 GFLOP/s, cuBLAS 37015, 0.948 */
#define TUNED_UNALIGNED 256, 128, 16, 128, 32, 16, 8, 2, 1 /* 4095x4095x4095: 42617 GFLOP/s, cuBLAS 48496, 0.879 */
