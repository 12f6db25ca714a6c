//! I/O units: the preallocated slab entries an engine moves data with. A unit owns `numpages`
//! separate page buffers of `bs` bytes each (SAS SGIO's BUFNO × BUFSIZE), so a vectored engine
//! issues one call over a real `numpages`-entry iovec. Units never move or reallocate while I/O
//! is in flight: engines may hand their addresses to the kernel.

use super::AlignedBuf;
use super::Dir;
use super::platform::IoVec;

/// Most iovec entries one preadv/pwritev or READV/WRITEV accepts (Linux's UIO_MAXIOV).
pub const IOV_MAX: usize = 1024;

/// One I/O: where it goes, the memory it moves, and how far it has got.
pub struct IoUnit {
    pub dir: Dir,
    pub file: usize,
    /// Byte offset of the whole transfer.
    pub offset: u64,
    /// Bytes already transferred (short transfers are resubmitted for the rest).
    pub done: usize,
    /// The I/O's priority (class << 13 | level; 0: the thread's own), which a queued engine
    /// puts in its submission.
    pub prio: u16,
    pages: Vec<AlignedBuf>,
    page_len: usize,
    /// Bytes this I/O moves: every page in full, or (one page) a prefix of it.
    len: usize,
    /// One entry per page, for the whole transfer (built once).
    iov: Vec<IoVec>,
    /// The remainder after a short transfer (rebuilt when needed).
    iov_rest: Vec<IoVec>,
}

// SAFETY: the iovecs point into `pages`, which the unit owns; nothing else aliases them.
unsafe impl Send for IoUnit {}

impl IoUnit {
    /// A unit of `npages` zeroed, page-aligned buffers of `page_len` bytes each.
    pub fn new(page_len: usize, npages: usize) -> Self {
        let mut pages: Vec<AlignedBuf> = (0..npages.max(1))
            .map(|_| AlignedBuf::zeroed(page_len))
            .collect();
        let iov = pages
            .iter_mut()
            .map(|p| IoVec {
                iov_base: p.as_mut_ptr().cast(),
                iov_len: page_len,
            })
            .collect();
        IoUnit {
            dir: Dir::Read,
            file: 0,
            offset: 0,
            done: 0,
            prio: 0,
            len: page_len * pages.len(),
            pages,
            page_len,
            iov,
            iov_rest: Vec::new(),
        }
    }

    /// Bytes the whole transfer moves (`bs` × `numpages`, or what [`IoUnit::set_len`] set).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Makes a single-page unit move `len` bytes (at most its buffer) from the next I/O on:
    /// variable I/O sizes share buffers of the largest size.
    #[inline]
    pub fn set_len(&mut self, len: usize) {
        debug_assert!(self.pages.len() == 1 || len == self.page_len * self.pages.len());
        // The common case, one size for every I/O: nothing to change (a single-page unit's
        // iovec is always as long as `len`).
        if self.len == len {
            return;
        }
        if self.pages.len() == 1 {
            let len = len.min(self.page_len);
            self.len = len;
            self.iov[0].iov_len = len;
        }
    }

    /// Bytes of each page buffer.
    pub fn page_len(&self) -> usize {
        self.page_len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn npages(&self) -> usize {
        self.pages.len()
    }

    /// Offset where the untransferred remainder starts.
    pub fn next_offset(&self) -> u64 {
        self.offset + self.done as u64
    }

    /// The bytes this I/O moves, page by page, for filling before a write.
    pub fn pages_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        let len = self.len;
        self.pages.iter_mut().map(move |p| {
            let n = p.len().min(len);
            &mut p[..n]
        })
    }

