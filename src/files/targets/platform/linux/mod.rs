//! Linux's half of the files layer's own calls.

pub mod rwf;
