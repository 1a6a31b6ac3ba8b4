//! The encoder's arithmetic besides matrix products, written so the compiler vectorises it: `exp`
//! by range reduction and a polynomial (libm's is a scalar call per value), `erf` and GELU on top
//! of it, and sums and maxima kept in sixteen lanes (a float sum in one accumulator must be added in order,
//! one value at a time). Callers run inside a `pulp` dispatch, so these compile for the CPU.

/// Lanes of the partial sums: one AVX-512 register, two AVX ones.
const LANES: usize = 16;

/// e^x to about 2e-7 relative, for x clamped to [−87, 88] (e^−87 below, e^88 above).
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts, so k × ln 2 is exact enough to subtract.
    const LN2_HIGH: f32 = 0.693_359_4;
    const LN2_LOW: f32 = -2.121_944_4e-4;
    // Adding and subtracting 1.5 × 2²³ rounds to the nearest integer without a rounding call.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let k = (x * LOG2_E + ROUND) - ROUND;
    let r = x - k * LN2_HIGH - k * LN2_LOW;
    // e^r for |r| ≤ ln 2 / 2: its Taylor series to r⁶ (the next term is under 2e-7).
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // 2^k built in the exponent bits.
    p * f32::from_bits(((k as i32 + 127) as u32) << 23)
}

/// erf by Abramowitz and Stegun 7.1.26 (absolute error 1.5e-7).
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152_1) * t + 1.421_413_7) * t - 0.284_496_74) * t
        + 0.254_829_6)
        * t;
    (1.0 - poly * exp(-a * a)).copysign(x)
}

/// GELU with erf, as BERT defines it.
#[inline(always)]
pub(crate) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// The sum of `term(v)` over `values`, kept in lanes so the loop vectorises (an ordered float sum
/// cannot).
#[inline(always)]
fn sum_of(values: &[f32], term: impl Fn(f32) -> f32) -> f32 {
    let (blocks, rest) = values.as_chunks::<LANES>();
    let mut lanes = [0.0f32; LANES];
    for block in blocks {
        for (lane, v) in lanes.iter_mut().zip(block) {
            *lane += term(*v);
        }
    }
    lanes.iter().sum::<f32>() + rest.iter().map(|v| term(*v)).sum::<f32>()
}

/// The sum of `values`.
#[inline(always)]
pub(crate) fn sum(values: &[f32]) -> f32 {
    sum_of(values, |v| v)
}

/// The sum of the squared differences of `values` from `mean`.
#[inline(always)]
pub(crate) fn squared_deviations(values: &[f32], mean: f32) -> f32 {
    sum_of(values, |v| (v - mean) * (v - mean))
}

/// The largest of `values` (f32::MIN for none).
#[inline(always)]
pub(crate) fn largest(values: &[f32]) -> f32 {
    let (blocks, rest) = values.as_chunks::<LANES>();
    let mut lanes = [f32::MIN; LANES];
    for block in blocks {
        for (lane, v) in lanes.iter_mut().zip(block) {
            *lane = if *v > *lane { *v } else { *lane };
        }
    }
    lanes
        .iter()
        .chain(rest)
        .fold(f32::MIN, |m, v| if *v > m { *v } else { m })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_reference_values() {
        // erf(x) for x = 0, 0.1, 0.5, 1, 2, 3 (from tables), and its odd symmetry.
        let table = [
            (0.0, 0.0),
            (0.1, 0.112_462_92),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (3.0, 0.999_977_9),
        ];
        for (x, want) in table {
            assert!(
                (erf(x) - want).abs() < 5e-7,
                "erf({x}) = {} not {want}",
                erf(x)
            );
            assert!((erf(-x) + want).abs() < 5e-7, "erf(-{x}) = {}", erf(-x));
        }
    }

    #[test]
    fn exp_matches_the_library_across_its_range() {
        let mut x = -90.0f32;
        while x < 89.0 {
            let (ours, libm) = (exp(x), x.clamp(-87.0, 88.0).exp());
            assert!(
                (ours - libm).abs() <= 5e-7 * libm,
                "exp({x}) = {ours}, not {libm}"
            );
            x += 0.01;
        }
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn sums_and_maxima_in_lanes_match_the_plain_ones() {
        let a: Vec<f32> = (0..37).map(|i| (i as f32 * 0.37).sin()).collect();
        assert!((sum(&a) - a.iter().sum::<f32>()).abs() < 1e-5);
        let mean = 0.25;
        let plain: f32 = a.iter().map(|v| (v - mean) * (v - mean)).sum();
        assert!((squared_deviations(&a, mean) - plain).abs() < 1e-5);
        assert_eq!(largest(&a), a.iter().copied().fold(f32::MIN, f32::max));
        assert_eq!(largest(&[]), f32::MIN);
    }
}
