//! Choosing descriptors for a draw: attributes, and the vertex-id and
//! instance-id records.

use super::{
    AttributeDescriptor, InstancingError, MagicDivisor, Modulus, PowerOfTwoDivisor,
    try_padded_vertex_count,
};
use std::num::NonZeroU32;

/// How often an attribute advances, in GL terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttributeRate {
    /// One element per vertex (GL instance divisor 0).
    PerVertex,
    /// One element per `divisor` instances.
    PerInstance {
        /// The GL instance divisor.
        divisor: NonZeroU32,
    },
}

impl AttributeRate {
    /// A per-instance rate.
    ///
    /// # Errors
    ///
    /// [`InstancingError::ZeroInstanceDivisor`] for 0: GL uses that value for
    /// per-vertex attributes, which are [`AttributeRate::PerVertex`] here.
    pub fn per_instance(divisor: u32) -> Result<Self, InstancingError> {
        NonZeroU32::new(divisor)
            .map(|divisor| AttributeRate::PerInstance { divisor })
            .ok_or(InstancingError::ZeroInstanceDivisor)
    }
}

/// A draw as the thread dispatcher sees it: `instances` rows of
/// `padded_vertex_count` threads, numbered by one 32-bit linear id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Draw {
    vertices: u32,
    instances: u32,
    padded: u32,
    padded_modulus: Modulus,
}

impl Draw {
    /// Validates a draw of `vertices` vertices and `instances` instances.
    ///
    /// # Errors
    ///
    /// [`InstancingError::ZeroVertexCount`], [`InstancingError::ZeroInstanceCount`],
    /// [`InstancingError::PaddedCountOverflow`] for more than
    /// [`MAX_VERTEX_COUNT`](super::MAX_VERTEX_COUNT) vertices, and
    /// [`InstancingError::TooManyThreads`] when padded count × instances does
    /// not fit in 32 bits (then some linear ids would not either).
    pub fn new(vertices: u32, instances: u32) -> Result<Self, InstancingError> {
        let padded = try_padded_vertex_count(vertices)?; // also rejects 0 vertices
        if instances == 0 {
            return Err(InstancingError::ZeroInstanceCount);
        }
        let threads = u64::from(padded) * u64::from(instances);
        if threads > u64::from(u32::MAX) {
            return Err(InstancingError::TooManyThreads {
                vertices,
                padded,
                instances,
                threads,
            });
        }
        // Every padded count is 1, 3, 5, 7 or 9 times a power of two.
        let padded_modulus = Modulus::of_value(padded)?;
        Ok(Draw {
            vertices,
            instances,
            padded,
            padded_modulus,
        })
    }

    /// The vertex count the driver asked for.
    pub fn vertices(&self) -> u32 {
        self.vertices
    }

    /// The instance count the driver asked for.
    pub fn instances(&self) -> u32 {
        self.instances
    }

    /// The hardware's padded vertex count (see [`padded_vertex_count`]).
    pub fn padded_vertex_count(&self) -> u32 {
        self.padded
    }

    /// True when there is more than one instance.
    pub fn is_instanced(&self) -> bool {
        self.instances > 1
    }

    /// Threads dispatched: padded vertex count × instance count.
    pub fn thread_count(&self) -> u32 {
        // Checked in `new` to fit in 32 bits.
        self.padded * self.instances
    }

    /// The linear id of the thread shading `vertex` of `instance`, or `None`
    /// outside the draw.
    pub fn linear_id(&self, vertex: u32, instance: u32) -> Option<u32> {
        (vertex < self.vertices && instance < self.instances)
            .then(|| instance * self.padded + vertex) // below thread_count()
    }

    /// The addressing fields for an attribute of this draw.
    ///
    /// - Per-vertex, one instance: linear (the linear id is the vertex id).
    /// - Per-vertex, instanced: modulo the padded count.
    /// - Per-instance with divisor `D`: divide by `padded × min(D, instances)`,
    ///   with a shift when that is a power of two and the magic multiplier
    ///   otherwise. A divisor of at least the instance count gives element 0
    ///   to every instance either way; clamping it keeps the hardware divisor
    ///   within the 32-bit thread count.
    pub fn attribute(&self, rate: AttributeRate) -> AttributeDescriptor {
        match rate {
            AttributeRate::PerVertex if self.is_instanced() => {
                AttributeDescriptor::Modulus(self.padded_modulus)
            }
            AttributeRate::PerVertex => AttributeDescriptor::Linear,
            AttributeRate::PerInstance { divisor } => {
                let hardware_divisor = self.hardware_divisor(divisor);
                match PowerOfTwoDivisor::of_value(hardware_divisor) {
                    Ok(shift) => AttributeDescriptor::PowerOfTwoDivide(shift),
                    // Not a power of two and non-zero, so at least 3.
                    Err(_) => AttributeDescriptor::MagicDivide(MagicDivisor::for_non_power_of_two(
                        hardware_divisor,
                    )),
                }
            }
        }
    }

    /// What a per-instance attribute with GL divisor `divisor` divides the
    /// linear id by: `padded × min(divisor, instances)`. The clamp changes no
    /// element (every instance reads 0 either way) and keeps the product
    /// within the draw's 32-bit thread count.
    pub fn hardware_divisor(&self, divisor: NonZeroU32) -> u32 {
        // At most padded × instances, which `new` checked fits.
        self.padded * divisor.get().min(self.instances)
    }

    /// The record that supplies `gl_VertexID`.
    pub fn vertex_id_record(&self) -> VertexIdRecord {
        VertexIdRecord {
            modulus: self.padded_modulus,
        }
    }

