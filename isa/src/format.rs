//! Display and parsing of single field values by type (isaspec's formats).

use std::fmt::{self, Write};

use crate::model::{FieldType, Isa};

/// Sign-extends the low `width` bits of `v`.
#[inline]
pub fn sign_extend(v: u64, width: u32) -> i64 {
    if width == 0 || width >= 64 {
        return v as i64;
    }
    let shift = 64 - width;
    ((v << shift) as i64) >> shift
}

/// IEEE half → single (exact).
pub fn half_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut m = m;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((m & 0x3ff) << 13)
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Nearest IEEE half to a single (round to nearest even).
pub fn f32_to_half(f: f32) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let mant = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = rem > mid || (rem == mid && half & 1 == 1);
        return sign | (half + u32::from(round)) as u16;
    }
    let half = ((e as u32) << 10) | (mant >> 13);
    let rem = mant & 0x1fff;
    let round = rem > 0x1000 || (rem == 0x1000 && half & 1 == 1);
    sign | (half + u32::from(round)) as u16
}

/// C `printf("%f", x)` for a double.
pub fn write_c_f(out: &mut dyn Write, x: f64) -> fmt::Result {
    if x.is_nan() {
        out.write_str(if x.is_sign_negative() { "-nan" } else { "nan" })
    } else if x.is_infinite() {
        out.write_str(if x < 0.0 { "-inf" } else { "inf" })
    } else {
        write!(out, "{x:.6}")
    }
}

/// The float a `float` field's bits stand for.
pub fn float_value(v: u64, width: u32) -> f64 {
    if width == 16 {
        f64::from(half_to_f32(v as u16))
    } else {
        f64::from(f32::from_bits(v as u32))
    }
}

/// Writes a scalar (non-sub-encoding) value of type `ty`.
pub fn write_scalar(
    out: &mut dyn Write,
    isa: &Isa,
    ty: &FieldType,
    v: u64,
    width: u32,
) -> fmt::Result {
    match ty {
        FieldType::Uint | FieldType::AbsBranch => write!(out, "{v}"),
        FieldType::Int | FieldType::Branch => write!(out, "{}", sign_extend(v, width)),
        FieldType::Hex => write!(out, "{v:x}"),
        FieldType::HexUpper => write!(out, "{v:X}"),
        FieldType::Offset => {
            let s = sign_extend(v, width);
            if s != 0 {
                write!(out, "{s:+}")?;
            }
            Ok(())
        }
        FieldType::Uoffset => {
            if v != 0 {
                write!(out, "+{v}")?;
            }
            Ok(())
        }
        FieldType::Float => write_c_f(out, float_value(v, width)),
        FieldType::Fixed(r) => {
            let s = sign_extend(v, width) as f64;
            write_c_f(out, s / (1u64 << r) as f64)
        }
        FieldType::Bool(None) => write!(out, "{v}"),
        FieldType::Bool(Some(s)) => {
            if v != 0 {
                out.write_str(s)?;
            }
            Ok(())
        }
        FieldType::BoolInv(s) => {
            if v == 0 {
                out.write_str(s)?;
            }
            Ok(())
        }
        FieldType::Enum(e) => match isa.enums[*e].display(v) {
            Some(s) => out.write_str(s),
            None => write!(out, "{v}"),
        },
        FieldType::Sub(..) => write!(out, "{v}"),
    }
}

fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

fn digits(s: &str, radix: u32) -> usize {
    s.bytes()
        .take_while(|b| (*b as char).is_digit(radix))
        .count()
}

