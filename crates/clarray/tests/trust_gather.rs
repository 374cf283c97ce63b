//! take / put, boolean masks, nonzero / argwhere: regression tests named after the defects they
//! pin down, and random shapes, views (offsets, steps, negative steps, transposes) and element
//! types checked against host references written here (NumPy's rules spelt out in loops over
//! the base arrays' host copies, through each view's own shape, strides and offset).

mod common;

use clarray::array::{s, Array, Element, SliceInfoElem};
use clarray::reduce::Index;
use clarray::{Context, Error};
use common::{assert_msg, expect_err, shared_ctx, POISON};
use half::f16;
use num_complex::Complex;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

// ---- host side ----

/// Element types under test: a random value (zero with probability `zeros`; floats are
/// sometimes -0.0 or NaN) and NumPy's truth of a value.
trait Val: Element + std::fmt::Debug {
    fn gen(r: &mut StdRng, zeros: f64) -> Self;
    fn nonzero(self) -> bool;
}

fn bits<T: Element>(v: T) -> Vec<u8> {
    bytemuck::bytes_of(&v.to_repr()).to_vec()
}

macro_rules! int_val {
    ($($t:ty),*) => {$(
        impl Val for $t {
            fn gen(r: &mut StdRng, zeros: f64) -> Self {
                if r.random_bool(zeros) { 0 } else { r.random() }
            }
            fn nonzero(self) -> bool { self != 0 }
        }
    )*};
}
int_val!(i8, u8, i16, u16, i32, u32, i64, u64);

impl Val for bool {
    fn gen(r: &mut StdRng, zeros: f64) -> Self {
        !r.random_bool(zeros)
    }
    fn nonzero(self) -> bool {
        self
    }
}

fn gen_f64(r: &mut StdRng, zeros: f64) -> f64 {
    if r.random_bool(zeros) {
        if r.random_bool(0.5) {
            -0.0
        } else {
            0.0
        }
    } else if r.random_bool(0.05) {
        f64::NAN
    } else {
        r.random_range(-100.0..100.0)
    }
}

impl Val for f16 {
    fn gen(r: &mut StdRng, zeros: f64) -> Self {
        f16::from_f64(gen_f64(r, zeros))
    }
    fn nonzero(self) -> bool {
        self.to_f32() != 0.0
    }
}
impl Val for f32 {
    fn gen(r: &mut StdRng, zeros: f64) -> Self {
        gen_f64(r, zeros) as f32
    }
    fn nonzero(self) -> bool {
        self != 0.0
    }
}
impl Val for f64 {
    fn gen(r: &mut StdRng, zeros: f64) -> Self {
        gen_f64(r, zeros)
    }
    fn nonzero(self) -> bool {
        self != 0.0
    }
}
impl Val for Complex<f32> {
    fn gen(r: &mut StdRng, zeros: f64) -> Self {
        // Half of the zeros are 0 + 0i, half have one zero part.
        let z = zeros.sqrt();
        Complex::new(gen_f64(r, z) as f32, gen_f64(r, z) as f32)
    }
    fn nonzero(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
}
impl Val for Complex<f64> {
    fn gen(r: &mut StdRng, zeros: f64) -> Self {
        let z = zeros.sqrt();
        Complex::new(gen_f64(r, z), gen_f64(r, z))
    }
    fn nonzero(self) -> bool {
        self.re != 0.0 || self.im != 0.0
    }
}

/// The elements of view `v` in C order, read from `base` (the host copy of its buffer from
/// element 0) through the view's own shape, strides and offset.
fn host_view<T: Copy, U: Element>(base: &[T], v: &Array<U>) -> Vec<T> {
    let (shape, strides) = (v.shape(), v.strides());
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        let off = v.offset() as isize + idx.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
        out.push(base[off as usize]);
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// The buffer position of element `flat` (C order) of view `v`.
fn host_position<U: Element>(v: &Array<U>, mut flat: usize) -> usize {
    let mut off = v.offset() as isize;
    for k in (0..v.ndim()).rev() {
        off += (flat % v.shape()[k]) as isize * v.strides()[k];
        flat /= v.shape()[k];
    }
    off as usize
}

/// A view of exactly `shape` into a larger base array of random values: every axis has a
/// random offset and a step of ±1 or ±2, and the axes are stored in a random order (the view
/// is a transpose of the base when that order is not the identity). Returns the view, the
/// base and the base's host copy.
fn random_view<T: Val>(
    ctx: &Context,
    r: &mut StdRng,
    shape: &[usize],
    zeros: f64,
) -> (Array<T>, Array<T>, Vec<T>) {
    random_view_with(ctx, r, shape, |r| T::gen(r, zeros))
}

fn random_view_with<T: Element>(
    ctx: &Context,
    r: &mut StdRng,
    shape: &[usize],
    mut gen: impl FnMut(&mut StdRng) -> T,
) -> (Array<T>, Array<T>, Vec<T>) {
    let nd = shape.len();
    let mut perm: Vec<usize> = (0..nd).collect();
    if r.random_bool(0.5) {
        for i in (1..nd).rev() {
            perm.swap(i, r.random_range(0..=i));
        }
    }
    // Per target axis: offset, extent needed, step.
    let plan: Vec<(usize, usize, isize)> = shape
        .iter()
        .map(|&n| {
            let step: isize = [1, 1, 2, -1, -2][r.random_range(0..5)];
            let need = if n == 0 { 0 } else { (n - 1) * step.unsigned_abs() + 1 };
            (r.random_range(0..3), need, step)
        })
        .collect();
    let base_shape: Vec<usize> = perm.iter().map(|&k| plan[k].0 + plan[k].1 + r.random_range(0..2)).collect();
    let len: usize = base_shape.iter().product();
    let host: Vec<T> = (0..len).map(|_| gen(r)).collect();
    let base = Array::from_slice(ctx, &host, &base_shape).unwrap();
    let info: Vec<SliceInfoElem> = perm
        .iter()
        .map(|&k| {
            let (off, need, step) = plan[k];
            SliceInfoElem::Slice { start: off as isize, end: Some((off + need) as isize), step }
        })
        .collect();
    let sliced = base.slice(info).unwrap();
    let mut inv = vec![0isize; nd];
    for (i, &k) in perm.iter().enumerate() {
        inv[k] = i as isize;
    }
    let view = sliced.permute(&inv).unwrap();
    assert_eq!(view.shape(), shape);
    (view, base, host)
}

fn random_shape(r: &mut StdRng, max_nd: usize) -> Vec<usize> {
    let nd = r.random_range(0..=max_nd);
    (0..nd).map(|_| [0, 1, 1, 2, 3, 5, 7][r.random_range(0..7)]).collect()
}

/// Leaves a block of `bytes` bytes full of `POISON` in the pool, so that the next result of
/// that size is likely to start as poison rather than as zeros or old results.
fn poison_pool(ctx: &Context, bytes: usize) {
    drop(Array::<u8>::full(ctx, &[bytes.max(1)], POISON).unwrap());
}

fn assert_bits_eq<T: Element + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(bits(*g), bits(*w), "{what}: element {i}: got {g:?}, want {w:?}");
    }
}

