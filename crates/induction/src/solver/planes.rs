//! Slices of the grid through its middle, for pictures: B, the exact solution and div B on the
//! plane x, y or z = n/2 ([`Solver::slice`]); on several ranks gathered to rank 0.

use std::fmt;

use super::{Part, Solver, A};
use crate::error::{Error, Result};

/// The axis a mid-plane is normal to: the plane x = const, y = const or z = const.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum PlaneAxis {
    /// The plane x = const (its nodes y fastest, then z).
    X,
    /// The plane y = const (x fastest, then z).
    Y,
    /// The plane z = const (x fastest, then y).
    Z,
}

impl PlaneAxis {
    /// Every axis.
    pub const ALL: [PlaneAxis; 3] = [PlaneAxis::X, PlaneAxis::Y, PlaneAxis::Z];

    /// 0, 1 or 2.
    ///
    /// See the example in the [crate docs](crate).
    pub fn index(self) -> usize {
        match self {
            PlaneAxis::X => 0,
            PlaneAxis::Y => 1,
            PlaneAxis::Z => 2,
        }
    }

    /// The two axes along the plane, the faster first.
    ///
    /// See the example in the [crate docs](crate).
    pub fn in_plane(self) -> [usize; 2] {
        match self {
            PlaneAxis::X => [1, 2],
            PlaneAxis::Y => [0, 2],
            PlaneAxis::Z => [0, 1],
        }
    }

    /// `x`, `y` or `z`.
    ///
    /// See the example in the [crate docs](crate).
    pub fn name(self) -> &'static str {
        ["x", "y", "z"][self.index()]
    }
}

impl fmt::Display for PlaneAxis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A quantity drawn on a plane (InductionEq's plot_numerical_solution, plot_analytical_solution,
/// plot_difference and plot_divergence).
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum PlaneField {
    /// |B| of the numerical solution.
    Numerical,
    /// |B| of the case's exact solution at the same time.
    Exact,
    /// B − B_exact, component by component (three panels).
    Difference,
    /// The discrete divergence D·B.
    Divergence,
}

impl PlaneField {
    /// Every quantity.
    pub const ALL: [PlaneField; 4] =
        [PlaneField::Numerical, PlaneField::Exact, PlaneField::Difference, PlaneField::Divergence];

    /// The name on the command line.
    ///
    /// See the example in the [crate docs](crate).
    pub fn name(self) -> &'static str {
        match self {
            PlaneField::Numerical => "numerical",
            PlaneField::Exact => "exact",
            PlaneField::Difference => "difference",
            PlaneField::Divergence => "divergence",
        }
    }

    /// Whether drawing it needs the exact solution.
    ///
    /// See the example in the [crate docs](crate).
    pub fn needs_exact(self) -> bool {
        matches!(self, PlaneField::Exact | PlaneField::Difference)
    }
}

impl fmt::Display for PlaneField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One picture's worth of values on a plane: a title, the values (the plane's nodes, the faster
/// in-plane axis first) and whether they have a sign (drawn with a diverging map symmetric about
/// zero) or not.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// What the panel shows, e.g. `|B|` or `div B`.
    pub title: String,
    /// Its values, `dims[0]·dims[1]` of them.
    pub values: Vec<f64>,
    /// Drawn about zero.
    pub signed: bool,
}

/// B, the exact solution (where asked) and div B on the mid-plane normal to `axis`.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// The axis the plane is normal to.
    pub axis: PlaneAxis,
    /// The plane's node index along `axis`: n/2.
    pub index: usize,
    /// Nodes along the plane's two axes ([`PlaneAxis::in_plane`]), the faster first.
    pub dims: [usize; 2],
    /// The time of the field.
    pub time: f64,
    /// B: 3 components of `dims[0]·dims[1]` values each.
    pub b: Vec<f64>,
    /// The exact solution at [`Slice::time`], as `b` (None where it was not asked for).
    pub exact: Option<Vec<f64>>,
    /// div B.
    pub div: Vec<f64>,
}

impl Slice {
    /// Nodes of the plane.
    ///
    /// See the example in the [crate docs](crate).
    pub fn nodes(&self) -> usize {
        // Saturating: a slice's nodes are counted (its values are held), but `dims` is public.
        self.dims[0].saturating_mul(self.dims[1])
    }