    /// The record that supplies `gl_InstanceID`.
    pub fn instance_id_record(&self) -> InstanceIdRecord {
        let divide = match PowerOfTwoDivisor::of_value(self.padded) {
            // The record's shift field is one less than the power it divides by.
            Ok(p) if p.shift() > 0 => InstanceIdDivide::PowerOfTwo {
                shift_field: p.shift() - 1,
            },
            // One vertex: the instance id is the linear id.
            Ok(_) => InstanceIdDivide::Magic(MagicDivisor::IDENTITY),
            Err(_) => InstanceIdDivide::Magic(MagicDivisor::for_non_power_of_two(self.padded)),
        };
        InstanceIdRecord { divide }
    }
}

/// The special attribute record for `gl_VertexID` (hardware type 34): the
/// linear id modulo the padded vertex count, in the same shift and
/// extra_flags fields as modulus mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VertexIdRecord {
    modulus: Modulus,
}

impl VertexIdRecord {
    /// The hardware's special attribute code for this record.
    pub const TYPE_CODE: u8 = 34;

    /// The modulus fields.
    pub fn modulus(self) -> Modulus {
        self.modulus
    }

    /// The shift field.
    pub fn shift(self) -> u32 {
        self.modulus.shift()
    }

    /// The extra_flags field.
    pub fn extra_flags(self) -> u32 {
        self.modulus.extra_flags()
    }

    /// The vertex id the hardware reports for `linear_id`.
    pub fn vertex_id(self, linear_id: u32) -> u32 {
        self.modulus.apply(linear_id)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum InstanceIdDivide {
    /// Divides by `2^(shift_field + 1)`.
    PowerOfTwo {
        shift_field: u32,
    },
    Magic(MagicDivisor),
}

/// The special attribute record for `gl_InstanceID` (hardware type 36): the
/// linear id divided by the padded vertex count.
///
/// Two quirks, as observed by the Panfrost project (they are not in our
/// instancing notes and have not been checked on hardware here): for a
/// power-of-two count the shift field holds one less than the power, and for
/// other counts the magic field lives in the record's stride word. A padded
/// count of 1 (a one-vertex draw) uses [`MagicDivisor::IDENTITY`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstanceIdRecord {
    divide: InstanceIdDivide,
}

impl InstanceIdRecord {
    /// The hardware's special attribute code for this record.
    pub const TYPE_CODE: u8 = 36;

    /// The shift field.
    pub fn shift(self) -> u32 {
        match self.divide {
            InstanceIdDivide::PowerOfTwo { shift_field } => shift_field,
            InstanceIdDivide::Magic(m) => m.shift(),
        }
    }

    /// The extra_flags field (the round-down switch of a magic divide).
    pub fn extra_flags(self) -> u32 {
        match self.divide {
            InstanceIdDivide::PowerOfTwo { .. } => 0,
            InstanceIdDivide::Magic(m) => m.extra_flags(),
        }
    }

    /// The magic field, when the padded count is not a power of two above 1.
    pub fn magic(self) -> Option<u32> {
        match self.divide {
            InstanceIdDivide::PowerOfTwo { .. } => None,
            InstanceIdDivide::Magic(m) => Some(m.magic()),
        }
    }

    /// The instance id the hardware reports for `linear_id`.
    pub fn instance_id(self, linear_id: u32) -> u32 {
        match self.divide {
            InstanceIdDivide::PowerOfTwo { shift_field } => linear_id >> (shift_field + 1),
            InstanceIdDivide::Magic(m) => m.divide(linear_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_empty_and_oversized_draws() {
        assert_eq!(Draw::new(0, 1), Err(InstancingError::ZeroVertexCount));
        assert_eq!(Draw::new(3, 0), Err(InstancingError::ZeroInstanceCount));
        assert_eq!(
            Draw::new(u32::MAX, 1),
            Err(InstancingError::PaddedCountOverflow { vertices: u32::MAX })
        );
        assert_eq!(
            Draw::new(70, 1 << 26),
            Err(InstancingError::TooManyThreads {
                vertices: 70,
                padded: 72,
                instances: 1 << 26,
                threads: 72 << 26
            })
        );
        assert_eq!(
            AttributeRate::per_instance(0),
            Err(InstancingError::ZeroInstanceDivisor)
        );
    }

    #[test]
    fn largest_draws_still_address_every_thread() {
        // 0xF000 vertices pad to 2^16; 2^16 instances would need 2^32 threads,
        // one instance fewer fits.
        assert!(matches!(
            Draw::new(0xF000, 1 << 16),
            Err(InstancingError::TooManyThreads { .. })
        ));
        let draw = Draw::new(0xF000, (1 << 16) - 1).unwrap();
        assert_eq!(draw.thread_count(), 0xFFFF_0000);
        assert_eq!(draw.linear_id(0xEFFF, 0xFFFE), Some(0xFFFE_EFFF));
        assert_eq!(draw.linear_id(0xF000, 0), None);
        assert_eq!(draw.linear_id(0, 0xFFFF), None);
        let huge_divisor = AttributeRate::per_instance(u32::MAX).unwrap();
        let descriptor = draw.attribute(huge_divisor);
        assert_eq!(descriptor.element_index(draw.thread_count() - 1), 0);
    }

    #[test]
    fn instance_id_record_covers_power_of_two_and_single_vertex_draws() {
        let pot = Draw::new(16, 5).unwrap().instance_id_record();
        assert_eq!((pot.shift(), pot.magic()), (3, None)); // divides by 2^4
        assert_eq!(pot.instance_id(16 * 4 + 15), 4);
        let one = Draw::new(1, 5).unwrap().instance_id_record();
        assert_eq!(
            (0..5).map(|n| one.instance_id(n)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
    }
}
