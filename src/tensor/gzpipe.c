/* Gzip input inflated ahead on a thread of its own (issue 27 item 1: "gzip:
 * decompress on one thread, parse on the others"). The text reader parses
 * one block while the next is being inflated, so a .mtx.gz costs about the
 * larger of inflating and parsing instead of their sum.
 *
 * The thread never allocates: the blocks are allocated by gz_pipe_open, and
 * the first block is inflated there, on the caller's thread, because zlib
 * allocates its window on the first inflate() (through the tessel allocator,
 * which need not be thread-safe); inflateReset between members keeps it.
 * Errors and the truncation flag travel with the stream: the reader meets
 * them where the synchronous source would have, after every byte inflated
 * before them, and the message then names the reader's current line. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "gzpipe.h"

#define PIPE_BLOCKS 4
#define PIPE_BLOCK (256u << 10)

struct gz_pipe {
    const tessel_allocator *alloc;
    gz_source *src;
    const char *name;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *blk[PIPE_BLOCKS];
    size_t fill[PIPE_BLOCKS];
    uint64_t head, tail; /* blocks produced, blocks consumed */
    size_t off;          /* read position in block tail */
    int done, stop, truncated;
    int threaded;        /* a producer thread runs (else the reader inflates) */
    long status;         /* the source's last result once done: 0 or < 0 */
    tessel_diag diag;
};

/* Inflates into block b until it is full or the source ends; the bytes, or
 * a negative code with p->diag filled. */
static long fill_block(gz_pipe *p, unsigned char *b, int *truncated)
{
    gz_context c = { p->name, 0, truncated };
    size_t got = 0;
    while (got < PIPE_BLOCK) {
        long n = gz_source_read(p->src, b + got, PIPE_BLOCK - got, &c, &p->diag);
        if (n < 0)
            return n;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

/* Publishes block head (n bytes, or the end / an error) under the lock. */
static int publish(gz_pipe *p, long n, int truncated)
{
    pthread_mutex_lock(&p->mu);
    if (n > 0)
        p->fill[p->head++ % PIPE_BLOCKS] = (size_t)n;
    if (n < (long)PIPE_BLOCK) { /* a short block: the stream ended or failed */
        p->done = 1;
        p->status = n < 0 ? n : 0;
        p->truncated = truncated;
    }
    pthread_cond_broadcast(&p->cv);
    int stop = p->stop || p->done;
    pthread_mutex_unlock(&p->mu);
    return stop;
}

static void *producer(void *arg)
{
    gz_pipe *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->stop && p->head - p->tail == PIPE_BLOCKS)
            pthread_cond_wait(&p->cv, &p->mu);
        int stop = p->stop;
        unsigned char *b = p->blk[p->head % PIPE_BLOCKS];
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return NULL;
        int truncated = 0;
        long n = fill_block(p, b, &truncated);
        if (publish(p, n, truncated))
            return NULL;
    }
}

static void free_pipe(gz_pipe *p)
{
    for (int i = 0; i < PIPE_BLOCKS; i++)
        tessel_dealloc(p->alloc, p->blk[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    tessel_dealloc(p->alloc, p);
}

gz_pipe *gz_pipe_open(gz_source *src, const char *name, const tessel_allocator *a)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return NULL; /* one core: a thread would only add switches */
    gz_pipe *p = tessel_alloc(a, sizeof(*p));
    if (!p)
        return NULL;
    memset(p, 0, sizeof(*p));
    p->alloc = a;
    p->src = src;
    p->name = name;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (int i = 0; i < PIPE_BLOCKS; i++)
        if (!(p->blk[i] = tessel_alloc(a, PIPE_BLOCK))) {
            free_pipe(p);
            return NULL; /* no room to read ahead: the caller reads directly */
        }
    /* the first block on this thread: zlib allocates its window here */
    int truncated = 0;
    publish(p, fill_block(p, p->blk[0], &truncated), truncated);
    /* small, damaged or empty input needs no thread; without one the reader
     * fills the blocks itself (gz_pipe_read) */
    p->threaded = !p->done && pthread_create(&p->thread, NULL, producer, p) == 0;
    return p;
}

/* Waits (or, without a thread, inflates) until block tail holds bytes or
 * the stream is done; called and returns with the lock held. */
static void wait_block(gz_pipe *p)
{
    while (p->head == p->tail && !p->done) {
        if (p->threaded) {
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        pthread_mutex_unlock(&p->mu);
        int truncated = 0;
        long n = fill_block(p, p->blk[p->head % PIPE_BLOCKS], &truncated);
        publish(p, n, truncated);
        pthread_mutex_lock(&p->mu);
    }
}

long gz_pipe_read(gz_pipe *p, void *dst, size_t want, uint64_t line, int *truncated,
                  tessel_diag *diag)
{
    pthread_mutex_lock(&p->mu);
    wait_block(p);
    if (p->head == p->tail) { /* done: the end, or the error where it happened */
        long st = p->status;
        if (st < 0 && diag) {
            *diag = p->diag;
            diag->line = line;
        }
        if (p->truncated)
            *truncated = 1;
        pthread_mutex_unlock(&p->mu);
        return st;
    }
    unsigned b = (unsigned)(p->tail % PIPE_BLOCKS);
    size_t n = p->fill[b] - p->off;
    pthread_mutex_unlock(&p->mu);
    /* block tail is the reader's until tail moves: the producer writes only
     * block head, and head - tail < PIPE_BLOCKS while this one is unread */
    n = n < want ? n : want;
    memcpy(dst, p->blk[b] + p->off, n);
    pthread_mutex_lock(&p->mu);
    p->off += n;
    if (p->off == p->fill[b]) {
        p->off = 0;
        p->tail++;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return (long)n;
}

void gz_pipe_close(gz_pipe *p)
{
    if (!p)
        return;
    if (p->threaded) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    free_pipe(p);
}
