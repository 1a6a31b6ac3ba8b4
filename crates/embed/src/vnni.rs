//! The few-rows product on CPUs with AVX-512 VNNI: `vpdpwssd` multiplies pairs of 16-bit
//! integers and adds both products into 32-bit lanes, 32 multiply-adds per instruction with no
//! widening to f32 — against 16 for the f32 kernel, which must also convert every weight. The
//! input rows are quantised too, each to its own scale, to [`X_STEPS`]; the sums are moved to f32
//! every [`CHUNK`] inputs, before any sum of products could leave 32 bits.
//!
//! Weights are laid out `[block of 16 outputs][input pair][lane][2]`, so one 512-bit load holds
//! two inputs' weights for sixteen outputs and each row's pair of inputs is one broadcast word.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m512, __m512i, _mm512_add_ps, _mm512_cvtepi32_ps, _mm512_dpwssd_epi32, _mm512_set1_epi32,
    _mm512_setzero_ps, _mm512_setzero_si512,
};

/// Outputs computed together, here and in [`crate::few_rows`]: two AVX registers of f32 (one of
/// 32-bit lanes in AVX-512); the weights of both kernels are laid out in blocks of this many.
pub(crate) const LANES: usize = 16;
/// Blocks computed together, so [`ROWS`] × `BLOCKS` sums are in flight at once.
const BLOCKS: usize = 2;
/// Rows computed together.
const ROWS: usize = 4;
/// An input row's largest magnitude in integer steps (13 bits).
const X_STEPS: f32 = 4095.0;
/// Inputs summed in 32 bits before moving to f32: 16 × 32767 × 4095 < 2³¹, so no sum overflows
/// whatever the values.
const CHUNK: usize = 16;

/// Proof that this CPU has AVX-512 VNNI: only [`Vnni::detect`] makes one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Vnni {
    #[cfg(target_arch = "x86_64")]
    _detected: (),
    #[cfg(not(target_arch = "x86_64"))]
    never: std::convert::Infallible,
}

