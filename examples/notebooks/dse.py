# %% [markdown]
# # Design-space exploration from Python
#
# A shared SuiteSparse matrix read with SciPy, handed to tessel without writing a
# file; the statistics of the stat estimator collected once; a sweep of the global
# buffer (LLB) size and the loop order, each point a `tessel.run` on those
# statistics; the Pareto front of buffer size against energy plotted with matplotlib.
# `examples/notebooks/dse.ipynb` holds the same cells (regenerate it with
# `python3 examples/notebooks/py2nb.py`). As a script:
# `python3 examples/notebooks/dse.py --data ../shared/data --out /tmp/dse`.

# %%
import argparse
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")  # no display needed: the figure goes to a PNG
import matplotlib.pyplot as plt  # noqa: E402
import scipy.io  # noqa: E402

try:
    HERE = os.path.dirname(os.path.abspath(__file__))
except NameError:  # in a notebook: the notebook's directory
    HERE = os.getcwd()
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))  # the package of this checkout
import tessel  # noqa: E402

DATA = os.path.join(ROOT, "..", "shared", "data")
OUT = HERE
if __name__ == "__main__" and "ipykernel" not in sys.modules:
    ap = argparse.ArgumentParser(description="tessel design-space exploration example")
    ap.add_argument("--data", default=DATA, help="the shared data directory")
    ap.add_argument("--out", default=OUT, help="where pareto.png and points.csv go")
    ap.add_argument("--matrix", default="ca-GrQc", help="a matrix of DATA/mtx")
    args = ap.parse_args()
    DATA, OUT, MATRIX = args.data, args.out, args.matrix
else:
    MATRIX = "ca-GrQc"
os.makedirs(OUT, exist_ok=True)

# %% [markdown]
# ## The matrix, through SciPy
# `scipy.io.mmread` reads the gzipped Matrix Market file; `tessel.from_scipy` copies
# its coordinates into libtessel (duplicates summed, as tessel's own reader does).

# %%
matrix = scipy.io.mmread(os.path.join(DATA, "mtx", MATRIX + ".mtx.gz"))
A = tessel.from_scipy(matrix, name=MATRIX)
print(A, "density %.2e" % (A.nnz / (A.shape[0] * A.shape[1])))

# %% [markdown]
# ## The design and its statistics
# The base spec is the example sweeps' one: DRAM, a 2 MiB LLB, 128 MAC PEs, Z = A*A.
# The statistics are collected once; every design point below reuses them.

# %%
spec = tessel.Spec(os.path.join(ROOT, "examples", "sweep", "spmspm-llb.yaml"))
t0 = time.perf_counter()
stats = tessel.stats(spec, {"A": A})
print("statistics collected in %.3f s" % (time.perf_counter() - t0))

# %% [markdown]
# ## The sweep: LLB size x loop order
# Each point overrides the spec as `tessel run --set` would. The tile edge grows with
# the buffer (a quarter of the edge for a quarter of the bytes), so that a larger
# buffer holds larger tiles.

# %%
sizes = {"256KiB": 128, "512KiB": 128, "1MiB": 256, "2MiB": 256, "4MiB": 512,
         "8MiB": 512}
orders = ["IJK", "IKJ", "JIK", "JKI", "KIJ", "KJI"]
KIB = {"KiB": 1024, "MiB": 1024 * 1024}
points = []
t0 = time.perf_counter()
for size, edge in sizes.items():
    for order in orders:
        r = tessel.run(spec, stats=stats,
                       set={"LLB.capacity": size, "mapping.LLB.order": order,
                            "mapping.LLB.tile": "i:%d,k:%d,j:%d" % (edge, edge, edge)})
        s = r.summary
        points.append({"llb": size, "llb_bytes": int(size[:-3]) * KIB[size[-3:]],
                       "order": order, "energy_pj": s["energy_pj"], "cycles": s["cycles"],
                       "dram_bytes": s["dram_bytes"], "feasible": r.feasible})
elapsed = time.perf_counter() - t0
print("%d points in %.3f s (%.2f ms a point)" % (len(points), elapsed,
                                                  1e3 * elapsed / len(points)))

# %% [markdown]
# ## The Pareto front
# Buffer bytes cost area; energy is what they save. A point is on the front when no
# other feasible point (docs/semantics.md rule 4) has both a buffer no larger and less
# energy.

# %%
def pareto(rows, x="llb_bytes", y="energy_pj"):
    front = []
    for p in rows:
        dominated = any(q[x] <= p[x] and q[y] <= p[y] and (q[x], q[y]) != (p[x], p[y])
                        for q in rows)
        if not dominated:
            front.append(p)
    return sorted(front, key=lambda p: p[x])


feasible = [p for p in points if p["feasible"]]
front = pareto(feasible)
for p in front:
    print("front: LLB %-6s %s  energy %.4g pJ  cycles %.4g" % (p["llb"], p["order"],
                                                               p["energy_pj"], p["cycles"]))
with open(os.path.join(OUT, "points.csv"), "w") as f:
    f.write("llb,order,energy_pj,cycles,dram_bytes,feasible,pareto\n")
    for p in points:
        f.write("%s,%s,%r,%r,%d,%d,%d\n" % (p["llb"], p["order"], p["energy_pj"], p["cycles"],
                                            p["dram_bytes"], p["feasible"], p in front))

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
for order in orders:
    xs = [p["llb_bytes"] / 1024 for p in feasible if p["order"] == order]
    ys = [p["energy_pj"] * 1e-6 for p in feasible if p["order"] == order]
    ax.scatter(xs, ys, label=order, s=24)
ax.step([p["llb_bytes"] / 1024 for p in front], [p["energy_pj"] * 1e-6 for p in front],
        "k--", where="post", label="Pareto front")
for p in front:
    ax.annotate(p["order"], (p["llb_bytes"] / 1024, p["energy_pj"] * 1e-6), fontsize=7,
                xytext=(3, 3), textcoords="offset points")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("LLB capacity (KiB)")
ax.set_ylabel("energy (uJ)")
ax.set_title("%s: LLB size x loop order (%d feasible of %d points)" % (MATRIX, len(feasible),
                                                                       len(points)))
ax.legend(fontsize=7, ncol=2)
fig.tight_layout()
png = os.path.join(OUT, "pareto.png")
fig.savefig(png, dpi=120)
print("wrote", png)
