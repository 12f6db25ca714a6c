//! Any bytes as a sweep's axes: split at NUL bytes into `--sweep` values, each must parse to
//! an axis or a one-line error, never a panic or a grid beyond its caps; the grid of the axes
//! that parse is the product of their lengths (or refused as too large), every point naming
//! one value of each axis; and a grid always equals itself for `--resume`.
#![no_main]

use iogauge::studies::sweep::{self, dir::grid_difference};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut axes = Vec::new();
    for arg in text.split('\0').take(8) {
        match sweep::parse_axis(arg) {
            Ok(axis) => {
                assert!(!axis.values.is_empty());
                assert!(axis.values.len() <= sweep::MAX_AXIS_POINTS);
                if !axes.iter().any(|a: &sweep::Axis| a.name == axis.name) {
                    axes.push(axis);
                }
            }
            Err(e) => assert!(!e.to_string().contains('\n') || arg.contains('\n'), "{e}"),
        }
    }
    if axes.is_empty() {
        return;
    }
    assert_eq!(grid_difference(&axes, &axes), None);
    let product: u128 = axes.iter().map(|a| a.values.len() as u128).product();
    match sweep::grid(&axes) {
        Ok(points) => {
            assert_eq!(points.len() as u128, product);
            for p in points.iter().take(64) {
                assert_eq!(p.len(), axes.len());
                for (v, a) in p.iter().zip(&axes) {
                    assert!(a.values.contains(v));
                }
            }
        }
        Err(_) => assert!(product > sweep::MAX_POINTS as u128),
    }
});
