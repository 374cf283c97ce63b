#!/usr/bin/env python3
"""A model of the induction solver's scaling over GPUs, one MPI rank per GPU (docs/scaling.md).

It predicts the time of a step and of one conjugate-gradient iteration of the divergence
cleaning on P GPUs from a few measured figures, following what the code does:

* the process grid is crates/induction/src/decomp.rs's (least halo surface; ties to z, then y);
* each Runge-Kutta stage exchanges the halo of its input field (3 components, the stencil's
  half-width of layers per face: 2 at order 4), as crates/induction/src/solver/overlap.rs does
  it: per face 3 rectangular gathers on the device, one device->host copy, one MPI
  send/receive pair per face and direction (6 calls, one after the other), one host->device
  copy, then 3 device copies into the halo on the compute queue;
* with the overlap on, the interior kernel runs while that happens; the slabs next to the faces
  (at most 6 more launches) follow; off, the exchange comes first and one kernel does all;
* the rank with the most neighbours sets the pace (every exchange waits for it);
* a CG iteration (least-norm form, H inner product) moves about 21 values per node
  (gradient 4, divergence 4, two weighted dots 4, cg_xr 6, cg_p 3), launches 6 kernels (each dot is
  one clarray reduction, one launch on NVIDIA's OpenCL), makes
  two blocking halo exchanges (p: 1 component; its gradient: 3) and two sums over the ranks, each
  a blocking read of one scalar, an allreduce and a write back.

Inputs (defaults are the measured figures named in docs/scaling.md, with their commits):

  --node-ns        device time of one node-step (all 5 LSRK4 stages), ns: H200, rotation_3d
                   256^3 order 4, f64 2.844 ms/step (f32 1.560), commit f4124f0
  --pcie-gbps      pinned host<->device, GB/s: H200 55.5 up / 55.3 down, commit 78e4584
  --d2d-gbps       device copy ceiling (read + write), GB/s: H200 4159.5, commit 78e4584
  --command-us     one enqueued command back to back, us: H200 launch 10.1, commit 78e4584
  --mpi-latency-us, --mpi-gbps, --allreduce-us
                   MPI on the host (MPICH over shared memory), measured by
                   `induction bench --scaling` on 2 ranks on the 2-core CI machine
                   (docs/scaling.md gives the run); used for every message, also between
                   nodes, which a real network would make slower (the knobs are there for that)

Prints markdown tables. Pure Python 3, no dependencies.
"""

import argparse
import math

STAGES = 5  # LSRK4
VALUES_PER_NODE = 13  # B, two RK registers, u (3 each) and the divergence: device memory per node
H200_BYTES = 141e9


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def surface(n, p):
    total = 0
    for a in range(3):
        face = 1
        for b in range(3):
            if b != a:
                face *= n[b]
        total += (p[a] - 1) * face
    return total


