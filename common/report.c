/**
 * @file
 * @brief The printed table and the CSV file: one row per shape.
 */
#define _POSIX_C_SOURCE 200809L /* stat, access, open, sigaction, ftruncate */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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
    /* A row that passed only by the underflow allowance says so: its error can be large (0.57 for
     * alpha = beta = 2^-1074), and PASS beside it alone would contradict it. */
    char why[96] = "";
    if (r->underflow && strcmp(r->status, "PASS") == 0)
        snprintf(why, sizeof why, " (underflow allowance: results are subnormal; limit %.2e)", r->norm_limit);
    fprintf(out, "%7d %7d %7d %10.4f %10.4f %10.1f %10.1f %6.3f %s  %s%s\n", r->m, r->n, r->k,
            r->ms_median, r->ms_min, r->gflops, r->baseline_gflops, r->ratio, err, r->status, why);
    fflush(out);
}

/* Write all @p len bytes of @p buf to @p fd (short writes and EINTR retried). 0, or -1 with errno. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        const ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO; /* (no progress and no reason: should not happen) */
            return -1;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/** The CSV row of @p r (after the header line if @p header), with the norm-wise figure @p err as text, into
 *  @p buf of @p size bytes; returns, as snprintf does, the length the whole line needs. */
static int format_csv(char *buf, size_t size, const struct row *r, int header, const char *err)
{
    return snprintf(buf, size, "%s%s%02d,%s,%s,%s,%d,%d,%d,%.6f,%.6f,%.3f,%.3f,%.4f,%s,%s,%s\n",
                    header ? REPORT_CSV_HEADER : "", header ? "\n" : "", r->step, r->name, r->precision, r->device,
                    r->m, r->n, r->k, r->ms_median, r->ms_min, r->gflops, r->baseline_gflops, r->ratio, err,
                    r->status, r->baseline);
}

/* The CSV line of @p r (and the header before it when @p header), malloc'ed; NULL with errno set. */
static char *csv_line(const struct row *r, int header)
{
    char err[32]; /* the norm-wise figure; "nan" for unchecked or non-finite results */
    if (isnan(r->rel_err))
        snprintf(err, sizeof err, "nan");
    else
        snprintf(err, sizeof err, "%.3e", r->rel_err);
    const int len = format_csv(NULL, 0, r, header, err);
    char *line = len < 0 ? NULL : malloc((size_t)len + 1);
    if (line != NULL)
        format_csv(line, (size_t)len + 1, r, header, err);
    return line;
}

int report_append_csv(const char *path, const struct row *r)
{
    int created = 0;
    int fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0 && errno == ENOENT) { /* a new file: made here, so removed again if its row fails */
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL, 0666);
        created = fd >= 0;
    }
    if (fd < 0)
        return -1;
    struct stat info;
    if (fstat(fd, &info) != 0) {
        const int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    const off_t before = info.st_size; /* a new or empty file starts with the header */
    char *line = csv_line(r, before == 0);
    if (line == NULL) {
        const int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    /* Over `ulimit -f`, a write past the limit would raise SIGXFSZ and end the process with the row cut
     * in half: ignored, the write fails with EFBIG instead and the row is taken back. */
    struct sigaction ignore, old;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    const int restore = sigaction(SIGXFSZ, &ignore, &old) == 0;
    /* Never leave part of a row: on any failure the file goes back to its previous length (a file made
     * here is removed). The reason reported stays the write's or the close's. */
    int e = 0, cut = 0; /* cut: the file is still to be cut back, by its name */
    if (write_all(fd, line, strlen(line)) != 0) {
        e = errno;
        cut = !created && S_ISREG(info.st_mode) && ftruncate(fd, before) != 0;
    }
    if (close(fd) != 0 && e == 0) {
        e = errno;
        cut = !created && S_ISREG(info.st_mode);
    }
    if (e != 0 && created)
        unlink(path);
    else if (cut)
        cut = truncate(path, before); /* (if this fails too, nothing more can be done) */
    if (restore)
        sigaction(SIGXFSZ, &old, NULL);
    free(line);
    errno = e;
    return e == 0 ? 0 : -1;
}

/* Copy the start of @p line (up to @p n bytes, no newline) into @p out, printable: a file's first line
 * quoted in a one-line message. */
static void printable_start(const char *line, size_t n, char *out, size_t len)
{
    const size_t keep = 40;
    size_t o = 0;
    for (size_t t = 0; t < n && t < keep && o + 1 < len; ++t)
        out[o++] = (line[t] >= 0x20 && line[t] < 0x7f) ? line[t] : '?';
    if (n > keep && o + 4 < len)
        out[o++] = '.', out[o++] = '.', out[o++] = '.';
    out[o] = '\0';
}

/* An existing non-empty --csv file: does it hold rows of this CSV (its first line the header, its last
 * byte a newline)? 0 if so; else 1 with the reason in @p why. */
static int csv_content_problem(const char *path, char *why, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return snprintf(why, len, "cannot read --csv file '%s' to check its header: %s", path, strerror(errno)), 1;
    char first[sizeof REPORT_CSV_HEADER + 1]; /* the header and its newline */
    const size_t got = fread(first, 1, sizeof first, f);
    const size_t hlen = sizeof REPORT_CSV_HEADER - 1;
    size_t line_len = 0; /* the first line, up to its newline or what was read */
    while (line_len < got && first[line_len] != '\n')
        line_len++;
    if (line_len != hlen || memcmp(first, REPORT_CSV_HEADER, hlen) != 0) {
        char start[48];
        printable_start(first, line_len, start, sizeof start);
        fclose(f);
        return snprintf(why, len, "--csv '%s' has another header ('%s', not '%.19s,...'): its rows are not these; "
                        "name a new file", path, start, REPORT_CSV_HEADER), 1;
    }
    const int last = fseek(f, -1, SEEK_END) == 0 ? fgetc(f) : EOF;
    fclose(f);
    if (last != '\n')
        return snprintf(why, len, "--csv '%s' ends in a cut line (no newline at its end): a row appended would be "
                        "glued to it", path), 1;
    return 0;
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
        return info.st_size > 0 ? csv_content_problem(path, why, len) : 0;
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
