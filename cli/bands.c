/* cli/bands.c - see bands.h. */
#include "bands.h"

bool cli_replay_step_band(const replay_result *res, const coll_system *sys, int steps, double *lo_s, double *hi_s,
                          double *exposed_s, unsigned *regimes, bool *unmeasured)
{
    double d = 0, dlo = 0, dhi = 0;
    bool any = false;
    if (regimes)
        *regimes = 0;
    if (unmeasured)
        *unmeasured = false;
    for (guint i = 0; i < res->colls->len; i++) {
        const replay_coll *c = &g_array_index(res->colls, replay_coll, i);
        double t = (double)c->sim_ps, lo = t, hi = t;
        acc_band b;
        acc_regime r = acc_regime_algo(sys, c->group_nodes, c->algo);
        if (t > 0 && acc_coll_band(r, c->bytes, &b)) {
            acc_time_range(t, &b, &lo, &hi);
            any = true;
            if (regimes)
                *regimes |= 1u << r;
            if (unmeasured && !acc_regime_measured(sys, r))
                *unmeasured = true;
        }
        d += t;
        dlo += lo;
        dhi += hi;
    }
    if (!any || d <= 0)
        return false;
    int64_t e = 0;
    for (int r = 0; r < res->nranks; r++)
        e = res->ranks[r].exposed_comm_ps > e ? res->ranks[r].exposed_comm_ps : e;
    double step = (double)res->end_ps / steps * 1e-12, ex = (double)e / steps * 1e-12;
    *lo_s = step - ex + ex * dlo / d;
    *hi_s = step - ex + ex * dhi / d;
    *exposed_s = ex;
    return true;
}

void cli_bands_preload(void)
{
    acc_band b;
    (void)acc_coll_band(ACC_NVLINK, 0, &b);
    (void)acc_training_band(false, &b);
    (void)acc_coll_band_kind();
    (void)acc_training_band_kind();
}
