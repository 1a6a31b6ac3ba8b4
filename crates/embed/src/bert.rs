//! The BERT encoder of all-MiniLM-L6-v2, one sequence at a time (no padding, so no attention
//! mask): embeddings, six post-norm transformer layers with exact GELU, mean pooling, L2 norm.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};
use safetensors::{Dtype, SafeTensors};

use crate::few_rows::FewRows;
use crate::maths::{exp, gelu, largest, squared_deviations, sum};

const LAYERS: usize = 6;
const HEADS: usize = 12;
/// Each head's width (all-MiniLM-L6-v2: 384 = 12 × 32): fixed, so a head's sums stay in registers.
const HEAD_WIDTH: usize = 32;
/// Keys scored together: one AVX-512 register of f32.
const KEY_LANES: usize = 16;
const LAYER_NORM_EPS: f32 = 1e-12;

/// A dense layer: `y = x W + b`, with `W` kept `[in, out]` row-major: the checkpoint's `[out, in]`
/// transposed once at load, so each multiplication reads the weights in order (packing them from
/// the transposed view was most of a query's embedding time).
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
    /// The weights as 16-bit integers, for inputs of at most [`FEW_ROWS`] rows.
    few: Option<FewRows>,
}

impl Linear {
    fn new(weight: Vec<f32>, bias: Vec<f32>, inputs: usize, outputs: usize) -> Self {
        Self {
            few: FewRows::quantise(&weight, inputs, outputs),
            weight,
            bias,
            inputs,
            outputs,
        }
    }

    /// `x` is `[rows, inputs]`; returns `[rows, outputs]`.
    fn forward(&self, x: &[f32], rows: usize, precision: Precision) -> Vec<f32> {
        match &self.few {
            Some(few) if few.suits(rows) && precision == Precision::Fast => {
                few.forward(x, rows, &self.bias)
            }
            _ => self.forward_exact(x, rows),
        }
    }

    /// [`Linear::forward`] in f32 throughout.
    fn forward_exact(&self, x: &[f32], rows: usize) -> Vec<f32> {
        let mut y = Vec::with_capacity(rows * self.outputs);
        for _ in 0..rows {
            y.extend_from_slice(&self.bias);
        }
        let shapes = (
            ArrayView2::from_shape((rows, self.inputs), x),
            ArrayView2::from_shape((self.inputs, self.outputs), &self.weight[..]),
            ArrayViewMut2::from_shape((rows, self.outputs), &mut y[..]),
        );
        if let (Ok(a), Ok(w), Ok(mut out)) = shapes {
            general_mat_mul(1.0, &a, &w, 1.0, &mut out);
        }
        y
    }

    /// Several layers over the same input as one: their outputs side by side.
    fn side_by_side(parts: &[Linear]) -> Result<Linear, String> {
        let inputs = parts.first().map_or(0, |p| p.inputs);
        if parts.iter().any(|p| p.inputs != inputs) {
            return Err("fused layers differ in their inputs".into());
        }
        let outputs = parts.iter().map(|p| p.outputs).sum();
        let mut weight = Vec::with_capacity(inputs * outputs);
        for row in 0..inputs {
            for part in parts {
                weight
                    .extend_from_slice(&part.weight[row * part.outputs..(row + 1) * part.outputs]);
            }
        }
        let bias = parts.iter().flat_map(|p| p.bias.iter().copied()).collect();
        Ok(Linear::new(weight, bias, inputs, outputs))
    }
}

struct LayerNorm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl LayerNorm {
    #[inline(always)]
    fn forward(&self, x: &mut [f32]) {
        let width = self.weight.len();
        for row in x.chunks_mut(width) {
            let mean = sum(row) / width as f32;
            let var = squared_deviations(row, mean) / width as f32;
            let inv = 1.0 / (var + LAYER_NORM_EPS).sqrt();
            for (i, v) in row.iter_mut().enumerate() {
                *v = (*v - mean) * inv * self.weight[i] + self.bias[i];
            }
        }
    }
}

struct Layer {
    /// Query, key and value projections in one: `[rows, 3 × hidden]`.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// How the dense layers multiply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// 16-bit integer weights (within 1e-5 in cosine): for inputs of a few tokens (a query,
    /// twice as fast), and for every input where the CPU has AVX-512 VNNI; f32 otherwise.
    Fast,
    /// f32 throughout.
    Exact,
}

