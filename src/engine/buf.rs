//! Page-aligned I/O buffers, as O_DIRECT requires: 4096-byte alignment covers every logical
//! block size in use. Memory is allocated once per job, before the start barrier.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

pub const ALIGN: usize = 4096;

pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is uniquely owned heap memory with no thread affinity.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (at least 1), aligned to [`ALIGN`].
    pub fn zeroed(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), ALIGN).expect("buffer size overflows");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, layout }
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes for self's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this exact layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn aligned_and_zeroed() {
        let b = super::AlignedBuf::zeroed(10_000);
        assert_eq!(b.as_ptr() as usize % super::ALIGN, 0);
        assert_eq!(b.len(), 10_000);
        assert!(b.iter().all(|&x| x == 0));
    }
}
