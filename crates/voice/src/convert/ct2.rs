//! Reader of CTranslate2's `model.bin`: the variable index (names, shapes, dtypes, file offsets,
//! aliases) and the loading of one variable as f32, int8/int16 weights dequantized with their scale.
//!
//! Layout (little-endian), as CTranslate2's `ModelSpec._serialize` writes it and `models/model.cc`
//! reads it: `u32` binary version; from version 2 the spec name (a string) and `u32` spec revision;
//! `u32` variable count; per variable a string name, `u8` rank, `u32` dims, then (version ≥ 4) a `u8`
//! dtype id and `u32` byte count, or (older) a `u8` item size and `u32` element count, then the raw
//! data; from version 3 a `u32` alias count and (alias, target) string pairs. A string is a `u16`
//! length that counts a trailing NUL, then that many bytes.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::ConvertError;

/// The newest `model.bin` layout this reader knows (CTranslate2's `CURRENT_BINARY_VERSION`).
pub const MAX_BINARY_VERSION: u32 = 6;

/// Element type of a CTranslate2 variable (ids as in CTranslate2's `DataType` enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ct2Dtype {
    /// id 0
    F32,
    /// id 1
    I8,
    /// id 2
    I16,
    /// id 3
    I32,
    /// id 4
    F16,
    /// id 5
    Bf16,
}

impl Ct2Dtype {
    /// The dtype for a CTranslate2 type id, if known.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Self::F32,
            1 => Self::I8,
            2 => Self::I16,
            3 => Self::I32,
            4 => Self::F16,
            5 => Self::Bf16,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            Self::I8 => 1,
            Self::I16 | Self::F16 | Self::Bf16 => 2,
            Self::F32 | Self::I32 => 4,
        }
    }

    /// CTranslate2's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "float32",
            Self::I8 => "int8",
            Self::I16 => "int16",
            Self::I32 => "int32",
            Self::F16 => "float16",
            Self::Bf16 => "bfloat16",
        }
    }
}

/// One variable of the index: where its data sits in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ct2Variable {
    pub name: String,
    pub shape: Vec<u64>,
    pub dtype: Ct2Dtype,
    /// Offset of the first data byte in `model.bin`.
    pub offset: u64,
    pub num_bytes: u64,
}

impl Ct2Variable {
    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> u64 {
        self.shape.iter().product()
    }
}

/// The index of a `model.bin`: everything but the tensor data, which is read on demand.
#[derive(Debug, Clone)]
pub struct Ct2Model {
    pub path: PathBuf,
    pub binary_version: u32,
    /// Spec name, e.g. `WhisperSpec` (empty for binary version 1).
    pub spec: String,
    pub revision: u32,
    pub variables: Vec<Ct2Variable>,
    /// `(alias, target)` pairs: `alias` holds the same value as the variable `target`.
    pub aliases: Vec<(String, String)>,
    by_name: HashMap<String, usize>,
}

/// A byte reader that knows its position and turns an early end of file into `Truncated`.
struct Cursor {
    inner: BufReader<File>,
    pos: u64,
    len: u64,
    path: PathBuf,
}

