# scripts/p2p_classes.awk - the "classes" of topologies/accuracy/p2p.json
# (scripts/validate_p2p.sh) from lines LINK MEASURE DATASET ERROR, one per
# compared cell; DATASET is NN_System_name (the file's number, the system).
# Per link class and measure: the datasets, the cells, the in-sample
# min/p10/p50/p90/max of the signed errors (linear interpolation between
# order statistics, as scripts/bands.awk), and "held_out": the share of the
# cells of each dataset that fall in the p10-p90 of the other datasets'
# cells (a dataset is checked only against 5 cells or more), null with one
# dataset or none checked; "checked": the datasets left out and checked,
# "checked_cells": their cells. A band (lo/hi: p10/p90) is written only when every dataset could
# be checked and at least 80% of the cells held out fell inside.
function q(a, n, p,  x, i) { x = p * (n - 1); i = int(x); return i + 1 < n ? a[i] + (x - i) * (a[i + 1] - a[i]) : a[i] }
function sortn(a, n,  i, j, t) { for (i = 1; i < n; i++) { t = a[i]; for (j = i - 1; j >= 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
NF == 4 {
    N++; K[N] = $1 " " $2; G[N] = $3; E[N] = $4
    if (!(K[N] in seen)) { seen[K[N]] = 1; keys[++nk] = K[N] }
    if (!((K[N], $3) in gs)) { gs[K[N], $3] = 1; ng[K[N]]++; grp[K[N], ng[K[N]]] = $3 }
}
END {
    for (k = 1; k <= nk; k++) {
        c = keys[k]; split(c, f, " "); n = 0; delete a
        for (i = 1; i <= N; i++) if (K[i] == c) a[n++] = E[i]
        sortn(a, n)
        sys = ""
        for (g = 1; g <= ng[c]; g++) { s = grp[c, g]; sub(/_/, " ", s); gsub(/_/, " ", s); sys = sys (g > 1 ? "; " : "") s }
        # leave one dataset out
        held = "null"; all = ng[c] > 1; nin = 0; nall = 0; nchk = 0
        for (g = 1; g <= ng[c] && ng[c] > 1; g++) {
            m = 0; delete b
            for (i = 1; i <= N; i++) if (K[i] == c && G[i] != grp[c, g]) b[m++] = E[i]
            if (m < 5) { all = 0; continue }
            sortn(b, m); lo = q(b, m, .1); hi = q(b, m, .9); nchk++
            for (i = 1; i <= N; i++) if (K[i] == c && G[i] == grp[c, g]) { nall++; nin += E[i] >= lo - 1e-12 && E[i] <= hi + 1e-12 }
        }
        if (nall) held = sprintf("%.2f", nin / nall)
        band = all && nall && nin >= 0.8 * nall ? sprintf(", \"lo\": %.4f, \"hi\": %.4f", q(a, n, .1), q(a, n, .9)) : ""
        printf "%s    {\"link\": \"%s\", \"measure\": \"%s\", \"datasets\": %d, \"systems\": \"%s\", \"n\": %d, \"min\": %.4f, \"p10\": %.4f, \"p50\": %.4f, \"p90\": %.4f, \"max\": %.4f, \"held_out\": %s, \"checked\": %d, \"checked_cells\": %d%s}",
            (k > 1 ? ",\n" : ""), f[1], f[2], ng[c], sys, n, a[0], q(a, n, .1), q(a, n, .5), q(a, n, .9), a[n - 1], held, nchk, nall, band
    }
    print ""
}
