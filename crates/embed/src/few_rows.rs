//! A dense layer's weights as 16-bit integers for inputs of a few tokens — a query. Multiplying a
//! handful of rows does little with each weight, and matrixmultiply's packing of the whole weight
//! matrix for every call was half a query's embedding time. Here each weight is read once, in
//! half the bytes, turned back to f32 in registers and used for four rows at a time. Each output
//! column has its own scale (its largest weight maps to 32767), which keeps a query's embedding
//! within 1e-5 (cosine) of the f32 one; int8 was no faster here and drifted to 0.9985. The kernel
//! is written plainly and compiled again for the CPU's vector extensions at run time (`pulp`);
//! where the CPU has AVX-512 VNNI, [`crate::vnni`] multiplies as integers instead.

use crate::vnni::{pair_up, Paired, Vnni, LANES};

/// A weight's integer form, and its largest magnitude.
type Quantum = i16;
const STEPS: f32 = 32767.0;

/// Input rows computed together: with [`LANES`], eight accumulators that stay in registers.
const ROWS: usize = 4;

/// Inputs of at most this many rows take the portable integer kernel; longer ones (a memory being
/// indexed) do enough arithmetic per weight that the f32 matrix multiply is faster. The VNNI
/// kernel is faster at every length (a 256-token memory's products 2.5 times).
pub(crate) const FEW_ROWS: usize = 32;

/// `[in, out]` weights as integers, in blocks of [`LANES`] outputs.
pub(crate) struct FewRows {
    /// For each block of outputs, `inputs × LANES` values, input-major.
    blocks: Vec<Quantum>,
    /// Per output, what one step of its integer weights is worth.
    scale: Vec<f32>,
    inputs: usize,
    outputs: usize,
    /// Set when the weights are laid out in pairs for the VNNI kernel.
    vnni: Option<Vnni>,
}

impl FewRows {
    /// Quantises `weight` (`[inputs, outputs]`, row-major); `None` when the outputs do not split
    /// into whole blocks (that layer keeps the f32 path).
    pub(crate) fn quantise(weight: &[f32], inputs: usize, outputs: usize) -> Option<Self> {
        let few = Self::quantise_widened(weight, inputs, outputs)?;
        Some(match Vnni::detect(inputs, outputs) {
            Some(vnni) => few.paired(vnni),
            None => few,
        })
    }

    /// The same weights in the VNNI kernel's layout.
    fn paired(self, vnni: Vnni) -> Self {
        Self {
            blocks: pair_up(&self.blocks, self.inputs),
            vnni: Some(vnni),
            ..self
        }
    }

    /// [`FewRows::quantise`] for the portable kernel.
    fn quantise_widened(weight: &[f32], inputs: usize, outputs: usize) -> Option<Self> {
        if !outputs.is_multiple_of(LANES) || weight.len() != inputs * outputs || inputs == 0 {
            return None;
        }
        let positive = |largest: f32| if largest > 0.0 { largest } else { 1.0 };
        let scale: Vec<f32> = (0..outputs)
            .map(|o| {
                let largest = (0..inputs)
                    .map(|i| weight[i * outputs + o].abs())
                    .fold(0.0f32, f32::max);
                positive(largest) / STEPS
            })
            .collect();
        let mut blocks = Vec::with_capacity(weight.len());
        for block in 0..outputs / LANES {
            for i in 0..inputs {
                for lane in 0..LANES {
                    let o = block * LANES + lane;
                    let q = (weight[i * outputs + o] / scale[o])
                        .round()
                        .clamp(-STEPS, STEPS);
                    blocks.push(q as Quantum);
                }
            }
        }
        Some(Self {
            blocks,
            scale,
            inputs,
            outputs,
            vnni: None,
        })
    }

    /// Whether `rows` rows are faster here than through the f32 matrix multiply: a few always;
    /// any number with VNNI, whose integer products outpace it at every length.
    pub(crate) fn suits(&self, rows: usize) -> bool {
        rows <= FEW_ROWS || self.vnni.is_some()
    }

