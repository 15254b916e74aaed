//! How the test [`Harness`](crate::sim_io::Harness) turns a texture
//! request's coordinate registers into a texel: the texture's descriptor
//! ([`Texture::kind`], [`Texture::array`]) says how many coordinates
//! address a texel and whether the last one is an array layer; one more
//! register between them is a depth-compare reference.
//!
//! This is the harness's own model, written from the Vulkan
//! specification's tables and independent of the IR interpreter's
//! (`lathe_ir::texture`), so that a compiled program run here can be
//! compared with the interpreter:
//!
//! - **Layer**: `clamp(floor(l), 0, layers - 1)` — the hardware takes
//!   an integral layer (Mesa adds 0.5 before an array sample on a4xx and
//!   later, `ir3_nir_lower_array_sampler`, so it truncates); compilers
//!   round the layer themselves.
//! - **Cube face**: the major axis is the coordinate of largest magnitude,
//!   `z` winning ties over `y` and `y` over `x` (Vulkan's recommended
//!   rule); the face-local `(sc, tc)` follow Vulkan's table "Cube map face
//!   selection and transformations"; `s = (sc / |ma| + 1) / 2` computed as
//!   `0.5 * (sc / |ma|) + 0.5`.
//! - **Nearest texel**: `floor(s * size)`, clamped to the edge.
//! - **Depth compare**: `1.0` when `reference <= texel.r`, else `0.0`
//!   (the sampler's compare operation is fixed to less-or-equal).

use crate::sim_io::{TexKind, Texture};

/// Where one sample lands: texel indices and the texel store's layer
/// (cube faces count as layers, face `f` of cube `c` at `6 * c + f`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Footprint {
    /// Continuous texel-space position (`s * width`, …) on the face.
    pub pos: [f32; 3],
    pub layer: u32,
}

/// The coordinate registers of a request, split by the descriptor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Coords {
    /// The position components (2 for 2D, 3 for 3D and cubes).
    pub position: Vec<f32>,
    pub reference: Option<f32>,
    pub layer: Option<f32>,
}

/// Position components a descriptor kind is addressed by.
fn position_count(kind: TexKind) -> usize {
    match kind {
        TexKind::D2 => 2,
        TexKind::D3 | TexKind::Cube => 3,
    }
}

/// Splits float coordinate registers `values` as `t`'s descriptor says.
pub(crate) fn split(t: &Texture, values: &[f32]) -> Result<Coords, String> {
    let n = position_count(t.kind);
    let layered = t.array as usize;
    let extra = values
        .len()
        .checked_sub(n + layered)
        .filter(|e| *e <= 1)
        .ok_or_else(|| {
            format!(
                "{} coordinates for a {:?}{} texture",
                values.len(),
                t.kind,
                if t.array { " array" } else { "" }
            )
        })?;
    Ok(Coords {
        position: values[..n].to_vec(),
        reference: (extra == 1).then(|| values[n]),
        layer: t.array.then(|| values[values.len() - 1]),
    })
}

/// `clamp(floor(l), 0, count - 1)`.
pub(crate) fn layer_index(l: f32, count: u32) -> u32 {
    let top = count.max(1) - 1;
    let f = l.floor();
    if f.is_nan() || f <= 0.0 {
        0
    } else if f >= top as f32 {
        top
    } else {
        f as u32
    }
}

/// Vulkan's cube face table, per face: the axis and sign giving `sc`,
/// then `tc`, then the major axis.
const CUBE_FACES: [[(usize, f32); 3]; 6] = [
    [(2, -1.0), (1, -1.0), (0, 1.0)], // +x: sc = -rz, tc = -ry
    [(2, 1.0), (1, -1.0), (0, 1.0)],  // -x: sc = +rz, tc = -ry
    [(0, 1.0), (2, 1.0), (1, 1.0)],   // +y: sc = +rx, tc = +rz
    [(0, 1.0), (2, -1.0), (1, 1.0)],  // -y: sc = +rx, tc = -rz
    [(0, 1.0), (1, -1.0), (2, 1.0)],  // +z: sc = +rx, tc = -ry
    [(0, -1.0), (1, -1.0), (2, 1.0)], // -z: sc = -rx, tc = -ry
];

