//! Proc-macro front door over `lathe-isa`'s generator.