impl Vnni {
    /// The kernel, if this CPU has the instructions and a layer of this shape suits it.
    pub(crate) fn detect(inputs: usize, outputs: usize) -> Option<Self> {
        if !inputs.is_multiple_of(CHUNK) || !outputs.is_multiple_of(LANES * BLOCKS) {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let detected = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vnni");
            detected.then_some(Self { _detected: () })
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// `x` (`[rows, inputs]`) times the paired weights plus `bias`, into `y` (`[rows, outputs]`).
    /// The workspace denies `unsafe`; this is its one exception: calling a function compiled for
    /// instructions the baseline lacks, which the type guarantees are there.
    #[allow(unsafe_code)]
    pub(crate) fn multiply(
        self,
        layer: &Paired<'_>,
        x: &[f32],
        rows: usize,
        bias: &[f32],
        y: &mut [f32],
    ) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Vnni` exists only where `detect` found every feature `multiply_vnni` is
        // compiled for.
        unsafe {
            multiply_vnni(layer, x, rows, bias, y)
        }
        #[cfg(not(target_arch = "x86_64"))]
        match self.never {}
    }
}

/// Rearranges integer weights from `[block][input][lane]` to `[block][input pair][lane][2]`.
pub(crate) fn pair_up(widened: &[i16], inputs: usize) -> Vec<i16> {
    let mut paired = Vec::with_capacity(widened.len());
    for block in widened.chunks_exact(inputs * LANES) {
        for pair in block.chunks_exact(2 * LANES) {
            let (first, second) = pair.split_at(LANES);
            for (a, b) in first.iter().zip(second) {
                paired.extend([*a, *b]);
            }
        }
    }
    paired
}

/// A layer's integer weights in pairs, with what one step of each output's weights is worth.
pub(crate) struct Paired<'a> {
    pub(crate) weights: &'a [i16],
    pub(crate) scale: &'a [f32],
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
}

/// The rows quantised, each pair of inputs one 32-bit word, in groups of [`ROWS`] rows
/// `[group][pair][row]` (zero-padded), and each row's scale.
fn quantise_rows(x: &[f32], rows: usize, inputs: usize) -> (Vec<i32>, Vec<f32>) {
    let pairs = inputs / 2;
    let groups = rows.div_ceil(ROWS);
    let mut words = vec![0i32; groups * pairs * ROWS];
    let mut scales = vec![0.0f32; groups * ROWS];
    for (r, row) in x.chunks_exact(inputs).take(rows).enumerate() {
        let largest = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if largest > 0.0 {
            largest / X_STEPS
        } else {
            1.0
        };
        scales[r] = scale;
        let group = &mut words[(r / ROWS) * pairs * ROWS..];
        for (p, two) in row.chunks_exact(2).enumerate() {
            // Clamped: the overflow bound above counts on no step past X_STEPS.
            let step = |v: f32| (v / scale).round().clamp(-X_STEPS, X_STEPS) as i16 as u16 as u32;
            let (low, high) = (step(two[0]), step(two[1]));
            group[p * ROWS + r % ROWS] = (low | high << 16) as i32;
        }
    }
    (words, scales)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn multiply_vnni(layer: &Paired<'_>, x: &[f32], rows: usize, bias: &[f32], y: &mut [f32]) {
    let (inputs, outputs) = (layer.inputs, layer.outputs);
    let pairs = inputs / 2;
    let (words, row_scales) = quantise_rows(x, rows, inputs);
    let (weights, _) = layer.weights.as_chunks::<{ 2 * LANES }>();
    let block_pairs = pairs; // one 512-bit load per input pair and block
    for first_block in (0..outputs / LANES).step_by(BLOCKS) {
        let blocks: [&[[i16; 2 * LANES]]; BLOCKS] = std::array::from_fn(|b| {
            let start = (first_block + b) * block_pairs;
            &weights[start..start + block_pairs]
        });
        for (g, group) in words.chunks_exact(pairs * ROWS).enumerate() {
            let mut sums: [[__m512; BLOCKS]; ROWS] = [[_mm512_setzero_ps(); BLOCKS]; ROWS];
            for chunk in (0..pairs).step_by(CHUNK / 2) {
                let mut partial: [[__m512i; BLOCKS]; ROWS] =
                    [[_mm512_setzero_si512(); BLOCKS]; ROWS];
                for p in chunk..chunk + CHUNK / 2 {
                    let w: [__m512i; BLOCKS] = std::array::from_fn(|b| pulp::cast(blocks[b][p]));
                    for (r, partial) in partial.iter_mut().enumerate() {
                        let xs = _mm512_set1_epi32(group[p * ROWS + r]);
                        for (acc, w) in partial.iter_mut().zip(&w) {
                            *acc = _mm512_dpwssd_epi32(*acc, xs, *w);
                        }
                    }
                }
                for (sums, partial) in sums.iter_mut().zip(&partial) {
                    for (sum, part) in sums.iter_mut().zip(partial) {
                        *sum = _mm512_add_ps(*sum, _mm512_cvtepi32_ps(*part));
                    }
                }
            }
            for (r, sums) in sums.iter().enumerate().take(rows.saturating_sub(g * ROWS)) {
                let row = g * ROWS + r;
                let row_scale = row_scales[row];
                for (b, sum) in sums.iter().enumerate() {
                    let first = (first_block + b) * LANES;
                    let lanes: [f32; LANES] = pulp::cast(*sum);
                    let out = &mut y[row * outputs + first..][..LANES];
                    let scale = &layer.scale[first..first + LANES];
                    let bias = &bias[first..first + LANES];
                    for (((o, a), s), b) in out.iter_mut().zip(lanes).zip(scale).zip(bias) {
                        *o = b + row_scale * s * a;
                    }
                }
            }
        }
    }
}
