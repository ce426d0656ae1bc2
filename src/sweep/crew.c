/* The sweep's worker threads, kept for the whole sweep (issue 19).
 *
 * Before, every batch started its threads and joined them: llb-sweep
 * evaluates in about 4 ms in batches of a few hundred points, so each
 * batch paid a thread start, a cold stack and a cold CPU cache on the
 * second core. The crew starts its threads once, at the first batch that
 * needs them, and hands each batch to them through a generation counter
 * and a condition variable; the calling thread is worker 0 and waits for
 * the others at the end of the batch. A thread that cannot be started
 * leaves the crew smaller (the same output, only slower). */
#include <pthread.h>
#include <string.h>

#include "sweep_internal.h"

typedef struct crew_arg {
    sweep_crew *crew;
    unsigned index;
    uint64_t seen; /* the last generation this thread looked at */
} crew_arg;

/* mu guards everything below it. */
struct sweep_crew {
    const tessel_allocator *alloc;
    pthread_mutex_t mu;
    pthread_cond_t go;   /* a new generation, or quit */
    pthread_cond_t done; /* pending reached 0 */
    unsigned cap;        /* threads besides the caller at most */
    unsigned nstarted;   /* threads running: workers 1..nstarted */
    unsigned want;       /* this generation's workers: 0..want-1 */
    unsigned pending;    /* this generation's threads still working */
    uint64_t gen;
    int quit;
    sweep_crew_fn fn;
    void *ctx;
    pthread_t *tid;
    crew_arg *args;
};

sweep_crew *sweep_crew_create(const tessel_allocator *a, unsigned nworkers)
{
    sweep_crew *c = tessel_alloc(a, sizeof(*c));
    if (!c)
        return NULL;
    memset(c, 0, sizeof(*c));
    c->alloc = a;
    c->cap = nworkers > 1 ? nworkers - 1 : 0;
    if (c->cap && (!(c->tid = tessel_alloc_array(a, c->cap, sizeof(*c->tid))) ||
                   !(c->args = tessel_alloc_array(a, c->cap, sizeof(*c->args))))) {
        tessel_dealloc(a, c->tid);
        tessel_dealloc(a, c);
        return NULL;
    }
    if (pthread_mutex_init(&c->mu, NULL) || pthread_cond_init(&c->go, NULL) ||
        pthread_cond_init(&c->done, NULL)) {
        tessel_dealloc(a, c->args);
        tessel_dealloc(a, c->tid);
        tessel_dealloc(a, c);
        return NULL;
    }
    return c;
}

static void *crew_main(void *arg)
{
    crew_arg *me = arg;
    sweep_crew *c = me->crew;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->quit && c->gen == me->seen)
            pthread_cond_wait(&c->go, &c->mu);
        if (c->quit)
            break;
        me->seen = c->gen;
        if (me->index >= c->want)
            continue;
        sweep_crew_fn fn = c->fn;
        void *ctx = c->ctx;
        pthread_mutex_unlock(&c->mu);
        fn(ctx, me->index);
        pthread_mutex_lock(&c->mu);
        if (--c->pending == 0)
            pthread_cond_signal(&c->done);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

unsigned sweep_crew_grow(sweep_crew *c, unsigned nworkers)
{
    unsigned need = nworkers > 1 ? nworkers - 1 : 0;
    need = need < c->cap ? need : c->cap;
    while (c->nstarted < need) {
        crew_arg *a = &c->args[c->nstarted];
        *a = (crew_arg){ c, c->nstarted + 1, 0 };
        pthread_mutex_lock(&c->mu);
        a->seen = c->gen; /* only this (the calling) thread moves gen */
        pthread_mutex_unlock(&c->mu);
        if (pthread_create(&c->tid[c->nstarted], NULL, crew_main, a) != 0)
            break;
        c->nstarted++;
    }
    return (need < c->nstarted ? need : c->nstarted) + 1;
}

void sweep_crew_run(sweep_crew *c, unsigned nworkers, sweep_crew_fn fn, void *ctx)
{
    unsigned others = nworkers > 1 ? nworkers - 1 : 0;
    others = others < c->nstarted ? others : c->nstarted;
    if (others) {
        pthread_mutex_lock(&c->mu);
        c->fn = fn;
        c->ctx = ctx;
        c->want = others + 1;
        c->pending = others;
        c->gen++;
        pthread_cond_broadcast(&c->go);
        pthread_mutex_unlock(&c->mu);
    }
    fn(ctx, 0);
    if (others) {
        pthread_mutex_lock(&c->mu);
        while (c->pending)
            pthread_cond_wait(&c->done, &c->mu);
        pthread_mutex_unlock(&c->mu);
    }
}

void sweep_crew_free(sweep_crew **cp)
{
    sweep_crew *c = cp ? *cp : NULL;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->quit = 1;
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->mu);
    for (unsigned i = 0; i < c->nstarted; i++)
        pthread_join(c->tid[i], NULL);
    pthread_cond_destroy(&c->done);
    pthread_cond_destroy(&c->go);
    pthread_mutex_destroy(&c->mu);
    tessel_dealloc(c->alloc, c->args);
    tessel_dealloc(c->alloc, c->tid);
    tessel_dealloc(c->alloc, c);
    *cp = NULL;
}
