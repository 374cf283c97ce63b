//! The device side of the suite: arrays of a dtype known only at run time, moved between host
//! values ([`V`]) and clarray's typed arrays.

use std::any::Any;
use std::rc::Rc;

use clarray::array::Array;
use clarray::{Buffer, Context, DType, Element, Expr};
use half::f16;
use num_complex::Complex;

use super::reference::V;

/// Conversions between host values and elements.
pub trait HostEl: Element {
    fn to_v(self) -> V;
    fn from_v(v: V) -> Self;
}

macro_rules! host_int {
    ($($t:ty),*) => {$(impl HostEl for $t {
        fn to_v(self) -> V { V::I(self as i128) }
        fn from_v(v: V) -> Self { match v { V::I(i) => i as $t, V::B(b) => b as $t, _ => panic!("{v:?}") } }
    })*};
}
host_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl HostEl for bool {
    fn to_v(self) -> V {
        V::B(self)
    }
    fn from_v(v: V) -> Self {
        super::reference::truth(v)
    }
}
impl HostEl for f16 {
    fn to_v(self) -> V {
        V::F(self.to_f64())
    }
    fn from_v(v: V) -> Self {
        f16::from_f64(super::reference::as_f(v))
    }
}
impl HostEl for f32 {
    fn to_v(self) -> V {
        V::F(self as f64)
    }
    fn from_v(v: V) -> Self {
        super::reference::as_f(v) as f32
    }
}
impl HostEl for f64 {
    fn to_v(self) -> V {
        V::F(self)
    }
    fn from_v(v: V) -> Self {
        super::reference::as_f(v)
    }
}
impl HostEl for Complex<f32> {
    fn to_v(self) -> V {
        V::C(self.re as f64, self.im as f64)
    }
    fn from_v(v: V) -> Self {
        let (r, i) = super::reference::as_c(v);
        Complex::new(r as f32, i as f32)
    }
}
impl HostEl for Complex<f64> {
    fn to_v(self) -> V {
        V::C(self.re, self.im)
    }
    fn from_v(v: V) -> Self {
        let (r, i) = super::reference::as_c(v);
        Complex::new(r, i)
    }
}

/// Runs `$body` with `$T` the element type of the run-time dtype `$dt`.
#[macro_export]
macro_rules! with_dtype {
    ($dt:expr, $T:ident => $body:expr) => {{
        use clarray::DType as D_;
        match $dt {
            D_::Bool => {
                type $T = bool;
                $body
            }
            D_::I8 => {
                type $T = i8;
                $body
            }
            D_::I16 => {
                type $T = i16;
                $body
            }
            D_::I32 => {
                type $T = i32;
                $body
            }
            D_::I64 => {
                type $T = i64;
                $body
            }
            D_::U8 => {
                type $T = u8;
                $body
            }
            D_::U16 => {
                type $T = u16;
                $body
            }
            D_::U32 => {
                type $T = u32;
                $body
            }
            D_::U64 => {
                type $T = u64;
                $body
            }
            D_::F16 => {
                type $T = half::f16;
                $body
            }
            D_::F32 => {
                type $T = f32;
                $body
            }
            D_::F64 => {
                type $T = f64;
                $body
            }
            D_::C64 => {
                type $T = num_complex::Complex<f32>;
                $body
            }
            D_::C128 => {
                type $T = num_complex::Complex<f64>;
                $body
            }
        }
    }};
}

/// A device view of a run-time dtype: a buffer and a layout (in elements), made into an
/// `Array<T>` with [`Array::from_buffer`] when used.
#[derive(Clone)]
pub struct Dv {
    /// The `Array<T>` itself (an empty view may lie where `from_buffer` would not put it).
    arr: Rc<dyn Any>,
    pub dt: DType,
    pub shape: Vec<usize>,
    pub strides: Vec<isize>,
    pub offset: usize,
}

impl std::fmt::Debug for Dv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?} strides {:?} offset {}", self.dt, self.shape, self.strides, self.offset)
    }
}

impl Dv {
    pub fn of<T: Element>(a: &Array<T>) -> Dv {
        Dv {
            arr: Rc::new(a.clone()),
            dt: T::DTYPE,
            shape: a.shape().to_vec(),
            strides: a.strides().to_vec(),
            offset: a.offset(),
        }
    }

    pub fn array<T: Element>(&self) -> clarray::Result<Array<T>> {
        assert_eq!(T::DTYPE, self.dt);
        Ok(self.arr.downcast_ref::<Array<T>>().expect("the view's own type").clone())
    }

    pub fn expr(&self) -> Expr {
        with_dtype!(self.dt, T => self.array::<T>().expect("a valid view").expr())
    }

    /// The elements in C order.
    pub fn read(&self) -> clarray::Result<Vec<V>> {
        with_dtype!(self.dt, T => Ok(self.array::<T>()?.get()?.iter().map(|&x| x.to_v()).collect()))
    }
}

/// A buffer holding `vals` as elements of `dt`.
pub fn upload(ctx: &Context, dt: DType, vals: &[V]) -> Buffer {
    with_dtype!(dt, T => {
        let r: Vec<<T as Element>::Repr> = vals.iter().map(|&v| T::from_v(v).to_repr()).collect();
        if r.is_empty() {
            Buffer::uninit(ctx, dt.size()).expect("a buffer")
        } else {
            Buffer::from_slice(ctx, &r).expect("a buffer")
        }
    })
}

/// Every element of a buffer read as `dt`.
pub fn download(buf: &Buffer, dt: DType) -> Vec<V> {
    with_dtype!(dt, T => {
        let r: Vec<<T as Element>::Repr> = buf.to_vec().expect("a read");
        r.into_iter().map(|x| T::from_repr(x).to_v()).collect()
    })
}

/// An array of `shape` filled with `poison`, the destination of an evaluation.
pub fn poisoned(ctx: &Context, dt: DType, shape: &[usize], poison: V) -> Dv {
    with_dtype!(dt, T => Dv::of(&Array::<T>::full(ctx, shape, T::from_v(poison)).expect("an array")))
}