/// The face of direction `r`: the axis of largest magnitude (z, then y,
/// then x on ties), `+` faces for a non-negative component.
pub(crate) fn cube_face(r: [f32; 3]) -> u32 {
    let mut axis = 2;
    for a in [1, 0] {
        if r[a].abs() > r[axis].abs() {
            axis = a;
        }
    }
    2 * axis as u32 + u32::from(r[axis] < 0.0)
}

/// The texel-space footprint of a sample at `c` on `t` (level 0).
pub(crate) fn footprint(t: &Texture, c: &Coords) -> Footprint {
    let layers = t.layers.max(1);
    let layer = c.layer.map_or(0, |l| layer_index(l, layers));
    let (w, h, d) = (t.width as f32, t.height as f32, t.depth.max(1) as f32);
    match t.kind {
        TexKind::Cube => {
            let r = [c.position[0], c.position[1], c.position[2]];
            let face = cube_face(r);
            let [(sa, ss), (ta, ts), (ma, _)] = CUBE_FACES[face as usize];
            let m = r[ma].abs();
            let s = 0.5 * ((ss * r[sa]) / m) + 0.5;
            let tt = 0.5 * ((ts * r[ta]) / m) + 0.5;
            Footprint {
                pos: [s * w, tt * h, 0.0],
                layer: 6 * layer + face,
            }
        }
        TexKind::D3 => Footprint {
            pos: [c.position[0] * w, c.position[1] * h, c.position[2] * d],
            layer,
        },
        TexKind::D2 => Footprint {
            pos: [c.position[0] * w, c.position[1] * h, 0.0],
            layer,
        },
    }
}

