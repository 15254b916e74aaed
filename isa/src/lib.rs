//! The `.isa` language: grammar, spec model, checker and code generator.
