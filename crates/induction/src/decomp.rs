//! Domain decomposition: the grid of `NX × NY × NZ` nodes split into `P` blocks, one per
//! process, as a `px × py × pz` process grid.
//!
//! - **The process grid** is the factorisation `P = px·py·pz` with the least halo surface (the
//!   nodes a step exchanges across block faces, `(px−1)·NY·NZ + (py−1)·NX·NZ + (pz−1)·NX·NY`,
//!   counting the wrap-around faces of periodic axes too), among those whose blocks keep at
//!   least the stencil's width of nodes on every axis they split (an axis in one part keeps all
//!   its nodes, and has no halo: the configuration's validation sizes it). The width may differ
//!   per axis ([`Decomposition::with_minimums`]). Ties go to the grid that splits the
//!   slowest axes most (z, then y), whose faces are the most contiguous in memory (x is the
//!   fastest index).
//! - **Uneven splits.** An axis of `n` nodes in `p` parts gives the first `n mod p` parts one
//!   node more than the others, so any `P` works.
//! - **Ranks** are numbered x fastest: `rank = (cz·py + cy)·px + cx`.
//!
//! Pure host logic, shared by every rank (each computes the same answer).
//!
//! ```
//! use induction::decomp::{split, Decomposition};
//! # fn main() -> induction::Result<()> {
//! let d = Decomposition::new([20, 20, 20], 4, 3, [false; 3])?; // 4 blocks of at least 3 nodes
//! assert_eq!((d.len(), d.parts.iter().product::<usize>()), (4, 4));
//! assert!(d.halo_surface() < Decomposition::slabs([20, 20, 20], 4, 3, [false; 3])?.halo_surface());
//! let b = d.block(0)?;
//! assert_eq!((b.rank, b.start, b.neighbours[0][0]), (0, [0; 3], None)); // None: the boundary
//! assert!(d.block(4).is_err());
//! // 5 nodes in z stay in one part: only the split axes keep 6 nodes a block.
//! assert_eq!(Decomposition::new([16, 16, 5], 2, 6, [true; 3])?.parts, [1, 2, 1]);
//! // Per axis: 2 nodes a block in z, 8 in x and y (which 12 nodes cannot split).
//! assert_eq!(Decomposition::with_minimums([12, 12, 8], 4, [8, 8, 2], [true; 3])?.parts, [1, 1, 4]);
//! assert_eq!(split(10, 3, 0)?, (0, 4)); // 10 nodes in 3 parts: 4, 3, 3
//! assert_eq!(split(10, 3, 2)?, (7, 3));
//! assert!(split(10, 3, 3).is_err()); // parts 0, 1 and 2
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};

/// One block of the decomposition: where it lies in the grid and who its neighbours are.
///
/// See [the example in `decomp`](mod@crate::decomp).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The block's rank.
    pub rank: usize,
    /// Its position in the process grid.
    pub coords: [usize; 3],
    /// Its first node along each axis (in the whole grid).
    pub start: [usize; 3],
    /// Its nodes along each axis.
    pub len: [usize; 3],
    /// The rank across each face, `[axis][0 = low side, 1 = high side]`; `None` on a physical
    /// boundary (a non-periodic axis's end). On a periodic axis split in one part the block is
    /// its own neighbour.
    pub neighbours: [[Option<usize>; 2]; 3],
}

/// A grid split into `px × py × pz` blocks.
///
/// See [the example in `decomp`](mod@crate::decomp).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decomposition {
    /// Nodes of the whole grid per axis.
    pub nodes: [usize; 3],
    /// Blocks per axis.
    pub parts: [usize; 3],
    /// Whether each axis is periodic.
    pub periodic: [bool; 3],
}

impl Decomposition {
    /// The process grid for `processes` blocks of a grid of `nodes` nodes per axis, each block
    /// keeping at least `min_nodes` nodes along each axis split (the stencil's width, so that a
    /// halo comes from the neighbour alone; an axis in one part keeps all its nodes and is not
    /// checked). Errors when no factorisation allows that.
    ///
    /// See [the example in `decomp`](mod@crate::decomp).
    pub fn new(
        nodes: [usize; 3],
        processes: usize,
        min_nodes: usize,
        periodic: [bool; 3],
    ) -> Result<Decomposition> {
        Decomposition::with_minimums(nodes, processes, [min_nodes; 3], periodic)
    }

