#!/usr/bin/env python3
"""The in-visit output spill of one KIJ point per visit, from the matrix alone (issue 18).

    python3 bench/outspill_visits.py [--data ../shared/data] [--matrix rajat19]
                                     [--tile 32,64,64] [--part 16384]

Z = A A (B = A) in csr at the innermost buffer level, whole tile live (KIJ: i and j
inside k), one update step per k: for each output tile (I, J) and reduction tile K in
order, the steps are the k of K where A's rows of I and B's columns of J both hold a
nonzero, and every step but the visit's last spills the tile's bytes beyond the
partition (exact_outspill.c). It prints exact's sum and stat_spill_inside's closed form
(src/model/stat_outspill.c) fed the true m, S_0 and S_1, so the rest of stat's error is
its step count; then both split by whether the output tile holds diagonal cells, with
the number of visits whose A and B k sets nest (one inside the other).
"""
import argparse, collections, gzip, math, os


def load(path):
    with gzip.open(path, "rt") as f:
        sym = "symmetric" in f.readline()
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        n = int(line.split()[0])
        e = set()
        for line in f:
            a = line.split()
            i, j = int(a[0]) - 1, int(a[1]) - 1
            e.add((i, j))
            if sym:
                e.add((j, i))
    return n, e


def inside(b0, b1, full, m, part):
    """stat_spill_inside, line for line."""
    if m < 2 or b1 <= part:
        return 0
    if full - b1 <= 1e-9 * full or b1 - b0 <= 1e-9 * full:
        d, first = (b1 - b0) / m, 1
        if b0 + d <= part:
            first = math.floor((part - b0) / d) + 1 if d > 0 else m
        if first > m - 1:
            return 0
        cnt = m - first
        return cnt * (b0 - part) + d * (first + m - 1) * cnt / 2
    r, first = ((full - b1) / (full - b0)) ** (1 / m), 1
    if b0 + (full - b0) * (1 - r) <= part:
        first = math.floor(math.log((full - part) / (full - b0)) / math.log(r)) + 1
    if first > m - 1:
        return 0
    cnt = m - first
    return cnt * (full - part) - (full - b0) * r ** first * -math.expm1(cnt * math.log(r)) / (1 - r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../shared/data"))
    ap.add_argument("--matrix", default="rajat19")
    ap.add_argument("--tile", default="32,64,64", help="i,k,j")
    ap.add_argument("--part", type=int, default=16384, help="Z's partition in bytes")
    args = ap.parse_args()
    n, e = load(os.path.join(args.data, "mtx", args.matrix + ".mtx.gz"))
    ti, tk, tj = map(int, args.tile.split(","))
    acol, brow = collections.defaultdict(set), collections.defaultdict(set)
    for i, j in e:
        acol[j].add(i)
        brow[i].add(j)
    nbytes = lambda x: 4 * (ti + 1) + 12 * x  # csr: offsets, then 8 B value + 4 B coordinate
    full, tot = nbytes(ti * tj), collections.Counter()
    for bi in range((n + ti - 1) // ti):
        for bj in range((n + tj - 1) // tj):
            z, diag = set(), not (bi * ti >= (bj + 1) * tj or (bi + 1) * ti <= bj * tj)
            for bk in range((n + tk - 1) // tk):
                steps, ka, kb = [], set(), set()
                for k in range(bk * tk, min(n, (bk + 1) * tk)):
                    a = [i for i in acol[k] if i // ti == bi]
                    b = [j for j in brow[k] if j // tj == bj]
                    ka.update([k] if a else [])
                    kb.update([k] if b else [])
                    if a and b:
                        steps.append((a, b))
                if not steps:
                    continue
                s0, sizes = len(z), []
                for a, b in steps:
                    z.update((i, j) for i in a for j in b)
                    sizes.append(len(z))
                ex = sum(max(0, nbytes(s) - args.part) for s in sizes[:-1])
                st = inside(nbytes(s0), nbytes(sizes[-1]), full, len(steps), args.part)
                if ex or st:
                    w = "diagonal" if diag else "off-diagonal"
                    tot[w, "visits"] += 1
                    tot[w, "nested k sets"] += ka <= kb or kb <= ka
                    tot[w, "exact"] += ex
                    tot[w, "closed form, true m"] += st
                    tot[w, "sum m - 1"] += len(steps) - 1
    for w in ("diagonal", "off-diagonal"):
        print(w + ": " + ", ".join("%s %d" % (c, round(v)) for (x, c), v in tot.items() if x == w))
    ex = tot["diagonal", "exact"] + tot["off-diagonal", "exact"]
    st = tot["diagonal", "closed form, true m"] + tot["off-diagonal", "closed form, true m"]
    print("exact %d, closed form with the true m %d (%+.1f %%)" % (ex, st, 100 * (st / ex - 1)))


if __name__ == "__main__":
    main()