/// Every way the start of `text` can be read as a value of scalar type
/// `ty`: (raw value, bytes consumed). Values must fit `width` bits.
pub fn parse_scalar(isa: &Isa, ty: &FieldType, text: &str, width: u32) -> Vec<(u64, usize)> {
    let m = mask(width);
    let mut out = Vec::new();
    let fits_unsigned = |v: u64| v & !m == 0;
    let encode_signed = |s: i64| -> Option<u64> {
        let v = (s as u64) & m;
        (sign_extend(v, width) == s).then_some(v)
    };
    match ty {
        FieldType::Uint | FieldType::AbsBranch => {
            let n = digits(text, 10);
            if n > 0 {
                if let Ok(v) = text[..n].parse::<u64>() {
                    if fits_unsigned(v) {
                        out.push((v, n));
                    }
                }
            }
        }
        FieldType::Int | FieldType::Branch => {
            let neg = text.starts_with('-');
            let start = usize::from(neg);
            let n = digits(&text[start..], 10);
            if n > 0 {
                if let Ok(v) = text[start..start + n].parse::<i128>() {
                    let s = if neg { -v } else { v };
                    if let Ok(s) = i64::try_from(s) {
                        if let Some(v) = encode_signed(s) {
                            out.push((v, start + n));
                        }
                    }
                }
            }
        }
        FieldType::Hex | FieldType::HexUpper => {
            let n = digits(text, 16);
            if n > 0 {
                if let Ok(v) = u64::from_str_radix(&text[..n], 16) {
                    if fits_unsigned(v) {
                        out.push((v, n));
                    }
                }
            }
        }
        FieldType::Offset => {
            if let Some(sign) = text.chars().next().filter(|c| *c == '+' || *c == '-') {
                let n = digits(&text[1..], 10);
                if n > 0 {
                    if let Ok(v) = text[1..1 + n].parse::<i128>() {
                        let s = if sign == '-' { -v } else { v };
                        if s != 0 {
                            if let Some(v) = i64::try_from(s).ok().and_then(encode_signed) {
                                out.push((v, 1 + n));
                            }
                        }
                    }
                }
            }
            out.push((0, 0));
        }
        FieldType::Uoffset => {
            if let Some(rest) = text.strip_prefix('+') {
                let n = digits(rest, 10);
                if n > 0 {
                    if let Ok(v) = rest[..n].parse::<u64>() {
                        if v != 0 && fits_unsigned(v) {
                            out.push((v, 1 + n));
                        }
                    }
                }
            }
            out.push((0, 0));
        }
        FieldType::Float | FieldType::Fixed(_) => {
            if let Some((x, n)) = parse_decimal(text) {
                let v = match ty {
                    FieldType::Fixed(r) => {
                        let scaled = (x * (1u64 << r) as f64).round() as i64;
                        encode_signed(scaled)
                    }
                    _ if width == 16 => Some(u64::from(f32_to_half(x as f32))),
                    _ if width == 32 => text[..n]
                        .parse::<f32>()
                        .ok()
                        .map(|f| u64::from(f.to_bits())),
                    _ => None,
                };
                if let Some(v) = v {
                    out.push((v, n));
                }
            }
        }
        FieldType::Bool(None) => match text.as_bytes().first() {
            Some(b'0') => out.push((0, 1)),
            Some(b'1') => out.push((1, 1)),
            _ => {}
        },
        FieldType::Bool(Some(s)) => {
            if !s.is_empty() && text.starts_with(s.as_str()) {
                out.push((1, s.len()));
            }
            out.push((0, 0));
            if s.is_empty() {
                out.push((1, 0));
            }
        }
        FieldType::BoolInv(s) => {
            if !s.is_empty() && text.starts_with(s.as_str()) {
                out.push((0, s.len()));
            }
            out.push((1, 0));
            if s.is_empty() {
                out.push((0, 0));
            }
        }
        FieldType::Enum(e) => {
            for (v, s, _) in &isa.enums[*e].values {
                if text.starts_with(s.as_str()) && fits_unsigned(*v) {
                    out.push((*v, s.len()));
                }
            }
            let n = digits(text, 10);
            if n > 0 {
                if let Ok(v) = text[..n].parse::<u64>() {
                    if fits_unsigned(v) && isa.enums[*e].display(v).is_none() {
                        out.push((v, n));
                    }
                }
            }
        }
        FieldType::Sub(..) => {}
    }
    out
}

/// If `text` starts with a number written the way type `ty` reads it but
/// too large for `width` bits, that number's text (for diagnostics).
pub fn out_of_range<'t>(ty: &FieldType, text: &'t str, width: u32) -> Option<&'t str> {
    let signed = |t: &'t str, sign_required: bool| {
        let has_sign = t.starts_with('-') || t.starts_with('+');
        if sign_required && !has_sign {
            return None;
        }
        let start = usize::from(has_sign);
        let n = digits(&t[start..], 10);
        (n > 0).then(|| &t[..start + n])
    };
    let number = match ty {
        FieldType::Uint | FieldType::AbsBranch => {
            let n = digits(text, 10);
            (n > 0).then(|| &text[..n])
        }
        FieldType::Hex | FieldType::HexUpper => {
            let n = digits(text, 16);
            (n > 0).then(|| &text[..n])
        }
        FieldType::Int | FieldType::Branch => signed(text, false),
        FieldType::Offset => signed(text, true),
        FieldType::Uoffset => text.starts_with('+').then(|| signed(text, true)).flatten(),
        _ => None,
    }?;
    // It is out of range exactly when the type's own reader rejects it.
    let read = parse_scalar_unchecked(ty, number, width);
    (!read).then_some(number)
}

/// Whether the whole of `number` reads as a value of `ty` in `width` bits.
fn parse_scalar_unchecked(ty: &FieldType, number: &str, width: u32) -> bool {
    let m = mask(width);
    let parsed: Option<i128> = match ty {
        FieldType::Hex | FieldType::HexUpper => u128::from_str_radix(number, 16)
            .ok()
            .and_then(|v| i128::try_from(v).ok()),
        _ => number.trim_start_matches('+').parse::<i128>().ok(),
    };
    let Some(v) = parsed else { return false };
    match ty {
        FieldType::Int | FieldType::Branch | FieldType::Offset => {
            i64::try_from(v).is_ok_and(|s| sign_extend((s as u64) & m, width) == s)
        }
        _ => u64::try_from(v).is_ok_and(|u| u & !m == 0),
    }
}

/// A C-style decimal floating-point number at the start of `text`.
fn parse_decimal(text: &str) -> Option<(f64, usize)> {
    let b = text.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    for word in ["inf", "nan"] {
        if text[i..].starts_with(word) {
            let v = if word == "inf" {
                f64::INFINITY
            } else {
                f64::NAN
            };
            let v = if b.first() == Some(&b'-') { -v } else { v };
            return Some((v, i + 3));
        }
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut any = i > int_start;
    if i < b.len() && b[i] == b'.' {
        let f = i + 1;
        let mut j = f;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > f || any {
            any = true;
            i = j;
        }
    }
    if !any {
        return None;
    }
    text[..i].parse::<f64>().ok().map(|x| (x, i))
}