    /// `x` (`[rows, inputs]`) times the weights, plus `bias`: `[rows, outputs]`.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, bias: &[f32]) -> Vec<f32> {
        let mut y = vec![0.0f32; rows * self.outputs];
        if let Some(vnni) = self.vnni {
            let layer = Paired {
                weights: &self.blocks,
                scale: &self.scale,
                inputs: self.inputs,
                outputs: self.outputs,
            };
            vnni.multiply(&layer, x, rows, bias, &mut y);
            return y;
        }
        pulp::Arch::new().dispatch(Multiply {
            weights: self,
            x,
            rows,
            bias,
            y: &mut y,
        });
        y
    }

    #[inline(always)]
    fn multiply(&self, x: &[f32], rows: usize, bias: &[f32], y: &mut [f32]) {
        let (inputs, outputs) = (self.inputs, self.outputs);
        // The rows in groups of ROWS, each group input-major (`[inputs][ROWS]`), zero-padded.
        let groups = rows.div_ceil(ROWS);
        let mut grouped = vec![0.0f32; groups * inputs * ROWS];
        for (r, row) in x.chunks_exact(inputs).take(rows).enumerate() {
            let group = &mut grouped[(r / ROWS) * inputs * ROWS..];
            for (i, v) in row.iter().enumerate() {
                group[i * ROWS + r % ROWS] = *v;
            }
        }
        for (block, weights) in self.blocks.chunks_exact(inputs * LANES).enumerate() {
            let first = block * LANES;
            for (g, xs) in grouped.chunks_exact(inputs * ROWS).enumerate() {
                let mut acc = [[0.0f32; LANES]; ROWS];
                for (quanta, x4) in weights.chunks_exact(LANES).zip(xs.chunks_exact(ROWS)) {
                    let mut w = [0.0f32; LANES];
                    for (w, q) in w.iter_mut().zip(quanta) {
                        *w = f32::from(*q);
                    }
                    for (acc, xv) in acc.iter_mut().zip(x4) {
                        for (a, w) in acc.iter_mut().zip(&w) {
                            *a += xv * w;
                        }
                    }
                }
                for (r, acc) in acc.iter().enumerate().take(rows - g * ROWS) {
                    let out = &mut y[(g * ROWS + r) * outputs + first..][..LANES];
                    let scale = &self.scale[first..first + LANES];
                    let bias = &bias[first..first + LANES];
                    for (((o, a), s), b) in out.iter_mut().zip(acc).zip(scale).zip(bias) {
                        *o = b + s * a;
                    }
                }
            }
        }
    }
}

/// One multiplication as `pulp` dispatches it: `with_simd` is compiled once per instruction set
/// and [`FewRows::multiply`], inlined into it, is vectorised for each.
struct Multiply<'a> {
    weights: &'a FewRows,
    x: &'a [f32],
    rows: usize,
    bias: &'a [f32],
    y: &'a mut [f32],
}

impl pulp::WithSimd for Multiply<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        self.weights.multiply(self.x, self.rows, self.bias, self.y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic spread of values in [-1, 1).
    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(2_654_435_761).max(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s % 2000) as f32 / 1000.0 - 1.0
            })
            .collect()
    }

    /// Both kernels where this CPU has both, each with the error its quantisation allows: the
    /// portable one rounds only the weights; the VNNI one the inputs too (to 13 bits).
    fn kernels(weight: &[f32], inputs: usize, outputs: usize) -> Vec<(FewRows, f32)> {
        let mut kernels = Vec::new();
        if let Some(few) = FewRows::quantise_widened(weight, inputs, outputs) {
            if let Some(vnni) = Vnni::detect(inputs, outputs) {
                let paired =
                    FewRows::quantise_widened(weight, inputs, outputs).map(|few| few.paired(vnni));
                kernels.extend(paired.map(|few| (few, 5e-3)));
            }
            kernels.push((few, 1e-3));
        }
        kernels
    }

    #[test]
    fn integer_product_matches_the_exact_one() -> Result<(), String> {
        let (inputs, outputs) = (384, 64);
        let weight = values(inputs * outputs, 7);
        let bias = values(outputs, 11);
        let kernels = kernels(&weight, inputs, outputs);
        assert!(!kernels.is_empty(), "64 outputs split in 16s");
        for (few, tolerance) in kernels {
            for rows in [1, 3, 4, 9] {
                let x = values(rows * inputs, rows as u32);
                let y = few.forward(&x, rows, &bias);
                assert_eq!(y.len(), rows * outputs);
                for r in 0..rows {
                    for o in 0..outputs {
                        let exact: f32 = bias[o]
                            + (0..inputs)
                                .map(|i| x[r * inputs + i] * weight[i * outputs + o])
                                .sum::<f32>();
                        // The rounding of a sum of 384 products of values in [-1, 1].
                        assert!(
                            (y[r * outputs + o] - exact).abs() < tolerance,
                            "{:?} row {r} output {o}: {} against {exact}",
                            few.vnni,
                            y[r * outputs + o]
                        );
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn the_largest_values_do_not_overflow_the_integer_sums() -> Result<(), String> {
        // Every weight and input at its largest, all of one sign: the worst case for 32-bit sums.
        let (inputs, outputs) = (1536, 32);
        let weight = vec![1.0f32; inputs * outputs];
        let x = vec![-1.0f32; 2 * inputs];
        for (few, tolerance) in kernels(&weight, inputs, outputs) {
            let y = few.forward(&x, 2, &[0.0; 32]);
            for v in y {
                assert!(
                    (v + 1536.0).abs() < tolerance * 1536.0,
                    "{:?}: {v}",
                    few.vnni
                );
            }
        }
        Ok(())
    }

    #[test]
    fn layers_that_do_not_split_into_blocks_keep_f32() {
        assert!(FewRows::quantise(&[0.5; 3 * 10], 3, 10).is_none());
        assert!(FewRows::quantise(&[0.5; 3 * 16], 3, 16).is_some());
    }
}
