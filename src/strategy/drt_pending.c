/* TEMPORARY stand-ins for module drt while it is written. */
#include "tessel/drt.h"
void tessel_drt_options_init(tessel_drt_options *o) { o->micro[0] = o->micro[1] = 32; o->growth = 0; }
int tessel_drt_exact(const tessel_spec *s, const tessel_workload_data *d, const tessel_drt_options *o, const tessel_allocator *a, tessel_result *r, tessel_drt_summary *m, tessel_diag *g) { (void)s;(void)d;(void)o;(void)a;(void)r;(void)m; return tessel_diag_set(g, TESSEL_EUNSUPPORTED, NULL, 0, 0, NULL, "drt pending"); }
int tessel_drt_stats_create(const tessel_spec *s, const tessel_workload_data *d, const tessel_drt_options *o, const tessel_allocator *a, tessel_drt_stats **r, tessel_diag *g) { (void)s;(void)d;(void)o;(void)a;(void)r; return tessel_diag_set(g, TESSEL_EUNSUPPORTED, NULL, 0, 0, NULL, "drt pending"); }
void tessel_drt_stats_free(tessel_drt_stats **s) { (void)s; }
int tessel_drt_stat(const tessel_spec *s, const tessel_drt_stats *d, tessel_result *r, tessel_drt_summary *m, tessel_diag *g) { (void)s;(void)d;(void)r;(void)m; return tessel_diag_set(g, TESSEL_EUNSUPPORTED, NULL, 0, 0, NULL, "drt pending"); }