/// The encoder's weights.
pub struct Bert {
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    hidden: usize,
    max_positions: usize,
}

fn tensor(st: &SafeTensors<'_>, name: &str) -> Result<(Vec<f32>, Vec<usize>), String> {
    let view = st
        .tensor(name)
        .map_err(|e| format!("missing {name}: {e}"))?;
    if view.dtype() != Dtype::F32 {
        return Err(format!("{name} is {:?}, expected F32", view.dtype()));
    }
    let data = view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Ok((data, view.shape().to_vec()))
}

/// A dense layer as the checkpoint holds it, in f32 only: the parts [`Linear::side_by_side`] fuses.
fn unquantised(st: &SafeTensors<'_>, prefix: &str) -> Result<Linear, String> {
    let (weight, shape) = tensor(st, &format!("{prefix}.weight"))?;
    let (bias, _) = tensor(st, &format!("{prefix}.bias"))?;
    let [outputs, inputs] = shape[..] else {
        return Err(format!("{prefix}.weight is not a matrix"));
    };
    if weight.len() != outputs * inputs {
        return Err(format!(
            "{prefix}.weight does not hold {outputs}×{inputs} values"
        ));
    }
    let mut transposed = vec![0.0f32; weight.len()];
    for (o, row) in weight.chunks_exact(inputs).enumerate() {
        for (i, w) in row.iter().enumerate() {
            transposed[i * outputs + o] = *w;
        }
    }
    Ok(Linear {
        weight: transposed,
        bias,
        inputs,
        outputs,
        few: None,
    })
}

/// A dense layer, ready for both paths.
fn linear(st: &SafeTensors<'_>, prefix: &str) -> Result<Linear, String> {
    let Linear {
        weight,
        bias,
        inputs,
        outputs,
        ..
    } = unquantised(st, prefix)?;
    Ok(Linear::new(weight, bias, inputs, outputs))
}

fn layer_norm(st: &SafeTensors<'_>, prefix: &str) -> Result<LayerNorm, String> {
    Ok(LayerNorm {
        weight: tensor(st, &format!("{prefix}.weight"))?.0,
        bias: tensor(st, &format!("{prefix}.bias"))?.0,
    })
}

