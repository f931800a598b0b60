/**
 * @file
 * @brief The printed table and the CSV file: one row per shape.
 */
#define _POSIX_C_SOURCE 200809L /* stat, access */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char REPORT_CSV_HEADER[] =
    "step,name,precision,device,m,n,k,ms_median,ms_min,gflops,baseline_gflops,ratio,rel_err,status,baseline";

void report_print_header(FILE *out)
{
    fprintf(out, "%7s %7s %7s %10s %10s %10s %10s %6s %9s  %s\n", "M", "N", "K", "ms(med)",
            "ms(min)", "GFLOP/s", "base", "ratio", "rel_err", "check");
}

void report_print_row(FILE *out, const struct row *r)
{
    char err[32];
    if (isnan(r->rel_err) && strcmp(r->status, "UNCHECKED") == 0)
        snprintf(err, sizeof err, "%9s", "-");
    else if (isnan(r->rel_err))
        snprintf(err, sizeof err, "%9s", "nan");
    else
        snprintf(err, sizeof err, "%9.2e", r->rel_err);
    fprintf(out, "%7d %7d %7d %10.4f %10.4f %10.1f %10.1f %6.3f %s  %s\n", r->m, r->n, r->k,
            r->ms_median, r->ms_min, r->gflops, r->baseline_gflops, r->ratio, err, r->status);
    fflush(out);
}

int report_append_csv(const char *path, const struct row *r)
{
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return -1;
    char line[1024];
    int len = 0;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return -1;
    }
    if (ftell(f) == 0) /* a new or empty file starts with the header */
        len = snprintf(line, sizeof line, "%s\n", REPORT_CSV_HEADER);
    char err[32]; /* the norm-wise figure; "nan" for unchecked or non-finite results */
    if (isnan(r->rel_err))
        snprintf(err, sizeof err, "nan");
    else
        snprintf(err, sizeof err, "%.3e", r->rel_err);
    len += snprintf(line + len, sizeof line - (size_t)len,
                    "%02d,%s,%s,%s,%d,%d,%d,%.6f,%.6f,%.3f,%.3f,%.4f,%s,%s,%s\n", r->step, r->name,
                    r->precision, r->device, r->m, r->n, r->k, r->ms_median, r->ms_min, r->gflops,
                    r->baseline_gflops, r->ratio, err, r->status, r->baseline);
    int ok = fputs(line, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : -1;
}

int report_csv_problem(const char *path, char *why, size_t len)
{
    char dir[4096];
    struct stat info;
    if (stat(path, &info) == 0) {
        if (!S_ISREG(info.st_mode))
            return snprintf(why, len, "--csv '%s' is not a regular file", path), 1;
        if (access(path, W_OK) != 0)
            return snprintf(why, len, "cannot write to --csv file '%s': %s", path, strerror(errno)), 1;
        return 0;
    }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        slash[1] = '\0'; /* "/x.csv": the root */
    else
        *slash = '\0';
    if (access(dir, W_OK | X_OK) != 0)
        return snprintf(why, len, "cannot create --csv file '%s': its directory '%s': %s", path, dir,
                        strerror(errno)), 1;
    return 0;
}