/// Index values for an axis of length `n` as `I`: in `-n..n` for signed types, `0..n` for
/// unsigned ones.
trait Idx: Index + Copy + std::fmt::Debug {
    const SIGNED: bool;
    fn from_i64(v: i64) -> Self;
    fn to_i64(self) -> i64;
}
impl Idx for i32 {
    const SIGNED: bool = true;
    fn from_i64(v: i64) -> Self {
        v as i32
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
}
impl Idx for i64 {
    const SIGNED: bool = true;
    fn from_i64(v: i64) -> Self {
        v
    }
    fn to_i64(self) -> i64 {
        self
    }
}
impl Idx for u32 {
    const SIGNED: bool = false;
    fn from_i64(v: i64) -> Self {
        v as u32
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
}
impl Idx for u64 {
    const SIGNED: bool = false;
    fn from_i64(v: i64) -> Self {
        v as u64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
}

fn gen_index<I: Idx>(r: &mut StdRng, n: usize) -> I {
    let p = r.random_range(0..n) as i64;
    I::from_i64(if I::SIGNED && r.random_bool(0.5) { p - n as i64 } else { p })
}

fn normalise(v: i64, n: usize) -> usize {
    (if v < 0 { v + n as i64 } else { v }) as usize
}

// ---- regression tests ----

#[test]
fn take_honours_index_view_offset() {
    let ctx = shared_ctx();
    let a = Array::<f32>::from_slice(&ctx, &[10.0, 11.0, 12.0, 13.0, 14.0, 15.0], &[6]).unwrap();
    let idx = Array::<i64>::from_slice(&ctx, &[0, 1, 2, 5, -2, 3], &[6]).unwrap();
    let got = a.take(&idx.slice(s![3..]).unwrap(), 0).unwrap();
    assert_eq!(got.to_vec().unwrap(), vec![15.0, 14.0, 13.0]);
    // 2-D index view with an offset in both axes.
    let idx2 = Array::<i32>::from_slice(&ctx, &[9, 9, 9, 9, 0, 1, 9, 4, 5], &[3, 3]).unwrap();
    let got = a.take(&idx2.slice(s![1.., 1..]).unwrap(), 0).unwrap();
    assert_eq!(got.shape(), &[2, 2]);
    assert_eq!(got.to_vec().unwrap(), vec![10.0, 11.0, 14.0, 15.0]);
}

#[test]
fn take_bounds_check_uses_the_index_view_offset() {
    let ctx = shared_ctx();
    let a = Array::<i32>::from_slice(&ctx, &[1, 2, 3, 4], &[4]).unwrap();
    // The bad index lies inside the view, the prefix before it is valid.
    let idx = Array::<i64>::from_slice(&ctx, &[0, 1, 2, 99, 1], &[5]).unwrap();
    let e = expect_err(a.take(&idx.slice(s![3..]).unwrap(), 0));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e}");
    assert_msg(&e, &["index 99 at position 0", "valid: -4..=3"]);
    // The bad index lies before the view only: nothing is wrong.
    let idx = Array::<i64>::from_slice(&ctx, &[99, -7, 3, -4], &[4]).unwrap();
    let got = a.take(&idx.slice(s![2..]).unwrap(), 0).unwrap();
    assert_eq!(got.to_vec().unwrap(), vec![4, 1]);
}

#[test]
fn put_honours_index_and_value_view_offsets() {
    let ctx = shared_ctx();
    let mut a = Array::<i32>::zeros(&ctx, &[6]).unwrap();
    let idx = Array::<i64>::from_slice(&ctx, &[0, 1, 2, 5, -2], &[5]).unwrap();
    let vals = Array::<i32>::from_slice(&ctx, &[7, 8, 9, 30, 40], &[5]).unwrap();
    a.put(&idx.slice(s![3..]).unwrap(), &vals.slice(s![3..]).unwrap()).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![0, 0, 0, 0, 40, 30]);
    // The bound check reads the view too: a bad index before the view is no error, one in it is.
    let idx = Array::<i64>::from_slice(&ctx, &[99, 1], &[2]).unwrap();
    a.put(&idx.slice(s![1..]).unwrap(), &vals.slice(s![4..]).unwrap()).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![0, 40, 0, 0, 40, 30]);
    let idx = Array::<i64>::from_slice(&ctx, &[1, 99], &[2]).unwrap();
    let e = expect_err(a.put(&idx.slice(s![1..]).unwrap(), &vals));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e}");
    assert_msg(&e, &["put: index 99 at position 0", "length 6"]);
}

