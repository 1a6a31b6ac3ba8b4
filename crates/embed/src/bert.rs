//! The BERT encoder of all-MiniLM-L6-v2, one sequence at a time (no padding, so no attention
//! mask): embeddings, six post-norm transformer layers with exact GELU, mean pooling, L2 norm.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};
use safetensors::{Dtype, SafeTensors};

use crate::few_rows::{FewRows, FEW_ROWS};

const LAYERS: usize = 6;
const HEADS: usize = 12;
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
            Some(few) if rows <= FEW_ROWS && precision == Precision::Fast => {
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
    fn forward(&self, x: &mut [f32]) {
        let width = self.weight.len();
        for row in x.chunks_mut(width) {
            let mean = row.iter().sum::<f32>() / width as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
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
    /// 16-bit integer weights for inputs of a few tokens (a query: twice as fast, within 1e-5
    /// in cosine), f32 for longer ones.
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
        if hidden % HEADS != 0 {
            return Err(format!(
                "hidden size {hidden} does not split into {HEADS} heads"
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

    fn layer(&self, layer: &Layer, x: Vec<f32>, n: usize, precision: Precision) -> Vec<f32> {
        let h = self.hidden;
        let head = h / HEADS;
        let qkv = layer.qkv.forward(&x, n, precision);
        let row = |i: usize, part: usize, off: usize| {
            let at = i * 3 * h + part * h + off;
            &qkv[at..at + head]
        };
        let scale = 1.0 / (head as f32).sqrt();
        let mut context = vec![0.0f32; n * h];
        let mut scores = vec![0.0f32; n];
        for hd in 0..HEADS {
            let off = hd * head;
            for i in 0..n {
                let qi = row(i, 0, off);
                let mut max = f32::MIN;
                for (j, s) in scores.iter_mut().enumerate() {
                    let kj = row(j, 1, off);
                    *s = qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f32>() * scale;
                    max = max.max(*s);
                }
                let mut total = 0.0;
                for s in scores.iter_mut() {
                    *s = (*s - max).exp();
                    total += *s;
                }
                let out = &mut context[i * h + off..i * h + off + head];
                for (j, s) in scores.iter().enumerate() {
                    let weight = s / total;
                    let vj = row(j, 2, off);
                    for (o, val) in out.iter_mut().zip(vj) {
                        *o += weight * val;
                    }
                }
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

/// GELU with erf, as BERT defines it.
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// erf by Abramowitz and Stegun 7.1.26 (absolute error 1.5e-7), in f32 throughout: the GELU runs
/// over every intermediate activation (1536 per token per layer), so f64 here cost a sixth of a
/// short query's embedding time for no change the tests can see.
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152_1) * t + 1.421_413_7) * t - 0.284_496_74) * t
        + 0.254_829_6)
        * t;
    (1.0 - poly * (-a * a).exp()).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::erf;

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
}
