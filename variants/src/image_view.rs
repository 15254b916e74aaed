//! Image-view identifiers: the specialisation-relevant state of an image
//! view, packed into 32 bits.
//!
//! A sampling routine depends on only a few facts about the image it reads:
//! the format, the view's dimensionality, the component swizzle, the sample
//! count and which aspect is read. Those fit in 32 bits, so the id *is* the
//! state: two views with equal relevant state get the same id without any
//! table, and a routine cached under an id stays valid forever.
//!
//! Bit layout (least significant first):
//!
//! | bits  | field                                              |
//! |-------|----------------------------------------------------|
//! | 0–9   | format index (driver's compact numbering, < 1024)  |
//! | 10–12 | [`ViewType`]                                       |
//! | 13–24 | swizzle of R, G, B, A: one [`Swizzle`] each, 3 bits |
//! | 25–27 | log2 of the sample count (0 = 1 sample … 6 = 64)   |
//! | 28–29 | [`Aspect`]                                         |
//! | 30–31 | zero                                               |

use crate::error::DescriptorError;

/// Largest format index an id can hold.
pub const MAX_FORMAT: u16 = (1 << FORMAT_BITS) - 1;
/// Largest log2 sample count an id can hold (64 samples).
pub const MAX_SAMPLES_LOG2: u8 = 6;

const FORMAT_BITS: u32 = 10;
const VIEW_SHIFT: u32 = 10;
const SWIZZLE_SHIFT: u32 = 13;
const SAMPLES_SHIFT: u32 = 25;
const ASPECT_SHIFT: u32 = 28;
const RESERVED_SHIFT: u32 = 30;

/// Dimensionality of an image view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ViewType {
    OneD = 0,
    TwoD = 1,
    ThreeD = 2,
    Cube = 3,
    OneDArray = 4,
    TwoDArray = 5,
    CubeArray = 6,
}

impl ViewType {
    /// Every view type, in encoding order.
    pub const ALL: [Self; 7] = [
        Self::OneD,
        Self::TwoD,
        Self::ThreeD,
        Self::Cube,
        Self::OneDArray,
        Self::TwoDArray,
        Self::CubeArray,
    ];
}

/// Where one component of a sampled value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Swizzle {
    /// The component's own channel; encoded as that channel, so
    /// `[Identity; 4]` and `[R, G, B, A]` give the same id.
    Identity = 0,
    Zero = 1,
    One = 2,
    R = 3,
    G = 4,
    B = 5,
    A = 6,
}

impl Swizzle {
    /// Every swizzle, in encoding order.
    pub const ALL: [Self; 7] = [
        Self::Identity,
        Self::Zero,
        Self::One,
        Self::R,
        Self::G,
        Self::B,
        Self::A,
    ];

    /// The same selection with `Identity` spelled out for the component at
    /// `index` (0 = R … 3 = A).
    fn resolved(self, index: usize) -> Self {
        match (self, index) {
            (Self::Identity, 0) => Self::R,
            (Self::Identity, 1) => Self::G,
            (Self::Identity, 2) => Self::B,
            (Self::Identity, _) => Self::A,
            (other, _) => other,
        }
    }
}

/// Which aspect of the image a view reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Aspect {
    Color = 0,
    Depth = 1,
    Stencil = 2,
}

/// The image-view state a sampling routine is specialised on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImageViewState {
    /// The driver's compact format index (not a raw `VkFormat`, whose
    /// extension values do not fit); at most [`MAX_FORMAT`].
    pub format: u16,
    pub view_type: ViewType,
    /// Component mapping for R, G, B, A.
    pub swizzle: [Swizzle; 4],
    /// log2 of the sample count; at most [`MAX_SAMPLES_LOG2`].
    pub samples_log2: u8,
    pub aspect: Aspect,
}

impl ImageViewState {
    /// A single-sampled colour view with the identity swizzle.
    pub fn color(format: u16, view_type: ViewType) -> Self {
        Self {
            format,
            view_type,
            swizzle: [Swizzle::Identity; 4],
            samples_log2: 0,
            aspect: Aspect::Color,
        }
    }

    /// Packs this state into its id.
    ///
    /// ```
    /// use lathe_variants::{ImageViewState, Swizzle, ViewType};
    ///
    /// let a = ImageViewState::color(37, ViewType::TwoD);
    /// let b = ImageViewState { swizzle: [Swizzle::R, Swizzle::G, Swizzle::B, Swizzle::A], ..a };
    /// // Identity and the explicit RGBA mapping sample identically: one id.
    /// assert_eq!(a.id()?, b.id()?);
    /// assert_eq!(a.id()?.state()?, b);
    /// # Ok::<(), lathe_variants::DescriptorError>(())
    /// ```
    pub fn id(&self) -> Result<ImageViewId, DescriptorError> {
        if self.format > MAX_FORMAT {
            return Err(DescriptorError::FormatOutOfRange(self.format));
        }
        if self.samples_log2 > MAX_SAMPLES_LOG2 {
            return Err(DescriptorError::SampleCountOutOfRange(self.samples_log2));
        }
        let mut bits = u32::from(self.format) | (self.view_type as u32) << VIEW_SHIFT;
        for (index, swizzle) in self.swizzle.iter().enumerate() {
            let shift = SWIZZLE_SHIFT + 3 * index as u32;
            bits |= (swizzle.resolved(index) as u32) << shift;
        }
        bits |= u32::from(self.samples_log2) << SAMPLES_SHIFT;
        bits |= (self.aspect as u32) << ASPECT_SHIFT;
        Ok(ImageViewId(bits))
    }
}