#[test]
fn take_checks_indices_when_the_result_is_empty() {
    let ctx = shared_ctx();
    // An empty axis before the taken one: the result is empty, the index is still bad.
    let a = Array::<f32>::zeros(&ctx, &[0, 3]).unwrap();
    let idx = Array::<i64>::from_slice(&ctx, &[1, 5], &[2]).unwrap();
    let e = expect_err(a.take(&idx, 1));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e}");
    assert_msg(&e, &["index 5 at position 1", "valid: -3..=2"]);
    // An empty axis after it.
    let b = Array::<f32>::zeros(&ctx, &[3, 0]).unwrap();
    let idx = Array::<i64>::from_slice(&ctx, &[-4], &[1]).unwrap();
    assert_msg(&expect_err(b.take(&idx, 0)), &["index -4 at position 0"]);
    // Taking from an empty axis with any index.
    let idx = Array::<u32>::from_slice(&ctx, &[0], &[1]).unwrap();
    let e = expect_err(b.take(&idx, 1));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e}");
    assert_msg(&e, &["index 0 at position 0", "length 0", "valid: none"]);
    // No indices at all is fine, also from an empty axis.
    let none = Array::<i64>::zeros(&ctx, &[0]).unwrap();
    assert_eq!(b.take(&none, 1).unwrap().shape(), &[3, 0]);
    assert_eq!(a.take(&none, 1).unwrap().shape(), &[0, 0]);
}

#[test]
fn take_reports_every_out_of_range_index_form() {
    let ctx = shared_ctx();
    let a = Array::<u16>::from_slice(&ctx, &[1, 2, 3], &[3]).unwrap();
    // -n..n is valid (NumPy's mode='raise'); -n-1 and n are not, nor are the extremes.
    let ok = Array::<i64>::from_slice(&ctx, &[-3, -1, 0, 2], &[4]).unwrap();
    assert_eq!(a.take(&ok, 0).unwrap().to_vec().unwrap(), vec![1, 3, 1, 3]);
    for bad in [-4i64, 3, i64::MIN, i64::MAX] {
        let idx = Array::<i64>::from_slice(&ctx, &[0, bad], &[2]).unwrap();
        assert_msg(&expect_err(a.take(&idx, 0)), &[&format!("index {bad} at position 1")]);
    }
    for bad in [3u64, u64::MAX] {
        let idx = Array::<u64>::from_slice(&ctx, &[bad, 1], &[2]).unwrap();
        assert_msg(&expect_err(a.take(&idx, 0)), &[&format!("index {bad} at position 0")]);
    }
    // The first bad position in C order of the index view is the one named: the transpose of
    // [[0, 7], [1, -9]] is [[0, 1], [7, -9]].
    let idx = Array::<i32>::from_slice(&ctx, &[0, 7, 1, -9], &[2, 2]).unwrap();
    assert_msg(&expect_err(a.take(&idx.t(), 0)), &["index 7 at position 2"]);
}