    /// [`Decomposition::new`] with the least block of each axis apart: `min_nodes[a]` nodes a
    /// block along axis `a` where it is split (e.g. a periodic axis needs only its halo's width,
    /// a bounded one its boundary closure's too).
    ///
    /// See [the example in `decomp`](mod@crate::decomp).
    pub fn with_minimums(
        nodes: [usize; 3],
        processes: usize,
        min_nodes: [usize; 3],
        periodic: [bool; 3],
    ) -> Result<Decomposition> {
        check_processes(nodes, processes)?;
        let min_nodes = min_nodes.map(|m| m.max(1));
        let mut best: Option<([usize; 3], u128)> = None;
        for pz in divisors(processes).into_iter().rev() {
            for py in divisors(processes / pz).into_iter().rev() {
                let px = processes / pz / py;
                let parts = [px, py, pz];
                if !fits(nodes, parts, min_nodes) {
                    continue;
                }
                let s = surface(nodes, parts, periodic);
                if best.as_ref().is_none_or(|(_, b)| s < *b) {
                    best = Some((parts, s));
                }
            }
        }
        match best {
            Some((parts, _)) => Ok(Decomposition { nodes, parts, periodic }),
            None => {
                let least = if min_nodes.iter().all(|&m| m == min_nodes[0]) {
                    format!("{} nodes along each axis it splits", min_nodes[0])
                } else {
                    format!(
                        "{} nodes along x, {} along y and {} along z, on the axes it splits",
                        min_nodes[0], min_nodes[1], min_nodes[2]
                    )
                };
                Err(Error::Config(format!(
                    "{processes} processes cannot split a {}×{}×{} grid into blocks of at least \
                     {least} (the stencil's width); use fewer processes or a larger grid",
                    nodes[0], nodes[1], nodes[2]
                )))
            }
        }
    }

    /// Slabs: the grid split along z only (`[1, 1, processes]`), the first `nodes[2] mod
    /// processes` slabs one plane thicker. Errors when a slab would keep fewer than
    /// `min_nodes` planes.
    ///
    /// See [the example in `decomp`](mod@crate::decomp).
    pub fn slabs(
        nodes: [usize; 3],
        processes: usize,
        min_nodes: usize,
        periodic: [bool; 3],
    ) -> Result<Decomposition> {
        check_processes(nodes, processes)?;
        let min_nodes = min_nodes.max(1);
        if processes > 1 && nodes[2] / processes < min_nodes {
            return Err(Error::Config(format!(
                "{processes} processes cannot split the {} planes in z of a {}×{}×{} grid into slabs of \
                 at least {min_nodes} planes (the stencil's width); use fewer processes or more nodes in z",
                nodes[2], nodes[0], nodes[1], nodes[2]
            )));
        }
        Ok(Decomposition { nodes, parts: [1, 1, processes], periodic })
    }

    /// Number of blocks.
    ///
    /// See [the example in `decomp`](mod@crate::decomp).
    pub fn len(&self) -> usize {
        // Saturating: the fields are public, and a hand-made `parts` may not be a real one
        // (`block` refuses those).
        self.parts.iter().fold(1usize, |n, &p| n.saturating_mul(p))
    }

    /// Whether there are no blocks (never: a decomposition has at least one).
    ///
    /// See [the example in `decomp`](mod@crate::decomp).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Nodes exchanged across block faces per field and per layer of halo.
    ///
    /// See [the example in `decomp`](mod@crate::decomp).
    pub fn halo_surface(&self) -> u128 {
        surface(self.nodes, self.parts, self.periodic)
    }