/// A 32-bit image-view identifier that encodes the view's relevant state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ImageViewId(u32);

impl ImageViewId {
    /// The raw 32 bits, e.g. to store in a descriptor.
    pub fn raw(self) -> u32 {
        self.0
    }

    /// Validates raw bits read back from a descriptor.
    pub fn from_raw(bits: u32) -> Result<Self, DescriptorError> {
        let id = Self(bits);
        id.state()?;
        Ok(id)
    }

    /// Unpacks the state this id encodes. Swizzles come back resolved
    /// (never [`Swizzle::Identity`]).
    pub fn state(self) -> Result<ImageViewState, DescriptorError> {
        let bits = self.0;
        let invalid = |field| DescriptorError::InvalidImageViewId { id: bits, field };
        let field = |shift: u32, width: u32| (bits >> shift) & ((1 << width) - 1);

        let view_type = *ViewType::ALL
            .get(field(VIEW_SHIFT, 3) as usize)
            .ok_or_else(|| invalid("view type"))?;
        let mut swizzle = [Swizzle::Identity; 4];
        for (index, slot) in swizzle.iter_mut().enumerate() {
            let code = field(SWIZZLE_SHIFT + 3 * index as u32, 3) as usize;
            *slot = match Swizzle::ALL.get(code) {
                Some(Swizzle::Identity) | None => return Err(invalid("swizzle")),
                Some(&selection) => selection,
            };
        }
        let samples_log2 = field(SAMPLES_SHIFT, 3) as u8;
        if samples_log2 > MAX_SAMPLES_LOG2 {
            return Err(invalid("sample count"));
        }
        let aspect = match field(ASPECT_SHIFT, 2) {
            0 => Aspect::Color,
            1 => Aspect::Depth,
            2 => Aspect::Stencil,
            _ => return Err(invalid("aspect")),
        };
        if bits >> RESERVED_SHIFT != 0 {
            return Err(invalid("reserved"));
        }
        Ok(ImageViewState {
            format: field(0, FORMAT_BITS) as u16,
            view_type,
            swizzle,
            samples_log2,
            aspect,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn state() -> impl Strategy<Value = ImageViewState> {
        (
            0..=MAX_FORMAT,
            0..ViewType::ALL.len(),
            proptest::array::uniform4(0..Swizzle::ALL.len()),
            0..=MAX_SAMPLES_LOG2,
            0..3u8,
        )
            .prop_map(
                |(format, view, swizzle, samples_log2, aspect)| ImageViewState {
                    format,
                    view_type: ViewType::ALL[view],
                    swizzle: swizzle.map(|s| Swizzle::ALL[s]),
                    samples_log2,
                    aspect: [Aspect::Color, Aspect::Depth, Aspect::Stencil][usize::from(aspect)],
                },
            )
    }

    fn resolved(state: &ImageViewState) -> ImageViewState {
        let mut swizzle = state.swizzle;
        for (index, s) in swizzle.iter_mut().enumerate() {
            *s = s.resolved(index);
        }
        ImageViewState { swizzle, ..*state }
    }

    proptest! {
        #[test]
        fn id_round_trips_the_resolved_state(s in state()) {
            let id = s.id().expect("in-range state encodes");
            prop_assert_eq!(id.state().expect("encoded ids decode"), resolved(&s));
            prop_assert_eq!(ImageViewId::from_raw(id.raw()), Ok(id));
        }

        /// Ids are equal exactly when the resolved states are equal.
        #[test]
        fn id_is_injective_on_resolved_state(a in state(), b in state()) {
            let same_state = resolved(&a) == resolved(&b);
            prop_assert_eq!(a.id().expect("encodes") == b.id().expect("encodes"), same_state);
        }

        /// Decoding never panics, and accepts exactly the encodings.
        #[test]
        fn from_raw_accepts_only_encodings(bits in any::<u32>()) {
            if let Ok(id) = ImageViewId::from_raw(bits) {
                let state = id.state().expect("accepted ids decode");
                prop_assert_eq!(state.id().expect("decoded states encode").raw(), bits);
            }
        }
    }

    #[test]
    fn out_of_range_fields_are_rejected() {
        let base = ImageViewState::color(0, ViewType::TwoD);
        let too_big_format = ImageViewState {
            format: MAX_FORMAT + 1,
            ..base
        };
        assert_eq!(
            too_big_format.id(),
            Err(DescriptorError::FormatOutOfRange(MAX_FORMAT + 1))
        );
        let too_many_samples = ImageViewState {
            samples_log2: 7,
            ..base
        };
        assert_eq!(
            too_many_samples.id(),
            Err(DescriptorError::SampleCountOutOfRange(7))
        );
    }

    #[test]
    fn invalid_raw_fields_are_named() {
        let good = ImageViewState::color(5, ViewType::Cube)
            .id()
            .expect("encodes")
            .raw();
        let cases = [
            (good | 7 << VIEW_SHIFT, "view type"),
            (good & !(7 << SWIZZLE_SHIFT), "swizzle"),
            (good | 7 << SAMPLES_SHIFT, "sample count"),
            (good | 3 << ASPECT_SHIFT, "aspect"),
            (good | 1 << 31, "reserved"),
        ];
        for (bits, field) in cases {
            assert_eq!(
                ImageViewId::from_raw(bits),
                Err(DescriptorError::InvalidImageViewId { id: bits, field })
            );
        }
    }
}