#[test]
fn take_and_put_move_f16_bits_without_cl_khr_fp16() {
    let ctx = shared_ctx();
    let data: Vec<f16> = [1.5, -0.0, 65504.0, f64::NAN, 1e-7].iter().map(|&v| f16::from_f64(v)).collect();
    let a = Array::<f16>::from_slice(&ctx, &data, &[5]).unwrap();
    let idx = Array::<i32>::from_slice(&ctx, &[4, 3, 1, 0], &[4]).unwrap();
    let got = a.take(&idx, 0).unwrap().to_vec().unwrap();
    assert_bits_eq(&got, &[data[4], data[3], data[1], data[0]], "take");
    let mut b = Array::<f16>::zeros(&ctx, &[5]).unwrap();
    b.put(&idx, &a).unwrap();
    let mut want = vec![f16::ZERO; 5];
    for (j, &i) in [4usize, 3, 1, 0].iter().enumerate() {
        want[i] = data[j];
    }
    assert_bits_eq(&b.to_vec().unwrap(), &want, "put");
}

#[test]
fn put_cycles_values_like_numpy() {
    let ctx = shared_ctx();
    let idx = Array::<i64>::from_slice(&ctx, &[0, 2, 4, 6, 7], &[5]).unwrap();
    // Fewer values than indices repeat.
    let mut a = Array::<i32>::zeros(&ctx, &[8]).unwrap();
    a.put(&idx, &Array::from_slice(&ctx, &[1, 2], &[2]).unwrap()).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![1, 0, 2, 0, 1, 0, 2, 1]);
    // More values than indices: the first ones are used.
    let mut a = Array::<i32>::zeros(&ctx, &[8]).unwrap();
    let many = Array::from_slice(&ctx, &[1, 2, 3, 4, 5, 6, 7], &[7]).unwrap();
    a.put(&idx, &many).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![1, 0, 2, 0, 3, 0, 4, 5]);
    // No values for some indices is an error.
    let e = expect_err(a.put(&idx, &Array::<i32>::zeros(&ctx, &[0]).unwrap()));
    assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[vec![0], vec![5]]), "{e}");
    assert_msg(&e, &["0 values at 5 indices"]);
}

