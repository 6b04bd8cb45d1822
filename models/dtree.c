/* models/dtree.c - NCCL's double binary tree over the nodes of a
 * communicator (coll.h: coll_dtree).
 *
 * Tree 0 is NCCL's "btree" (src/graph/trees.cc): node 0 is the root and has
 * one child, the largest power of two below n; every other node i, with b
 * its lowest set bit, hangs from i - b + 2b (i with bit b cleared and bit
 * 2b set), or from i - b where that is past the last node; its children are
 * i - b/2 and the first of i + b/2, i + b/4, ... that exists. Leaves are the
 * odd nodes, so half the nodes are leaves and the inner nodes alternate
 * with them. Tree 1 is tree 0 mirrored (node i plays n-1-i) when n is even,
 * shifted by one (node i plays i-1) when n is odd, so a node that is inner
 * in one tree is a leaf in the other (NCCL's ncclGetDtree). */
#include "coll_priv.h"

static void btree(int n, int i, int *up, int kid[2])
{
    kid[0] = kid[1] = -1;
    *up = -1;
    int b = 1;
    while (b < n && !(b & i))
        b <<= 1;
    if (i == 0) {
        if (n > 1)
            kid[1] = b >> 1;
        return;
    }
    *up = (i ^ b) | (b << 1);
    if (*up >= n)
        *up = i ^ b;
    for (int low = b >> 1, first = 1; low > 0; low >>= 1) {
        if (first) {
            kid[0] = i - low;
            first = 0;
        }
        if (i + low < n) {
            kid[1] = i + low;
            break;
        }
    }
}

void coll_dtree(int n, int node, int which, int *up, int kid[2])
{
    if (!which) {
        btree(n, node, up, kid);
        return;
    }
    bool odd = n % 2 == 1;
    int as = odd ? (node - 1 + n) % n : n - 1 - node; /* the node it plays in tree 0 */
    btree(n, as, up, kid);
    int *v[3] = {up, &kid[0], &kid[1]};
    for (int j = 0; j < 3; j++)
        if (*v[j] >= 0)
            *v[j] = odd ? (*v[j] + 1) % n : n - 1 - *v[j];
}

int coll_dtree_packed(int n, int node, int which, int *up, int kid[2])
{
    int k[2], nk = 0;
    coll_dtree(n, node, which, up, k);
    kid[0] = kid[1] = -1;
    for (int j = 0; j < 2; j++)
        if (k[j] >= 0)
            kid[nk++] = k[j];
    return nk;
}
