//! What a SPIR-V module's descriptors and push constants hold, read from
//! the module itself (types, `Offset`/`ArrayStride`/`MatrixStride`
//! decorations, image types) — independently of `lathe-frontend`, so the
//! differential tests feed each word the type the shader reads it as.

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Dim, Op, StorageClass};
use std::collections::{BTreeMap, HashMap};

/// How a 32-bit word of a buffer is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    Float,
    Sint,
    Uint,
    /// A boolean member (stored as a 32-bit 0/1 word).
    Bool,
}

/// The layout of a block: each typed word by byte offset, and the stride
/// of its trailing run-time array, if any.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Typed words of the fixed part (and of run-time element 0, repeated
    /// every `runtime_stride` bytes), by byte offset.
    pub words: BTreeMap<u32, Word>,
    /// Bytes of the fixed part (up to the run-time array).
    pub fixed_bytes: u32,
    /// Bytes per element of a trailing run-time array.
    pub runtime_stride: Option<u32>,
    /// Typed words of one run-time element, by offset within it.
    pub runtime_words: BTreeMap<u32, Word>,
}

impl Layout {
    /// The block's size in words with `elements` run-time elements.
    pub fn words_with(&self, elements: u32) -> usize {
        let bytes = self.fixed_bytes + self.runtime_stride.unwrap_or(0) * elements;
        bytes.div_ceil(4) as usize
    }

    /// How word `index` of the block is read (`None` for padding).
    pub fn word(&self, index: usize) -> Option<Word> {
        let byte = index as u32 * 4;
        if byte < self.fixed_bytes || self.runtime_stride.is_none() {
            return self.words.get(&byte).copied();
        }
        let stride = self.runtime_stride?;
        self.runtime_words
            .get(&((byte - self.fixed_bytes) % stride))
            .copied()
    }
}

/// An image type behind a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageType {
    pub dim: Dim,
    pub arrayed: bool,
    pub multisampled: bool,
    /// Declared as a depth image (`Depth` operand 1).
    pub depth: bool,
    /// The sampled type's word kind.
    pub texel: Word,
    /// A storage image (`Sampled` operand 2).
    pub storage: bool,
    /// The declared texel format (`Unknown` for sampled images).
    pub format: rspirv::spirv::ImageFormat,
}

/// One descriptor binding.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    UniformBuffer(Layout),
    StorageBuffer(Layout),
    /// A combined image sampler, a sampled image or a storage image.
    Image {
        image: ImageType,
        combined: bool,
    },
    Sampler,
    /// Arrays of descriptors and anything else (the reason).
    Other(String),
}

/// The module's bindings by `(set, binding)` and its push-constant block.
#[derive(Clone, Debug, Default)]
pub struct Reflection {
    pub bindings: BTreeMap<(u32, u32), Binding>,
    pub push_constants: Option<Layout>,
}

/// A decoration with its first literal operand, if any.
type Decorated = (Decoration, Option<u32>);

struct Types<'m> {
    defs: HashMap<u32, &'m Instruction>,
    /// Decorations by (id, member).
    decorations: HashMap<(u32, Option<u32>), Vec<Decorated>>,
}

fn id(op: &Operand) -> u32 {
    match op {
        Operand::IdRef(id) => *id,
        _ => u32::MAX,
    }
}

fn literal(op: &Operand) -> u32 {
    match op {
        Operand::LiteralBit32(v) => *v,
        _ => u32::MAX,
    }
}

impl<'m> Types<'m> {
    fn new(module: &'m Module) -> Self {
        let defs = module
            .types_global_values
            .iter()
            .filter_map(|i| i.result_id.map(|r| (r, i)))
            .collect();
        let mut decorations: HashMap<_, Vec<_>> = HashMap::new();
        for a in &module.annotations {
            let (key, rest) = match a.class.opcode {
                Op::Decorate => ((id(&a.operands[0]), None), &a.operands[1..]),
                Op::MemberDecorate => (
                    (id(&a.operands[0]), Some(literal(&a.operands[1]))),
                    &a.operands[2..],
                ),
                _ => continue,
            };
            if let Some(Operand::Decoration(d)) = rest.first() {
                decorations
                    .entry(key)
                    .or_default()
                    .push((*d, rest.get(1).map(literal)));
            }
        }
        Types { defs, decorations }
    }

