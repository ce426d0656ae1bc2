/* Dealing a batch's chunks to the sweep's threads (issue 19 item 3).
 *
 * The chunks are dealt out in contiguous shares, one per worker, as even
 * as whole chunks allow: neighbouring points share derived specs,
 * estimates and shape summaries, so they stay on one worker. A worker
 * takes the chunks of its share in order, then, to even out uneven
 * chunks, the last chunk of the largest share left.
 *
 * The threads are paced by their CPU clocks, so that each takes the
 * chunks it would take on idle cores whatever the machine's load:
 *   - a worker takes a chunk of another's share only once that worker's
 *     thread has spent at least as much CPU on the batch as its own (one
 *     not started yet has spent none);
 *   - a worker takes the next chunk of its own share only while it is at
 *     most the chunk it just ran ahead of every thread not started yet.
 * Otherwise it waits. On idle cores the threads start within tens of
 * microseconds and run side by side, so they rarely wait. On a loaded
 * machine a thread may start milliseconds after the calling one, or be
 * descheduled as long: with one common queue, llb-sweep's calling thread
 * took 80-100 % of a batch (1-2 ms of CPU) before the other ran, and with
 * shares but free stealing the thread that ran took the other's share.
 * Pacing a share against threads that run but are descheduled too cost
 * more than it saved: a wake-up costs 20-30 us of CPU on a loaded
 * machine, and llb-sweep's -j 2 CPU rose from 4.7 to 5.7 ms (median).
 *
 * A failed chunk ends the batch at it: later chunks are never taken,
 * earlier ones still are, so the first error in point order is the
 * sweep's whatever the threads. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "sweep_internal.h"

typedef struct sched_worker {
    size_t next, end;   /* the chunks of its share not yet taken */
    int started;        /* its thread runs the batch: clock and cpu0 are set */
    int gone;           /* its thread will not run: its share is the others' */
    int finished;       /* it found no chunk left */
    int waiting;        /* it waits for another clock to reach wait_for */
    int has_clock;
    clockid_t clock;    /* its thread's CPU clock */
    double cpu0;        /* that clock when the thread began the batch */
    double taken_at;    /* its CPU on the batch when it took its last chunk; -1: none */
    double slack;       /* the CPU its last chunk took (INFINITY before the first) */
    double wait_for;
} sched_worker;

/* mu guards everything below it. */
struct sweep_sched {
    const tessel_allocator *alloc;
    pthread_mutex_t mu;
    pthread_cond_t moved; /* a waiting worker may go on */
    size_t nchunks;
    size_t failed;        /* the first failed chunk; nchunks: none */
    unsigned nworkers, cap, waiting;
    sched_worker *w;
};

static double clock_now(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

sweep_sched *sweep_sched_create(const tessel_allocator *a, unsigned nworkers)
{
    sweep_sched *s = tessel_alloc(a, sizeof(*s));
    if (!s)
        return NULL;
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    s->cap = nworkers;
    if (!(s->w = tessel_alloc_array(a, nworkers, sizeof(*s->w)))) {
        tessel_dealloc(a, s);
        return NULL;
    }
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (!rc) {
        rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) ||
             pthread_cond_init(&s->moved, &attr);
        pthread_condattr_destroy(&attr);
    }
    if (!rc && pthread_mutex_init(&s->mu, NULL)) {
        pthread_cond_destroy(&s->moved);
        rc = 1;
    }
    if (rc) {
        tessel_dealloc(a, s->w);
        tessel_dealloc(a, s);
        return NULL;
    }
    return s;
}

void sweep_sched_free(sweep_sched **s)
{
    if (!s || !*s)
        return;
    pthread_cond_destroy(&(*s)->moved);
    pthread_mutex_destroy(&(*s)->mu);
    tessel_dealloc((*s)->alloc, (*s)->w);
    tessel_dealloc((*s)->alloc, *s);
    *s = NULL;
}

void sweep_sched_reset(sweep_sched *s, size_t nchunks, unsigned nworkers)
{
    pthread_mutex_lock(&s->mu);
    s->nchunks = s->failed = nchunks;
    s->nworkers = nworkers < s->cap ? nworkers : s->cap;
    s->waiting = 0;
    for (unsigned i = 0; i < s->nworkers; i++) {
        sched_worker *w = &s->w[i];
        memset(w, 0, sizeof(*w));
        w->next = nchunks * i / s->nworkers;
        w->end = nchunks * (i + 1) / s->nworkers;
        w->taken_at = -1;
        w->slack = INFINITY;
    }
    pthread_mutex_unlock(&s->mu);
}

/* CPU seconds w's thread has spent on the batch (mu held): none before
 * it starts; unbounded when it will not run or its clock cannot be read
 * (nothing then waits for it). */
static double worker_cpu(const sched_worker *w)
{
    if (w->gone)
        return INFINITY;
    if (!w->started)
        return 0;
    double now = w->has_clock ? clock_now(w->clock) : NAN;
    return isnan(now) ? INFINITY : now - w->cpu0;
}

/* The chunks not yet taken (mu held), none at or after the first failed
 * chunk (those are never evaluated). */
static size_t chunks_left(sweep_sched *s)
{
    size_t left = 0;
    for (unsigned i = 0; i < s->nworkers; i++) {
        sched_worker *w = &s->w[i];
        if (w->end > s->failed)
            w->end = w->next > s->failed ? w->next : s->failed;
        left += w->end - w->next;
    }
    return left;
}

/* Whether a waiting worker may go on (mu held): `by`'s clock (at `cpu`)
 * reached what it waits for, or no chunk is left. */
