#!/usr/bin/env python3
"""How a visit's partial output grows between its steps, against the closed form (issue 18).

    python3 bench/outspill_orders.py [--data ../shared/data] [--matrix rajat19]
                                     [--tile 32,64,64] [--part 16384] [--perms 8] [--seed 1]

Z = A A (B = A) in csr (4 B offsets, 8 B values, 4 B coordinates), the whole output tile
live inside a visit (KIJ or KJI at the innermost level: i and j inside k), one update step
per k with a multiply, as bench/outspill_visits.py. Over the visits whose tile ends above
the partition it prints the in-visit spill (every step but the visit's last spills the
tile's bytes beyond the partition, exact_outspill.c) these ways, with what they say:

- exact: the steps in k order, as the exact walk takes them;
- closed form: stat_spill_inside (src/model/stat_outspill.c) fed the visit's true step
  count m and its true sizes before (S_0) and after (S_1), so stat's own inputs are out;
- random order: the same steps in --perms random orders (the mean over them): what the
  in-visit spill is when only the visit's set of steps is known, not their order;
- mean curve: the expected size after t steps over all orders (each new cell of the visit
  is there after t steps unless none of the n_c steps that write it came first:
  1 - C(m - n_c, t) / C(m, t)), the partition subtracted from the mean size: what a
  closed form in the visit's mean growth alone can reach;
- compressed: the closed form with the whole tile's cells replaced by the F cells the
  visit's P multiplies fall on (F solves (F - S_0) (1 - e^(-P / F)) = new, balls into F
  bins: many products on few cells front-load the growth), P the true multiplies;
- compressed, estimated: the same with P = m (n_A / d_A) (n_B / d_B), from the tiles'
  nonzeros n and distinct k d alone (what stat holds per visit);
- steps: the sum of m, products the visit's multiplies, new the cells it adds;
- first half: the share of the new cells that the first half of each visit's steps
  (m // 2) adds in k order, and in the random orders above (first half, random).

each split by whether the output tile holds diagonal cells (rows I meet columns J). The
gap between exact and random order is the k order's; between random order and mean curve
the spread of the partial sizes over the orders (the spill is a hinge of the size).
"""
import argparse, collections, math, os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from outspill_visits import inside, load  # noqa: E402