/// The footprint of a sample of cube texture `t` addressed on a face
/// (ISAs whose shaders project the direction): `(s, t)` in [0, 1] on face
/// `face` (0..=5, the table's order), then `rest`: the reference when
/// there is one, then the cube's layer when the descriptor is arrayed.
/// Also the reference.
pub(crate) fn face_footprint(
    t: &Texture,
    st: [f32; 2],
    face: u32,
    rest: &[f32],
) -> Result<(Footprint, Option<f32>), String> {
    if t.kind != TexKind::Cube {
        return Err(format!("a sample on a cube face of a {:?} texture", t.kind));
    }
    if face > 5 {
        return Err(format!("cube face {face} does not exist"));
    }
    let layered = usize::from(t.array);
    let reference = match rest.len().checked_sub(layered) {
        Some(0) => None,
        Some(1) => Some(rest[0]),
        _ => {
            return Err(format!(
                "{} coordinates after the face for a cube{}",
                rest.len(),
                if t.array { " array" } else { "" }
            ));
        }
    };
    let layer = match rest.last() {
        Some(&l) if t.array => layer_index(l, t.layers.max(1)),
        _ => 0,
    };
    let pos = [st[0] * t.width as f32, st[1] * t.height as f32, 0.0];
    Ok((
        Footprint {
            pos,
            layer: 6 * layer + face,
        },
        reference,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube() -> Texture {
        Texture {
            width: 4,
            height: 4,
            kind: TexKind::Cube,
            ..Default::default()
        }
    }

    /// Faces and face coordinates worked out by hand from Vulkan's table.
    #[test]
    fn cube_faces_follow_the_vulkan_table() {
        let t = cube();
        let at = |r: [f32; 3]| {
            let c = split(&t, &r).unwrap();
            let f = footprint(&t, &c);
            (f.layer, f.pos[0], f.pos[1])
        };
        // +x, (rx, ry, rz) = (2, 1, -1): sc = -rz = 1, tc = -ry = -1,
        // s = 0.5 * 0.5 + 0.5 = 0.75, t = 0.25.
        assert_eq!(at([2.0, 1.0, -1.0]), (0, 3.0, 1.0));
        // -x, (-2, 1, -1): sc = rz = -1 → s = 0.25; tc = -1 → t = 0.25.
        assert_eq!(at([-2.0, 1.0, -1.0]), (1, 1.0, 1.0));
        // +y, (1, 4, -2): sc = rx = 1 → 0.625; tc = rz = -2 → 0.25.
        assert_eq!(at([1.0, 4.0, -2.0]), (2, 2.5, 1.0));
        // -y, (1, -4, -2): sc = 1 → 0.625; tc = -rz = 2 → 0.75.
        assert_eq!(at([1.0, -4.0, -2.0]), (3, 2.5, 3.0));
        // +z, (-1, 2, 4): sc = rx = -1 → 0.375; tc = -ry = -2 → 0.25.
        assert_eq!(at([-1.0, 2.0, 4.0]), (4, 1.5, 1.0));
        // -z, (-1, 2, -4): sc = -rx = 1 → 0.625; tc = -2 → 0.25.
        assert_eq!(at([-1.0, 2.0, -4.0]), (5, 2.5, 1.0));
    }

    #[test]
    fn cube_ties_prefer_z_then_y() {
        assert_eq!(cube_face([1.0, 1.0, 1.0]), 4);
        assert_eq!(cube_face([1.0, -1.0, 0.5]), 3);
        assert_eq!(cube_face([-3.0, 0.0, -3.0]), 5);
        assert_eq!(cube_face([-3.0, 2.0, 0.0]), 1);
    }

    /// A face-addressed sample lands where the direction it was
    /// projected from does.
    #[test]
    fn face_addressing_agrees_with_the_direction() {
        let t = cube();
        for r in [[2.0, 1.0, -1.0], [1.0, -4.0, -2.0], [-1.0, 2.0, -4.0]] {
            let by_direction = footprint(&t, &split(&t, &r).unwrap());
            let face = cube_face(r);
            let [(sa, ss), (ta, ts), (ma, _)] = CUBE_FACES[face as usize];
            let m = r[ma].abs();
            let st = [0.5 * (ss * r[sa] / m) + 0.5, 0.5 * (ts * r[ta] / m) + 0.5];
            let (by_face, reference) = face_footprint(&t, st, face, &[]).unwrap();
            assert_eq!((by_face, reference), (by_direction, None));
        }
        let array = Texture {
            array: true,
            layers: 2,
            ..cube()
        };
        let (f, reference) = face_footprint(&array, [0.5, 0.5], 3, &[0.25, 1.0]).unwrap();
        assert_eq!((f.layer, reference), (9, Some(0.25)));
        assert!(face_footprint(&t, [0.5, 0.5], 6, &[]).is_err());
        assert!(face_footprint(&array, [0.5, 0.5], 0, &[]).is_err());
    }

    #[test]
    fn layers_truncate_and_clamp() {
        assert_eq!(layer_index(1.99, 4), 1);
        assert_eq!(layer_index(2.0, 4), 2);
        assert_eq!(layer_index(-0.5, 4), 0);
        assert_eq!(layer_index(9.0, 4), 3);
        assert_eq!(layer_index(f32::NAN, 4), 0);
    }

    #[test]
    fn coordinates_split_by_descriptor() {
        let array = Texture {
            array: true,
            layers: 3,
            ..Default::default()
        };
        let c = split(&array, &[0.1, 0.2, 0.9, 2.0]).unwrap();
        assert_eq!((c.reference, c.layer), (Some(0.9), Some(2.0)));
        let c = split(&array, &[0.1, 0.2, 2.0]).unwrap();
        assert_eq!((c.reference, c.layer), (None, Some(2.0)));
        assert!(split(&array, &[0.1, 0.2]).is_err());
        let c = split(&cube(), &[0.1, 0.2, 0.3, 0.5]).unwrap();
        assert_eq!((c.reference, c.layer), (Some(0.5), None));
    }
}