    fn decoration(&self, id: u32, member: Option<u32>, which: Decoration) -> Option<Option<u32>> {
        self.decorations
            .get(&(id, member))?
            .iter()
            .find(|(d, _)| *d == which)
            .map(|(_, v)| *v)
    }

    fn def(&self, id: u32) -> Result<&'m Instruction, String> {
        self.defs
            .get(&id)
            .copied()
            .ok_or_else(|| format!("no definition of %{id}"))
    }

    /// The value of a 32-bit integer constant (a spec constant's default).
    fn constant(&self, id: u32) -> Result<u32, String> {
        let d = self.def(id)?;
        match d.class.opcode {
            Op::Constant | Op::SpecConstant => Ok(literal(&d.operands[0])),
            other => Err(format!("array length from {other:?}")),
        }
    }

    fn scalar(&self, ty: u32) -> Result<Word, String> {
        let d = self.def(ty)?;
        match d.class.opcode {
            Op::TypeFloat if literal(&d.operands[0]) == 32 => Ok(Word::Float),
            Op::TypeInt if literal(&d.operands[0]) == 32 => Ok(if literal(&d.operands[1]) == 1 {
                Word::Sint
            } else {
                Word::Uint
            }),
            Op::TypeBool => Ok(Word::Bool),
            _ => Err(format!(
                "a {:?} that is not a 32-bit scalar",
                d.class.opcode
            )),
        }
    }

    /// Record the words of a value of type `ty` at byte `at` into `out`;
    /// `matrix` is (stride, row major) from the enclosing member. A
    /// run-time array is recorded in `layout` and ends the walk.
    fn walk(
        &self,
        ty: u32,
        at: u32,
        matrix: Option<(u32, bool)>,
        out: &mut BTreeMap<u32, Word>,
        layout: &mut Layout,
    ) -> Result<(), String> {
        let d = self.def(ty)?;
        match d.class.opcode {
            Op::TypeFloat | Op::TypeInt | Op::TypeBool => {
                out.insert(at, self.scalar(ty)?);
            }
            Op::TypeVector => {
                let elem = self.scalar(id(&d.operands[0]))?;
                for k in 0..literal(&d.operands[1]) {
                    out.insert(at + 4 * k, elem);
                }
            }
            Op::TypeMatrix => {
                let column = self.def(id(&d.operands[0]))?;
                let rows = literal(&column.operands[1]);
                let elem = self.scalar(id(&column.operands[0]))?;
                let (stride, row_major) = matrix.ok_or("a matrix without MatrixStride")?;
                for c in 0..literal(&d.operands[1]) {
                    for r in 0..rows {
                        let offset = if row_major {
                            r * stride + c * 4
                        } else {
                            c * stride + r * 4
                        };
                        out.insert(at + offset, elem);
                    }
                }
            }
            Op::TypeArray => {
                let stride = self
                    .decoration(ty, None, Decoration::ArrayStride)
                    .flatten()
                    .ok_or("an array without ArrayStride")?;
                let elem = id(&d.operands[0]);
                for k in 0..self.constant(id(&d.operands[1]))? {
                    self.walk(elem, at + k * stride, matrix, out, layout)?;
                }
            }
            Op::TypeRuntimeArray => {
                let stride = self
                    .decoration(ty, None, Decoration::ArrayStride)
                    .flatten()
                    .ok_or("a run-time array without ArrayStride")?;
                layout.fixed_bytes = at;
                layout.runtime_stride = Some(stride);
                let mut elem = BTreeMap::new();
                self.walk(id(&d.operands[0]), 0, matrix, &mut elem, layout)?;
                layout.runtime_words = elem;
            }
            Op::TypeStruct => {
                for (m, member) in d.operands.iter().enumerate() {
                    let m = Some(m as u32);
                    let offset = self
                        .decoration(ty, m, Decoration::Offset)
                        .flatten()
                        .ok_or("a block member without Offset")?;
                    let stride = self.decoration(ty, m, Decoration::MatrixStride).flatten();
                    let row_major = self.decoration(ty, m, Decoration::RowMajor).is_some();
                    let matrix = stride.map(|s| (s, row_major)).or(matrix);
                    self.walk(id(member), at + offset, matrix, out, layout)?;
                }
            }
            other => return Err(format!("{other:?} in a block")),
        }
        Ok(())
    }

    fn layout(&self, block: u32) -> Result<Layout, String> {
        let mut layout = Layout::default();
        let mut words = BTreeMap::new();
        self.walk(block, 0, None, &mut words, &mut layout)?;
        if layout.runtime_stride.is_none() {
            layout.fixed_bytes = words.keys().next_back().map_or(0, |&o| o + 4);
        }
        layout.words = words;
        Ok(layout)
    }

    fn image(&self, ty: u32) -> Result<ImageType, String> {
        let d = self.def(ty)?;
        let Operand::Dim(dim) = d.operands[1] else {
            return Err("an image type without a dimension".into());
        };
        Ok(ImageType {
            dim,
            depth: literal(&d.operands[2]) == 1,
            arrayed: literal(&d.operands[3]) == 1,
            multisampled: literal(&d.operands[4]) == 1,
            storage: literal(&d.operands[5]) == 2,
            format: match d.operands.get(6) {
                Some(Operand::ImageFormat(f)) => *f,
                _ => rspirv::spirv::ImageFormat::Unknown,
            },
            texel: self.scalar(id(&d.operands[0]))?,
        })
    }

    fn binding(&self, class: StorageClass, pointee: u32) -> Result<Binding, String> {
        let d = self.def(pointee)?;
        let buffer_block = self
            .decoration(pointee, None, Decoration::BufferBlock)
            .is_some();
        Ok(match (class, d.class.opcode) {
            (_, Op::TypeArray | Op::TypeRuntimeArray) => {
                Binding::Other("an array of descriptors".into())
            }
            (StorageClass::StorageBuffer, _) => Binding::StorageBuffer(self.layout(pointee)?),
            (StorageClass::Uniform, _) if buffer_block => {
                Binding::StorageBuffer(self.layout(pointee)?)
            }
            (StorageClass::Uniform, _) => Binding::UniformBuffer(self.layout(pointee)?),
            (_, Op::TypeSampledImage) => Binding::Image {
                image: self.image(id(&d.operands[0]))?,
                combined: true,
            },
            (_, Op::TypeImage) => Binding::Image {
                image: self.image(pointee)?,
                combined: false,
            },
            (_, Op::TypeSampler) => Binding::Sampler,
            (class, op) => Binding::Other(format!("{op:?} in {class:?}")),
        })
    }
}

/// Reflect `words`; `Err` when the module does not parse.
pub fn reflect(words: &[u32]) -> Result<Reflection, String> {
    let module = rspirv::dr::load_words(words).map_err(|e| e.to_string())?;
    let types = Types::new(&module);
    let mut out = Reflection::default();
    for var in &module.types_global_values {
        if var.class.opcode != Op::Variable {
            continue;
        }
        let Some(var_id) = var.result_id else {
            continue;
        };
        let Operand::StorageClass(class) = var.operands[0] else {
            continue;
        };
        let pointer = types.def(var.result_type.unwrap_or(u32::MAX))?;
        let pointee = id(&pointer.operands[1]);
        if class == StorageClass::PushConstant {
            out.push_constants = Some(types.layout(pointee)?);
            continue;
        }
        let (Some(Some(set)), Some(Some(binding))) = (
            types.decoration(var_id, None, Decoration::DescriptorSet),
            types.decoration(var_id, None, Decoration::Binding),
        ) else {
            continue;
        };
        let b = types.binding(class, pointee).unwrap_or_else(Binding::Other);
        out.bindings.insert((set, binding), b);
    }
    Ok(out)
}
