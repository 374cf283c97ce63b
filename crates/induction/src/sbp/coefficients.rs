//! The coefficient tables too long to sit beside the code that uses them: the boundary blocks
//! and inverse norms of the extended operators, and the sixth-order classical block as exact
//! rationals in its free parameter, with its conversion to f64.

/// The boundary block of the extended operator of interior order 2, left end (InductionEq's
/// `SBP_diff` in `include/2ndOrderExtended.h`).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED2_BLOCK: [[f64; 4]; 3] = [
    [-6.0 / 5.0, 7.0 / 5.0, -1.0 / 5.0, 0.0],
    [-1.0 / 2.0, 0.0, 1.0 / 2.0, 0.0],
    [1.0 / 11.0, -7.0 / 11.0, 0.0, 6.0 / 11.0],
];
/// The inverse norm weights of the same operator (InductionEq's `M_INV` there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED2_NORM_INV: [f64; 3] = [12.0 / 5.0, 6.0 / 7.0, 12.0 / 11.0];
/// The boundary block of the extended operator of interior order 4, left end (InductionEq's
/// `SBP_diff` in `include/4thOrderExtended.h`, its decimals as printed there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED4_BLOCK: [[f64; 8]; 6] = [
    [
        -1.5655577299412915,
        2.006698028441886,
        -0.17969802499047988,
        -0.34551679626695936,
        0.031124203444273024,
        0.05295031931257198,
        0.0,
        0.0,
    ],
    [
        -0.4648100847546831,
        0.0,
        0.31822112431530714,
        0.19343747460090951,
        -0.01748789837432497,
        -0.029360615787208586,
        0.0,
        0.0,
    ],
    [
        0.08895922679561,
        -0.680116299599615,
        0.0,
        0.6911055296415899,
        -0.10654199486276988,
        0.006593538025184958,
        0.0,
        0.0,
    ],
    [
        0.09023462498760625,
        -0.21809773186831677,
        -0.3645866195553873,
        0.0,
        0.5149776612013978,
        -0.0225279347652999,
        0.0,
        0.0,
    ],
    [
        -0.010766469472750029,
        0.026116752329614308,
        0.07444717053592571,
        -0.6821178348068156,
        0.0,
        0.6825798774651727,
        -0.09025949605114705,
        0.0,
    ],
    [
        -0.016735517732012817,
        0.040062884094222144,
        -0.004209605405399509,
        0.02726389466132439,
        -0.6236615676516715,
        0.0,
        0.6597484708954711,
        -0.08246855886193388,
    ],
];
/// The inverse norm weights of the same operator (InductionEq's `M_INV` there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED4_NORM_INV: [f64; 6] = [
    3.131115459882583,
    0.725258121380005,
    1.55005382131324,
    0.817717206132879,
    1.0831139526137645,
    0.9896227063432067,
];
/// The boundary block of the extended operator of interior order 6, left end (InductionEq's
/// `SBP_diff` in `include/6thOrderExtended.h`, its decimals as printed there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED6_BLOCK: [[f64; 11]; 8] = [
    [
        -1.694029296324548,
        2.2544400845574146,
        -0.08620936936595677,
        -0.6743331558049105,
        -0.07168333624323447,
        0.38115659167302335,
        -0.08731913763956911,
        -0.022022380852219126,
        0.0,
        0.0,
        0.0,
    ],
    [
        -0.4365525804636584,
        0.0,
        0.12187865127311552,
        0.42004468901091385,
        0.0470417141198997,
        -0.2125755994195112,
        0.05032210731569905,
        0.009841018163541479,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.09741494725447933,
        -0.711215002547361,
        0.0,
        0.8403260918548099,
        -0.37986080371212877,
        0.22013700587387647,
        -0.07661058352779537,
        0.009808344804119466,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.11103870430595493,
        -0.35718853265672956,
        -0.12245501860532282,
        0.0,
        0.14863285514606336,
        0.3046668200409279,
        -0.07709684669473892,
        -0.007597981536154871,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.05057247589531842,
        -0.17138834402848946,
        0.23716432273447202,
        -0.6368115841111023,
        0.0,
        0.45802944394754846,
        0.11968856778065982,
        -0.05725488221840702,
        0.0,
        0.0,
        0.0,
    ],
    [
        -0.08825366313016443,
        0.25418203725254873,
        -0.04510775672577946,
        -0.42840506197919914,
        -0.15032343689393768,
        0.0,
        0.49588737738338984,
        -0.05105411266688221,
        0.013074616760024358,
        0.0,
        0.0,
    ],
    [
        0.027868806551392657,
        -0.08294111904346851,
        0.02163847109859378,
        0.1494327114564729,
        -0.05414590249550342,
        -0.6835380274603214,
        0.0,
        0.7658629221663829,
        -0.16220009505774236,
        0.018022232784193595,
        0.0,
    ],
    [
        0.006441573285017685,
        -0.01486516911927158,
        -0.0025389390555661823,
        0.013496651847819854,
        0.023738004203261713,
        0.06449545481541777,
        -0.7018911953245108,
        0.0,
        0.743258455963579,
        -0.1486516911927158,
        0.016516854576968422,
    ],
];
/// The inverse norm weights of the same operator (InductionEq's `M_INV` there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED6_NORM_INV: [f64; 8] = [
    3.388058592649096,
    0.656067877569432,
    3.8284417520438296,
    0.5578928353172239,
    2.390269768238421,
    0.7844770056014616,
    1.0813339670516158,
    0.9910112746181052,
];