impl Bert {
    pub fn from_safetensors(bytes: &[u8]) -> Result<Self, String> {
        let st = SafeTensors::deserialize(bytes).map_err(|e| e.to_string())?;
        let (word, shape) = tensor(&st, "embeddings.word_embeddings.weight")?;
        let hidden = *shape.get(1).ok_or("bad embedding shape")?;
        let (position, pshape) = tensor(&st, "embeddings.position_embeddings.weight")?;
        let layers = (0..LAYERS)
            .map(|i| {
                let p = format!("encoder.layer.{i}");
                Ok(Layer {
                    qkv: Linear::side_by_side(&[
                        unquantised(&st, &format!("{p}.attention.self.query"))?,
                        unquantised(&st, &format!("{p}.attention.self.key"))?,
                        unquantised(&st, &format!("{p}.attention.self.value"))?,
                    ])?,
                    attention_out: linear(&st, &format!("{p}.attention.output.dense"))?,
                    attention_norm: layer_norm(&st, &format!("{p}.attention.output.LayerNorm"))?,
                    intermediate: linear(&st, &format!("{p}.intermediate.dense"))?,
                    output: linear(&st, &format!("{p}.output.dense"))?,
                    output_norm: layer_norm(&st, &format!("{p}.output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        if hidden != HEADS * HEAD_WIDTH {
            return Err(format!(
                "hidden size {hidden} is not {HEADS} heads of {HEAD_WIDTH}"
            ));
        }
        Ok(Self {
            word,
            position,
            token_type: tensor(&st, "embeddings.token_type_embeddings.weight")?.0,
            embedding_norm: layer_norm(&st, "embeddings.LayerNorm")?,
            layers,
            hidden,
            max_positions: pshape.first().copied().unwrap_or(512),
        })
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Mean-pooled, unit-length embedding of one token sequence.
    pub fn embed(&self, ids: &[u32], precision: Precision) -> Vec<f32> {
        pulp::Arch::new().dispatch(Forward {
            bert: self,
            ids,
            precision,
        })
    }

    /// [`Bert::embed`], inlined into each instruction set's copy of [`Forward`].
    #[inline(always)]
    fn forward(&self, ids: &[u32], precision: Precision) -> Vec<f32> {
        let h = self.hidden;
        let n = ids.len().min(self.max_positions).max(1);
        let vocab = self.word.len() / h;
        let mut x = Vec::with_capacity(n * h);
        for (pos, id) in ids.iter().take(n).enumerate() {
            let id = (*id as usize).min(vocab.saturating_sub(1));
            for d in 0..h {
                x.push(self.word[id * h + d] + self.position[pos * h + d] + self.token_type[d]);
            }
        }
        self.embedding_norm.forward(&mut x);
        for layer in &self.layers {
            x = self.layer(layer, x, n, precision);
        }
        let mut pooled = vec![0.0f32; h];
        for row in x.chunks(h) {
            for (p, v) in pooled.iter_mut().zip(row) {
                *p += v;
            }
        }
        let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
        pooled.iter().map(|v| v / norm).collect()
    }

    #[inline(always)]
    fn layer(&self, layer: &Layer, x: Vec<f32>, n: usize, precision: Precision) -> Vec<f32> {
        let h = self.hidden;
        let qkv = layer.qkv.forward(&x, n, precision);
        let row = |i: usize, part: usize, off: usize| {
            let at = i * 3 * h + part * h + off;
            &qkv[at..at + HEAD_WIDTH]
        };
        let scale = 1.0 / (HEAD_WIDTH as f32).sqrt();
        let mut context = vec![0.0f32; n * h];
        // A head's keys transposed (`[dimension][token]`, zero-padded to whole lanes), so a
        // query's scores against sixteen keys are one register's multiply-adds.
        let width = n.next_multiple_of(KEY_LANES);
        let mut keys = vec![0.0f32; HEAD_WIDTH * width];
        let mut scores = vec![0.0f32; width];
        for hd in 0..HEADS {
            let off = hd * HEAD_WIDTH;
            for j in 0..n {
                for (d, k) in row(j, 1, off).iter().enumerate() {
                    keys[d * width + j] = *k;
                }
            }
            for i in 0..n {
                let query = row(i, 0, off);
                for (block, out) in scores.chunks_exact_mut(KEY_LANES).enumerate() {
                    let mut acc = [0.0f32; KEY_LANES];
                    for (q, keys) in query.iter().zip(keys.chunks_exact(width)) {
                        let keys = &keys[block * KEY_LANES..][..KEY_LANES];
                        for (a, k) in acc.iter_mut().zip(keys) {
                            *a += q * k;
                        }
                    }
                    for (o, a) in out.iter_mut().zip(acc) {
                        *o = a * scale;
                    }
                }
                let scores = &mut scores[..n];
                let max = largest(scores);
                for s in scores.iter_mut() {
                    *s = exp(*s - max);
                }
                let share = 1.0 / sum(scores);
                let mut acc = [0.0f32; HEAD_WIDTH];
                for (j, s) in scores.iter().enumerate() {
                    let weight = s * share;
                    for (a, v) in acc.iter_mut().zip(row(j, 2, off)) {
                        *a += weight * v;
                    }
                }
                context[i * h + off..i * h + off + HEAD_WIDTH].copy_from_slice(&acc);
            }
        }
        let mut attended = layer.attention_out.forward(&context, n, precision);
        for (a, r) in attended.iter_mut().zip(&x) {
            *a += r;
        }
        layer.attention_norm.forward(&mut attended);
        let mut inner = layer.intermediate.forward(&attended, n, precision);
        for v in inner.iter_mut() {
            *v = gelu(*v);
        }
        let mut out = layer.output.forward(&inner, n, precision);
        for (o, r) in out.iter_mut().zip(&attended) {
            *o += r;
        }
        layer.output_norm.forward(&mut out);
        out
    }
}

/// One embedding as `pulp` dispatches it: compiled once per instruction set, so the attention,
/// the norms and GELU use the CPU's vector registers (the products have kernels of their own).
struct Forward<'a> {
    bert: &'a Bert,
    ids: &'a [u32],
    precision: Precision,
}

impl pulp::WithSimd for Forward<'_> {
    type Output = Vec<f32>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<f32> {
        self.bert.forward(self.ids, self.precision)
    }
}
