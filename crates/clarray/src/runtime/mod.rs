//! The runtime layer: the only place with `unsafe` code and calls into `opencl3`.
//!
//! It wraps OpenCL's objects (platforms, devices, contexts, queues, events, buffers, images,
//! pinned memory, programs and kernels) in safe types, and checks every argument that the
//! soundness of a call depends on (ranges, pitches, argument kinds) before the call is made.
//!
//! See the example in the [crate docs](crate).

#![allow(unsafe_code)]

mod argcheck;
pub mod args;
pub(crate) mod argtype;
pub mod buffer;
mod buffer_io;
pub mod context;
pub mod device;
mod dims;
pub mod event;
pub mod image;
mod image_copy;
pub mod kernel;
pub mod launch;
pub mod pinned;
pub mod probe;
pub mod program;
pub(crate) mod record;
pub mod rect;
mod scope;
mod status;
pub mod track;
pub mod transfer;

pub use args::{Bytes, KernelArg, KernelArgs, Local};
pub(crate) use argtype::code_only;
pub(crate) use buffer::check_alloc_size;
pub use buffer::{Access, Buffer};
pub use buffer::{Block, Recycle};
#[doc(hidden)]
pub use context::live_contexts;
pub use context::{Context, ContextBuilder, Limit, Queue, CHECK_LAUNCHES_ENV, PROFILE_ENV};
pub use device::{
    choose, choose_for_rank, default_device, device_for_rank, devices, local_rank_from_env, platforms,
    Device, DeviceInfo, DeviceType, PlatformInfo, DEVICE_ENV,
};
pub use event::{wait_all, After, Event, EventStatus, ProfileTimes};
pub use image::{ChannelOrder, ChannelType, Image, ImageFormat};
pub(crate) use kernel::StoredKernel;
pub use kernel::{opencl_type_size, AddressSpace, Arg, ArgInfo, Kernel};
pub use launch::{BareLaunch, Dims, Sizes};
pub use pinned::Pinned;
pub use program::Program;
pub(crate) use program::StoredProgram;
pub use rect::RectSide;
pub use scope::Scope;
pub use track::{Command, CommandKind, CommandRecord, RecordLog};
pub use transfer::{HostSink, HostSource, Pending};
