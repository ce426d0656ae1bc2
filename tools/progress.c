/* The progress meter every long-running command shares (progress.h). */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_DELAY 0.5    /* seconds before the first line on a terminal */
#define PROGRESS_INTERVAL 0.2 /* seconds between lines on a terminal */

static double monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_init(cli_progress *p, const char *command, const char *unit, int quiet)
{
    const char *force = getenv("TESSEL_PROGRESS");
    memset(p, 0, sizeof(*p));
    p->command = command;
    p->unit = unit;
    p->start = monotonic();
    p->forced = !quiet && force && strcmp(force, "1") == 0;
    p->enabled = !quiet && (p->forced || isatty(fileno(stderr)));
}

double cli_progress_elapsed(const cli_progress *p)
{
    return monotonic() - p->start;
}

/* A count as a whole number when it is one, else with one decimal (run's
 * levels walked so far). */
static void count_text(char *buf, size_t size, double v)
{
    if (v == (double)(unsigned long long)v)
        snprintf(buf, size, "%llu", (unsigned long long)v);
    else
        snprintf(buf, size, "%.1f", v);
}

/* Whether to draw now: forced lines always; on a terminal after the
 * initial delay, at most every interval, and always the last one. */
static int due(cli_progress *p, double now, int last)
{
    if (!p->enabled)
        return 0;
    if (p->forced)
        return 1;
    if (now - p->start < PROGRESS_DELAY)
        return 0;
    return last ? p->shown : now - p->last >= PROGRESS_INTERVAL || !p->shown;
}

static void draw(cli_progress *p, const char *text)
{
    if (p->forced)
        fprintf(stderr, "%s: %s\n", p->command, text);
    else
        fprintf(stderr, "\r%s: %-70s", p->command, text);
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_update(cli_progress *p, double done, double total, double seconds,
                         const char *extra)
{
    double now = monotonic();
    if (!due(p, now, done >= total))
        return;
    p->last = now;
    if (seconds < 0)
        seconds = now - p->start;
    if (done > total)
        done = total;
    double rate = seconds > 0 ? done / seconds : 0;
    double left = rate > 0 ? (total - done) / rate : 0;
    if (p->time_limit > 0 && left > p->time_limit - seconds)
        left = p->time_limit - seconds > 0 ? p->time_limit - seconds : 0;
    char d[32], t[32], r[32], text[256];
    count_text(d, sizeof(d), done);
    if (total >= 1e15)
        snprintf(t, sizeof(t), "%.3g", total);
    else
        count_text(t, sizeof(t), total);
    /* fixed decimals below 0.01 (a slow run's levels/s), never an exponent */
    snprintf(r, sizeof(r), rate >= 100 ? "%.0f" : rate >= 0.01 ? "%.3g" : "%.5f", rate);
    snprintf(text, sizeof(text), "%s/%s %s (%3.0f %%), %s %s/s, %.0f s left%s", d, t, p->unit,
             total > 0 ? 100.0 * done / total : 100.0, r, p->unit, left, extra ? extra : "");
    draw(p, text);
}

void cli_progress_stage(cli_progress *p, const char *what)
{
    double now = monotonic();
    if (!p->enabled || (!p->forced && now - p->start < PROGRESS_DELAY))
        return;
    p->last = now;
    draw(p, what);
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown && !p->forced)
        fprintf(stderr, "\r%100s\r", "");
    p->shown = 0;
}