static int wakes_waiters(sweep_sched *s, const sched_worker *by, double cpu)
{
    if (!s->waiting)
        return 0;
    if (!chunks_left(s))
        return 1;
    for (unsigned i = 0; i < s->nworkers; i++)
        if (s->w[i].waiting && &s->w[i] != by && cpu >= s->w[i].wait_for)
            return 1;
    return 0;
}

/* Waits on s->moved (mu held), for at most `seconds` when finite. */
static void wait_moved(sweep_sched *s, double seconds)
{
    if (seconds == INFINITY) {
        pthread_cond_wait(&s->moved, &s->mu);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long ns = ts.tv_nsec + (long)(seconds * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&s->moved, &s->mu, &ts);
}

/* What `own` (whose CPU on the batch is `mine`) must wait for before its
 * next chunk (mu held): the CPU the
 * lagging workers' clocks must reach (*need; INFINITY: none, *chunk is
 * then the chunk), the least of their clocks and whether one of them
 * runs. */
static void next_or_need(sweep_sched *s, sched_worker *own, double mine, size_t *chunk,
                         double *need, double *least, int *running)
{
    sched_worker *from = NULL;
    int own_share = own->next < own->end;
    *need = *least = INFINITY;
    *running = 0;
    for (unsigned i = 0; i < s->nworkers; i++) {
        sched_worker *w = &s->w[i];
        size_t left = w->end - w->next;
        if (w == own || (own_share ? w->started || w->gone : !left))
            continue;
        double theirs = worker_cpu(w), bar = own_share ? mine - own->slack : mine;
        if (theirs < bar) { /* it lags: its clock must reach bar first */
            *need = bar;
            *least = theirs < *least ? theirs : *least;
            *running |= w->started;
        } else if (!own_share && (!from || left > from->end - from->next)) {
            from = w;
        }
    }
    if (own_share && *need == INFINITY)
        *chunk = own->next++;
    else if (from)
        *chunk = --from->end;
    if (*chunk != s->nchunks)
        *need = INFINITY;
}

/* The next chunk for `own` (mu held; nchunks: none left), waiting while
 * the pacing rules (above) hold it back; *mine is own's CPU on the batch,
 * read again after a wait (a CPU clock costs a system call). */
static size_t next_chunk(sweep_sched *s, sched_worker *own, double *mine)
{
    for (unsigned waits = 0;; waits++) {
        size_t chunk = s->nchunks;
        double need, least;
        int running;
        if (!chunks_left(s))
            return s->nchunks;
        if (waits)
            *mine = worker_cpu(own);
        next_or_need(s, own, *mine, &chunk, &need, &least, &running);
        if (chunk != s->nchunks || need == INFINITY)
            return chunk;
        own->wait_for = need;
        own->waiting = 1;
        s->waiting++;
        if (wakes_waiters(s, own, *mine))
            pthread_cond_broadcast(&s->moved);
        /* A worker that takes a chunk wakes us once its clock has reached
         * `need` (take); within a long chunk, on idle cores, its clock
         * does so in need - least. One that does not run (a loaded
         * machine) is checked less and less often: a wake-up costs tens
         * of microseconds of CPU. One not started yet wakes us when it
         * starts. */
        double floor = 200e-6 * (double)(1u << (waits < 8 ? waits : 8));
        double gap = need - least;
        wait_moved(s, !running ? INFINITY : gap > floor ? gap : floor);
        s->waiting--;
        own->waiting = 0;
    }
}

void sweep_sched_start(sweep_sched *s, unsigned index)
{
    pthread_mutex_lock(&s->mu);
    sched_worker *w = &s->w[index];
    w->has_clock = pthread_getcpuclockid(pthread_self(), &w->clock) == 0;
    w->cpu0 = w->has_clock ? clock_now(w->clock) : 0;
    w->has_clock = w->has_clock && !isnan(w->cpu0);
    w->started = 1;
    if (s->waiting) /* they wait without a timeout for threads not started */
        pthread_cond_broadcast(&s->moved);
    pthread_mutex_unlock(&s->mu);
}

void sweep_sched_gone(sweep_sched *s, unsigned index)
{
    pthread_mutex_lock(&s->mu);
    s->w[index].gone = 1;
    pthread_cond_broadcast(&s->moved);
    pthread_mutex_unlock(&s->mu);
}

size_t sweep_sched_take(sweep_sched *s, unsigned index)
{
    sched_worker *own = &s->w[index];
    /* One CPU clock read per take (a system call), outside the lock: only
     * this thread writes own's clock fields, and reset (which writes
     * nworkers) happens before the batch's threads run. None alone: one
     * worker is never paced. */
    double cpu = s->nworkers > 1 ? worker_cpu(own) : 0;
    pthread_mutex_lock(&s->mu);
    if (own->taken_at >= 0)
        own->slack = cpu - own->taken_at;
    size_t c = next_chunk(s, own, &cpu);
    if (c == s->nchunks) {
        own->finished = 1; /* nobody paces with it any more */
        if (s->waiting)
            pthread_cond_broadcast(&s->moved);
    } else {
        own->taken_at = cpu;
        if (wakes_waiters(s, own, cpu))
            pthread_cond_broadcast(&s->moved);
    }
    pthread_mutex_unlock(&s->mu);
    return c;
}

void sweep_sched_failed(sweep_sched *s, size_t chunk)
{
    pthread_mutex_lock(&s->mu);
    if (chunk < s->failed)
        s->failed = chunk;
    pthread_cond_broadcast(&s->moved);
    pthread_mutex_unlock(&s->mu);
}
