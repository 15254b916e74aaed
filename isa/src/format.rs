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
pub fn write_c_f<W: Write + ?Sized>(out: &mut W, x: f64) -> fmt::Result {
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
        FieldType::Enum(e) => match isa.enums[*e].display(v) {
            Some(s) => out.write_str(s),
            None => write_u64(out, v),
        },
        FieldType::Sub(..) => write_u64(out, v),
        ty => write_plain(out, ty, v, width),
    }
}

/// Writes a value of any type but an enum or a sub-encoding (which need
/// the spec); generated display code calls this for the types it does not
/// specialise.
pub fn write_plain<W: Write + ?Sized>(
    out: &mut W,
    ty: &FieldType,
    v: u64,
    width: u32,
) -> fmt::Result {
    match ty {
        FieldType::Int | FieldType::Branch => write_int(out, v, width),
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
                out.write_char('+')?;
                write_u64(out, v)?;
            }
            Ok(())
        }
        FieldType::Float => write_float(out, float_value(v, width)),
        FieldType::Fixed(r) => {
            let s = sign_extend(v, width) as f64;
            write_float(out, s / (1u64 << r) as f64)
        }
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
        FieldType::Uint
        | FieldType::AbsBranch
        | FieldType::Bool(None)
        | FieldType::Enum(_)
        | FieldType::Sub(..) => write_u64(out, v),
    }
}

/// C's `%f` (six decimals, ties to even on the exact binary value), as
/// [`write_c_f`] prints it, without the general float
/// formatter for the values immediates hold; huge values take that path.
pub fn write_float<W: Write + ?Sized>(out: &mut W, x: f64) -> fmt::Result {
    const SCALE: u128 = 1_000_000;
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0x7ff || exp > 1023 + 60 {
        return write_c_f(out, x);
    }
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    // x·10⁶ = mant·10⁶·2^e, rounded to an integer, ties to even.
    let n = u128::from(mant) * SCALE;
    let q = if e >= 0 {
        n << e
    } else {
        let s = (-e) as u32;
        if s >= 127 {
            0
        } else {
            let q = n >> s;
            let r = n - (q << s);
            let half = 1u128 << (s - 1);
            q + u128::from(r > half || (r == half && q & 1 == 1))
        }
    };
    if x.is_sign_negative() {
        out.write_char('-')?;
    }
    let int = q / SCALE;
    let mut fraction = (q % SCALE) as u32;
    match u64::try_from(int) {
        Ok(i) => write_u64(out, i)?,
        Err(_) => write!(out, "{int}")?,
    }
    let mut digits = [b'0'; 7];
    digits[0] = b'.';
    for d in digits[1..].iter_mut().rev() {
        *d = b'0' + (fraction % 10) as u8;
        fraction /= 10;
    }
    out.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)
}

/// The low `width` bits of `v` as a signed decimal.
#[inline]
pub fn write_int<W: Write + ?Sized>(out: &mut W, v: u64, width: u32) -> fmt::Result {
    let s = sign_extend(v, width);
    if s < 0 {
        out.write_char('-')?;
    }
    write_u64(out, s.unsigned_abs())
}

/// Decimal without the formatting machinery (register numbers dominate:
/// one or two digits are pushed inline).
#[inline(always)]
pub fn write_u64<W: Write + ?Sized>(out: &mut W, v: u64) -> fmt::Result {
    if v < 10 {
        return out.write_char(char::from(b'0' + v as u8));
    }
    if v < 100 {
        out.write_char(char::from(b'0' + (v / 10) as u8))?;
        return out.write_char(char::from(b'0' + (v % 10) as u8));
    }
    write_u64_long(out, v)
}

fn write_u64_long<W: Write + ?Sized>(out: &mut W, v: u64) -> fmt::Result {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut x = v;
    while x > 0 {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
    }
    // Only ASCII digits were written.
    out.write_str(std::str::from_utf8(&buf[i..]).map_err(|_| fmt::Error)?)
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
    let mut out = Vec::new();
    read_scalar(Some(isa), ty, text, width, &mut |v, n| out.push((v, n)));
    out
}

