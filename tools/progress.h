/* One progress meter for the long-running commands (run, compare, map,
 * sweep): "tessel CMD: done/total UNIT (P %), R UNIT/s, T s left" on
 * standard error, redrawn in place, erased at the end. Shown when standard
 * error is a terminal and the command is not quiet; TESSEL_PROGRESS=1 in
 * the environment forces it (one line per update, for tests and logs). */
#ifndef TESSEL_TOOLS_PROGRESS_H
#define TESSEL_TOOLS_PROGRESS_H

typedef struct cli_progress {
    const char *command;   /* "tessel run" */
    const char *unit;      /* "levels", "rows", "points" */
    double start;          /* monotonic seconds at init */
    double last;           /* when the last line was drawn */
    double time_limit;     /* > 0: the work stops after this many seconds, so time
                              left is at most what remains of it (tessel map) */
    int enabled, forced, shown;
} cli_progress;

/* Starts the clock; enabled unless quiet, when standard error is a
 * terminal or TESSEL_PROGRESS=1. */
void cli_progress_init(cli_progress *p, const char *command, const char *unit, int quiet);

/* Seconds since cli_progress_init (monotonic). */
double cli_progress_elapsed(const cli_progress *p);

/* done of total units after `seconds` (< 0: measured since init); the rate
 * is done / seconds and time left (total - done) / rate. `extra` (may be
 * NULL) is appended (", best energy 1.2e9"). On a terminal a line is drawn
 * at most every 0.2 s and not in the first 0.5 s, so quick commands stay
 * clean; done == total always draws. */
void cli_progress_update(cli_progress *p, double done, double total, double seconds,
                         const char *extra);

/* A stage without a count ("collecting the statistics of A"). */
void cli_progress_stage(cli_progress *p, const char *what);

/* Erases the line (terminal) so the summary starts on a clean line. */
void cli_progress_end(cli_progress *p);

#endif
