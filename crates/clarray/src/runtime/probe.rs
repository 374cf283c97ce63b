//! Diagnostics below the OpenCL loader, for `clarray doctor`: can a shared library be loaded,
//! and which platforms does one OpenCL driver (ICD) report when asked directly, bypassing the
//! loader and its vendor files.
//!
//! A driver is asked the way the ICD loader asks it (the `cl_khr_icd` protocol): its
//! `clIcdGetPlatformIDsKHR` lists its platforms, and each platform's name comes through the
//! dispatch table every ICD platform object starts with.
//!
//! Loaded libraries are never unloaded: several OpenCL drivers register exit handlers or
//! threads that crash when their code is unmapped.
//!
//! See [the example in `device`](mod@crate::runtime::device).

use std::ffi::{c_char, c_void, CStr};

use libloading::Library;

/// `cl_platform_id` as the ICD protocol sees it: a pointer to an object whose first field is
/// a pointer to the driver's dispatch table.
type PlatformId = *mut c_void;
type IcdGetPlatformIds = unsafe extern "C" fn(u32, *mut PlatformId, *mut u32) -> i32;
type GetExtensionFunctionAddress = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type GetPlatformInfo = unsafe extern "C" fn(PlatformId, u32, usize, *mut c_void, *mut usize) -> i32;

const CL_SUCCESS: i32 = 0;
const CL_PLATFORM_NOT_FOUND_KHR: i32 = -1001;
const CL_PLATFORM_NAME: u32 = 0x0902;
/// Index of `clGetPlatformInfo` in the ICD dispatch table (`cl_icd_dispatch`), after
/// `clGetPlatformIDs`. Fixed by the ICD extension for every driver.
const DISPATCH_GET_PLATFORM_INFO: usize = 1;

fn open(library: &str) -> std::result::Result<Library, String> {
    // SAFETY: loading a shared library runs its initialisers. The libraries asked for here are
    // OpenCL loaders and drivers, which the OpenCL loader itself would load into this process
    // in the same way; no other code runs.
    unsafe { Library::new(library) }.map_err(|e| e.to_string())
}

/// Whether the shared library `library` (a file name searched like `dlopen` does, or a path)
/// can be loaded; the reason (the dynamic linker's message) when not. The library stays
/// loaded.
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn can_load(library: &str) -> std::result::Result<(), String> {
    std::mem::forget(open(library)?);
    Ok(())
}

/// The names of the platforms that the OpenCL driver `library` reports when asked directly,
/// as the ICD loader would ask it. An error says why it could not be asked (not loadable, not
/// an ICD driver, or the driver's own status, e.g. `CL_PLATFORM_NOT_FOUND_KHR` when the
/// driver finds no hardware).
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn icd_platforms(library: &str) -> std::result::Result<Vec<String>, String> {
    let lib = open(library)?;
    let result = ask(&lib);
    std::mem::forget(lib);
    result
}

fn ask(lib: &Library) -> std::result::Result<Vec<String>, String> {
    let get_ids = icd_entry_point(lib)?;
    let mut count = 0u32;
    // SAFETY: `get_ids` is the driver's clIcdGetPlatformIDsKHR (signature fixed by cl_khr_icd);
    // asking for the count only passes a null list with 0 entries and a valid out-pointer.
    let status = unsafe { get_ids(0, std::ptr::null_mut(), &mut count) };
    if status == CL_PLATFORM_NOT_FOUND_KHR {
        return Err("the driver reports no platform (CL_PLATFORM_NOT_FOUND_KHR): it found no \
                    device it can drive, or its kernel module is not loaded"
            .into());
    }
    if status != CL_SUCCESS {
        return Err(format!("clIcdGetPlatformIDsKHR failed with status {status}"));
    }
    let mut ids: Vec<PlatformId> = vec![std::ptr::null_mut(); count as usize];
    // SAFETY: `ids` has room for `count` platform ids, as the call is told.
    let status = unsafe { get_ids(count, ids.as_mut_ptr(), std::ptr::null_mut()) };
    if status != CL_SUCCESS {
        return Err(format!("clIcdGetPlatformIDsKHR failed with status {status}"));
    }
    Ok(ids.into_iter().filter(|p| !p.is_null()).map(platform_name).collect())
}

fn icd_entry_point(lib: &Library) -> std::result::Result<IcdGetPlatformIds, String> {
    // SAFETY: the symbol, if present, is the ICD entry point whose C signature is fixed by the
    // cl_khr_icd extension and matches `GetExtensionFunctionAddress`.
    let gefa = unsafe { lib.get::<GetExtensionFunctionAddress>(b"clGetExtensionFunctionAddress\0") };
    if let Ok(gefa) = gefa {
        // SAFETY: the name is a NUL-terminated C string; the function only reads it.
        let f = unsafe { gefa(c"clIcdGetPlatformIDsKHR".as_ptr()) };
        if !f.is_null() {
            // SAFETY: a non-null result for this name is the driver's clIcdGetPlatformIDsKHR,
            // whose signature cl_khr_icd fixes as `IcdGetPlatformIds`.
            return Ok(unsafe { std::mem::transmute::<*mut c_void, IcdGetPlatformIds>(f) });
        }
    }
    // SAFETY: as above, the exported symbol of this name has the signature of the extension.
    match unsafe { lib.get::<IcdGetPlatformIds>(b"clIcdGetPlatformIDsKHR\0") } {
        Ok(f) => Ok(*f),
        Err(_) => Err("not an OpenCL ICD driver: it exports no clIcdGetPlatformIDsKHR".into()),
    }
}

fn platform_name(id: PlatformId) -> String {
    // SAFETY: under cl_khr_icd every platform object returned by clIcdGetPlatformIDsKHR starts
    // with a pointer to the driver's dispatch table, an array of function pointers whose entry
    // DISPATCH_GET_PLATFORM_INFO is clGetPlatformInfo. `id` is non-null (filtered by the
    // caller) and stays valid while the driver is loaded (it is never unloaded).
    let get_info: Option<GetPlatformInfo> = unsafe {
        let table = *id.cast::<*const Option<GetPlatformInfo>>();
        if table.is_null() {
            None
        } else {
            *table.add(DISPATCH_GET_PLATFORM_INFO)
        }
    };
    let Some(get_info) = get_info else {
        return "(platform without a dispatch table)".into();
    };
    let mut buf = [0u8; 256];
    let mut len = 0usize;
    // SAFETY: the buffer's size is passed with it; the driver writes at most that many bytes
    // and the actual size to `len`.
    let status =
        unsafe { get_info(id, CL_PLATFORM_NAME, buf.len(), buf.as_mut_ptr().cast::<c_void>(), &mut len) };
    if status != CL_SUCCESS {
        return format!("(clGetPlatformInfo failed with status {status})");
    }
    let text = &buf[..len.min(buf.len())];
    match CStr::from_bytes_until_nul(text) {
        Ok(s) => s.to_string_lossy().trim().to_string(),
        Err(_) => String::from_utf8_lossy(text).trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_naming_it() {
        let e = can_load("libclarray-no-such-library.so.7").unwrap_err();
        assert!(e.contains("libclarray-no-such-library.so.7"), "{e}");
        let e = icd_platforms("libclarray-no-such-library.so.7").unwrap_err();
        assert!(e.contains("libclarray-no-such-library.so.7"), "{e}");
    }

    #[test]
    fn a_library_that_is_no_driver_is_named_so() {
        // The C library loads everywhere and is no OpenCL driver.
        let e = icd_platforms("libc.so.6").unwrap_err();
        assert!(e.contains("not an OpenCL ICD driver"), "{e}");
    }
}
