/* Binary cache (.tsl) -- being written (see issue 3). */
#include "tessel/tensor.h"

int tessel_cache_write(const tessel_tensor *t, const tessel_cache_source *src, const char *path,
                       tessel_diag *diag)
{
    (void)t;
    (void)src;
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, path, 0, 0, NULL, "not implemented yet");
}

int tessel_cache_read(const char *path, const tessel_cache_source *expect,
                      const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    (void)expect;
    (void)a;
    *out = NULL;
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, path, 0, 0, NULL, "not implemented yet");
}

int tessel_cache_parse(const char *name, const void *data, size_t size, const tessel_allocator *a,
                       tessel_tensor **out, tessel_diag *diag)
{
    (void)data;
    (void)size;
    (void)a;
    *out = NULL;
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, name, 0, 0, NULL, "not implemented yet");
}