#[test]
fn put_into_a_broadcast_view_is_an_error() {
    let ctx = shared_ctx();
    let a = Array::<f32>::from_slice(&ctx, &[1.0, 2.0, 3.0], &[3]).unwrap();
    let mut b = a.broadcast_to(&[4, 3]).unwrap();
    let idx = Array::<i64>::from_slice(&ctx, &[0, 4], &[2]).unwrap();
    let vals = Array::<f32>::from_slice(&ctx, &[9.0, 8.0], &[2]).unwrap();
    let e = expect_err(b.put(&idx, &vals));
    assert!(matches!(&e, Error::ReadOnlyView { shape, axis: 0 } if shape == &[4, 3]), "{e}");
    assert_msg(&e, &["broadcast view"]);
    assert_eq!(a.to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
}

#[test]
fn put_reads_indices_and_values_that_alias_the_target_as_they_were() {
    let ctx = shared_ctx();
    let n = 4096usize;
    // Values that are the target itself: a shift by one, a[(j + 1) % n] = a[j] (a work-item
    // that read a value another one had already written would smear a[0] along the array).
    let host: Vec<i64> = (0..n as i64).map(|v| v * 3 + 1).collect();
    let mut a = Array::<i64>::from_slice(&ctx, &host, &[n]).unwrap();
    let shift: Vec<i64> = (0..n as i64).map(|j| (j + 1) % n as i64).collect();
    let idx = Array::<i64>::from_slice(&ctx, &shift, &[n]).unwrap();
    let vals = a.clone();
    a.put(&idx, &vals).unwrap();
    let mut want = host.clone();
    for j in 0..n {
        want[shift[j] as usize] = host[j];
    }
    assert_eq!(a.to_vec().unwrap(), want, "values in the target");
    // Indices that are the target itself: a[a[j]] = j with a[j] = (j + 1) % n.
    let mut a = Array::<i64>::from_slice(&ctx, &shift, &[n]).unwrap();
    let idx = a.clone();
    let vals = Array::<i64>::from_slice(&ctx, &(0..n as i64).collect::<Vec<_>>(), &[n]).unwrap();
    a.put(&idx, &vals).unwrap();
    let mut want = shift.clone();
    for j in 0..n {
        want[shift[j] as usize] = j as i64;
    }
    assert_eq!(a.to_vec().unwrap(), want, "indices in the target");
}

/// The byte alignment of sub-buffer origins on this device.
fn sub_align(ctx: &Context) -> usize {
    ctx.device().info().mem_base_addr_align_bytes.max(1) as usize
}

#[test]
fn put_copies_indices_and_values_in_a_sub_buffer_of_the_target() {
    let ctx = shared_ctx();
    let n = 4096usize;
    let skip = sub_align(&ctx).div_ceil(8);
    let m = n - skip;
    // Values over a sub-buffer of the target's memory, from element `skip` on: a[(j + skip + 1)
    // % n] = a[skip + j], read before any write (NumPy's semantics).
    let host: Vec<i64> = (0..n as i64).map(|v| v * 3 + 1).collect();
    let mut a = Array::<i64>::from_slice(&ctx, &host, &[n]).unwrap();
    let sub = a.buffer().sub_buffer(skip * 8, m * 8).unwrap();
    let vals = Array::<i64>::from_buffer(&sub, &[m], &[1], 0).unwrap();
    let dest: Vec<i64> = (0..m).map(|j| ((j + skip + 1) % n) as i64).collect();
    let idx = Array::<i64>::from_slice(&ctx, &dest, &[m]).unwrap();
    a.put(&idx, &vals).unwrap();
    let mut want = host.clone();
    for j in 0..m {
        want[dest[j] as usize] = host[skip + j];
    }
    assert_eq!(a.to_vec().unwrap(), want, "values in a sub-buffer of the target");
    // Indices over a sub-buffer of the target's memory: a[a[j]] = j with a[j] = (j + 1) % n.
    let shift: Vec<i64> = (0..n as i64).map(|j| (j + 1) % n as i64).collect();
    let mut a = Array::<i64>::from_slice(&ctx, &shift, &[n]).unwrap();
    let sub = a.buffer().sub_buffer(0, n * 8).unwrap();
    let idx = Array::<i64>::from_buffer(&sub, &[n], &[1], 0).unwrap();
    let vals = Array::<i64>::from_slice(&ctx, &(0..n as i64).collect::<Vec<_>>(), &[n]).unwrap();
    a.put(&idx, &vals).unwrap();
    let mut want = shift.clone();
    for j in 0..n {
        want[shift[j] as usize] = j as i64;
    }
    assert_eq!(a.to_vec().unwrap(), want, "indices in a sub-buffer of the target");
}

// ---- reference-checked random tests ----

fn check_take<T: Val, I: Idx>(ctx: &Context, r: &mut StdRng) {
    let shape = {
        let mut s = random_shape(r, 3);
        if s.is_empty() {
            s.push(4);
        }
        s
    };
    let axis = r.random_range(0..shape.len());
    let n = shape[axis];
    let ishape = random_shape(r, 2);
    let (a, _, ahost) = random_view::<T>(ctx, r, &shape, 0.2);
    let (idx, _, ihost) =
        random_view_with::<I>(ctx, r, &ishape, |r| if n == 0 { I::from_i64(0) } else { gen_index(r, n) });
    let av = host_view(&ahost, &a);
    let iv: Vec<usize> = host_view(&ihost, &idx).iter().map(|i| normalise(i.to_i64(), n)).collect();
    let mut out_shape = shape[..axis].to_vec();
    out_shape.extend_from_slice(&ishape);
    out_shape.extend_from_slice(&shape[axis + 1..]);
    let what = format!("take {} by {} along {axis}: a {a:?}, idx {idx:?}", T::DTYPE, I::DTYPE);
    let out_len: usize = out_shape.iter().product();
    poison_pool(ctx, out_len * T::DTYPE.size());
    let got = a.take(&idx, axis as isize);
    if n == 0 && !iv.is_empty() {
        let e = got.expect_err(&what);
        assert!(matches!(e, Error::OutOfBounds(_)), "{what}: {e}");
        return;
    }
    let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.shape(), out_shape.as_slice(), "{what}");
    let pre: usize = shape[..axis].iter().product();
    let post: usize = shape[axis + 1..].iter().product();
    let mut want = Vec::with_capacity(out_len);
    for p in 0..pre {
        for &i in &iv {
            for q in 0..post {
                want.push(av[(p * n + i) * post + q]);
            }
        }
    }
    assert_bits_eq(&got.to_vec().unwrap(), &want, &what);
}

fn check_put<T: Val, I: Idx>(ctx: &Context, r: &mut StdRng) {
    let shape = random_shape(r, 3);
    let (mut a, base, bhost) = random_view::<T>(ctx, r, &shape, 0.1);
    let n = a.len();
    let ishape = if n == 0 { vec![0] } else { random_shape(r, 2) };
    let (idx, _, ihost) = random_view_with::<I>(ctx, r, &ishape, |r| gen_index(r, n.max(1)));
    let nvals = if idx.is_empty() { r.random_range(0..3) } else { r.random_range(1..=2 * idx.len()) };
    let (vals, _, vhost) = random_view::<T>(ctx, r, &[nvals], 0.1);
    let iv: Vec<usize> = host_view(&ihost, &idx).iter().map(|i| normalise(i.to_i64(), n)).collect();
    let vv = host_view(&vhost, &vals);
    let what = format!("put {} by {}: a {a:?}, idx {idx:?}, vals {vals:?}", T::DTYPE, I::DTYPE);
    a.put(&idx, &vals).unwrap_or_else(|e| panic!("{what}: {e}"));
    // Every position of the base buffer: untouched unless an index names it; then one of the
    // values given for it (which one is unspecified for repeated indices).
    let mut cands: Vec<Vec<T>> = bhost.iter().map(|&v| vec![v]).collect();
    let mut named = vec![false; bhost.len()];
    for (j, &i) in iv.iter().enumerate() {
        let pos = host_position(&a, i);
        if !named[pos] {
            named[pos] = true;
            cands[pos].clear();
        }
        cands[pos].push(vv[j % vv.len()]);
    }
    let got = base.to_vec().unwrap();
    // A non-contiguous value view is copied first by the elementwise copy, which moves f16
    // through float where the device lacks cl_khr_fp16 and so may quiet a NaN's payload: any
    // NaN stands for any NaN there (bits are compared everywhere else).
    let nan = |x: &T| format!("{x:?}").contains("NaN");
    for (pos, g) in got.iter().enumerate() {
        let gb = bits(*g);
        if nan(g) && cands[pos].iter().any(nan) {
            continue;
        }
        // 8-byte pieces: a 16-byte element's halves may come from different values.
        for (c, chunk) in gb.chunks(8).enumerate() {
            assert!(
                cands[pos].iter().any(|w| bits(*w).chunks(8).nth(c) == Some(chunk)),
                "{what}: base element {pos} is {g:?}, want one of {:?}",
                cands[pos]
            );
        }
    }
}

