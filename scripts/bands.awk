# scripts/bands.awk - the error bands of topologies/accuracy/*.json, from the
# validation's signed errors (used by validate.sh and validate_scaling.sh).
#
# Input lines: REGIME MIN_BYTES MAX_BYTES GROUP ERROR, one per compared point
# (MIN/MAX_BYTES the size band, "-" for none; GROUP the dataset the point
# comes from: an nccl-tests log, a published row). Output: the "bands" and
# "held_out" members of the JSON document (the caller writes the rest).
#
# Per size band of a regime: n, p10, p50, p90 of the errors (linear
# interpolation between order statistics; a band needs n >= 5), and lo/hi,
# the band printed next to a prediction. The errors of one dataset move
# together (one system, one run), so the p10-p90 of the pooled points covers
# much less than 80% of a dataset it has not seen: leave-one-dataset-out,
# 41-58% of the nccl-tests points (2026-12 review). lo/hi are therefore
# p10/p90 widened in log(1 + error) by w, one per regime: the 80% quantile,
# over every point of the regime, of how far the point lies outside the
# p10-p90 of the other datasets of its regime and size band (0 inside): the
# smallest w that puts at least 80% of them inside (by construction); "held_out" gives, per regime, the datasets, that
# coverage of the plain p10-p90 ("p10_p90"), w ("widen"), and the coverage
# of the widened band when w too is found without the dataset checked
# ("nested", null where too few datasets are left to find it).
function q(a, n, p,  x, i) { x = p * (n - 1); i = int(x); return i + 1 < n ? a[i] + (x - i) * (a[i + 1] - a[i]) : a[i] }
function sortn(a, n,  i, j, t) { for (i = 1; i < n; i++) { t = a[i]; for (j = i - 1; j >= 0 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
# p10/p90 of cell c without groups x1, x2 into LO, HI; false when under 5 points
function band(c, x1, x2,   i, n, a) {
    n = 0
    for (i = 1; i <= N; i++) if (C[i] == c && G[i] != x1 && G[i] != x2) a[n++] = E[i]
    if (n < 5) return 0
    sortn(a, n); LO = q(a, n, .1); HI = q(a, n, .9)
    return 1
}
function excess(e, lo, hi,  x) { x = log(1 + e); return x < log(1 + lo) ? log(1 + lo) - x : x > log(1 + hi) ? x - log(1 + hi) : 0 }
# w of regime r without group x1 (-1 when no point has a band to be checked against); M: points used, Z: inside
function width(r, x1,   i, s, n, k) {
    n = 0; Z = 0
    for (i = 1; i <= N; i++)
        if (R[i] == r && G[i] != x1 && band(C[i], x1, G[i])) { s[n] = excess(E[i], LO, HI); Z += s[n] == 0; n++ }
    M = n
    if (n == 0) return -1
    sortn(s, n); k = int(0.8 * n); k = k < 0.8 * n ? k + 1 : k # ceil: at least 80% of them within
    return s[k - 1]
}
NF == 5 {
    N++; R[N] = $1; C[N] = $1 SUBSEP $2 SUBSEP $3; G[N] = $4; E[N] = $5
    if (!(C[N] in seen)) { seen[C[N]] = 1; cells[++nc] = C[N] }
    if (!($1 in rs)) { rs[$1] = 1; regs[++nr] = $1 }
    if (!(($1, $4) in gs)) { gs[$1, $4] = 1; ng[$1]++; grp[$1, ng[$1]] = $4 }
}
END {
    for (j = 1; j <= nr; j++) {
        r = regs[j]; W[r] = width(r, ""); used[r] = M; cov0[r] = M ? Z / M : 0
        # nested: each dataset against the band of the rest, widened by the w of the rest
        nin = 0; nall = 0
        for (k = 1; k <= ng[r]; k++) {
            g = grp[r, k]; w = width(r, g)
            if (w < 0) { nall = -1; break }
            for (i = 1; i <= N; i++) if (G[i] == g && R[i] == r && band(C[i], g, "")) { nall++; nin += excess(E[i], LO, HI) <= w + 1e-12 }
        }
        nested[r] = nall > 0 ? sprintf("%.2f", nin / nall) : "null"
    }
    print "  \"bands\": ["
    out = 0
    for (k = 1; k <= nc; k++) {
        c = cells[k]; split(c, f, SUBSEP); n = 0; delete a
        for (i = 1; i <= N; i++) if (C[i] == c) a[n++] = E[i]
        if (n < 5) continue
        sortn(a, n); w = W[f[1]] > 0 ? W[f[1]] : 0
        sz = f[2] == "-" ? "" : sprintf("\"min_bytes\": %s, \"max_bytes\": %s, ", f[2], f[3])
        printf "%s    {\"regime\": \"%s\", %s\"n\": %d, \"p10\": %.4f, \"p50\": %.4f, \"p90\": %.4f, \"lo\": %.4f, \"hi\": %.4f}",
            out++ ? ",\n" : "", f[1], sz, n, q(a, n, .1), q(a, n, .5), q(a, n, .9), (1 + q(a, n, .1)) * exp(-w) - 1, (1 + q(a, n, .9)) * exp(w) - 1
    }
    print "\n  ],"
    print "  \"held_out\": ["
    for (j = 1; j <= nr; j++) {
        r = regs[j]
        printf "    {\"regime\": \"%s\", \"datasets\": %d, \"points\": %d, \"p10_p90\": %.2f, \"widen\": %.4f, \"nested\": %s}%s\n",
            r, ng[r], used[r], cov0[r], (W[r] > 0 ? W[r] : 0), nested[r], (j < nr ? "," : "")
    }
    print "  ]"
}