def pair_steps(n, e, ti, tk, tj):
    """{(I, J): [(K, [(rows, cols) per k with a multiply, in k order])]}, K ascending."""
    arow = collections.defaultdict(lambda: collections.defaultdict(list))
    bcol = collections.defaultdict(lambda: collections.defaultdict(list))
    for i, k in e:
        arow[k][i // ti].append(i)  # A's column k, its rows by row block
    for k, j in e:
        bcol[k][j // tj].append(j)  # B = A: B's row k, its columns by column block
    pairs = collections.defaultdict(list)
    for k in range(n):
        for bi, a in arow[k].items():
            for bj, b in bcol[k].items():
                v = pairs[bi, bj]
                if not v or v[-1][0] != k // tk:
                    v.append((k // tk, []))
                v[-1][1].append((a, b))
    return pairs


def spill(pre, steps, nb, part):
    """In-visit spill of the steps (cell sets) taken in this order after pre."""
    z, s = set(pre), 0
    for st in steps[:-1]:
        z |= st
        s += max(0, nb(len(z)) - part)
    return s


def half(pre, steps):
    """New cells the first half of the steps (m // 2) add in this order."""
    z = set(pre)
    for st in steps[: len(steps) // 2]:
        z |= st
    return len(z) - len(pre)


def mean_curve(pre, steps, nb, part):
    """The partition subtracted from the mean size after t steps over all orders."""
    m, mult = len(steps), collections.Counter()
    for st in steps:
        for c in st:
            if c not in pre:
                mult[c] += 1
    hist, s = collections.Counter(mult.values()), 0
    for t in range(1, m):
        new = 0.0
        for nc, cnt in hist.items():
            miss = 0.0
            if t <= m - nc:
                miss = 1.0
                for i in range(nc):
                    miss *= (m - t - i) / (m - i)
            new += cnt * (1 - miss)
        s += max(0, nb(len(pre) + new) - part)
    return s


def cells_hit(n0, new, p, cap):
    """F with (F - n0) (1 - exp(-p / F)) = new, at most cap (no compression: cap)."""
    if new <= 0 or p <= new or (cap - n0) * -math.expm1(-p / cap) <= new:
        return cap
    lo, hi = float(n0 + new), float(cap)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if (mid - n0) * -math.expm1(-p / mid) > new:
            hi = mid
        else:
            lo = mid
    return hi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../shared/data"))
    ap.add_argument("--matrix", default="rajat19")
    ap.add_argument("--tile", default="32,64,64", help="i,k,j")
    ap.add_argument("--part", type=int, default=16384, help="Z's partition in bytes")
    ap.add_argument("--perms", type=int, default=8, help="random orders per visit")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n, e = load(os.path.join(args.data, "mtx", args.matrix + ".mtx.gz"))
    ti, tk, tj = map(int, args.tile.split(","))
    nb = lambda x: 4 * (ti + 1) + 12 * x  # csr: offsets, then 8 B value + 4 B coordinate
    ta = collections.defaultdict(lambda: [0, set()])  # A's tile (I, K): nonzeros, its k
    tb = collections.defaultdict(lambda: [0, set()])  # B's tile (K, J)
    for i, k in e:
        ta[i // ti, k // tk][0] += 1
        ta[i // ti, k // tk][1].add(k)
        tb[i // tk, k // tj][0] += 1  # B = A: entry (i, k) is B's (k = i, j = k)
        tb[i // tk, k // tj][1].add(i)
    full, rnd, tot = nb(ti * tj), random.Random(args.seed), collections.Counter()
    for (bi, bj), visits in sorted(pair_steps(n, e, ti, tk, tj).items()):
        w = "off-diagonal" if bi * ti >= (bj + 1) * tj or (bi + 1) * ti <= bj * tj else "diagonal"
        z = set()
        for bk, ab in visits:
            steps = [set((i, j) for i in a for j in b) for a, b in ab]
            pre = set(z)
            for st in steps:
                z |= st
            m = len(steps)
            if m < 2 or nb(len(z)) <= args.part:
                continue
            tot[w, "visits"] += 1
            tot[w, "exact"] += spill(pre, steps, nb, args.part)
            tot[w, "closed form"] += inside(nb(len(pre)), nb(len(z)), full, m, args.part)
            tot[w, "first half"] += half(pre, steps)
            for _ in range(args.perms):
                order = rnd.sample(steps, m)
                tot[w, "random order"] += spill(pre, order, nb, args.part) / args.perms
                tot[w, "first half, random"] += half(pre, order) / args.perms
            tot[w, "mean curve"] += mean_curve(pre, steps, nb, args.part)
            n0, new, p = len(pre), len(z) - len(pre), sum(len(st) for st in steps)
            fc = nb(cells_hit(n0, new, p, ti * tj))
            tot[w, "compressed"] += inside(nb(n0), nb(len(z)), fc, m, args.part)
            (na, ka), (nb_, kb) = ta[bi, bk], tb[bk, bj]
            pe = m * na / len(ka) * nb_ / len(kb)
            fc = nb(cells_hit(n0, new, pe, ti * tj))
            tot[w, "compressed, estimated"] += inside(nb(n0), nb(len(z)), fc, m, args.part)
            tot[w, "steps"] += m
            tot[w, "products"] += p
            tot[w, "new"] += new
    cols = ["visits", "exact", "closed form", "random order", "mean curve", "compressed",
            "compressed, estimated", "steps", "products", "new"]
    for w in ("diagonal", "off-diagonal", "all"):
        v = {c: tot["diagonal", c] + tot["off-diagonal", c] if w == "all" else tot[w, c]
             for c in cols}
        err = lambda c: " (%+.2f %%)" % (100 * (v[c] / v["exact"] - 1)) if v["exact"] else ""
        h = ["%s %.1f %%" % (c, 100 * (tot["diagonal", c] + tot["off-diagonal", c] if w == "all"
                                       else tot[w, c]) / v["new"]) if v["new"] else c + " -"
             for c in ("first half", "first half, random")]
        print("%s: %s" % (w, ", ".join(["%s %d%s" % (c, round(v[c]), err(c) if c in cols[2:7]
                                                       else "") for c in cols] + h)))


if __name__ == "__main__":
    main()