impl Cursor {
    fn io(&self, source: io::Error) -> ConvertError {
        ConvertError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Refuses to read or skip `n` bytes that run past the end of the file.
    fn ensure_room(&self, n: u64, what: &dyn Fn() -> String) -> Result<(), ConvertError> {
        if self.pos.saturating_add(n) > self.len {
            return Err(ConvertError::Truncated {
                path: self.path.clone(),
                detail: format!(
                    "{} needs {n} bytes at offset {} but the file has {} bytes",
                    what(),
                    self.pos,
                    self.len
                ),
            });
        }
        Ok(())
    }

    fn bytes(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<Vec<u8>, ConvertError> {
        self.ensure_room(n, what)?;
        let n_usize = usize::try_from(n).map_err(|_| ConvertError::Corrupt {
            path: self.path.clone(),
            detail: format!("{}: {n} bytes does not fit in memory", what()),
        })?;
        let mut buf = vec![0u8; n_usize];
        self.inner.read_exact(&mut buf).map_err(|e| self.io(e))?;
        self.pos += n;
        Ok(buf)
    }

    fn array<const N: usize>(
        &mut self,
        what: &dyn Fn() -> String,
    ) -> Result<[u8; N], ConvertError> {
        let v = self.bytes(N as u64, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&v);
        Ok(a)
    }

    fn u8(&mut self, what: &dyn Fn() -> String) -> Result<u8, ConvertError> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u16(&mut self, what: &dyn Fn() -> String) -> Result<u16, ConvertError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32, ConvertError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn string(&mut self, what: &dyn Fn() -> String) -> Result<String, ConvertError> {
        let n = self.u16(what)?;
        let raw = self.bytes(u64::from(n), what)?;
        let text = match raw.split_last() {
            Some((0, text)) => text,
            _ => {
                return Err(ConvertError::Corrupt {
                    path: self.path.clone(),
                    detail: format!("{}: string is not NUL-terminated", what()),
                })
            }
        };
        String::from_utf8(text.to_vec()).map_err(|_| ConvertError::Corrupt {
            path: self.path.clone(),
            detail: format!("{}: string is not UTF-8", what()),
        })
    }

    fn skip(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<(), ConvertError> {
        self.ensure_room(n, what)?;
        let delta = i64::try_from(n).map_err(|_| ConvertError::Corrupt {
            path: self.path.clone(),
            detail: format!("{}: size {n} out of range", what()),
        })?;
        self.inner.seek_relative(delta).map_err(|e| self.io(e))?;
        self.pos += n;
        Ok(())
    }
}

impl Ct2Model {
    /// Reads the index of `path` (a CTranslate2 `model.bin`), checking that every variable's data
    /// lies inside the file.
    pub fn open(path: &Path) -> Result<Self, ConvertError> {
        let io_err = |source| ConvertError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        let mut c = Cursor {
            inner: BufReader::with_capacity(1 << 16, file),
            pos: 0,
            len,
            path: path.to_path_buf(),
        };

        let binary_version = c.u32(&|| "the binary version".into())?;
        if binary_version == 0 || binary_version > MAX_BINARY_VERSION {
            return Err(ConvertError::UnsupportedVersion {
                path: path.to_path_buf(),
                version: binary_version,
            });
        }
        let (spec, revision) = if binary_version >= 2 {
            let spec = c.string(&|| "the spec name".into())?;
            let revision = c.u32(&|| "the spec revision".into())?;
            (spec, revision)
        } else {
            (String::new(), 1)
        };

        let count = c.u32(&|| "the variable count".into())?;
        let mut variables = Vec::with_capacity(count.min(4096) as usize);
        for i in 0..count {
            let name = c.string(&|| format!("the name of variable #{i}"))?;
            let what = |field: &str| format!("the {field} of variable {name:?}");
            let rank = c.u8(&|| what("rank"))?;
            if rank > 8 {
                return Err(ConvertError::Corrupt {
                    path: path.to_path_buf(),
                    detail: format!("variable {name:?} claims rank {rank}"),
                });
            }
            let mut shape = Vec::with_capacity(usize::from(rank));
            for _ in 0..rank {
                shape.push(u64::from(c.u32(&|| what("shape"))?));
            }
            let numel: u64 = shape.iter().product();
            let (dtype, num_bytes) = if binary_version >= 4 {
                let id = c.u8(&|| what("dtype"))?;
                let dtype =
                    Ct2Dtype::from_id(id).ok_or_else(|| ConvertError::UnsupportedDtype {
                        name: name.clone(),
                        dtype: format!("type id {id}"),
                    })?;
                let num_bytes = u64::from(c.u32(&|| what("byte count"))?);
                (dtype, num_bytes)
            } else {
                let item = c.u8(&|| what("item size"))?;
                let dtype = match item {
                    4 => Ct2Dtype::F32,
                    2 => Ct2Dtype::I16,
                    1 => Ct2Dtype::I8,
                    _ => {
                        return Err(ConvertError::UnsupportedDtype {
                            name: name.clone(),
                            dtype: format!("item size {item}"),
                        })
                    }
                };
                let n = u64::from(c.u32(&|| what("element count"))?);
                (dtype, n * u64::from(item))
            };
            if num_bytes != numel * dtype.size() {
                return Err(ConvertError::Corrupt {
                    path: path.to_path_buf(),
                    detail: format!(
                        "variable {name:?} has shape {shape:?} of {} but {num_bytes} bytes",
                        dtype.name()
                    ),
                });
            }
            let offset = c.pos;
            c.skip(num_bytes, &|| format!("the data of variable {name:?}"))?;
            variables.push(Ct2Variable {
                name,
                shape,
                dtype,
                offset,
                num_bytes,
            });
        }

        let mut aliases = Vec::new();
        if binary_version >= 3 {
            let n = c.u32(&|| "the alias count".into())?;
            for i in 0..n {
                let alias = c.string(&|| format!("alias #{i}"))?;
                let target = c.string(&|| format!("the target of alias {alias:?}"))?;
                aliases.push((alias, target));
            }
        }
        if c.pos != len {
            tracing::warn!(
                path = %path.display(),
                trailing = len - c.pos,
                "model.bin has bytes after its alias table"
            );
        }

        let by_name = variables
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.clone(), i))
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            binary_version,
            spec,
            revision,
            variables,
            aliases,
            by_name,
        })
    }

    /// The variable called `name`, following aliases.
    pub fn get(&self, name: &str) -> Option<&Ct2Variable> {
        let mut name = name;
        // An alias points at a stored variable; bound the walk in case a file chains them in a loop.
        for _ in 0..=self.aliases.len() {
            if let Some(&i) = self.by_name.get(name) {
                return self.variables.get(i);
            }
            name = self
                .aliases
                .iter()
                .find(|(alias, _)| alias == name)
                .map(|(_, target)| target.as_str())?;
        }
        None
    }

    /// Whether `name` is stored under that name or as an alias.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Whether `name` is an alias (rather than a stored variable).
    pub fn is_alias(&self, name: &str) -> bool {
        self.aliases.iter().any(|(alias, _)| alias == name)
    }

    /// The raw bytes of a variable.
    pub fn read_raw(&self, var: &Ct2Variable) -> Result<Vec<u8>, ConvertError> {
        let io_err = |source| ConvertError::Io {
            path: self.path.clone(),
            source,
        };
        let mut file = File::open(&self.path).map_err(io_err)?;
        file.seek(SeekFrom::Start(var.offset)).map_err(io_err)?;
        let n = usize::try_from(var.num_bytes).map_err(|_| ConvertError::Corrupt {
            path: self.path.clone(),
            detail: format!("variable {:?} is too large for memory", var.name),
        })?;
        let mut buf = vec![0u8; n];
        file.read_exact(&mut buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                ConvertError::Truncated {
                    path: self.path.clone(),
                    detail: format!("the data of variable {:?} ends early", var.name),
                }
            } else {
                io_err(e)
            }
        })?;
        Ok(buf)
    }

    /// The values of a floating-point variable as f32 (f16/bf16 widened exactly). Integer
    /// variables are refused: use [`Ct2Model::read_weight_f32`] for quantized weights.
    pub fn read_float(&self, var: &Ct2Variable) -> Result<Vec<f32>, ConvertError> {
        let raw = self.read_raw(var)?;
        match var.dtype {
            Ct2Dtype::F32 => Ok(raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()),
            Ct2Dtype::F16 => Ok(f16_bytes_to_f32(&raw)),
            Ct2Dtype::Bf16 => Ok(raw
                .chunks_exact(2)
                .map(|b| half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
                .collect()),
            other => Err(ConvertError::UnsupportedDtype {
                name: var.name.clone(),
                dtype: format!("{} without a scale", other.name()),
            }),
        }
    }

    /// The values of the variable `name` (aliases followed) as f32. An int8/int16 variable is
    /// dequantized with its `<name>_scale` sibling (CTranslate2 stores `round(w * scale)`, with one
    /// scale per output row for int8 and one for the whole matrix for int16).
    pub fn read_weight_f32(&self, name: &str) -> Result<(Vec<u64>, Vec<f32>), ConvertError> {
        let (shape, values) = self.read_weight(name)?;
        Ok((shape, values.to_f32()))
    }

    /// Like [`Ct2Model::read_weight_f32`], but float16 data stays as its raw bytes so it can be
    /// copied to an f16 output without a round trip.
    pub fn read_weight(&self, name: &str) -> Result<(Vec<u64>, Values), ConvertError> {
        let var = self
            .get(name)
            .ok_or_else(|| ConvertError::MissingTensor { name: name.into() })?;
        let values = match var.dtype {
            Ct2Dtype::F16 => Values::F16(self.read_raw(var)?),
            Ct2Dtype::F32 | Ct2Dtype::Bf16 => Values::F32(self.read_float(var)?),
            Ct2Dtype::I8 | Ct2Dtype::I16 => {
                let scale_name = format!("{name}_scale");
                let scale_var =
                    self.get(&scale_name)
                        .ok_or_else(|| ConvertError::UnsupportedDtype {
                            name: name.into(),
                            dtype: format!("{} without {scale_name}", var.dtype.name()),
                        })?;
                let scale = self.read_float(scale_var)?;
                let raw = self.read_raw(var)?;
                let q: Vec<f32> = if var.dtype == Ct2Dtype::I8 {
                    raw.iter().map(|&b| f32::from(b as i8)).collect()
                } else {
                    raw.chunks_exact(2)
                        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])))
                        .collect()
                };
                Values::F32(dequantize(&var.name, &var.shape, q, &scale)?)
            }
            Ct2Dtype::I32 => {
                return Err(ConvertError::UnsupportedDtype {
                    name: name.into(),
                    dtype: "int32 (packed/int4 weights are not supported)".into(),
                })
            }
        };
        Ok((var.shape.clone(), values))
    }
}

