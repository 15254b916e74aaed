//! Mali attribute instancing: padded vertex counts, magic divisors, descriptors.