    /// The block of `rank` (< [`len`](Self::len)).
    ///
    /// See [the example in `decomp`](mod@crate::decomp).
    pub fn block(&self, rank: usize) -> Result<Block> {
        self.check()?;
        if rank >= self.len() {
            return Err(Error::Config(format!("rank {rank} of a decomposition into {} blocks", self.len())));
        }
        let [px, py, _] = self.parts;
        let coords = [rank % px, rank / px % py, rank / (px * py)];
        let mut start = [0; 3];
        let mut len = [0; 3];
        let mut neighbours = [[None; 2]; 3];
        for a in 0..3 {
            (start[a], len[a]) = split(self.nodes[a], self.parts[a], coords[a])?;
            let p = self.parts[a];
            let c = coords[a];
            let low = if c > 0 {
                Some(c - 1)
            } else if self.periodic[a] {
                Some(p - 1)
            } else {
                None
            };
            let high = if c + 1 < p {
                Some(c + 1)
            } else if self.periodic[a] {
                Some(0)
            } else {
                None
            };
            for (side, other) in [low, high].into_iter().enumerate() {
                neighbours[a][side] = other.map(|o| {
                    let mut oc = coords;
                    oc[a] = o;
                    (oc[2] * py + oc[1]) * px + oc[0]
                });
            }
        }
        Ok(Block { rank, coords, start, len, neighbours })
    }

    /// Refuses a hand-made decomposition (the fields are public) that no constructor would
    /// give: an axis in no part or in more parts than it has nodes, or more blocks than a
    /// `usize` counts.
    fn check(&self) -> Result<()> {
        for a in 0..3 {
            if self.parts[a] == 0 || self.parts[a] > self.nodes[a] {
                return Err(Error::Config(format!(
                    "a decomposition of {} nodes along axis {a} into {} parts: each axis needs 1 to \
                     its number of nodes parts (build one with `Decomposition::new`)",
                    self.nodes[a], self.parts[a]
                )));
            }
        }
        if self.parts.iter().try_fold(1usize, |n, &p| n.checked_mul(p)).is_none() {
            return Err(Error::Config(format!(
                "a decomposition into {:?} parts has more blocks than a usize counts",
                self.parts
            )));
        }
        Ok(())
    }
}

/// Refuses a process count no decomposition of `nodes` can have: none, or more than the grid
/// has nodes (a block needs at least one; this also bounds the factorisations tried).
fn check_processes(nodes: [usize; 3], processes: usize) -> Result<()> {
    if processes == 0 {
        return Err(Error::Config("a decomposition needs at least one process".into()));
    }
    let total: u128 = nodes.iter().map(|&n| n as u128).product();
    if total == 0 {
        return Err(Error::Config(format!(
            "a {}×{}×{} grid has no nodes to decompose; give every axis at least one node",
            nodes[0], nodes[1], nodes[2]
        )));
    }
    if processes as u128 > total {
        return Err(Error::Config(format!(
            "{processes} processes cannot split a {}×{}×{} grid ({total} nodes): every block \
             needs at least one node; use at most {total} processes or a larger grid",
            nodes[0], nodes[1], nodes[2]
        )));
    }
    Ok(())
}

/// Part `i < p` of `n` nodes split into `p ≥ 1` parts: (first node, nodes); the first `n mod p`
/// parts have one node more.
///
/// See [the example in `decomp`](mod@crate::decomp).
pub fn split(n: usize, p: usize, i: usize) -> Result<(usize, usize)> {
    if i >= p {
        return Err(Error::Config(format!(
            "part {i} of {n} nodes split into {p} parts was asked for; the parts are 0 … p − 1{}",
            if p == 0 { " (and there must be at least one)" } else { "" }
        )));
    }
    let (q, r) = (n / p, n % p);
    // i·q + min(i, r) ≤ n − (q + [i < r]), so nothing overflows.
    Ok((i * q + i.min(r), q + usize::from(i < r)))
}

fn surface(n: [usize; 3], p: [usize; 3], periodic: [bool; 3]) -> u128 {
    (0..3)
        .map(|a| {
            let cuts = if periodic[a] && p[a] > 1 { p[a] } else { p[a].saturating_sub(1) };
            let face: u128 = (0..3).filter(|&b| b != a).map(|b| n[b] as u128).product();
            cuts as u128 * face
        })
        .sum()
}