    /// The panels of `field`: |B|, |B_exact|, the three components of B − B_exact, or div B.
    /// The exact solution's quantities need a slice made with it.
    ///
    /// See the example in the [crate docs](crate).
    pub fn panels(&self, field: PlaneField) -> Result<Vec<Panel>> {
        let [du, dv] = self.dims;
        let short = |what: &str, len: usize, ncomp: usize| {
            Error::Config(format!(
                "a slice of {du}×{dv} nodes holds {len} values of {what}; it takes {ncomp} component(s) \
                 of every node ({} values)",
                du.saturating_mul(dv).saturating_mul(ncomp)
            ))
        };
        for (what, values, ncomp) in [
            ("B", Some(&self.b), 3),
            ("div B", Some(&self.div), 1),
            ("the exact solution", self.exact.as_ref(), 3),
        ] {
            if let Some(v) =
                values.filter(|v| du.checked_mul(dv).and_then(|m| m.checked_mul(ncomp)) != Some(v.len()))
            {
                return Err(short(what, v.len(), ncomp));
            }
        }
        // B holds 3·m values: m is counted.
        let m = self.nodes();
        let exact = || {
            self.exact.as_ref().ok_or_else(|| {
                Error::Config(format!(
                    "the {field} plane needs the exact solution, and this slice was taken without it; \
                     take it with Solver::slice(axis, true)"
                ))
            })
        };
        Ok(match field {
            PlaneField::Numerical => {
                vec![Panel {
                    title: "|B|".into(),
                    values: super::magnitude(&self.b, m, 0..m)?,
                    signed: false,
                }]
            }
            PlaneField::Exact => vec![Panel {
                title: "|B| exact".into(),
                values: super::magnitude(exact()?, m, 0..m)?,
                signed: false,
            }],
            PlaneField::Difference => {
                let e = exact()?;
                (0..3)
                    .map(|c| Panel {
                        title: format!("B{} - exact", ["x", "y", "z"][c]),
                        values: (c * m..(c + 1) * m).map(|i| self.b[i] - e[i]).collect(),
                        signed: true,
                    })
                    .collect()
            }
            PlaneField::Divergence => {
                vec![Panel { title: "div B".into(), values: self.div.clone(), signed: true }]
            }
        })
    }
}

/// The plane `k` along `axis` of `ncomp` components of values on a box of `len` nodes (x
/// fastest, component after component): `ncomp` components of the plane's nodes each, the
/// faster in-plane axis first. An error where `k` is past the box or `values` hold fewer than
/// `ncomp` components of its nodes.
///
/// See the example in the [crate docs](crate).
pub fn plane_values(
    values: &[f64],
    ncomp: usize,
    len: [usize; 3],
    axis: PlaneAxis,
    k: usize,
) -> Result<Vec<f64>> {
    let [u, v] = axis.in_plane();
    let a = axis.index();
    if k >= len[a] {
        return Err(Error::Config(format!(
            "plane {k} along {axis} of a box of {}×{}×{} nodes was asked for; it has planes 0 … {} \
             there",
            len[0],
            len[1],
            len[2],
            len[a].saturating_sub(1)
        )));
    }
    let np = len[0].checked_mul(len[1]).and_then(|p| p.checked_mul(len[2]));
    if np.and_then(|p| p.checked_mul(ncomp)).is_none_or(|want| values.len() < want) {
        return Err(Error::Config(format!(
            "{} values were given for {ncomp} components of a box of {}×{}×{} nodes; give all of \
             them, component after component, x fastest",
            values.len(),
            len[0],
            len[1],
            len[2]
        )));
    }
    let np = np.unwrap_or(0);
    let mut out = Vec::with_capacity(ncomp * len[u] * len[v]);
    for c in 0..ncomp {
        for jv in 0..len[v] {
            for ju in 0..len[u] {
                let mut at = [0; 3];
                (at[a], at[u], at[v]) = (k, ju, jv);
                out.push(values[c * np + at[0] + len[0] * (at[1] + len[1] * at[2])]);
            }
        }
    }
    Ok(out)
}

impl Solver {
    /// The exact solution at the current time on the nodes of this rank's piece of an output
    /// file ([`Part::piece_extent`]; the whole grid on one rank), 3 components, x fastest,
    /// evaluated on the device into the register W2 (which holds nothing between steps).
    fn exact_piece(&self) -> Result<Vec<f64>> {
        self.launch_held("exact_field", &[A::F(&self.w2), A::R(self.t)])?;
        let held = self.read(&self.w2)?;
        Ok(match &self.split {
            None => held,
            Some(s) => {
                let p = &s.part;
                let e = p.piece_extent();
                let origin = [p.halo[0][0], p.halo[1][0], p.halo[2][0]];
                let extent = [e[0][1] + 1 - e[0][0], e[1][1] + 1 - e[1][0], e[2][1] + 1 - e[2][0]];
                p.box_of(&held, 3, origin, extent)
            }
        })
    }