    /// Every page buffer in full, whatever this I/O moves.
    pub fn buffers_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        self.pages.iter_mut().map(|p| &mut p[..])
    }

    /// The untransferred remainder of a single-page unit, as one slice.
    pub fn rest_mut(&mut self) -> &mut [u8] {
        debug_assert_eq!(self.pages.len(), 1, "rest_mut on a vectored unit");
        &mut self.pages[0][self.done..self.len]
    }

    /// The untransferred remainder as iovecs: every page on the first try; after a short
    /// transfer, the partial page's tail and the pages after it. At most [`IOV_MAX`] entries:
    /// a unit of more pages takes several calls, each continuing where the last one ended, as
    /// after a short transfer. The pointers stay valid until the next call that takes
    /// `&mut self`.
    pub fn iovecs(&mut self) -> &[IoVec] {
        if self.done == 0 {
            return &self.iov[..self.iov.len().min(IOV_MAX)];
        }
        let (first, skip) = (self.done / self.page_len, self.done % self.page_len);
        self.iov_rest.clear();
        self.iov_rest.extend_from_slice(&self.iov[first..]);
        if let Some(v) = self.iov_rest.first_mut() {
            // SAFETY: skip < page_len, so the pointer stays inside the page.
            v.iov_base = unsafe { v.iov_base.cast::<u8>().add(skip) }.cast();
            v.iov_len -= skip;
        }
        self.iov_rest.truncate(IOV_MAX);
        &self.iov_rest
    }

    /// Calls one whole transfer takes when none is short.
    pub fn calls_per_io(npages: u32) -> u32 {
        npages.div_ceil(IOV_MAX as u32)
    }

    /// Address and length of the remainder of a single-page unit, for engines that hand raw
    /// pointers to the kernel (io_uring).
    pub fn rest_raw(&mut self) -> (*mut u8, usize) {
        let rest = self.rest_mut();
        (rest.as_mut_ptr(), rest.len())
    }

    /// A one-page unit of `len` bytes for `dir` at `offset` of file 0 (the engines' tests).
    #[cfg(test)]
    pub fn one(dir: Dir, offset: u64, len: usize) -> IoUnit {
        let mut u = IoUnit::new(len, 1);
        (u.dir, u.file, u.offset, u.done) = (dir, 0, offset, 0);
        u.set_len(len);
        u
    }

    /// The iovec covering the whole of page `i`, for buffer registration.
    pub fn page_iovec(&self, i: usize) -> IoVec {
        IoVec {
            iov_base: self.iov[i].iov_base,
            iov_len: self.page_len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iovecs_cover_the_remainder_after_a_short_transfer() {
        let mut u = IoUnit::new(4096, 3);
        assert_eq!(u.len(), 12288);
        let full: Vec<_> = u.iovecs().iter().map(|v| v.iov_len).collect();
        assert_eq!(full, vec![4096; 3]);
        let base1 = u.page_iovec(1).iov_base as usize;
        u.done = 4096 + 100;
        let rest = u.iovecs();
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[0].iov_len, 3996);
        assert_eq!(rest[0].iov_base as usize, base1 + 100);
        assert_eq!(rest[1].iov_len, 4096);
        // Separate buffers, each page-aligned.
        for i in 0..3 {
            assert_eq!(u.page_iovec(i).iov_base as usize % 4096, 0);
        }
        assert_eq!(u.next_offset(), 4196);
    }

    #[test]
    fn a_single_page_unit_moves_what_set_len_says() {
        let mut u = IoUnit::new(65536, 1);
        u.set_len(8192);
        assert_eq!((u.len(), u.iovecs()[0].iov_len), (8192, 8192));
        assert_eq!(u.rest_mut().len(), 8192);
        assert_eq!(u.pages_mut().map(|p| p.len()).sum::<usize>(), 8192);
        assert_eq!(u.page_iovec(0).iov_len, 65536);
        u.done = 4096;
        assert_eq!(u.iovecs()[0].iov_len, 4096);
        u.set_len(1 << 20);
        assert_eq!(u.len(), 65536, "never past the buffer");
    }

    #[test]
    fn more_pages_than_iov_max_take_several_calls() {
        let mut u = IoUnit::new(512, 2500);
        assert_eq!(u.iovecs().len(), IOV_MAX);
        u.done = 512 * IOV_MAX;
        assert_eq!(u.iovecs().len(), IOV_MAX);
        u.done = 512 * 2 * IOV_MAX;
        assert_eq!(u.iovecs().len(), 2500 - 2 * IOV_MAX);
        assert_eq!(IoUnit::calls_per_io(2500), 3);
        assert_eq!(IoUnit::calls_per_io(1024), 1);
    }
}