fn check_mask<T: Val>(ctx: &Context, r: &mut StdRng) {
    let shape = random_shape(r, 3);
    let (a, _, ahost) = random_view::<T>(ctx, r, &shape, 0.2);
    let density = [0.0, 0.1, 0.5, 1.0][r.random_range(0..4)];
    let (m, _, mhost) = random_view_with::<bool>(ctx, r, &shape, |r| r.random_bool(density));
    let av = host_view(&ahost, &a);
    let mv = host_view(&mhost, &m);
    let want: Vec<T> = av.iter().zip(&mv).filter(|(_, &k)| k).map(|(&v, _)| v).collect();
    let what = format!("mask {}: a {a:?}, m {m:?}", T::DTYPE);
    poison_pool(ctx, want.len() * T::DTYPE.size());
    let got = a.mask(&m).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.shape(), &[want.len()], "{what}");
    assert_bits_eq(&got.to_vec().unwrap(), &want, &what);
}

fn check_set_where<T: Val>(ctx: &Context, r: &mut StdRng) {
    let shape = random_shape(r, 3);
    let (mut a, base, bhost) = random_view::<T>(ctx, r, &shape, 0.2);
    let (m, _, mhost) = random_view_with::<bool>(ctx, r, &shape, |r| r.random_bool(0.4));
    let value = T::gen(r, 0.2);
    let mv = host_view(&mhost, &m);
    let mut want = bhost.clone();
    for (i, &k) in mv.iter().enumerate() {
        if k {
            want[host_position(&a, i)] = value;
        }
    }
    let what = format!("set_where {}: a {a:?}, m {m:?}, value {value:?}", T::DTYPE);
    a.set_where(&m, value).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_bits_eq(&base.to_vec().unwrap(), &want, &what);
}

fn check_nonzero<T: Val>(ctx: &Context, r: &mut StdRng) {
    let shape = random_shape(r, 3);
    let zeros = [0.0, 0.5, 0.9, 1.0][r.random_range(0..4)];
    let (a, _, ahost) = random_view::<T>(ctx, r, &shape, zeros);
    let av = host_view(&ahost, &a);
    let nd = shape.len();
    // Coordinates of the nonzero elements, C order.
    let mut coords: Vec<Vec<i64>> = Vec::new();
    for (flat, v) in av.iter().enumerate() {
        if v.nonzero() {
            let mut c = vec![0i64; nd];
            let mut t = flat;
            for k in (0..nd).rev() {
                c[k] = (t % shape[k]) as i64;
                t /= shape[k];
            }
            coords.push(c);
        }
    }
    let what = format!("nonzero {}: a {a:?}", T::DTYPE);
    poison_pool(ctx, coords.len() * nd * 8);
    let w = a.argwhere().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(w.shape(), &[coords.len(), nd], "{what}");
    assert_eq!(w.to_vec().unwrap(), coords.concat(), "{what}: argwhere");
    if nd == 0 {
        let e = expect_err(a.nonzero());
        assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[Vec::<usize>::new()]), "{e}");
        assert_msg(&e, &["0-d array", "argwhere"]);
        return;
    }
    poison_pool(ctx, coords.len() * nd * 8);
    let per_axis = a.nonzero().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(per_axis.len(), nd, "{what}");
    for (k, got) in per_axis.iter().enumerate() {
        let want: Vec<i64> = coords.iter().map(|c| c[k]).collect();
        assert_eq!(got.shape(), &[want.len()], "{what}: axis {k}");
        assert_eq!(got.to_vec().unwrap(), want, "{what}: axis {k}");
    }
}