/// The 6 × 9 boundary block of the sixth-order operator as a function of the free parameter x₁:
/// entry `(p, q, r, s)` is `(p/q)·x₁ + r/s` (every entry is affine in x₁, so the SBP property
/// holds for any value). Exact rationals, so that tests can check the operator exactly.
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const SIXTH_ORDER_BLOCK: [[(i64, i64, i64, i64); 9]; 6] = [
    [
        (0, 1, -21600, 13649),
        (43200, 13649, -7624, 40947),
        (-172800, 13649, 715489, 81894),
        (259200, 13649, -187917, 13649),
        (-172800, 13649, 735635, 81894),
        (43200, 13649, -89387, 40947),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (-8640, 12013, 7624, 180195),
        (0, 1, 0, 1),
        (86400, 12013, -57139, 12013),
        (-172800, 12013, 745733, 72078),
        (129600, 12013, -91715, 12013),
        (-34560, 12013, 240569, 120130),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (17280, 2711, -715489, 162660),
        (-43200, 2711, 57139, 5422),
        (0, 1, 0, 1),
        (86400, 2711, -176839, 8133),
        (-86400, 2711, 242111, 10844),
        (25920, 2711, -182261, 27110),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (-25920, 5359, 187917, 53590),
        (86400, 5359, -745733, 64308),
        (-86400, 5359, 176839, 16077),
        (0, 1, 0, 1),
        (43200, 5359, -165041, 32154),
        (-17280, 5359, 710473, 321540),
        (0, 1, 72, 5359),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (34560, 7877, -147127, 47262),
        (-129600, 7877, 91715, 7877),
        (172800, 7877, -242111, 15754),
        (-86400, 7877, 165041, 23631),
        (0, 1, 0, 1),
        (8640, 7877, 0, 1),
        (0, 1, -1296, 7877),
        (0, 1, 144, 7877),
        (0, 1, 0, 1),
    ],
    [
        (-43200, 43801, 89387, 131403),
        (172800, 43801, -240569, 87602),
        (-259200, 43801, 182261, 43801),
        (172800, 43801, -710473, 262806),
        (-43200, 43801, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 32400, 43801),
        (0, 1, -6480, 43801),
        (0, 1, 720, 43801),
    ],
];

/// The norm weights of the sixth-order operator, `(p, q)` for `p/q`.
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const SIXTH_ORDER_NORM: [(i64, i64); 6] =
    [(13649, 43200), (12013, 8640), (2711, 4320), (5359, 4320), (7877, 8640), (43801, 43200)];

/// The free parameter x₁ of the sixth-order operator, `(p, q)` for `p/q`: 342523/518400, the
/// value of Mattsson & Nordström (2004), also used by InductionEq and SummationByPartsOperators.jl.
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const SIXTH_ORDER_X1: (i64, i64) = (342523, 518400);

/// The sixth-order boundary block in f64: each entry `(p/q)·x₁ + r/s` summed exactly as one
/// fraction of integers and then divided once, so it is the exact value correctly rounded (the
/// two terms nearly cancel in some entries, and summing them in f64 lost up to 10 ulp).
pub(super) fn sixth_order_block() -> Vec<Vec<f64>> {
    let (xn, xd) = (SIXTH_ORDER_X1.0 as i128, SIXTH_ORDER_X1.1 as i128);
    SIXTH_ORDER_BLOCK
        .iter()
        .map(|row| {
            row.iter()
                .map(|&(p, q, r, s)| {
                    let (p, q, r, s) = (p as i128, q as i128, r as i128, s as i128);
                    // Numerator and denominator stay below 2⁵³ here, so both convert exactly.
                    let num = p * xn * s + r * q * xd;
                    let den = q * xd * s;
                    num as f64 / den as f64
                })
                .collect()
        })
        .collect()
}