/// Whether every block of `parts` keeps at least `min_nodes[a]` nodes along each axis `a` it
/// splits (the smallest block of an axis has `nodes / parts` nodes).
fn fits(nodes: [usize; 3], parts: [usize; 3], min_nodes: [usize; 3]) -> bool {
    (0..3).all(|a| parts[a] == 1 || nodes[a] / parts[a] >= min_nodes[a])
}

/// The divisors of `n ≥ 1`, ascending (trial division up to √n).
fn divisors(n: usize) -> Vec<usize> {
    let (mut low, mut high) = (Vec::new(), Vec::new());
    let mut d = 1usize;
    while d <= n / d {
        if n % d == 0 {
            low.push(d);
            if d != n / d {
                high.push(n / d);
            }
        }
        d += 1;
    }
    low.extend(high.into_iter().rev());
    low
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The √n trial division gives what testing every number up to n gives.
    #[test]
    fn divisors_are_every_divisor_ascending() {
        for n in 1..3000usize {
            assert_eq!(divisors(n), (1..=n).filter(|d| n % d == 0).collect::<Vec<_>>(), "{n}");
        }
        assert_eq!(divisors(1 << 40).len(), 41);
    }

    /// Regression: `with_minimums` with 2^40 processes tested every number up to 2^40 for a
    /// divisor (hours); a count above the grid's nodes is refused at once, and one below it
    /// is factorised through √P trial division.
    #[test]
    fn a_process_count_above_the_nodes_is_refused_at_once() {
        let t = std::time::Instant::now();
        let e = Decomposition::with_minimums([8; 3], 1 << 40, [1; 3], [false; 3]).unwrap_err();
        assert!(e.to_string().contains("at most 512 processes"), "{e}");
        let e = Decomposition::new([0, 8, 8], 1, 1, [false; 3]).unwrap_err();
        assert!(e.to_string().contains("no nodes"), "{e}");
        let d = Decomposition::with_minimums([1 << 20, 1 << 20, 1], 1 << 40, [1; 3], [false; 3]).unwrap();
        assert_eq!(d.parts, [1 << 20, 1 << 20, 1]);
        assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());
    }

    /// Regression: the fields are public, and hand-made decompositions panicked: `parts` with
    /// a zero underflowed in `halo_surface`, one whose product overflows a usize overflowed in
    /// `len`. They give a surface and a saturated count, and `block` refuses them.
    #[test]
    fn hand_made_decompositions_are_refused_not_panicking() {
        let zero = Decomposition { nodes: [8; 3], parts: [0, 1, 1], periodic: [false; 3] };
        assert_eq!((zero.halo_surface(), zero.len(), zero.is_empty()), (0, 0, true));
        assert!(zero.block(0).unwrap_err().to_string().contains("1 to its number of nodes parts"));
        let huge = Decomposition { nodes: [usize::MAX; 3], parts: [usize::MAX, 2, 1], periodic: [true; 3] };
        assert_eq!(huge.len(), usize::MAX);
        assert!(huge.block(0).unwrap_err().to_string().contains("more blocks than a usize counts"));
        let more = Decomposition { nodes: [2, 8, 8], parts: [3, 1, 1], periodic: [false; 3] };
        assert!(more.block(0).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The blocks cover every node exactly once, neighbours are mutual and adjacent, sizes
        /// along an axis differ by at most one, every block keeps its axis's least nodes along
        /// each axis split (an axis in one part is not checked), and no factorisation has less
        /// surface.
        #[test]
        fn blocks_partition_the_grid(
            n in prop::array::uniform3(1usize..40),
            p in 1usize..40,
            min in prop::array::uniform3(1usize..8),
            periodic in prop::array::uniform3(any::<bool>()),
        ) {
            // A split axis keeps `min[a]` nodes a block; an axis in one part any number.
            let admissible = |parts: [usize; 3]| (0..3).all(|a| parts[a] == 1 || n[a] / parts[a] >= min[a]);
            let Ok(d) = Decomposition::with_minimums(n, p, min, periodic) else {
                // Refused only when no factorisation keeps `min[a]` nodes per block along each
                // split axis.
                for pz in 1..=p { for py in 1..=p { if p % (pz * py) == 0 {
                    let parts = [p / pz / py, py, pz];
                    prop_assert!(!admissible(parts), "{parts:?} fits");
                }}}
                return Ok(());
            };
            if min.iter().all(|&m| m == min[0]) {
                prop_assert_eq!(&Decomposition::new(n, p, min[0], periodic).unwrap(), &d);
            }
            prop_assert_eq!(d.len(), p);
            let mut owner = vec![usize::MAX; n[0] * n[1] * n[2]];
            let blocks: Vec<Block> = (0..p).map(|r| d.block(r).unwrap()).collect();
            for b in &blocks {
                prop_assert!((0..3).all(|a| d.parts[a] == 1 || b.len[a] >= min[a]), "{:?}", b.len);
                for z in b.start[2]..b.start[2] + b.len[2] {
                    for y in b.start[1]..b.start[1] + b.len[1] {
                        for x in b.start[0]..b.start[0] + b.len[0] {
                            let i = (z * n[1] + y) * n[0] + x;
                            prop_assert_eq!(owner[i], usize::MAX, "node {:?} twice", (x, y, z));
                            owner[i] = b.rank;
                        }
                    }
                }
                for a in 0..3 {
                    for side in 0..2 {
                        let Some(o) = b.neighbours[a][side] else {
                            prop_assert!(!periodic[a]);
                            prop_assert_eq!(b.coords[a], if side == 0 { 0 } else { d.parts[a] - 1 });
                            continue;
                        };
                        let ob = &blocks[o];
                        prop_assert_eq!(ob.neighbours[a][1 - side], Some(b.rank), "mutual");
                        // Adjacent along `a` (across the periodic seam too), aligned on the others.
                        let touching = if side == 1 { b.start[a] + b.len[a] } else { ob.start[a] + ob.len[a] };
                        let other_start = if side == 1 { ob.start[a] } else { b.start[a] };
                        prop_assert!(touching == other_start || touching == n[a] && other_start == 0);
                        for c in (0..3).filter(|&c| c != a) {
                            prop_assert_eq!((ob.start[c], ob.len[c]), (b.start[c], b.len[c]));
                        }
                    }
                }
            }
            prop_assert!(owner.iter().all(|&o| o != usize::MAX), "every node owned");
            for a in 0..3 {
                let lens: Vec<usize> = blocks.iter().map(|b| b.len[a]).collect();
                prop_assert!(lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1);
            }
            // No admissible factorisation exchanges fewer nodes (surface counted here from the
            // blocks themselves: the faces between different ranks).
            let count = |parts: [usize; 3]| -> u128 {
                (0..3).map(|a| {
                    let cuts = if periodic[a] && parts[a] > 1 { parts[a] } else { parts[a] - 1 };
                    cuts as u128 * (0..3).filter(|&b| b != a).map(|b| n[b] as u128).product::<u128>()
                }).sum()
            };
            for pz in 1..=p { for py in 1..=p { if p % (pz * py) == 0 {
                let parts = [p / pz / py, py, pz];
                if admissible(parts) {
                    prop_assert!(count(parts) >= d.halo_surface(), "{parts:?} beats {:?}", d.parts);
                }
            }}}
        }
    }

    #[test]
    fn cubes_split_evenly_and_ties_split_the_slow_axes() {
        let d = Decomposition::new([512; 3], 8, 4, [false; 3]).unwrap();
        assert_eq!(d.parts, [2, 2, 2]);
        let d = Decomposition::new([512; 3], 2, 4, [false; 3]).unwrap();
        assert_eq!(d.parts, [1, 1, 2], "a tie: z first");
        let d = Decomposition::new([80, 80, 3], 4, 3, [false; 3]).unwrap();
        assert_eq!(d.parts, [2, 2, 1], "a flat grid is not split along its 3 z nodes");
        // Three parts of 10: 4, 3, 3.
        assert_eq!((0..3).map(|i| split(10, 3, i).unwrap()).collect::<Vec<_>>(), [(0, 4), (4, 3), (7, 3)]);
    }

    #[test]
    fn slabs_split_z_only_and_refuse_thin_slabs() {
        let d = Decomposition::slabs([16, 16, 20], 3, 6, [false; 3]).unwrap();
        assert_eq!(d.parts, [1, 1, 3]);
        let b: Vec<Block> = (0..3).map(|r| d.block(r).unwrap()).collect();
        assert_eq!(b.iter().map(|b| (b.start[2], b.len[2])).collect::<Vec<_>>(), [(0, 7), (7, 7), (14, 6)]);
        assert_eq!(b[1].neighbours[2], [Some(0), Some(2)]);
        assert_eq!(b[0].neighbours[2], [None, Some(1)]);
        let e = Decomposition::slabs([16, 16, 16], 3, 6, [false; 3]).unwrap_err();
        assert!(e.to_string().contains("cannot split the 16 planes in z"), "{e}");
    }

    /// Regression: `split(10, 0, 0)` divided by zero and `split(10, 3, 5)` returned a part past
    /// the grid; both are refused, naming the part and the parts.
    #[test]
    fn splits_into_no_parts_or_past_the_last_are_refused() {
        for (n, p, i) in [(10, 0, 0), (10, 3, 3), (10, 3, 5), (0, 0, 0), (usize::MAX, 2, usize::MAX)] {
            let e = split(n, p, i).unwrap_err();
            assert!(matches!(e, Error::Config(_)), "{e:?}");
            assert!(e.to_string().contains(&format!("part {i} of {n} nodes split into {p} parts")), "{e}");
        }
        assert!(split(10, 0, 0).unwrap_err().to_string().contains("at least one"));
        // The parts cover the nodes without overflow, at the edges of usize too.
        for (n, p) in [(usize::MAX, 1), (usize::MAX, 7), (usize::MAX - 1, usize::MAX), (0, 3), (5, 9)] {
            for i in [0, 1, p / 2, p.saturating_sub(2), p - 1].into_iter().filter(|&i| i < p) {
                let (start, len) = split(n, p, i).unwrap();
                assert!(start.checked_add(len).is_some_and(|end| end <= n), "{n} {p} {i}");
                if i == 0 {
                    assert_eq!(start, 0);
                }
                if i == p - 1 {
                    assert_eq!(start + len, n, "{n} {p}");
                }
            }
        }
    }

    #[test]
    fn impossible_splits_say_why() {
        let e = Decomposition::new([8, 8, 8], 7, 4, [false; 3]).unwrap_err();
        assert!(e.to_string().contains("7 processes cannot split a 8×8×8 grid"), "{e}");
        assert!(Decomposition::new([8; 3], 0, 1, [false; 3]).is_err());
        let d = Decomposition::new([8; 3], 2, 1, [false; 3]).unwrap();
        assert!(d.block(2).is_err());
        let e = Decomposition::with_minimums([8, 8, 8], 7, [4, 3, 3], [true; 3]).unwrap_err();
        assert!(e.to_string().contains("at least 4 nodes along x, 3 along y and 3 along z"), "{e}");
    }

    /// Regression: the least block was asked of every axis, also those in one part (which hold
    /// no halo), so `alfven_periodic_2d`'s 16×16×5 grid could not be split in 2 at 6 nodes a
    /// block. Only the split axes are checked now; each with its own least block.
    #[test]
    fn axes_in_one_part_keep_any_number_of_nodes() {
        let d = Decomposition::new([16, 16, 5], 2, 6, [true; 3]).unwrap();
        assert_eq!(d.parts, [1, 2, 1]);
        let d = Decomposition::new([16, 16, 1], 4, 6, [false; 3]).unwrap();
        assert_eq!(d.parts, [2, 2, 1]);
        assert!(Decomposition::new([16, 5, 5], 4, 6, [true; 3]).is_err(), "16 in 4 parts of 4");
        // Per axis: z with blocks of 2 (its halo), x and y with 8 (which 12 nodes cannot give).
        let d = Decomposition::with_minimums([12, 12, 8], 4, [8, 8, 2], [true; 3]).unwrap();
        assert_eq!(d.parts, [1, 1, 4]);
        assert!(Decomposition::with_minimums([12, 12, 8], 4, [8, 8, 3], [true; 3]).is_err());
        // A slab decomposition of one process splits nothing.
        assert_eq!(Decomposition::slabs([4, 4, 2], 1, 6, [false; 3]).unwrap().parts, [1, 1, 1]);
    }
}