/// Runs `$f::<T, ...>` for the element type numbered `$dt`.
macro_rules! for_dtype {
    ($dt:expr, $f:ident $(, $extra:ty)* ; $($arg:expr),*) => {
        match $dt {
            0 => $f::<bool $(, $extra)*>($($arg),*),
            1 => $f::<i8 $(, $extra)*>($($arg),*),
            2 => $f::<u16 $(, $extra)*>($($arg),*),
            3 => $f::<i32 $(, $extra)*>($($arg),*),
            4 => $f::<i64 $(, $extra)*>($($arg),*),
            5 => $f::<f16 $(, $extra)*>($($arg),*),
            6 => $f::<f32 $(, $extra)*>($($arg),*),
            7 => $f::<f64 $(, $extra)*>($($arg),*),
            8 => $f::<Complex<f32> $(, $extra)*>($($arg),*),
            9 => $f::<Complex<f64> $(, $extra)*>($($arg),*),
            10 => $f::<u8 $(, $extra)*>($($arg),*),
            11 => $f::<i16 $(, $extra)*>($($arg),*),
            12 => $f::<u32 $(, $extra)*>($($arg),*),
            _ => $f::<u64 $(, $extra)*>($($arg),*),
        }
    };
}

fn with_index<T: Val>(it: usize, f: &str, ctx: &Context, r: &mut StdRng) {
    match (it, f) {
        (0, "take") => check_take::<T, i32>(ctx, r),
        (1, "take") => check_take::<T, i64>(ctx, r),
        (2, "take") => check_take::<T, u32>(ctx, r),
        (_, "take") => check_take::<T, u64>(ctx, r),
        (0, _) => check_put::<T, i32>(ctx, r),
        (1, _) => check_put::<T, i64>(ctx, r),
        (2, _) => check_put::<T, u32>(ctx, r),
        (_, _) => check_put::<T, u64>(ctx, r),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn take_matches_a_host_gather_over_views_and_dtypes(dt in 0usize..14, it in 0usize..4, seed in any::<u64>()) {
        let mut r = StdRng::seed_from_u64(seed);
        for_dtype!(dt, with_index; it, "take", &shared_ctx(), &mut r);
    }

    #[test]
    fn put_matches_a_host_scatter_over_views_and_dtypes(dt in 0usize..14, it in 0usize..4, seed in any::<u64>()) {
        let mut r = StdRng::seed_from_u64(seed);
        for_dtype!(dt, with_index; it, "put", &shared_ctx(), &mut r);
    }

    #[test]
    fn mask_matches_a_host_compaction_over_views_and_dtypes(dt in 0usize..14, seed in any::<u64>()) {
        let mut r = StdRng::seed_from_u64(seed);
        for_dtype!(dt, check_mask; &shared_ctx(), &mut r);
    }

    #[test]
    fn set_where_matches_a_host_masked_fill_over_views_and_dtypes(dt in 0usize..14, seed in any::<u64>()) {
        let mut r = StdRng::seed_from_u64(seed);
        for_dtype!(dt, check_set_where; &shared_ctx(), &mut r);
    }

    #[test]
    fn nonzero_and_argwhere_match_host_coordinates(dt in 0usize..14, seed in any::<u64>()) {
        let mut r = StdRng::seed_from_u64(seed);
        for_dtype!(dt, check_nonzero; &shared_ctx(), &mut r);
    }
}

// ---- long lines (the scan's multi-block path) and errors ----

#[test]
fn mask_and_nonzero_of_long_lines_cross_scan_blocks() {
    let ctx = shared_ctx();
    let mut r = StdRng::seed_from_u64(7);
    // 3 × 40000: longer than one scan block of 4096, in a transposed view.
    let host: Vec<f32> =
        (0..120_000).map(|_| if r.random_bool(0.3) { r.random_range(1.0..2.0) } else { 0.0 }).collect();
    let base = Array::<f32>::from_slice(&ctx, &host, &[40_000, 3]).unwrap();
    let a = base.t();
    let av = host_view(&host, &a);
    let m: Array<bool> = a.greater(1.5f32).eval().unwrap();
    let want: Vec<f32> = av.iter().copied().filter(|&v| v > 1.5).collect();
    assert_eq!(a.mask(&m).unwrap().to_vec().unwrap(), want);
    let nz = a.nonzero().unwrap();
    let flat: Vec<usize> = av.iter().enumerate().filter(|(_, &v)| v != 0.0).map(|(i, _)| i).collect();
    assert_eq!(nz[0].to_vec().unwrap(), flat.iter().map(|&i| (i / 40_000) as i64).collect::<Vec<_>>());
    assert_eq!(nz[1].to_vec().unwrap(), flat.iter().map(|&i| (i % 40_000) as i64).collect::<Vec<_>>());
}

#[test]
fn masks_of_another_shape_and_broadcast_targets_are_errors() {
    let ctx = shared_ctx();
    let a = Array::<f32>::zeros(&ctx, &[2, 3]).unwrap();
    let m = Array::<bool>::full(&ctx, &[3, 2], true).unwrap();
    let e = expect_err(a.mask(&m));
    assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[vec![3, 2], vec![2, 3]]), "{e}");
    assert_msg(&e, &["mask of shape [3, 2]", "array of shape [2, 3]"]);
    let mut b = a.clone();
    let e = expect_err(b.set_where(&m, 1.0));
    assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[vec![3, 2], vec![2, 3]]), "{e}");
    assert_msg(&e, &["set_where", "[3, 2]"]);
    let row = Array::<f32>::zeros(&ctx, &[3]).unwrap();
    let mut bc = row.broadcast_to(&[2, 3]).unwrap();
    let e = expect_err(bc.set_where(&m.t(), 1.0));
    assert!(matches!(&e, Error::ReadOnlyView { shape, axis: 0 } if shape == &[2, 3]), "{e}");
    assert_msg(&e, &["broadcast view"]);
    assert_eq!(row.to_vec().unwrap(), vec![0.0; 3]);
}

