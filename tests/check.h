/**
 * @file
 * @brief A minimal test reporter for the unit tests: one line per failed
 * expectation, and the closing line "N passed, N failed".
 */
#ifndef GEMM_TEST_CHECK_H
#define GEMM_TEST_CHECK_H

#include <stdio.h>

static int checks_passed, checks_failed;

/** Record one expectation; print it when it fails (or always, with verbose). */
static void expect(int ok, const char *what)
{
    if (ok) {
        checks_passed++;
    } else {
        checks_failed++;
        printf("  FAIL: %s\n", what);
    }
}

/** Print the closing line and return the exit status. */
static int checks_summary(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, checks_passed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}

#endif