    /// B, div B and (with `exact`) the exact solution on the plane normal to `axis` through the
    /// middle node n/2 of the whole grid. On one rank from the whole field; on several, every
    /// rank must call it, the ranks whose pieces hold the plane send their part of it to rank 0,
    /// which gets the slice (`None` on the other ranks; pieces overlap by one node, where both
    /// hold the same value).
    ///
    /// See the example in the [crate docs](crate).
    pub fn slice(&self, axis: PlaneAxis, exact: bool) -> Result<Option<Slice>> {
        let n = self.cfg.n;
        let a = axis.index();
        let [u, v] = axis.in_plane();
        let k = n[a] / 2;
        let piece = self.output_piece()?;
        let exact_piece = if exact { Some(self.exact_piece()?) } else { None };
        let e = piece.extent;
        let len = [e[0][1] + 1 - e[0][0], e[1][1] + 1 - e[1][0], e[2][1] + 1 - e[2][0]];
        // This piece's part of the plane: B (3), div B (1), then the exact solution (3).
        let mine = (e[a][0]..=e[a][1])
            .contains(&k)
            .then(|| {
                let at = k - e[a][0];
                let mut vals = plane_values(&piece.b, 3, len, axis, at)?;
                vals.extend(plane_values(&piece.div, 1, len, axis, at)?);
                if let Some(ex) = &exact_piece {
                    vals.extend(plane_values(ex, 3, len, axis, at)?);
                }
                Ok::<_, Error>(vals)
            })
            .transpose()?;
        let channels = if exact { 7 } else { 4 };
        let dims = [n[u], n[v]];
        let m = dims[0] * dims[1];
        let whole = |mut vals: Vec<f64>| {
            let ex = exact.then(|| vals.split_off(4 * m));
            let div = vals.split_off(3 * m);
            Slice { axis, index: k, dims, time: self.t, b: vals, exact: ex, div }
        };
        let Some(split) = &self.split else {
            return Ok(mine.map(whole));
        };
        let peers = &split.peers;
        if peers.rank() != 0 {
            if let Some(vals) = mine {
                peers.exchange(Some((0, bytemuck::cast_slice(&vals))), None)?;
            }
            return Ok(None);
        }
        let mut out = vec![f64::NAN; channels * m];
        for r in 0..peers.size() {
            let e = Part::new(&self.cfg, r, peers.size())?.piece_extent();
            if !(e[a][0]..=e[a][1]).contains(&k) {
                continue;
            }
            // A piece past the plane, or inverted, would be gathered past the slice's buffer:
            // refused (the extents of the ranks disagree with the grid; a defect), not indexed.
            if e[u][0] > e[u][1] || e[v][0] > e[v][1] || e[u][1] >= dims[0] || e[v][1] >= dims[1] {
                return Err(Error::Config(format!(
                    "rank {r}'s piece holds nodes {} … {} along {} and {} … {} along {} of the {axis} \
                     plane, which has nodes 0 … {} and 0 … {} there; the pieces must lie inside the \
                     grid (a defect of the solver's decomposition: please report it)",
                    e[u][0],
                    e[u][1],
                    ["x", "y", "z"][u],
                    e[v][0],
                    e[v][1],
                    ["x", "y", "z"][v],
                    dims[0].saturating_sub(1),
                    dims[1].saturating_sub(1),
                )));
            }
            let (lu, lv) = (e[u][1] + 1 - e[u][0], e[v][1] + 1 - e[v][0]);
            let vals = if r == 0 {
                match &mine {
                    Some(vals) => vals.clone(),
                    None => continue,
                }
            } else {
                let mut vals = vec![0f64; channels * lu * lv];
                peers.exchange(None, Some((r, bytemuck::cast_slice_mut(&mut vals))))?;
                vals
            };
            if vals.len() != channels * lu * lv {
                return Err(Error::Config(format!(
                    "rank {r}'s part of the {axis} plane holds {} values where its piece of {lu}×{lv} \
                     nodes takes {} ({channels} channels); every rank must make its solver with the \
                     same configuration",
                    vals.len(),
                    channels * lu * lv
                )));
            }
            for c in 0..channels {
                for (jv, gv) in (e[v][0]..=e[v][1]).enumerate() {
                    for (ju, gu) in (e[u][0]..=e[u][1]).enumerate() {
                        out[c * m + gv * dims[0] + gu] = vals[c * lu * lv + jv * lu + ju];
                    }
                }
            }
        }
        Ok(Some(whole(out)))
    }

    /// |B| and div B on the plane z = nz/2 of the whole grid (x fastest), which `--png` draws
    /// by default: [`Solver::slice`] of the z axis (every rank must call it on several; `None`
    /// on the ranks other than 0).
    ///
    /// See the example in the [crate docs](crate).
    pub fn middle_plane(&self) -> Result<Option<super::Plane>> {
        let Some(s) = self.slice(PlaneAxis::Z, false)? else {
            return Ok(None);
        };
        let m = s.nodes();
        Ok(Some(super::Plane {
            nx: s.dims[0],
            ny: s.dims[1],
            magnitude: super::magnitude(&s.b, m, 0..m)?,
            div: s.div,
        }))
    }
}