/// [`parse_scalar`] without allocating: each reading goes to `out` in
/// the same order. Without an `isa`, enums have no readings (generated
/// code reads them from its own tables).
pub fn read_scalar(
    isa: Option<&Isa>,
    ty: &FieldType,
    text: &str,
    width: u32,
    out: &mut dyn FnMut(u64, usize),
) {
    let m = mask(width);
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
                        out(v, n);
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
                            out(v, start + n);
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
                        out(v, n);
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
                                out(v, 1 + n);
                            }
                        }
                    }
                }
            }
            out(0, 0);
        }
        FieldType::Uoffset => {
            if let Some(rest) = text.strip_prefix('+') {
                let n = digits(rest, 10);
                if n > 0 {
                    if let Ok(v) = rest[..n].parse::<u64>() {
                        if v != 0 && fits_unsigned(v) {
                            out(v, 1 + n);
                        }
                    }
                }
            }
            out(0, 0);
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
                    out(v, n);
                }
            }
        }
        FieldType::Bool(None) => match text.as_bytes().first() {
            Some(b'0') => out(0, 1),
            Some(b'1') => out(1, 1),
            _ => {}
        },
        FieldType::Bool(Some(s)) => {
            if !s.is_empty() && text.starts_with(s.as_str()) {
                out(1, s.len());
            }
            out(0, 0);
            if s.is_empty() {
                out(1, 0);
            }
        }
        FieldType::BoolInv(s) => {
            if !s.is_empty() && text.starts_with(s.as_str()) {
                out(0, s.len());
            }
            out(1, 0);
            if s.is_empty() {
                out(0, 0);
            }
        }
        FieldType::Enum(e) => {
            let Some(isa) = isa else { return };
            for (v, s, _) in &isa.enums[*e].values {
                if text.starts_with(s.as_str()) && fits_unsigned(*v) {
                    out(*v, s.len());
                }
            }
            let n = digits(text, 10);
            if n > 0 {
                if let Ok(v) = text[..n].parse::<u64>() {
                    if fits_unsigned(v) && isa.enums[*e].display(v).is_none() {
                        out(v, n);
                    }
                }
            }
        }
        FieldType::Sub(..) => {}
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn float_text(x: f64) -> (String, String) {
        let (mut fast, mut slow) = (String::new(), String::new());
        write_float(&mut fast, x).unwrap();
        write_c_f(&mut slow, x).unwrap();
        (fast, slow)
    }

    #[test]
    fn float_matches_the_general_formatter_on_every_half() {
        for h in 0..=u16::MAX {
            let x = f64::from(crate::format::half_to_f32(h));
            let (fast, slow) = float_text(x);
            assert_eq!(fast, slow, "half 0x{h:04x}");
        }
    }

    #[test]
    fn float_matches_the_general_formatter_on_singles() {
        // Every exponent, with mantissas that include exact ties at the
        // sixth decimal (x.xxxxxx5 is exact for small dyadic values).
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for i in 0..400_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let bits = if i % 4 == 0 {
                (i >> 2) << 13
            } else {
                state as u32
            };
            let x = f64::from(f32::from_bits(bits));
            let (fast, slow) = float_text(x);
            assert_eq!(fast, slow, "single 0x{bits:08x}");
        }
        for x in [0.0000005, 0.0000015, 2.5e-7, -0.0, -1e-9, 0.5, 1e10, 3.0e38] {
            let (fast, slow) = float_text(x);
            assert_eq!(fast, slow, "{x:e}");
        }
    }

    #[test]
    fn decimal_matches_std() {
        for v in [0u64, 7, 10, 99, 12345, u64::MAX] {
            let mut s = String::new();
            write_u64(&mut s, v).unwrap();
            assert_eq!(s, v.to_string());
        }
    }
}
