//! Parts of the spec model as Rust constant expressions, so that `isa!`
//! emits them as `static` data: a program then neither decodes nor
//! allocates them. Each type writes the expression that builds the same
//! value; its strings and lists borrow the static data ([`Str`], [`Seq`]),
//! so the model built from text and the static one stay one type.

use crate::ast::{BitRange, MetaValue};
use crate::compact::{Seq, Str};
use crate::diag::Span;
use crate::machine::{LeafInfo, OperandInfo};
use crate::model::{Field, FieldType};
use crate::operands::Role;
/// What generated statics name the IR's effect types by, so a crate
/// using `isa!` needs no dependency of its own on `lathe-ir`.
pub use lathe_ir::{BarrierClass, Effects};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

/// A value of the model that `isa!` can write as a constant expression.
pub trait ToStatic {
    /// The expression (in generated code, outside this crate) that
    /// builds a value equal to `self`.
    fn to_static(&self) -> TokenStream;
}

macro_rules! unsigned {
    ($($t:ty => $lit:ident),*) => {$(
        impl ToStatic for $t {
            fn to_static(&self) -> TokenStream {
                let v = Literal::$lit(*self);
                quote! { #v }
            }
        }
    )*};
}
unsigned!(u8 => u8_suffixed, u16 => u16_suffixed, u32 => u32_suffixed, u64 => u64_suffixed, usize => usize_suffixed);

impl ToStatic for i64 {
    fn to_static(&self) -> TokenStream {
        let magnitude = Literal::u64_suffixed(self.unsigned_abs());
        match *self < 0 {
            // Through `wrapping_neg`, so `i64::MIN` is written too.
            true => quote! { (#magnitude as i64).wrapping_neg() },
            false => quote! { (#magnitude as i64) },
        }
    }
}

impl ToStatic for bool {
    fn to_static(&self) -> TokenStream {
        match self {
            true => quote! { true },
            false => quote! { false },
        }
    }
}

impl<T: ToStatic> ToStatic for Option<T> {
    fn to_static(&self) -> TokenStream {
        match self {
            Some(v) => {
                let v = v.to_static();
                quote! { Some(#v) }
            }
            None => quote! { None },
        }
    }
}

impl<A: ToStatic, B: ToStatic> ToStatic for (A, B) {
    fn to_static(&self) -> TokenStream {
        let (a, b) = (self.0.to_static(), self.1.to_static());
        quote! { (#a, #b) }
    }
}

impl ToStatic for Str {
    fn to_static(&self) -> TokenStream {
        let s = self.as_str();
        quote! { ::lathe_isa::compact::Str::from_static(#s) }
    }
}

impl<T: Clone + ToStatic> ToStatic for Seq<T> {
    fn to_static(&self) -> TokenStream {
        let items = self.iter().map(ToStatic::to_static);
        quote! { ::lathe_isa::compact::Seq(::std::borrow::Cow::Borrowed(&[#(#items),*])) }
    }
}

impl ToStatic for Span {
    fn to_static(&self) -> TokenStream {
        let (file, start, end) = (
            self.file.to_static(),
            self.start.to_static(),
            self.end.to_static(),
        );
        quote! { ::lathe_isa::diag::Span { file: #file, start: #start, end: #end } }
    }
}

impl ToStatic for BitRange {
    fn to_static(&self) -> TokenStream {
        let (low, high) = (self.low.to_static(), self.high.to_static());
        quote! { ::lathe_isa::ast::BitRange { low: #low, high: #high } }
    }
}

impl ToStatic for MetaValue {
    fn to_static(&self) -> TokenStream {
        match self {
            MetaValue::Int(i) => {
                let i = i.to_static();
                quote! { ::lathe_isa::ast::MetaValue::Int(#i) }
            }
            MetaValue::Str(s) => {
                let s = s.to_static();
                quote! { ::lathe_isa::ast::MetaValue::Str(#s) }
            }
            MetaValue::Ident(s) => {
                let s = s.to_static();
                quote! { ::lathe_isa::ast::MetaValue::Ident(#s) }
            }
            MetaValue::List(items) => {
                let items = items.to_static();
                quote! { ::lathe_isa::ast::MetaValue::List(#items) }
            }
        }
    }
}

impl ToStatic for FieldType {
    fn to_static(&self) -> TokenStream {
        let variant = match self {
            FieldType::Uint => quote! { Uint },
            FieldType::Int => quote! { Int },
            FieldType::Hex => quote! { Hex },
            FieldType::HexUpper => quote! { HexUpper },
            FieldType::Offset => quote! { Offset },
            FieldType::Uoffset => quote! { Uoffset },
            FieldType::Float => quote! { Float },
            FieldType::Fixed(r) => {
                let r = r.to_static();
                quote! { Fixed(#r) }
            }
            FieldType::Branch => quote! { Branch },
            FieldType::AbsBranch => quote! { AbsBranch },
            FieldType::Bool(text) => {
                let text = text.to_static();
                quote! { Bool(#text) }
            }
            FieldType::BoolInv(text) => {
                let text = text.to_static();
                quote! { BoolInv(#text) }
            }
            FieldType::Enum(e) => {
                let e = e.to_static();
                quote! { Enum(#e) }
            }
            FieldType::Sub(enc, binds) => {
                let (enc, binds) = (enc.to_static(), binds.to_static());
                quote! { Sub(#enc, #binds) }
            }
        };
        quote! { ::lathe_isa::model::FieldType::#variant }
    }
}

impl ToStatic for Field {
    fn to_static(&self) -> TokenStream {
        let Field {
            name,
            doc,
            span,
            ranges,
            width,
            ty,
            default,
            meta,
        } = self;
        let (name, doc, span, ranges) = (
            name.to_static(),
            doc.to_static(),
            span.to_static(),
            ranges.to_static(),
        );
        let (width, ty, default, meta) = (
            width.to_static(),
            ty.to_static(),
            default.to_static(),
            meta.to_static(),
        );
        quote! {
            ::lathe_isa::model::Field {
                name: #name, doc: #doc, span: #span, ranges: #ranges,
                width: #width, ty: #ty, default: #default, meta: #meta,
            }
        }
    }
}

impl ToStatic for Role {
    fn to_static(&self) -> TokenStream {
        match self {
            Role::Src => quote! { ::lathe_isa::operands::Role::Src },
            Role::Dst => quote! { ::lathe_isa::operands::Role::Dst },
        }
    }
}

impl ToStatic for OperandInfo {
    fn to_static(&self) -> TokenStream {
        let OperandInfo {
            field,
            key,
            role,
            files,
            accepts_relative,
            accepts_immediate,
            wide,
            register_forms,
        } = self;
        let (field, key, role, files) = (
            field.to_static(),
            key.to_static(),
            role.to_static(),
            files.to_static(),
        );
        let (accepts_relative, accepts_immediate, wide, register_forms) = (
            accepts_relative.to_static(),
            accepts_immediate.to_static(),
            wide.to_static(),
            register_forms.to_static(),
        );
        quote! {
            ::lathe_isa::machine::OperandInfo {
                field: #field, key: #key, role: #role, files: #files,
                accepts_relative: #accepts_relative, accepts_immediate: #accepts_immediate,
                wide: #wide, register_forms: #register_forms,
            }
        }
    }
}

impl ToStatic for Effects {
    fn to_static(&self) -> TokenStream {
        let Effects {
            side_effects,
            may_trap,
            barrier: BarrierClass(barrier),
        } = self;
        let (side_effects, may_trap, barrier) = (
            side_effects.to_static(),
            may_trap.to_static(),
            barrier.to_static(),
        );
        quote! {
            ::lathe_isa::statics::Effects {
                side_effects: #side_effects, may_trap: #may_trap,
                barrier: ::lathe_isa::statics::BarrierClass(#barrier),
            }
        }
    }
}

impl ToStatic for LeafInfo {
    fn to_static(&self) -> TokenStream {
        let LeafInfo {
            enc,
            name,
            base,
            operands,
            modifiers,
            effects,
            first_generation,
            asserting,
        } = self;
        let (enc, name, base, operands) = (
            enc.to_static(),
            name.to_static(),
            base.to_static(),
            operands.to_static(),
        );
        let (modifiers, effects, first_generation, asserting) = (
            modifiers.to_static(),
            effects.to_static(),
            first_generation.to_static(),
            asserting.to_static(),
        );
        quote! {
            ::lathe_isa::machine::LeafInfo {
                enc: #enc, name: #name, base: #base, operands: #operands,
                modifiers: #modifiers, effects: #effects,
                first_generation: #first_generation, asserting: #asserting,
            }
        }
    }
}
