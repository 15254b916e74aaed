//! Adreno fragment density map (FDM) tiling math.