def process_grid(n, procs, min_nodes):
    """decomp.rs's choice: least surface, pz then py descending, the first best kept."""
    best = None
    for pz in reversed(divisors(procs)):
        for py in reversed(divisors(procs // pz)):
            px = procs // pz // py
            parts = (px, py, pz)
            if any(n[a] // parts[a] < min_nodes for a in range(3)):
                continue
            s = surface(n, parts)
            if best is None or s < best[1]:
                best = (parts, s)
    return None if best is None else best[0]


class Model:
    def __init__(self, a, precision):
        self.size = 8 if precision == "f64" else 4
        self.node_s = (a.node_ns if precision == "f64" else a.node_ns_f32) * 1e-9
        self.stage_node_s = self.node_s / STAGES
        self.pcie = a.pcie_gbps * 1e9
        self.d2d = a.d2d_gbps * 1e9 / 2  # bytes copied per second (the ceiling counts read + write)
        self.cmd = a.command_us * 1e-6
        self.alpha = a.mpi_latency_us * 1e-6
        self.beta = a.mpi_gbps * 1e9
        self.allreduce = a.allreduce_us * 1e-6
        self.cg_node_s = 21 * self.size / (a.d2d_gbps * 1e9)
        self.width = 2  # order 4: the halo's layers per face (x rounded to even: 2 too)
        self.min_nodes = 6  # order 4: a boundary block's columns

    def worst_block(self, n, parts):
        """The largest block and, per axis, the faces with a neighbour of the rank with most."""
        block = [math.ceil(n[a] / parts[a]) for a in range(3)]
        faces = [min(2, parts[a] - 1) for a in range(3)]
        return block, faces

    def exchange(self, block, faces, comps):
        """(seconds of one halo exchange not counting the copies into the halo, seconds of those
        copies, bytes sent) for the worst rank, `comps` components."""
        t, scatter, sent = 0.0, 0.0, 0
        for a in range(3):
            if faces[a] == 0:
                continue
            area = 1
            for b in range(3):
                if b != a:
                    area *= block[b]
            face = comps * self.width * area * self.size
            sent += faces[a] * face
            # gathers (comps copies per face), down, up: commands and bytes per face
            t += faces[a] * ((comps + 2) * self.cmd + face / self.d2d + 2 * face / self.pcie)
            # MPI: two send/receive calls per axis (up, then down), a face each way
            t += 2 * (self.alpha + face / self.beta)
            scatter += faces[a] * (comps * self.cmd + face / self.d2d)
        return t, scatter, sent

    def step(self, n, parts, overlap):
        block, faces = self.worst_block(n, parts)
        nodes = block[0] * block[1] * block[2]
        if sum(faces) == 0:
            return STAGES * (nodes * self.stage_node_s + self.cmd), 0.0, block, 0
        exch, scatter, sent = self.exchange(block, faces, 3)
        inner = 1
        for a in range(3):
            inner *= max(block[a] - self.width * faces[a], 0)
        rim_launches = sum(faces)
        if overlap and inner > 0:
            interior = inner * self.stage_node_s + self.cmd
            rim = (nodes - inner) * self.stage_node_s + rim_launches * self.cmd
            stage = max(interior, exch) + scatter + rim
            exposed = max(0.0, exch - interior) + scatter
        else:
            stage = exch + scatter + nodes * self.stage_node_s + self.cmd
            exposed = exch + scatter
        return STAGES * stage, STAGES * exposed, block, sent

    def cg_iteration(self, n, parts):
        block, faces = self.worst_block(n, parts)
        nodes = block[0] * block[1] * block[2]
        t = nodes * self.cg_node_s + 6 * self.cmd
        sums = 0.0
        if sum(faces) > 0:
            for comps in (1, 3):
                e, s, _ = self.exchange(block, faces, comps)
                t += e + s
            procs = parts[0] * parts[1] * parts[2]
            # read one scalar, allreduce (recursive doubling: log2 P rounds), write it back
            sums = 2 * (2 * self.cmd + self.allreduce * math.log2(procs))
        return t + sums, sums


def fits(n, size):
    return n[0] * n[1] * n[2] * VALUES_PER_NODE * size <= H200_BYTES


def table(model, title, grids, overlap_note):
    print(f"\n**{title}**\n")
    print(
        "| GPUs | grid | process grid | block (largest) | halo sent per stage | step, overlap on | "
        "efficiency on | exposed exchange | step, overlap off | efficiency off | CG iteration | CG efficiency | "
        "CG's sums |"
    )
    print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for procs, n, weak in grids:
        parts = process_grid(n, procs, model.min_nodes)
        if parts is None:
            continue
        on, exposed, block, sent = model.step(n, parts, True)
        off, _, _, _ = model.step(n, parts, False)
        cg, sums = model.cg_iteration(n, parts)
        one, _, _, _ = model.step(grids[0][1], (1, 1, 1), True)
        cg_one, _ = model.cg_iteration(grids[0][1], (1, 1, 1))
        if weak:
            eff_on, eff_off, eff_cg = one / on, one / off, cg_one / cg
        else:
            eff_on, eff_off, eff_cg = one / (procs * on), one / (procs * off), cg_one / (procs * cg)
        grid = "×".join(map(str, n))
        print(
            f"| {procs} | {grid} | {'×'.join(map(str, parts))} | {'×'.join(map(str, block))} | "
            f"{sent / 1e6:.2f} MB | {on * 1e3:.3f} ms | {100 * eff_on:.0f}% | {100 * exposed / on:.0f}% | "
            f"{off * 1e3:.3f} ms | {100 * eff_off:.0f}% | {cg * 1e3:.3f} ms | {100 * eff_cg:.0f}% | "
            f"{100 * sums / cg:.0f}% |"
        )
    print(overlap_note)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--node-ns", type=float, default=2.844e-3 / 256**3 * 1e9)
    p.add_argument("--node-ns-f32", type=float, default=1.560e-3 / 256**3 * 1e9)
    p.add_argument("--pcie-gbps", type=float, default=55.3)
    p.add_argument("--d2d-gbps", type=float, default=4159.5)
    p.add_argument("--command-us", type=float, default=10.1)
    p.add_argument("--mpi-latency-us", type=float, required=True)
    p.add_argument("--mpi-gbps", type=float, required=True)
    p.add_argument("--allreduce-us", type=float, required=True)
    a = p.parse_args()
    f64, f32 = Model(a, "f64"), Model(a, "f32")
    print(
        f"Inputs: {a.node_ns:.4f} ns per node-step (f64; f32 {a.node_ns_f32:.4f}), PCIe {a.pcie_gbps} GB/s, "
        f"device copy {a.d2d_gbps} GB/s (read + write), {a.command_us} µs per command, MPI latency "
        f"{a.mpi_latency_us} µs, bandwidth {a.mpi_gbps} GB/s, allreduce {a.allreduce_us} µs (× log2 P)."
    )
    note = (
        "\nEfficiency against one GPU (strong: T1 / (P·TP); weak: T1 / TP, T1 the one-GPU grid). "
        "Exposed exchange: the share of the step (overlap on) during which the exchange was not "
        "hidden behind the interior's kernel, the copies into the halo included. CG's sums: the "
        "share of a CG iteration in its two sums over the ranks (scalar read, allreduce, write)."
    )
    gpus = [1, 8, 16, 32, 64, 128, 256, 512, 1024]
    strong = [(q, (1024, 1024, 1024), False) for q in gpus]
    assert fits((1024, 1024, 1024), 8)
    table(f64, "Strong scaling: 1024³ nodes, f64, order 4 (fits one H200: 112 GB)", strong, note)
    weak = []
    for q in gpus:
        # The grid that gives every GPU a 256³ block: 256 times the cubest process grid.
        cube = min(
            ((x, y, q // x // y) for x in divisors(q) for y in divisors(q // x)),
            key=lambda t: (max(t) / min(t), -t[2], -t[1]),
        )
        weak.append((q, tuple(256 * c for c in cube), True))
    table(f64, "Weak scaling: 256³ nodes per GPU, f64, order 4", weak, note)
    goal = [(q, (512, 512, 512), False) for q in (1, 2, 4, 8)]
    table(f32, "The issue's strong-scaling case: 512³, f32, order 4 (goal ≥ 1.8× on 2 GPUs, ≥ 3.4× on 4)",
          goal, note)


if __name__ == "__main__":
    main()