#[test]
fn set_where_with_a_mask_in_the_target_memory() {
    let ctx = shared_ctx();
    let n = 4096usize;
    let mut r = StdRng::seed_from_u64(11);
    let host: Vec<bool> = (0..n).map(|_| r.random_bool(0.5)).collect();
    let mut a = Array::<bool>::from_slice(&ctx, &host, &[n]).unwrap();
    // Clear every element whose mirror image is set: the mask is the target read backwards.
    let m = a.flip(0).unwrap();
    a.set_where(&m, false).unwrap();
    let want: Vec<bool> = (0..n).map(|i| host[i] && !host[n - 1 - i]).collect();
    assert_eq!(a.to_vec().unwrap(), want);
}

#[test]
fn set_where_copies_a_mask_in_a_sub_buffer_of_the_target() {
    let ctx = shared_ctx();
    let n = 4096usize;
    let skip = sub_align(&ctx);
    let m = n - skip;
    let mut r = StdRng::seed_from_u64(12);
    let host: Vec<bool> = (0..n).map(|_| r.random_bool(0.5)).collect();
    let a = Array::<bool>::from_slice(&ctx, &host, &[n]).unwrap();
    // The mask is the target's last `m` elements read backwards, through a sub-buffer; the
    // target is the first `m` elements. Every mask element is read before any write.
    let sub = a.buffer().sub_buffer(skip, m).unwrap();
    let mask = Array::<bool>::from_buffer(&sub, &[m], &[1], 0).unwrap().flip(0).unwrap();
    let mut head = a.slice(s![..m as isize]).unwrap();
    head.set_where(&mask, false).unwrap();
    let mut want = host.clone();
    for i in 0..m {
        if host[skip + m - 1 - i] {
            want[i] = false;
        }
    }
    assert_eq!(a.to_vec().unwrap(), want);
}

/// The fill value is passed as the kernel's bit type: named by the NumPy type, `int8` and
/// `uint16` read as OpenCL vector types and the argument check refused them.
#[test]
fn set_where_value_argument_of_types_named_like_cl_vectors() {
    fn check<T: Val + PartialEq>(ctx: &Context, r: &mut StdRng) {
        let n = 64usize;
        let host: Vec<T> = (0..n).map(|_| T::gen(r, 0.0)).collect();
        let mh: Vec<bool> = (0..n).map(|_| r.random_bool(0.5)).collect();
        let value = T::gen(r, 0.0);
        let mut a = Array::<T>::from_slice(ctx, &host, &[n]).unwrap();
        let m = Array::<bool>::from_slice(ctx, &mh, &[n]).unwrap();
        a.set_where(&m, value).unwrap();
        let want: Vec<T> = (0..n).map(|i| if mh[i] { value } else { host[i] }).collect();
        assert_eq!(a.to_vec().unwrap(), want, "{}", T::DTYPE.name());
    }
    let ctx = shared_ctx();
    let mut r = StdRng::seed_from_u64(13);
    check::<i8>(&ctx, &mut r);
    check::<u16>(&ctx, &mut r);
    check::<i16>(&ctx, &mut r);
    check::<u8>(&ctx, &mut r);
}

/// A take from a 1-D source (the kernel that does not split the output position): a
/// negative-step view with an offset, indices from an offset view, negative ones too.
#[test]
fn take_from_a_one_dimensional_view_matches_the_host() {
    let ctx = shared_ctx();
    let host: Vec<f32> = (0..301).map(|i| i as f32 * 0.5 - 7.0).collect();
    let a = Array::<f32>::from_slice(&ctx, &host, &[301]).unwrap();
    let v = a.slice(s![5..291;-3]).unwrap(); // host[290], host[287], …, host[5]: 96 elements
    let n = v.len() as i64;
    let raw: Vec<i64> = (0..1003i64).map(|j| (j * 7919) % (2 * n) - n).collect();
    let idx = Array::<i64>::from_slice(&ctx, &raw, &[1003]).unwrap();
    let got = v.take(&idx.slice(s![3..]).unwrap(), 0).unwrap().to_vec().unwrap();
    let want: Vec<f32> =
        raw[3..].iter().map(|&i| host[290 - 3 * (if i < 0 { i + n } else { i }) as usize]).collect();
    assert_eq!(got, want);
}