/// A tensor's values: float16 kept as little-endian bytes, anything else widened to f32.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    F16(Vec<u8>),
    F32(Vec<f32>),
}

impl Values {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Self::F16(b) => b.len() / 2,
            Self::F32(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements `start..start + n`, borrowed.
    pub fn slice(&self, start: usize, n: usize) -> ValuesRef<'_> {
        match self {
            Self::F16(b) => ValuesRef::F16(&b[2 * start..2 * (start + n)]),
            Self::F32(v) => ValuesRef::F32(&v[start..start + n]),
        }
    }

    /// All elements, borrowed.
    pub fn as_ref(&self) -> ValuesRef<'_> {
        self.slice(0, self.len())
    }

    /// The values as f32.
    pub fn to_f32(&self) -> Vec<f32> {
        match self {
            Self::F16(b) => f16_bytes_to_f32(b),
            Self::F32(v) => v.clone(),
        }
    }
}

/// A borrowed run of [`Values`].
#[derive(Debug, Clone, Copy)]
pub enum ValuesRef<'a> {
    F16(&'a [u8]),
    F32(&'a [f32]),
}

impl ValuesRef<'_> {
    pub fn len(&self) -> usize {
        match self {
            Self::F16(b) => b.len() / 2,
            Self::F32(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn f16_bytes_to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(2)
        .map(|b| half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
        .collect()
}

/// Divides quantized values by their scale: one scale for all, or one per leading-dimension row.
fn dequantize(
    name: &str,
    shape: &[u64],
    mut q: Vec<f32>,
    scale: &[f32],
) -> Result<Vec<f32>, ConvertError> {
    let rows = shape.first().copied().unwrap_or(1) as usize;
    if scale.len() == 1 {
        let s = scale[0];
        q.iter_mut().for_each(|v| *v /= s);
    } else if scale.len() == rows && rows > 0 {
        let row_len = q.len() / rows;
        for (row, s) in q.chunks_mut(row_len.max(1)).zip(scale) {
            row.iter_mut().for_each(|v| *v /= *s);
        }
    } else {
        return Err(ConvertError::UnsupportedDtype {
            name: name.into(),
            dtype: format!("quantized with {} scales for shape {shape:?}", scale.len()),
        });
    }
    Ok(q)
}
